package gateway

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func withOpts(c map[string]any, kv ...any) map[string]any {
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

// TestMCPGatewayProgress: a call held for an approval reports progress to
// a client that asked for it, naming the approval; the official TypeScript
// client resets its request timeout on each, so an approval that takes
// longer than the timeout still runs the call. Without progress the same
// client times out, and the call it gave up on never runs.
func TestMCPGatewayProgress(t *testing.T) {
	m := harness.NewMCPEnv(t)
	approved := m.ApproveAfter(t, "fs.write_file", 4*time.Second)
	slow := filepath.Join(m.Root, "slow.md")
	gaveUp := filepath.Join(m.Root, "gave-up.md")
	r := m.RunClient(t, m.StdioPlanArgs([]string{"--wait", "30s", "--progress-every", "500ms"}, "none",
		withOpts(harness.MCPCall("write_file", map[string]any{"path": slow, "content": "after a slow approval"}), "timeout", 2000, "progress", true),
		withOpts(harness.MCPCall("write_file", map[string]any{"path": gaveUp, "content": "x"}), "timeout", 2000),
	))
	if got := <-approved; !strings.HasSuffix(got, ":200") {
		t.Fatalf("approving the write: %s", got)
	}
	res := r.Results
	if res[1].IsError || res[1].Error != "" || res[1].MS < 4000 {
		t.Fatalf("the call with progress must outlive its 2 s timeout and run once approved: %+v", res[1])
	}
	if b, err := os.ReadFile(slow); err != nil || string(b) != "after a slow approval" {
		t.Fatalf("the approved write: %q %v", b, err)
	}
	if len(r.Progress) < 4 {
		t.Fatalf("progress every 500ms over ~4s: %+v", r.Progress)
	}
	last := 0.0
	for _, p := range r.Progress {
		if p.Name != "write_file" || !strings.Contains(p.Message, "rein waits for approval apr_") || !strings.Contains(p.Message, "fs.write_file") ||
			!strings.Contains(p.Message, "file writes need an approval") || p.Progress <= last {
			t.Fatalf("progress must name the approval, the tool and the reason, and increase: %+v", r.Progress)
		}
		last = p.Progress
	}
	if !strings.Contains(res[2].Error, "Request timed out") {
		t.Fatalf("without progress the client times out: %+v", res[2])
	}
	if _, err := os.Stat(gaveUp); !os.IsNotExist(err) {
		t.Fatalf("the call the client gave up on ran: %v", err)
	}
}

// TestMCPGatewayDefaultWait: with no --wait, a call nobody approves gets
// rein's answer naming the approval before the official TypeScript
// client's default 60 s request timeout, not an MCP time-out error.
func TestMCPGatewayDefaultWait(t *testing.T) {
	t.Parallel() // mostly waiting
	m := harness.NewMCPEnv(t)
	r := m.RunClient(t, m.StdioPlanArgs(nil, "none",
		withOpts(harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "never.md"), "content": "x"}), "timeout", 0)))
	res := r.Results[1]
	if res.Error != "" || !res.IsError || !strings.Contains(res.Text, "needs approval apr_") || !strings.Contains(res.Text, "within 50s") {
		t.Fatalf("the answer at the default wait: %+v", res)
	}
	if res.MS < 49000 || res.MS > 59000 {
		t.Fatalf("answered after %d ms; the default wait is 50 s, the client's timeout 60 s", res.MS)
	}
}

// TestMCPGatewayUpstreamFlag: --upstream with --upstream-arg starts the
// same server as a command after --, with no "--" on the command line
// (launchers such as the MCP Inspector's config files mishandle it), and
// each argument reaches the server as is, spaces included.
func TestMCPGatewayUpstreamFlag(t *testing.T) {
	m := harness.NewMCPEnv(t)
	spaced := filepath.Join(m.Root, "a dir with spaces")
	if err := os.Mkdir(spaced, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, filepath.Join(spaced, "inside.txt"), "found inside\n")
	fsrv := m.FSServer()
	args := []string{"mcp", "--name", "fs", "--wait", "5s", "--upstream", fsrv[0]}
	for _, a := range append(fsrv[1:len(fsrv)-1], spaced) {
		args = append(args, "--upstream-arg", a)
	}
	r := m.RunClient(t, map[string]any{"transport": "stdio", "command": harness.Bin, "args": args, "elicitation": "none",
		"env": map[string]string{"REIN_SERVER": m.S.URL, "REIN_KEY": m.Keys["builder"]},
		"steps": []map[string]any{
			harness.MCPStep("listTools"),
			harness.MCPCall("read_text_file", map[string]any{"path": filepath.Join(spaced, "inside.txt")}),
			harness.MCPCall("read_text_file", map[string]any{"path": filepath.Join(m.Root, "README.md")}),
			harness.MCPCall("write_file", map[string]any{"path": filepath.Join(spaced, "deps.lock"), "content": "x"}),
		}})
	res := r.Results
	if !strings.Contains(strings.Join(res[1].Tools, ","), "read_text_file") {
		t.Fatalf("tools/list through --upstream: %+v", res[1])
	}
	if res[2].IsError || !strings.Contains(res[2].Text, "found inside") {
		t.Fatalf("the server got the spaced directory as one argument: %+v", res[2])
	}
	if !res[3].IsError || !strings.Contains(res[3].Text, "denied access") && !strings.Contains(res[3].Text, "outside allowed") {
		t.Fatalf("the server's only directory is the one given by --upstream-arg: %+v", res[3])
	}
	if !res[4].IsError || !strings.Contains(res[4].Text, "rein denied fs.write_file") {
		t.Fatalf("rein still decides: %+v", res[4])
	}

	// The upstream is given one way only.
	for _, bad := range [][]string{
		{"mcp", "--name", "fs", "--upstream", "node", "--", "node"},
		{"mcp", "--name", "fs", "--upstream", "node", "--upstream-url", "http://127.0.0.1:1/mcp"},
		{"mcp", "--name", "fs", "--upstream-arg", "x", "--", "node"},
		{"mcp", "--name", "fs"},
	} {
		cmd := exec.Command(harness.Bin, bad...)
		cmd.Env = harness.CleanEnv("REIN_SERVER="+m.S.URL, "REIN_KEY="+m.Keys["builder"])
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "upstream") {
			t.Errorf("%v: %v %s", bad, err, out)
		}
	}
}

// TestMCPGatewayProgressHTTP: the same over streamable HTTP, where rein's
// progress travels on the session's standalone stream.
func TestMCPGatewayProgressHTTP(t *testing.T) {
	m := harness.NewMCPEnv(t)
	gw := startGateway(t, m, "--name", "fs", "--wait", "30s", "--progress-every", "500ms", "--")
	approved := m.ApproveAfter(t, "fs.write_file", 3*time.Second)
	target := filepath.Join(m.Root, "over-http.md")
	r := m.RunClient(t, map[string]any{"transport": "http", "url": gw, "elicitation": "none", "steps": []map[string]any{
		withOpts(harness.MCPCall("write_file", map[string]any{"path": target, "content": "after progress over http"}), "timeout", 2000, "progress", true),
	}})
	if got := <-approved; !strings.HasSuffix(got, ":200") {
		t.Fatalf("approving: %s", got)
	}
	if res := r.Results[1]; res.IsError || res.Error != "" || res.MS < 3000 {
		t.Fatalf("the call with progress over HTTP: %+v", res)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "after progress over http" {
		t.Fatalf("the approved write: %q %v", b, err)
	}
	if len(r.Progress) < 3 || !strings.Contains(r.Progress[0].Message, "rein waits for approval apr_") {
		t.Fatalf("progress over HTTP: %+v", r.Progress)
	}
}
