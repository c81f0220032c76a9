package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// sdkServer starts rein with the SDK tests' policy and returns it with an
// agent key and an approver key of tenant acme.
func sdkServer(t *testing.T) (s *server, agent, approver string) {
	t.Helper()
	s = startServer(t, t.TempDir(), nil, "--policy", filepath.Join(moduleRoot, "sdk", "testdata", "policy.yaml"))
	admin := s.adminKey()
	agent = createAgentKey(t, s, admin, "builder", "acme")
	r := rein(t, s.clientEnv(admin), "keys", "create", "alice", "--role", "approver", "--tenant", "acme", "--output", "json")
	if r.code != 0 {
		t.Fatalf("rein keys create alice: %s", r)
	}
	var k struct{ Key string }
	if err := json.Unmarshal([]byte(r.stdout), &k); err != nil || k.Key == "" {
		t.Fatalf("rein keys create alice --output json: %v\n%s", err, r)
	}
	return s, agent, k.Key
}

// runSDK runs a command of an SDK's own test suite against s, failing with
// its whole output when it exits non-zero.
func runSDK(t *testing.T, s *server, agent, approver, dir string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv("REIN_SERVER="+s.URL, "REIN_KEY="+agent, "REIN_APPROVER_KEY="+approver)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish within %s\n%s", name, strings.Join(args, " "), timeout, out)
	}
	if err != nil {
		t.Fatalf("%s %s: %v\n%s\nrein serve stderr:\n%s", name, strings.Join(args, " "), err, out, s.stderr)
	}
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
}

// TestSDKTypeScript runs the TypeScript client's and adapters' tests
// (LangGraph.js, OpenAI Agents JS, Vercel AI SDK, each a real agent loop
// with the framework's own scripted model) against a real rein.
func TestSDKTypeScript(t *testing.T) {
	dir := testenv.NodeModules(t, filepath.Join(moduleRoot, "sdk", "typescript"))
	s, agent, approver := sdkServer(t)
	files, err := filepath.Glob(filepath.Join(dir, "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s/test (%v)", dir, err)
	}
	runSDK(t, s, agent, approver, dir, 3*time.Minute, "node", append([]string{"--test", "--test-reporter=spec"}, files...)...)
}

// TestSDKTypeScriptTypes compiles the package's type declarations and a
// program that uses them with tsc.
func TestSDKTypeScriptTypes(t *testing.T) {
	dir := testenv.NodeModules(t, filepath.Join(moduleRoot, "sdk", "typescript"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "tsc"), "-p", "tsconfig.json")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p tsconfig.json: %v\n%s", err, out)
	}
}

// TestSDKPython runs the Python client's unittest suite against a real rein.
func TestSDKPython(t *testing.T) {
	py := testenv.Python(t)
	s, agent, approver := sdkServer(t)
	dir := filepath.Join(moduleRoot, "sdk", "python")
	if _, err := os.Stat(filepath.Join(dir, "rein")); err != nil {
		t.Fatal(err)
	}
	runSDK(t, s, agent, approver, dir, 2*time.Minute, py, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
}
