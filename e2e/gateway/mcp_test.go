package gateway

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestMCPGatewayStdio: the official TypeScript client talks to the
// reference filesystem server through `rein mcp` over stdio.
func TestMCPGatewayStdio(t *testing.T) {
	m := harness.NewMCPEnv(t)
	approved := m.ApproveWhenAsked(t, "fs.write_file")
	r := m.RunClient(t, m.StdioPlan(m.S.URL, m.Keys["builder"], "none", "60s",
		harness.MCPStep("listTools"),
		harness.MCPStep("ping"),
		harness.MCPStep("listResources"),
		harness.MCPCall("read_text_file", map[string]any{"path": filepath.Join(m.Root, "README.md")}),
		harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "deps.lock"), "content": "x"}),
		harness.MCPCall("search_files", map[string]any{"path": m.Root, "pattern": "**/*.txt"}),
		harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "notes.md"), "content": "approved write"}),
	))
	res := r.Results
	if name, _ := res[0].Server["name"].(string); !strings.Contains(name, "filesystem") {
		t.Errorf("initialize: server info %v; the upstream's must pass through", res[0].Server)
	}
	if tools := strings.Join(res[1].Tools, ","); !strings.Contains(tools, "read_text_file") || !strings.Contains(tools, "write_file") {
		t.Errorf("tools/list passed through: %v", res[1].Tools)
	}
	if !res[2].OK {
		t.Errorf("ping: %+v", res[2])
	}
	if !strings.Contains(res[3].Error, "Method not found") {
		t.Errorf("resources/list must reach the server, which has no resources: %+v", res[3])
	}
	if res[4].IsError || !strings.Contains(res[4].Text, "hello from the workspace") {
		t.Errorf("allowed read: %+v", res[4])
	}
	if !res[5].IsError || !strings.Contains(res[5].Text, "rein denied fs.write_file: lock files are never written by agents") {
		t.Errorf("denied write: %+v", res[5])
	}
	if _, err := os.Stat(filepath.Join(m.Root, "deps.lock")); !os.IsNotExist(err) {
		t.Errorf("the denied write reached the server: %v", err)
	}
	if res[6].IsError || !strings.Contains(res[6].Text, "plan.txt") || strings.Contains(res[6].Text, "secret") {
		t.Errorf("modified search (secrets excluded by rein's changed arguments): %+v", res[6])
	}
	if got := <-approved; !strings.HasSuffix(got, ":200") {
		t.Fatalf("approving the write: %s", got)
	}
	if res[7].IsError {
		t.Errorf("approved write: %+v", res[7])
	}
	if b, err := os.ReadFile(filepath.Join(m.Root, "notes.md")); err != nil || string(b) != "approved write" {
		t.Errorf("the approved write: %q %v", b, err)
	}

	// Each call was checked in one session, named by the gateway.
	var list []struct{ Tool, Session, Decision string }
	harness.GetJSON(t, m.S.URL+"/v1/approvals?status=consumed", m.Keys["alice"], &list)
	if len(list) != 1 || list[0].Tool != "fs.write_file" || !strings.HasPrefix(list[0].Session, "mcp-") {
		t.Errorf("consumed approvals: %+v", list)
	}
}

// TestMCPGatewayElicitation: rules that name "client" as approver ask the
// client's user with a form; accept approves, decline rejects, a client
// without elicitation waits for rein's approvers instead.
func TestMCPGatewayElicitation(t *testing.T) {
	m := harness.NewMCPEnv(t)
	dir := filepath.Join(m.Root, "reports")
	r := m.RunClient(t, m.StdioPlan(m.S.URL, m.Keys["builder"], "accept", "20s",
		harness.MCPCall("create_directory", map[string]any{"path": dir})))
	if res := r.Results[1]; res.IsError {
		t.Fatalf("accepted in the client: %+v", res)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the accepted call did not run: %v", err)
	}
	if len(r.Elicitations) != 1 || !strings.Contains(r.Elicitations[0].Message, "fs.create_directory") ||
		!strings.Contains(r.Elicitations[0].Message, "reports") {
		t.Fatalf("elicitations: %+v", r.Elicitations)
	}
	var approvals []struct {
		Status string
		Votes  []struct{ By, Vote, Message string }
	}
	harness.GetJSON(t, m.S.URL+"/v1/approvals?status=consumed", m.Keys["alice"], &approvals)
	if len(approvals) != 1 || len(approvals[0].Votes) != 1 || approvals[0].Votes[0].By != "client" || approvals[0].Votes[0].Message != "looks right" {
		t.Fatalf("the client's vote in rein: %+v", approvals)
	}

	declined := filepath.Join(m.Root, "declined")
	r = m.RunClient(t, m.StdioPlan(m.S.URL, m.Keys["builder"], "decline", "20s",
		harness.MCPCall("create_directory", map[string]any{"path": declined})))
	if res := r.Results[1]; !res.IsError || !strings.Contains(res.Text, "rejected") {
		t.Fatalf("declined in the client: %+v", res)
	}
	if _, err := os.Stat(declined); !os.IsNotExist(err) {
		t.Fatalf("the declined call ran: %v", err)
	}

	// No elicitation support: nobody else may approve a client rule, so the
	// wait runs out and the error names the approval.
	r = m.RunClient(t, m.StdioPlan(m.S.URL, m.Keys["builder"], "none", "1s",
		harness.MCPCall("create_directory", map[string]any{"path": filepath.Join(m.Root, "never")})))
	if res := r.Results[1]; !res.IsError || !strings.Contains(res.Text, "needs approval apr_") {
		t.Fatalf("a client without elicitation: %+v", res)
	}

	// The client-vote endpoint is the asking key's only: another agent
	// cannot approve on the client's behalf.
	var pending []struct{ ID string }
	harness.GetJSON(t, m.S.URL+"/v1/approvals?status=pending", m.Keys["alice"], &pending)
	if len(pending) != 1 {
		t.Fatalf("pending: %+v", pending)
	}
	code, body := harness.HTTPDo(t, "POST", m.S.URL+"/v1/approvals/"+pending[0].ID+"/client-vote", m.Keys["builder2"], []byte(`{"vote":"approve"}`), "application/json")
	if code != 404 {
		t.Fatalf("another agent's client vote: %d %s", code, body)
	}
}

// TestMCPGatewayHTTP: clients reach the gateway over streamable HTTP; the
// gateway reaches an upstream over streamable HTTP.
func TestMCPGatewayHTTP(t *testing.T) {
	m := harness.NewMCPEnv(t)
	gw := startGateway(t, m, "--name", "fs", "--wait", "60s", "--")
	approved := m.ApproveWhenAsked(t, "fs.write_file")
	r := m.RunClient(t, map[string]any{"transport": "http", "url": gw, "elicitation": "accept", "steps": []map[string]any{
		harness.MCPStep("listTools"),
		harness.MCPCall("read_text_file", map[string]any{"path": filepath.Join(m.Root, "README.md")}),
		harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "x.lock"), "content": "x"}),
		harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "http.md"), "content": "over http"}),
		harness.MCPCall("create_directory", map[string]any{"path": filepath.Join(m.Root, "elicited")}),
	}})
	res := r.Results
	if !strings.Contains(strings.Join(res[1].Tools, ","), "write_file") {
		t.Errorf("tools/list over HTTP: %+v", res[1])
	}
	if res[2].IsError || !strings.Contains(res[2].Text, "hello from the workspace") {
		t.Errorf("allowed read over HTTP: %+v", res[2])
	}
	if !res[3].IsError || !strings.Contains(res[3].Text, "rein denied") {
		t.Errorf("denied write over HTTP: %+v", res[3])
	}
	if _, err := os.Stat(filepath.Join(m.Root, "x.lock")); !os.IsNotExist(err) {
		t.Errorf("the denied write ran: %v", err)
	}
	<-approved
	if b, err := os.ReadFile(filepath.Join(m.Root, "http.md")); res[4].IsError || err != nil || string(b) != "over http" {
		t.Errorf("approved write over HTTP: %+v %q %v", res[4], b, err)
	}
	if fi, err := os.Stat(filepath.Join(m.Root, "elicited")); res[5].IsError || err != nil || !fi.IsDir() {
		t.Errorf("elicitation over HTTP: %+v %v", res[5], err)
	}

	// A browser page cannot reach the loopback gateway: DNS rebinding (a
	// foreign Host) and cross-origin requests are refused before any session.
	for _, h := range []struct{ host, origin string }{{"evil.example:80", ""}, {"", "https://evil.example"}} {
		req, _ := http.NewRequest("POST", gw, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		if h.host != "" {
			req.Host = h.host
		}
		if h.origin != "" {
			req.Header.Set("Origin", h.origin)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("Host %q Origin %q: %d, want 403", h.host, h.origin, resp.StatusCode)
		}
	}

	// Upstream over streamable HTTP: a TypeScript SDK server.
	up := startNotesServer(t, m)
	r = m.RunClient(t, map[string]any{"transport": "stdio", "command": harness.Bin,
		"args": []string{"mcp", "--name", "notes", "--upstream-url", up}, "elicitation": "none",
		"env": map[string]string{"REIN_SERVER": m.S.URL, "REIN_KEY": m.Keys["builder"]},
		"steps": []map[string]any{harness.MCPStep("listTools"), harness.MCPCall("echo", map[string]any{"text": "hi"}),
			harness.MCPCall("notes_write", map[string]any{"text": "x"}), harness.MCPCall("notes_count", nil)}})
	res = r.Results
	if !strings.Contains(strings.Join(res[1].Tools, ","), "notes_write") || res[2].Text != "echo: hi" {
		t.Errorf("HTTP upstream: %+v", res)
	}
	if !res[3].IsError || res[4].Text != "0" {
		t.Errorf("a denied call must never reach the HTTP upstream: %+v / count %+v", res[3], res[4])
	}
}

// TestMCPGatewayReinDown: with rein unreachable every call is an error
// result and nothing reaches the server; other traffic still passes.
func TestMCPGatewayReinDown(t *testing.T) {
	m := harness.NewMCPEnv(t)
	down := "http://" + harness.FreeAddr(t)
	r := m.RunClient(t, m.StdioPlan(down, m.Keys["builder"], "none", "5s",
		harness.MCPStep("listTools"),
		harness.MCPCall("read_text_file", map[string]any{"path": filepath.Join(m.Root, "README.md")}),
		harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "down.md"), "content": "x"}),
	))
	res := r.Results
	if len(res[1].Tools) == 0 {
		t.Errorf("tools/list without rein: %+v", res[1])
	}
	for _, c := range res[2:] {
		if !c.IsError || !strings.Contains(c.Text, "rein is unreachable") {
			t.Errorf("%s with rein down: %+v", c.Name, c)
		}
	}
	if _, err := os.Stat(filepath.Join(m.Root, "down.md")); !os.IsNotExist(err) {
		t.Errorf("a call reached the server with rein down: %v", err)
	}
}

// startGateway runs `rein mcp --listen` in front of the filesystem server
// and returns its URL.
func startGateway(t *testing.T, m *harness.MCPEnv, args ...string) string {
	t.Helper()
	args = append(append([]string{"mcp", "--listen", "127.0.0.1:0"}, args...), m.FSServer()...)
	return startAndRead(t, exec.Command(harness.Bin, args...), harness.CleanEnv("REIN_SERVER="+m.S.URL, "REIN_KEY="+m.Keys["builder"]),
		"rein mcp is listening on ", true)
}

func startNotesServer(t *testing.T, m *harness.MCPEnv) string {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(m.NPM, "http-server.mjs"))
	cmd.Dir = m.NPM
	return startAndRead(t, cmd, harness.CleanEnv(), "listening on ", false)
}

// startAndRead starts cmd and returns what follows prefix on its first
// matching line of stderr (or stdout).
func startAndRead(t *testing.T, cmd *exec.Cmd, env []string, prefix string, stderr bool) string {
	t.Helper()
	cmd.Env = env
	var pipe interface{ Read([]byte) (int, error) }
	var err error
	if stderr {
		pipe, err = cmd.StderrPipe()
	} else {
		pipe, err = cmd.StdoutPipe()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				found <- strings.TrimSpace(a)
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(20 * time.Second):
		t.Fatalf("%v printed no %q line", cmd.Args, prefix)
	}
	return ""
}
