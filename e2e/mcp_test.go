package e2e

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
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// mcpPolicy governs the reference filesystem server behind `rein mcp
// --name fs`, and the notes server (--name notes) used over HTTP.
const mcpPolicy = `version: 1
default: deny
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - id: fs-read
    when: 'tool in ["fs.read_text_file", "fs.read_file", "fs.list_directory", "fs.list_allowed_directories", "fs.get_file_info"]'
    decision: allow
  - id: fs-lock-files
    when: 'tool == "fs.write_file" && args.path.endsWith(".lock")'
    decision: deny
    reason: lock files are never written by agents
  - id: fs-write
    when: 'tool == "fs.write_file"'
    decision: ask
    reason: file writes need an approval
  - id: fs-search
    when: 'tool == "fs.search_files"'
    decision: modify
    modify: {set: {excludePatterns: ["**/secret*"]}}
    reason: searches never list secrets
  - id: fs-mkdir
    when: 'tool == "fs.create_directory"'
    decision: ask
    reason: the user at the client decides on new directories
    approval: {approvers: ["client"]}
  - {id: notes-echo, when: 'tool == "notes.echo" || tool == "notes.notes_count"', decision: allow}
  - {id: notes-write, when: 'tool == "notes.notes_write"', decision: deny, reason: notes are read-only here}
`

// mcpResult is client.mjs's output.
type mcpResult struct {
	Results []struct {
		Op           string
		Name         string
		Error        string
		Code         any
		IsError      bool
		Text         string
		Tools        []string
		OK           bool
		Server       map[string]any
		Capabilities map[string]any
		MS           int64
	}
	Elicitations []struct {
		Message string
		Schema  map[string]any
	}
	Progress []struct {
		Name     string
		MS       int64
		Progress float64
		Message  string
	}
}

type mcpEnv struct {
	*approvalEnv
	npm  string // e2e/mcp with node_modules
	root string // the filesystem server's directory
}

func newMCPEnv(t *testing.T) *mcpEnv {
	t.Helper()
	npm := testenv.NodeModules(t, filepath.Join(moduleRoot, "e2e", "mcp"))
	e := newApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, pol, mcpPolicy)
	e.s.stop()
	e.s = startServer(t, e.s.Data, nil, "--policy", pol)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "README.md"), "hello from the workspace\n")
	writeFile(t, filepath.Join(root, "secret-plan.txt"), "do not list me\n")
	writeFile(t, filepath.Join(root, "plan.txt"), "list me\n")
	return &mcpEnv{approvalEnv: e, npm: npm, root: root}
}

// fsServer is the command line of the reference filesystem server.
func (m *mcpEnv) fsServer() []string {
	return []string{"node", filepath.Join(m.npm, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), m.root}
}

// stdioPlan runs the client against `rein mcp` over stdio, as a desktop
// client would launch it.
func (m *mcpEnv) stdioPlan(server, key, elicitation string, wait string, steps ...map[string]any) map[string]any {
	args := append([]string{"mcp", "--name", "fs", "--wait", wait, "--"}, m.fsServer()...)
	return map[string]any{"transport": "stdio", "command": reinBin, "args": args, "elicitation": elicitation,
		"env": map[string]string{"REIN_SERVER": server, "REIN_KEY": key}, "steps": steps}
}

// runClient runs client.mjs with a plan and decodes its output.
func (m *mcpEnv) runClient(t *testing.T, plan map[string]any) mcpResult {
	t.Helper()
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(m.npm, "client.mjs"), string(b))
	cmd.Dir = m.npm
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var r mcpResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs printed %q (%v)\nstderr: %s", stdout.String(), err, stderr.String())
	}
	if len(r.Results) == 0 || r.Results[0].Error != "" {
		t.Fatalf("the MCP client could not connect: %+v\nstderr: %s", r.Results, stderr.String())
	}
	return r
}

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"op": "call", "name": name, "arguments": args}
}

func step(op string) map[string]any { return map[string]any{"op": op} }

// approveWhenAsked votes approve on the first pending approval of tool.
func (m *mcpEnv) approveWhenAsked(t *testing.T, tool string) chan string {
	done := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			code, body := httpDo(t, "GET", m.s.URL+"/v1/approvals?status=pending", m.keys["alice"], nil, "")
			var list []struct{ ID, Tool string }
			if code == 200 && json.Unmarshal(body, &list) == nil {
				for _, a := range list {
					if a.Tool == tool {
						code, _ := m.vote("alice", a.ID, "approve", "")
						done <- fmt.Sprintf("%s:%d", a.ID, code)
						return
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		done <- "no pending approval for " + tool
	}()
	return done
}

// TestMCPGatewayStdio: the official TypeScript client talks to the
// reference filesystem server through `rein mcp` over stdio.
func TestMCPGatewayStdio(t *testing.T) {
	m := newMCPEnv(t)
	approved := m.approveWhenAsked(t, "fs.write_file")
	r := m.runClient(t, m.stdioPlan(m.s.URL, m.keys["builder"], "none", "60s",
		step("listTools"),
		step("ping"),
		step("listResources"),
		call("read_text_file", map[string]any{"path": filepath.Join(m.root, "README.md")}),
		call("write_file", map[string]any{"path": filepath.Join(m.root, "deps.lock"), "content": "x"}),
		call("search_files", map[string]any{"path": m.root, "pattern": "**/*.txt"}),
		call("write_file", map[string]any{"path": filepath.Join(m.root, "notes.md"), "content": "approved write"}),
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
	if _, err := os.Stat(filepath.Join(m.root, "deps.lock")); !os.IsNotExist(err) {
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
	if b, err := os.ReadFile(filepath.Join(m.root, "notes.md")); err != nil || string(b) != "approved write" {
		t.Errorf("the approved write: %q %v", b, err)
	}

	// Each call was checked in one session, named by the gateway.
	var list []struct{ Tool, Session, Decision string }
	getJSON(t, m.s.URL+"/v1/approvals?status=consumed", m.keys["alice"], &list)
	if len(list) != 1 || list[0].Tool != "fs.write_file" || !strings.HasPrefix(list[0].Session, "mcp-") {
		t.Errorf("consumed approvals: %+v", list)
	}
}

// TestMCPGatewayElicitation: rules that name "client" as approver ask the
// client's user with a form; accept approves, decline rejects, a client
// without elicitation waits for rein's approvers instead.
func TestMCPGatewayElicitation(t *testing.T) {
	m := newMCPEnv(t)
	dir := filepath.Join(m.root, "reports")
	r := m.runClient(t, m.stdioPlan(m.s.URL, m.keys["builder"], "accept", "20s",
		call("create_directory", map[string]any{"path": dir})))
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
	getJSON(t, m.s.URL+"/v1/approvals?status=consumed", m.keys["alice"], &approvals)
	if len(approvals) != 1 || len(approvals[0].Votes) != 1 || approvals[0].Votes[0].By != "client" || approvals[0].Votes[0].Message != "looks right" {
		t.Fatalf("the client's vote in rein: %+v", approvals)
	}

	declined := filepath.Join(m.root, "declined")
	r = m.runClient(t, m.stdioPlan(m.s.URL, m.keys["builder"], "decline", "20s",
		call("create_directory", map[string]any{"path": declined})))
	if res := r.Results[1]; !res.IsError || !strings.Contains(res.Text, "rejected") {
		t.Fatalf("declined in the client: %+v", res)
	}
	if _, err := os.Stat(declined); !os.IsNotExist(err) {
		t.Fatalf("the declined call ran: %v", err)
	}

	// No elicitation support: nobody else may approve a client rule, so the
	// wait runs out and the error names the approval.
	r = m.runClient(t, m.stdioPlan(m.s.URL, m.keys["builder"], "none", "1s",
		call("create_directory", map[string]any{"path": filepath.Join(m.root, "never")})))
	if res := r.Results[1]; !res.IsError || !strings.Contains(res.Text, "needs approval apr_") {
		t.Fatalf("a client without elicitation: %+v", res)
	}

	// The client-vote endpoint is the asking key's only: another agent
	// cannot approve on the client's behalf.
	var pending []struct{ ID string }
	getJSON(t, m.s.URL+"/v1/approvals?status=pending", m.keys["alice"], &pending)
	if len(pending) != 1 {
		t.Fatalf("pending: %+v", pending)
	}
	code, body := httpDo(t, "POST", m.s.URL+"/v1/approvals/"+pending[0].ID+"/client-vote", m.keys["builder2"], []byte(`{"vote":"approve"}`), "application/json")
	if code != 404 {
		t.Fatalf("another agent's client vote: %d %s", code, body)
	}
}

// TestMCPGatewayHTTP: clients reach the gateway over streamable HTTP; the
// gateway reaches an upstream over streamable HTTP.
func TestMCPGatewayHTTP(t *testing.T) {
	m := newMCPEnv(t)
	gw := startGateway(t, m, "--name", "fs", "--wait", "60s", "--")
	approved := m.approveWhenAsked(t, "fs.write_file")
	r := m.runClient(t, map[string]any{"transport": "http", "url": gw, "elicitation": "accept", "steps": []map[string]any{
		step("listTools"),
		call("read_text_file", map[string]any{"path": filepath.Join(m.root, "README.md")}),
		call("write_file", map[string]any{"path": filepath.Join(m.root, "x.lock"), "content": "x"}),
		call("write_file", map[string]any{"path": filepath.Join(m.root, "http.md"), "content": "over http"}),
		call("create_directory", map[string]any{"path": filepath.Join(m.root, "elicited")}),
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
	if _, err := os.Stat(filepath.Join(m.root, "x.lock")); !os.IsNotExist(err) {
		t.Errorf("the denied write ran: %v", err)
	}
	<-approved
	if b, err := os.ReadFile(filepath.Join(m.root, "http.md")); res[4].IsError || err != nil || string(b) != "over http" {
		t.Errorf("approved write over HTTP: %+v %q %v", res[4], b, err)
	}
	if fi, err := os.Stat(filepath.Join(m.root, "elicited")); res[5].IsError || err != nil || !fi.IsDir() {
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
	r = m.runClient(t, map[string]any{"transport": "stdio", "command": reinBin,
		"args": []string{"mcp", "--name", "notes", "--upstream-url", up}, "elicitation": "none",
		"env": map[string]string{"REIN_SERVER": m.s.URL, "REIN_KEY": m.keys["builder"]},
		"steps": []map[string]any{step("listTools"), call("echo", map[string]any{"text": "hi"}),
			call("notes_write", map[string]any{"text": "x"}), call("notes_count", nil)}})
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
	m := newMCPEnv(t)
	down := "http://" + freeAddr(t)
	r := m.runClient(t, m.stdioPlan(down, m.keys["builder"], "none", "5s",
		step("listTools"),
		call("read_text_file", map[string]any{"path": filepath.Join(m.root, "README.md")}),
		call("write_file", map[string]any{"path": filepath.Join(m.root, "down.md"), "content": "x"}),
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
	if _, err := os.Stat(filepath.Join(m.root, "down.md")); !os.IsNotExist(err) {
		t.Errorf("a call reached the server with rein down: %v", err)
	}
}

// startGateway runs `rein mcp --listen` in front of the filesystem server
// and returns its URL.
func startGateway(t *testing.T, m *mcpEnv, args ...string) string {
	t.Helper()
	args = append(append([]string{"mcp", "--listen", "127.0.0.1:0"}, args...), m.fsServer()...)
	return startAndRead(t, exec.Command(reinBin, args...), cleanEnv("REIN_SERVER="+m.s.URL, "REIN_KEY="+m.keys["builder"]),
		"rein mcp is listening on ", true)
}

func startNotesServer(t *testing.T, m *mcpEnv) string {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(m.npm, "http-server.mjs"))
	cmd.Dir = m.npm
	return startAndRead(t, cmd, cleanEnv(), "listening on ", false)
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
