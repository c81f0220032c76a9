package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// MCPPolicy governs the reference filesystem server behind `rein mcp
// --name fs`, and the notes server (--name notes) used over HTTP.
const MCPPolicy = `version: 1
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

// MCPResult is client.mjs's output.
type MCPResult struct {
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

// MCPEnv is an ApprovalEnv serving MCPPolicy, with e2e/mcp's npm packages
// and a workspace for the reference filesystem server.
type MCPEnv struct {
	*ApprovalEnv
	NPM  string // e2e/mcp with node_modules
	Root string // the filesystem server's directory
}

// NewMCPEnv installs e2e/mcp's packages and starts the server of an MCPEnv.
func NewMCPEnv(t *testing.T) *MCPEnv {
	t.Helper()
	npm := testenv.NodeModules(t, filepath.Join(ModuleRoot, "e2e", "mcp"))
	e := NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	WriteFile(t, pol, MCPPolicy)
	e.S.Stop()
	e.S = StartServer(t, e.S.Data, nil, "--policy", pol)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(root, "README.md"), "hello from the workspace\n")
	WriteFile(t, filepath.Join(root, "secret-plan.txt"), "do not list me\n")
	WriteFile(t, filepath.Join(root, "plan.txt"), "list me\n")
	return &MCPEnv{ApprovalEnv: e, NPM: npm, Root: root}
}

// FSServer is the command line of the reference filesystem server.
func (m *MCPEnv) FSServer() []string {
	return []string{"node", filepath.Join(m.NPM, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), m.Root}
}

// StdioPlan runs the client against `rein mcp` over stdio, as a desktop
// client would launch it.
func (m *MCPEnv) StdioPlan(server, key, elicitation string, wait string, steps ...map[string]any) map[string]any {
	args := append([]string{"mcp", "--name", "fs", "--wait", wait, "--"}, m.FSServer()...)
	return map[string]any{"transport": "stdio", "command": Bin, "args": args, "elicitation": elicitation,
		"env": map[string]string{"REIN_SERVER": server, "REIN_KEY": key}, "steps": steps}
}

// StdioPlanArgs runs the client against `rein mcp` over stdio with the
// given gateway flags and the filesystem server after --.
func (m *MCPEnv) StdioPlanArgs(flags []string, elicitation string, steps ...map[string]any) map[string]any {
	args := append(append([]string{"mcp", "--name", "fs"}, flags...), "--")
	args = append(args, m.FSServer()...)
	return map[string]any{"transport": "stdio", "command": Bin, "args": args, "elicitation": elicitation,
		"env": map[string]string{"REIN_SERVER": m.S.URL, "REIN_KEY": m.Keys["builder"]}, "steps": steps}
}

// RunClient runs client.mjs with a plan and decodes its output.
func (m *MCPEnv) RunClient(t *testing.T, plan map[string]any) MCPResult {
	t.Helper()
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(m.NPM, "client.mjs"), string(b))
	cmd.Dir = m.NPM
	cmd.Env = CleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var r MCPResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs printed %q (%v)\nstderr: %s", stdout.String(), err, stderr.String())
	}
	if len(r.Results) == 0 || r.Results[0].Error != "" {
		t.Fatalf("the MCP client could not connect: %+v\nstderr: %s", r.Results, stderr.String())
	}
	return r
}

// MCPCall is a step of a client plan that calls tool name.
func MCPCall(name string, args map[string]any) map[string]any {
	return map[string]any{"op": "call", "name": name, "arguments": args}
}

// MCPStep is a step of a client plan without arguments (listTools...).
func MCPStep(op string) map[string]any { return map[string]any{"op": op} }

// ApproveWhenAsked votes approve on the first pending approval of tool.
func (m *MCPEnv) ApproveWhenAsked(t *testing.T, tool string) chan string {
	done := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			code, body := HTTPDo(t, "GET", m.S.URL+"/v1/approvals?status=pending", m.Keys["alice"], nil, "")
			var list []struct{ ID, Tool string }
			if code == 200 && json.Unmarshal(body, &list) == nil {
				for _, a := range list {
					if a.Tool == tool {
						code, _ := m.Vote("alice", a.ID, "approve", "")
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

// ApproveAfter votes approve on the first pending approval of tool once it
// has been pending for at least delay.
func (m *MCPEnv) ApproveAfter(t *testing.T, tool string, delay time.Duration) chan string {
	done := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		var seen time.Time
		for time.Now().Before(deadline) {
			code, body := HTTPDo(t, "GET", m.S.URL+"/v1/approvals?status=pending", m.Keys["alice"], nil, "")
			var list []struct{ ID, Tool string }
			if code == 200 && json.Unmarshal(body, &list) == nil {
				for _, a := range list {
					if a.Tool != tool {
						continue
					}
					if seen.IsZero() {
						seen = time.Now()
					}
					if time.Since(seen) >= delay {
						code, _ := m.Vote("alice", a.ID, "approve", "")
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
