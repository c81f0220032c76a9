package gateway

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/internal/testenv"
)

// TestMCPGatewayInspector: the MCP Inspector's CLI launches `rein mcp`
// from a config file. With --upstream and --upstream-arg the entry has no
// bare "--", which the Inspector 1.x CLI takes for its own (it appends its
// --method after the entry's args, so the upstream got it); the current
// Inspector takes either form. Through each, allowed calls run and a call
// that needs an approval is refused naming it, never reaching the server.
func TestMCPGatewayInspector(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	e := newStatelessEnv(t)
	dir := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "e2e", "mcp-inspector"))
	env := map[string]string{"REIN_SERVER": e.S.URL, "REIN_KEY": e.Keys["builder"]}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"upstream": map[string]any{"command": harness.Bin, "env": env,
			"args": []string{"mcp", "--name", "go", "--wait", "1s", "--upstream", e.server, "--upstream-arg", e.record}},
		"dashdash": map[string]any{"command": harness.Bin, "env": env,
			"args": []string{"mcp", "--name", "go", "--wait", "1s", "--", e.server, e.record}},
	}})
	harness.WriteFile(t, cfg, string(b))
	home := t.TempDir()

	for _, insp := range []struct {
		version string
		cli     string
		servers []string
	}{
		{"2.12.0", filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"), []string{"upstream", "dashdash"}},
		{"1.0.3", filepath.Join(dir, "node_modules", "inspector-v1", "cli", "build", "cli.js"), []string{"upstream"}},
	} {
		for _, server := range insp.servers {
			run := func(args ...string) (string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", append([]string{insp.cli, "--cli", "--config", cfg, "--server", server}, args...)...)
				cmd.Dir = t.TempDir()
				cmd.Env = harness.CleanEnv("HOME="+home, "MCP_INSPECTOR_SECRET_STORE=memory")
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			name := insp.version + "/" + server
			out, err := run("--method", "tools/list")
			if err != nil || !strings.Contains(out, "write_note") {
				t.Fatalf("%s tools/list: %v\n%s", name, err, out)
			}
			out, err = run("--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
			if err != nil || !strings.Contains(out, "echo: hi") {
				t.Fatalf("%s allowed call: %v\n%s", name, err, out)
			}
			out, _ = run("--method", "tools/call", "--tool-name", "write_note", "--tool-arg", "text=never")
			if !strings.Contains(out, "needs approval apr_") {
				t.Fatalf("%s a call that needs an approval: %s", name, out)
			}
		}
	}
	if got := e.ran(); got != "" {
		t.Fatalf("a call that needed an approval ran: %q", got)
	}
}
