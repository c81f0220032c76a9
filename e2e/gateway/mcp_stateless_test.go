package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/internal/testenv"
)

// statelessPolicy governs the Go SDK server behind `rein mcp --name go`.
const statelessPolicy = `version: 1
default: deny
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - {id: go-echo, when: 'tool == "go.echo"', decision: allow}
  - id: go-stamp
    when: 'tool == "go.stamp"'
    decision: ask
    reason: the user stamps
    approval: {approvers: ["client"]}
  - id: go-note-client
    when: 'tool == "go.write_note" && args.text.startsWith("client:")'
    decision: ask
    reason: the user at the client decides on these notes
    approval: {approvers: ["client"]}
  - id: go-note
    when: 'tool == "go.write_note" && !args.text.startsWith("client:")'
    decision: ask
    reason: notes need an approval
`

type statelessEnv struct {
	*harness.ApprovalEnv
	server string // the Go SDK server's binary
	record string // what its tools ran
}

var buildMCPServer = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("rein-e2e-mcpserver-%d", os.Getpid()))
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/mcpserver")
	cmd.Dir = filepath.Join(harness.ModuleRoot, "e2e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build mcpserver: %v\n%s", err, out)
	}
	return bin, nil
})

func newStatelessEnv(t *testing.T) *statelessEnv {
	t.Helper()
	bin, err := buildMCPServer()
	if err != nil {
		t.Fatal(err)
	}
	return &statelessEnv{ApprovalEnv: harness.NewApprovalEnvWith(t, t.TempDir(), statelessPolicy), server: bin, record: filepath.Join(t.TempDir(), "record.txt")}
}

func (e *statelessEnv) gateway(flags ...string) *exec.Cmd {
	args := append([]string{"mcp", "--name", "go", "--wait", "20s"}, flags...)
	args = append(args, "--upstream", e.server, "--upstream-arg", e.record)
	cmd := exec.Command(harness.Bin, args...)
	cmd.Env = harness.CleanEnv("REIN_SERVER="+e.S.URL, "REIN_KEY="+e.Keys["builder"])
	cmd.Stderr = os.Stderr
	return cmd
}

func (e *statelessEnv) ran() string {
	b, _ := os.ReadFile(e.record)
	return string(b)
}

// goClient connects the official Go SDK client through the gateway; its
// elicitation handler answers action and records the messages it saw.
func (e *statelessEnv) goClient(t *testing.T, version, action string) (*mcp.ClientSession, *[]string) {
	t.Helper()
	var asked []string
	var mu sync.Mutex
	c := mcp.NewClient(&mcp.Implementation{Name: "rein-e2e-go", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: action, Content: map[string]any{"note": "ok from the go client"}}, nil
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: e.gateway()}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s through the gateway, want %s", got, version)
	}
	return cs, &asked
}

func callText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPGatewayInputRequired: a client on protocol 2026-07-28 (the
// official Go SDK, v1.8.0) is asked for a client-approved call with an
// input_required result, answers on the retry, and the call runs once
// approved; declined, it never runs. A client on 2025-11-25 through the
// same gateway is asked with an elicitation request as before.
func TestMCPGatewayInputRequired(t *testing.T) {
	e := newStatelessEnv(t)
	ctx := context.Background()

	cs, asked := e.goClient(t, "2026-07-28", "accept")
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || r.IsError || callText(r) != "echo: hi" {
		t.Fatalf("allowed call on 2026-07-28: %v %+v", err, r)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"text": "client: accepted"}})
	if err != nil || r.IsError || callText(r) != "noted: client: accepted" {
		t.Fatalf("accepted through input_required: %v %+v %q", err, r, callText(r))
	}
	if len(*asked) != 1 || !strings.Contains((*asked)[0], "go.write_note needs your approval") || !strings.Contains((*asked)[0], "client: accepted") {
		t.Fatalf("the form the user saw: %q", *asked)
	}
	var consumed []struct {
		Tool  string
		Votes []struct{ By, Vote, Message string }
	}
	harness.GetJSON(t, e.S.URL+"/v1/approvals?status=consumed", e.Keys["alice"], &consumed)
	if len(consumed) != 1 || len(consumed[0].Votes) != 1 || consumed[0].Votes[0].By != "client" || consumed[0].Votes[0].Message != "ok from the go client" {
		t.Fatalf("the client's vote in rein: %+v", consumed)
	}

	// A tool without arguments: the retry is bound to {} as the call was.
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "stamp"})
	if err != nil || r.IsError || callText(r) != "stamped" {
		t.Fatalf("a client-approved call without arguments: %v %+v %q", err, r, callText(r))
	}

	cs2, _ := e.goClient(t, "2026-07-28", "decline")
	r, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"text": "client: declined"}})
	if err != nil || !r.IsError || !strings.Contains(callText(r), "rejected") {
		t.Fatalf("declined through input_required: %v %+v", err, r)
	}

	old, oldAsked := e.goClient(t, "2025-11-25", "accept")
	r, err = old.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"text": "client: older protocol"}})
	if err != nil || r.IsError || callText(r) != "noted: client: older protocol" || len(*oldAsked) != 1 {
		t.Fatalf("a 2025-11-25 client through the same gateway: %v %+v %q", err, r, *oldAsked)
	}
	if got := e.ran(); got != "client: accepted\nstamp\nclient: older protocol\n" {
		t.Fatalf("what ran upstream: %q", got)
	}
}

// rawClient speaks JSON-RPC to `rein mcp` over stdio, as a client of the
// Tasks extension on protocol 2026-07-28 does (the official SDKs' Go
// client has no Tasks support in v1.8.0).
type rawClient struct {
	t    *testing.T
	in   io.Writer
	out  *bufio.Scanner
	next int
}

func (e *statelessEnv) rawClient(t *testing.T, flags ...string) *rawClient {
	cmd := e.gateway(flags...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &rawClient{t: t, in: in, out: sc}
}

var tasksMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "rein-e2e-raw", "version": "1.0.0"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
}

// call sends one request and returns its result (failing on an error).
func (c *rawClient) call(method string, params map[string]any) map[string]any {
	c.t.Helper()
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = tasksMeta
	}
	c.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for c.out.Scan() {
		var m struct {
			ID     int
			Result map[string]any
			Error  map[string]any
		}
		if json.Unmarshal(c.out.Bytes(), &m) != nil || m.ID != c.next {
			continue // notifications
		}
		if m.Error != nil {
			c.t.Fatalf("%s: %v", method, m.Error)
		}
		return m.Result
	}
	c.t.Fatalf("%s: the gateway closed the connection", method)
	return nil
}

func (c *rawClient) poll(id string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r := c.call("tasks/get", map[string]any{"taskId": id})
		if r["status"] != "working" {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("task %s still working", id)
	return nil
}

func resultText(r map[string]any) string {
	var b strings.Builder
	res, _ := r["result"].(map[string]any)
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			b.WriteString(fmt.Sprint(m["text"]))
		}
	}
	return b.String()
}

// TestMCPGatewayTasks: a client on 2026-07-28 that declares the Tasks
// extension gets a pending approval as a task at once; the call runs when
// an approver approves and its result comes with tasks/get. A cancelled
// task never runs and withdraws its approval. With --sep-2848 identical
// pending calls share a task and finished tasks carry the disposition.
func TestMCPGatewayTasks(t *testing.T) {
	for _, sep := range []bool{false, true} {
		t.Run(fmt.Sprintf("sep-2848=%v", sep), func(t *testing.T) {
			e := newStatelessEnv(t)
			var flags []string
			if sep {
				flags = []string{"--sep-2848"}
			}
			c := e.rawClient(t, flags...)
			d := c.call("server/discover", map[string]any{})
			caps, _ := d["capabilities"].(map[string]any)
			ext, _ := caps["extensions"].(map[string]any)
			if _, ok := ext["io.modelcontextprotocol/tasks"]; !ok {
				t.Fatalf("server/discover must advertise the Tasks extension: %v", d)
			}
			if _, ok := ext["io.modelcontextprotocol/tool-approval"]; ok != sep {
				t.Fatalf("tool-approval advertised %v with --sep-2848=%v: %v", ok, sep, ext)
			}
			if vs, _ := d["supportedVersions"].([]any); len(vs) == 0 || vs[0] != "2026-07-28" {
				t.Fatalf("the upstream's versions pass through: %v", d)
			}

			approved := (&harness.MCPEnv{ApprovalEnv: e.ApprovalEnv}).ApproveAfter(t, "go.write_note", time.Second)
			start := time.Now()
			task := c.call("tools/call", map[string]any{"name": "write_note", "arguments": map[string]any{"text": "as a task"}})
			if task["resultType"] != "task" || task["status"] != "working" || !strings.Contains(fmt.Sprint(task["statusMessage"]), "rein waits for approval apr_") ||
				time.Since(start) > 3*time.Second {
				t.Fatalf("a pending approval must come back at once as a working task: %v", task)
			}
			if e.ran() != "" {
				t.Fatalf("the call ran before its approval: %q", e.ran())
			}
			id := fmt.Sprint(task["taskId"])
			if sep {
				again := c.call("tools/call", map[string]any{"name": "write_note", "arguments": map[string]any{"text": "as a task"}})
				if again["taskId"] != id {
					t.Fatalf("SEP-2848: an identical pending call shares the task: %v vs %s", again, id)
				}
			}
			if got := <-approved; !strings.HasSuffix(got, ":200") {
				t.Fatalf("approving: %s", got)
			}
			done := c.poll(id)
			if done["status"] != "completed" || resultText(done) != "noted: as a task" || done["resultType"] != "complete" {
				t.Fatalf("the approved task: %v", done)
			}
			res, _ := done["result"].(map[string]any)
			meta, _ := res["_meta"].(map[string]any)
			if disp := meta["io.modelcontextprotocol/tool-approval-disposition"]; (disp == "approved-executed") != sep {
				t.Fatalf("disposition %v with --sep-2848=%v", disp, sep)
			}
			if e.ran() != "as a task\n" {
				t.Fatalf("the approved call ran once: %q", e.ran())
			}

			// Cancelled before anyone decides: never runs, approval withdrawn.
			task = c.call("tools/call", map[string]any{"name": "write_note", "arguments": map[string]any{"text": "cancelled"}})
			id = fmt.Sprint(task["taskId"])
			c.call("tasks/cancel", map[string]any{"taskId": id})
			if got := c.call("tasks/get", map[string]any{"taskId": id}); got["status"] != "cancelled" {
				t.Fatalf("cancelled task: %v", got)
			}
			var pending []struct{ ID string }
			harness.GetJSON(t, e.S.URL+"/v1/approvals?status=pending", e.Keys["alice"], &pending)
			if len(pending) != 0 {
				t.Fatalf("the cancelled task's approval is still pending: %+v", pending)
			}

			// Rejected: completed as a tool error, never ran.
			rejected := make(chan string, 1)
			go func() {
				for range 100 {
					var list []struct{ ID string }
					harness.GetJSON(t, e.S.URL+"/v1/approvals?status=pending", e.Keys["alice"], &list)
					if len(list) > 0 {
						code, _ := e.Vote("alice", list[0].ID, "reject", `,"message":"not this one"`)
						rejected <- fmt.Sprint(code)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				rejected <- "none pending"
			}()
			task = c.call("tools/call", map[string]any{"name": "write_note", "arguments": map[string]any{"text": "rejected"}})
			if got := <-rejected; got != "200" {
				t.Fatalf("rejecting: %s", got)
			}
			done = c.poll(fmt.Sprint(task["taskId"]))
			res, _ = done["result"].(map[string]any)
			if done["status"] != "completed" || res["isError"] != true || !strings.Contains(resultText(done), "did not run") {
				t.Fatalf("the rejected task: %v", done)
			}
			if e.ran() != "as a task\n" {
				t.Fatalf("a cancelled or rejected call ran: %q", e.ran())
			}
			// A task id rein does not know goes to the upstream, which has none.
			c.next++
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": "tasks/get", "params": map[string]any{"taskId": "unknown", "_meta": tasksMeta}})
			c.in.Write(append(b, '\n'))
			for c.out.Scan() {
				var m struct {
					ID    int
					Error map[string]any
				}
				if json.Unmarshal(c.out.Bytes(), &m) == nil && m.ID == c.next {
					if m.Error == nil {
						t.Fatalf("tasks/get of an unknown task must be the upstream's error: %s", c.out.Bytes())
					}
					break
				}
			}
		})
	}
}

type v2Result struct {
	Results []struct {
		Op, Name, Error, Text, Version, Kind, Status, TaskStatus string
		IsError                                                  bool
		MS                                                       int64
	}
	Elicitations []struct{ Message string }
}

// runV2 runs client-v2.mjs (the official TypeScript SDK v2 and Tasks
// client) against `rein mcp` in front of the Go SDK server.
func (e *statelessEnv) runV2(t *testing.T, version, elicitation string, flags []string, steps ...map[string]any) v2Result {
	t.Helper()
	npm := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "e2e", "mcp"))
	args := append([]string{"mcp", "--name", "go", "--wait", "20s"}, flags...)
	args = append(args, "--upstream", e.server, "--upstream-arg", e.record)
	plan, _ := json.Marshal(map[string]any{"command": harness.Bin, "args": args, "version": version, "elicitation": elicitation,
		"env": map[string]string{"REIN_SERVER": e.S.URL, "REIN_KEY": e.Keys["builder"]}, "steps": steps})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(npm, "client-v2.mjs"), string(plan))
	cmd.Dir = npm
	cmd.Env = harness.CleanEnv()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client-v2.mjs: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("client-v2.mjs stderr:\n%s", stderr.String())
	var r v2Result
	if err := json.Unmarshal([]byte(stdout.String()), &r); err != nil || len(r.Results) == 0 || r.Results[0].Error != "" {
		t.Fatalf("client-v2.mjs printed %q (%v)\nstderr: %s", stdout.String(), err, stderr.String())
	}
	return r
}

// TestMCPGatewayTypeScriptV2: the official TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.4.0), pinned to 2026-07-28, through the
// gateway: allowed calls run, a client-approved call is answered by
// input_required and runs once the user accepts, and with the official
// Tasks client (@modelcontextprotocol/ext-tasks 0.2.2) a pending approval
// is a task whose result arrives once an approver approves. The same
// client on the 2025 handshake is asked with an elicitation request.
func TestMCPGatewayTypeScriptV2(t *testing.T) {
	e := newStatelessEnv(t)
	approved := (&harness.MCPEnv{ApprovalEnv: e.ApprovalEnv}).ApproveAfter(t, "go.write_note", time.Second)
	r := e.runV2(t, "2026-07-28", "accept", nil,
		map[string]any{"op": "call", "name": "echo", "arguments": map[string]any{"text": "hi"}},
		map[string]any{"op": "call", "name": "write_note", "arguments": map[string]any{"text": "client: v2 accepted"}},
		map[string]any{"op": "taskCall", "name": "write_note", "arguments": map[string]any{"text": "v2 task"}},
	)
	res := r.Results
	if res[0].Version != "2026-07-28" {
		t.Fatalf("negotiated %q through the gateway", res[0].Version)
	}
	if res[1].IsError || res[1].Text != "echo: hi" {
		t.Fatalf("allowed call: %+v", res[1])
	}
	if res[2].IsError || res[2].Error != "" || res[2].Text != "noted: client: v2 accepted" {
		t.Fatalf("accepted through input_required: %+v", res[2])
	}
	if len(r.Elicitations) != 1 || !strings.Contains(r.Elicitations[0].Message, "go.write_note needs your approval") {
		t.Fatalf("the form: %+v", r.Elicitations)
	}
	if got := <-approved; !strings.HasSuffix(got, ":200") {
		t.Fatalf("approving the task's call: %s; %+v", got, res[3])
	}
	if res[3].Error != "" || res[3].Kind != "task" || res[3].Status != "completed" || res[3].IsError || res[3].Text != "noted: v2 task" {
		t.Fatalf("the task through the official Tasks client: %+v", res[3])
	}

	r = e.runV2(t, "legacy", "accept", nil,
		map[string]any{"op": "call", "name": "write_note", "arguments": map[string]any{"text": "client: v2 on 2025"}})
	if res := r.Results; res[0].Version == "2026-07-28" || res[1].IsError || res[1].Text != "noted: client: v2 on 2025" || len(r.Elicitations) != 1 {
		t.Fatalf("the v2 client on the 2025 handshake: %+v %+v", res, r.Elicitations)
	}
	if got := e.ran(); got != "client: v2 accepted\nv2 task\nclient: v2 on 2025\n" {
		t.Fatalf("what ran upstream: %q", got)
	}
}

// TestMCPGatewayHTTPVersions: over streamable HTTP the gateway serves MCP
// sessions. The Go SDK v1.8.0 client, which tries 2026-07-28's
// server/discover first, gets a 400 for it and falls back to initialize,
// and no upstream is started for the session-less request: after the
// clients close, no upstream process is left.
func TestMCPGatewayHTTPVersions(t *testing.T) {
	e := newStatelessEnv(t)
	url := startAndRead(t, exec.Command(harness.Bin, "mcp", "--listen", "127.0.0.1:0", "--name", "go", "--wait", "2s", "--upstream", e.server, "--upstream-arg", e.record),
		harness.CleanEnv("REIN_SERVER="+e.S.URL, "REIN_KEY="+e.Keys["builder"]), "rein mcp is listening on ", true)
	for _, v := range []string{"", "2025-11-25"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := mcp.NewClient(&mcp.Implementation{Name: "rein-e2e-go", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatalf("asking for %q over HTTP: %v", v, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
			t.Fatalf("asking for %q over HTTP negotiated %s", v, got)
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
		if err != nil || r.IsError || callText(r) != "echo: over http" {
			t.Fatalf("asking for %q, the call: %v %+v", v, err, r)
		}
		cs.Close()
		cancel()
	}
	code, body := harness.HTTPDo(t, "POST", url, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`), "application/json")
	if code != 400 || !strings.Contains(string(body), "initialize") {
		t.Fatalf("a session-less request: %d %s", code, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for upstreams(e.server) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d upstream processes left after every client closed", upstreams(e.server))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// upstreams counts the running processes of the binary at path.
func upstreams(path string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.HasPrefix(string(b), path+"\x00") {
			n++
		}
	}
	return n
}

// TestMCPGatewayInputRequiredWire: the input_required exchange on the wire,
// for a tool called without arguments: rein's form and sealed state come
// back, the retry with the answer runs the call, and a retry whose state
// was tampered with, or that names other arguments, is refused.
func TestMCPGatewayInputRequiredWire(t *testing.T) {
	e := newStatelessEnv(t)
	c := e.rawClient(t)
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}
	first := c.call("tools/call", map[string]any{"name": "stamp", "_meta": meta})
	reqs, _ := first["inputRequests"].(map[string]any)
	form, _ := reqs["rein_approval"].(map[string]any)
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || form["method"] != "elicitation/create" || !strings.HasPrefix(state, "rein1.") {
		t.Fatalf("the first answer: %v", first)
	}
	accept := map[string]any{"rein_approval": map[string]any{"action": "accept", "content": map[string]any{}}}
	for _, bad := range []map[string]any{
		{"name": "stamp", "_meta": meta, "requestState": state[:len(state)-2] + "AA", "inputResponses": accept},
		{"name": "stamp", "_meta": meta, "arguments": map[string]any{"x": 1}, "requestState": state, "inputResponses": accept},
		{"name": "echo", "_meta": meta, "requestState": state, "inputResponses": accept},
	} {
		r := c.call("tools/call", bad)
		if r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "not forwarded") {
			t.Fatalf("a bad retry %v: %v", bad, r)
		}
	}
	again := c.call("tools/call", map[string]any{"name": "stamp", "_meta": meta, "requestState": state})
	if again["resultType"] != "input_required" {
		t.Fatalf("a retry without the answer is asked again: %v", again)
	}
	done := c.call("tools/call", map[string]any{"name": "stamp", "_meta": meta, "requestState": state, "inputResponses": accept})
	if done["isError"] == true || !strings.Contains(fmt.Sprint(done["content"]), "stamped") {
		t.Fatalf("the accepted retry: %v", done)
	}
	if got := e.ran(); got != "stamp\n" {
		t.Fatalf("what ran upstream: %q", got)
	}
}
