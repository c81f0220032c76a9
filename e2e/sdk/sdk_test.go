package sdk

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
	"github.com/reinhq/rein/internal/testenv"
)

// sdkServer starts rein with the SDK tests' policy and returns it with an
// agent key and an approver key of tenant acme.
func sdkServer(t *testing.T) (s *harness.Server, agent, approver string) {
	t.Helper()
	s = harness.StartServer(t, t.TempDir(), nil, "--policy", filepath.Join(harness.ModuleRoot, "sdk", "testdata", "policy.yaml"))
	admin := s.AdminKey()
	agent = harness.CreateAgentKey(t, s.ClientEnv(admin), "builder", "acme")
	r := harness.Rein(t, s.ClientEnv(admin), "keys", "create", "alice", "--role", "approver", "--tenant", "acme", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("rein keys create alice: %s", r)
	}
	var k struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil || k.Key == "" {
		t.Fatalf("rein keys create alice --output json: %v\n%s", err, r)
	}
	return s, agent, k.Key
}

// runSDK runs a command of an SDK's own test suite against s, failing with
// its whole output when it exits non-zero.
func runSDK(t *testing.T, s *harness.Server, agent, approver, dir string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = harness.CleanEnv("REIN_SERVER="+s.URL, "REIN_KEY="+agent, "REIN_APPROVER_KEY="+approver)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish within %s\n%s", name, strings.Join(args, " "), timeout, out)
	}
	if err != nil {
		t.Fatalf("%s %s: %v\n%s\nrein serve stderr:\n%s", name, strings.Join(args, " "), err, out, s.Stderr)
	}
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
}

// TestSDKTypeScript runs the TypeScript client's and adapters' tests
// (LangGraph.js, the LangChain middleware, OpenAI Agents JS, Vercel AI SDK
// 7 and 6, each a real agent loop with the framework's own scripted model)
// against a real rein.
func TestSDKTypeScript(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	dir := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "sdk", "typescript"))
	s, agent, approver := sdkServer(t)
	files, err := filepath.Glob(filepath.Join(dir, "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s/test (%v)", dir, err)
	}
	runSDK(t, s, agent, approver, dir, 3*time.Minute, "node", append([]string{"--test", "--test-reporter=spec"}, files...)...)
}

// TestSDKTypeScriptTypes compiles the package's type declarations and a
// program that uses them with tsc: against the frameworks as installed (AI
// SDK 7), and the AI SDK adapter against AI SDK 6 (tsconfig.ai6.json).
func TestSDKTypeScriptTypes(t *testing.T) {
	// Not side by side with the others: tsc keeps a core busy for most of
	// a minute, and under the parallel browser tests it ran past its limit.
	dir := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "sdk", "typescript"))
	for _, config := range []string{"tsconfig.json", "tsconfig.ai6.json"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "tsc"), "-p", config)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("tsc -p %s: %v\n%s", config, err, out)
		}
	}
}

// TestSDKPython runs the Python client's unittest suite against a real rein.
func TestSDKPython(t *testing.T) {
	py := testenv.Python(t)
	s, agent, approver := sdkServer(t)
	dir := filepath.Join(harness.ModuleRoot, "sdk", "python")
	if _, err := os.Stat(filepath.Join(dir, "rein")); err != nil {
		t.Fatal(err)
	}
	runSDK(t, s, agent, approver, dir, 2*time.Minute, py, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
}

// TestSDKExamples runs the README's SDK examples as a reader would, against
// rein serve with the sample policy, while a person of group finance
// approves what they ask for.
func TestSDKExamples(t *testing.T) {
	tsDir := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "sdk", "typescript"))
	py := testenv.Python(t)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", "examples/policy.yaml")
	admin := s.AdminKey()
	agent := harness.CreateAgentKey(t, s.ClientEnv(admin), "builder", "demo")
	r := harness.Rein(t, s.ClientEnv(admin), "keys", "create", "carol", "--role", "approver", "--tenant", "demo", "--group", "finance", "--output", "json")
	var carol struct{ Key string }
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &carol) != nil {
		t.Fatalf("rein keys create carol: %s", r)
	}
	goBin := filepath.Join(t.TempDir(), "payments")
	build := exec.Command("go", "build", "-o", goBin, "./examples/payments")
	build.Dir = harness.ModuleRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/payments: %v\n%s", err, out)
	}

	paid := []string{"sent 50 to acct-7", "not sent (deny): transfers need a positive amount of at most 50000",
		"waiting for approval: rein approve apr_", "sent 500 to acct-7"}
	for _, ex := range []struct {
		name, dir string
		cmd       []string
		want      []string
	}{
		{"go", harness.ModuleRoot, []string{goBin}, paid},
		{"python", harness.ModuleRoot, []string{py, "sdk/python/examples/payments.py"}, paid},
		{"typescript", tsDir, []string{"node", "examples/client.js"}, paid},
		{"langgraph", tsDir, []string{"node", "examples/langgraph.js"}, []string{"waiting for approval: rein approve apr_", "done: sent 500 to acct-7"}},
		{"langchain", tsDir, []string{"node", "examples/langchain.js"}, []string{"waiting for approval: rein approve apr_", "done: sent 500 to acct-7"}},
		{"openai-agents", tsDir, []string{"node", "examples/openai-agents.js"}, []string{"payments_transfer: approved", "sent 500 to acct-7", "payment handled"}},
		{"ai-sdk", tsDir, []string{"node", "examples/ai-sdk.js"}, []string{"waiting for approval", "sent 500 to acct-7", "payment handled"}},
	} {
		t.Run(ex.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			go approveAll(ctx, s, carol.Key)
			cmd := exec.CommandContext(ctx, ex.cmd[0], ex.cmd[1:]...)
			cmd.Dir = ex.dir
			cmd.Env = harness.CleanEnv("REIN_SERVER="+s.URL, "REIN_KEY="+agent)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(ex.cmd, " "), err, out)
			}
			rest := string(out)
			for _, w := range ex.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("%s: output lacks %q (in order)\n%s", strings.Join(ex.cmd, " "), w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// approveAll approves, as key, every pending approval it sees until ctx ends.
func approveAll(ctx context.Context, s *harness.Server, key string) {
	for ctx.Err() == nil {
		var pending []struct{ ID string }
		code, body := harness.HTTPDo(s.T, "GET", s.URL+"/v1/approvals?status=pending", key, nil, "")
		if code == 200 && json.Unmarshal(body, &pending) == nil {
			for _, a := range pending {
				harness.HTTPDo(s.T, "POST", s.URL+"/v1/approvals/"+a.ID+"/votes", key, []byte(`{"vote":"approve","message":"ok"}`), "application/json")
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
