package gateway

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestMCPGatewayReinFaults: a rein that is slow, answers garbage or an
// answer of the wrong shape gets every call refused with an error naming
// the cause, before the client's own timeout; nothing reaches the server.
func TestMCPGatewayReinFaults(t *testing.T) {
	t.Parallel() // mostly waiting
	m := harness.NewMCPEnv(t)
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}, "rein did not answer within 2s"},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>captive portal</body></html>"))
		}, "rein's answer could not be read"},
		{"bad gateway", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>" + strings.Repeat("x", 5000) + "</html>"))
		}, "rein refused the check of fs.write_file (http_502"},
		{"wrong shape", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"decision":"perhaps","args":{"path":"/etc/passwd","content":"x"}}`))
		}, "rein denied fs.write_file"},
		{"wrong types", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"decision":["allow"]}`))
		}, "rein's answer could not be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := httptest.NewServer(c.handler)
			defer fake.Close()
			target := filepath.Join(m.Root, "fault-"+strings.ReplaceAll(c.name, " ", "-")+".md")
			args := append([]string{"mcp", "--name", "fs", "--rein-timeout", "2s", "--"}, m.FSServer()...)
			start := time.Now()
			r := m.RunClient(t, map[string]any{"transport": "stdio", "command": harness.Bin, "args": args, "elicitation": "none",
				"env": map[string]string{"REIN_SERVER": fake.URL, "REIN_KEY": m.Keys["builder"]},
				"steps": []map[string]any{
					harness.MCPStep("listTools"),
					withOpts(harness.MCPCall("write_file", map[string]any{"path": target, "content": "x"}), "timeout", 0),
				}})
			res := r.Results[2]
			if res.Error != "" || !res.IsError || !strings.Contains(res.Text, c.want) || !strings.Contains(res.Text, "not forwarded") && c.name != "wrong shape" {
				t.Fatalf("want an error result with %q: %+v", c.want, res)
			}
			if len(res.Text) > 400 {
				t.Fatalf("the cause is named, not the whole page: %d chars", len(res.Text))
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("refused after %s", time.Since(start))
			}
			if len(r.Results[1].Tools) == 0 {
				t.Fatalf("tools/list still passes through: %+v", r.Results[1])
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Fatalf("the call reached the server: %v", err)
			}
		})
	}
}
