package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	reinapi "github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/internal/testenv"
)

// BenchmarkMCPGatewayLatency measures what `rein mcp` adds to a tools/call:
// the same client (the official Go SDK) calls the same upstream (the
// reference filesystem server, over stdio) directly and through the
// gateway, whose rein server (SQLite, durable audit) allows the call. Each
// run makes `calls` sequential calls per path and reports p50/p99 of both
// and of the difference. Run it with:
//
//	go test -run '^$' -bench MCPGatewayLatency -benchtime 1x ./e2e/gateway
func BenchmarkMCPGatewayLatency(b *testing.B) {
	const calls = 2000
	npm := testenv.NodeModules(b, filepath.Join(harness.ModuleRoot, "e2e", "mcp"))
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	fsServer := []string{"node", filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), root}
	url, agentKey := benchServer(b)

	for range b.N {
		direct := measureCalls(b, exec.Command(fsServer[0], fsServer[1:]...), root, calls)
		gw := exec.Command(harness.Bin, append([]string{"mcp", "--name", "fs", "--"}, fsServer...)...)
		gw.Env = harness.CleanEnv("REIN_SERVER="+url, "REIN_KEY="+agentKey)
		through := measureCalls(b, gw, root, calls)
		d50, d99 := percentile(direct, 50), percentile(direct, 99)
		g50, g99 := percentile(through, 50), percentile(through, 99)
		b.ReportMetric(ms(d50), "direct-p50-ms")
		b.ReportMetric(ms(d99), "direct-p99-ms")
		b.ReportMetric(ms(g50), "gateway-p50-ms")
		b.ReportMetric(ms(g99), "gateway-p99-ms")
		b.ReportMetric(ms(g50-d50), "added-p50-ms")
		b.ReportMetric(ms(g99-d99), "added-p99-ms")
		// The part of the added time that is rein's check over HTTP.
		checks := measureChecks(b, url, agentKey, root, calls)
		b.ReportMetric(ms(percentile(checks, 50)), "check-p50-ms")
		b.ReportMetric(ms(percentile(checks, 99)), "check-p99-ms")
	}
}

// measureChecks times the check the gateway makes for each call, alone.
func measureChecks(b *testing.B, url, key, root string, n int) []time.Duration {
	b.Helper()
	c := client.New(url, key)
	req := reinapi.CheckRequest{Tool: "fs.read_text_file", Args: json.RawMessage(fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "README.md"))), Session: "bench"}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		res, err := c.Check(context.Background(), req)
		if err != nil || res.Decision != reinapi.Allow {
			b.Fatalf("check: %v %+v", err, res)
		}
		out = append(out, time.Since(start))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// measureCalls connects the Go SDK client to cmd over stdio and times
// sequential read_text_file calls, after a warm-up.
func measureCalls(b *testing.B, cmd *exec.Cmd, root string, n int) []time.Duration {
	b.Helper()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "rein-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("connect %v: %v", cmd.Args, err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "README.md")}}
	for range 200 {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
		out = append(out, time.Since(start))
	}
	return out
}

// benchServer starts rein serve with a policy that allows the reads and
// returns its URL and an agent key. (The test helpers take *testing.T.)
func benchServer(b *testing.B) (string, string) {
	b.Helper()
	dir := b.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: deny\nrules:\n  - {id: reads, when: 'tool == \"fs.read_text_file\"', decision: allow}\n"), 0o644)
	cmd := exec.Command(harness.Bin, "serve", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--policy", pol)
	cmd.Env = harness.CleanEnv()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "rein is listening on "); ok {
				url <- a
			}
		}
	}()
	var u string
	select {
	case u = <-url:
	case <-time.After(harness.StartTimeout):
		b.Fatal("rein serve did not start")
	}
	admin, err := os.ReadFile(filepath.Join(dir, "data", "admin.key"))
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("POST", u+"/v1/keys", bytes.NewReader([]byte(`{"name":"bench","tenant":"bench","roles":["agent"]}`)))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(admin)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var created struct{ Key string }
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || created.Key == "" {
		b.Fatal(fmt.Errorf("create key: %v (%d)", err, resp.StatusCode))
	}
	return u, created.Key
}
