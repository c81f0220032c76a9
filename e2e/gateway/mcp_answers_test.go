package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/internal/testenv"
)

// answersPolicy makes the gateway write each kind of answer of its own:
// a deny, a throttle, and an approval nobody decides in time.
const answersPolicy = `version: 1
default: deny
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - {id: echo, when: 'tool == "go.echo"', decision: allow}
  - {id: stamp-no, when: 'tool == "go.stamp"', decision: deny, reason: stamps are refused here}
  - {id: note-limited, when: 'tool == "go.write_note" && args.text == "limited"', decision: allow}
  - {id: note-rate, when: 'tool == "go.write_note" && args.text == "limited"', limit: {rate: 1, per: 1h, by: [session]}}
  - {id: note-ask, when: 'tool == "go.write_note" && args.text == "ask"', decision: ask, reason: notes need an approval}
`

// answer is one call's outcome as a client saw it: an error means the
// client could not read the answer at all.
type clientAnswer struct {
	Op, Name, Error, Text string
	IsError               bool
}

// answerCase is one call and what its answer must say.
type answerCase struct {
	tool string
	args map[string]any
	want string // in the text of a tool error result; "" for a relayed success
}

// TestMCPGatewayOwnAnswersEveryVersion: every kind of answer the gateway
// writes itself (deny, throttle, an approval nobody decided, rein refusing
// the check, rein unreachable) reaches the official clients as a tool
// error result they can read, on every protocol version they speak through
// the gateway: the Go SDK 1.8 client on each version, the TypeScript SDK
// v1 client, and the v2 client pinned to 2026-07-28 (which requires
// resultType on every result) and on the 2025 handshake.
func TestMCPGatewayOwnAnswersEveryVersion(t *testing.T) {
	t.Parallel() // mostly waiting on client processes
	e := &statelessEnv{ApprovalEnv: harness.NewApprovalEnvWith(t, t.TempDir(), answersPolicy), record: filepath.Join(t.TempDir(), "record.txt")}
	bin, err := buildMCPServer()
	if err != nil {
		t.Fatal(err)
	}
	e.server = bin
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("rein serve's stderr:\n%s", e.S.Stderr)
		}
	})
	npm := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "e2e", "mcp"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens there: rein is down

	up := []answerCase{
		{"echo", map[string]any{"text": "hi"}, ""},
		{"stamp", map[string]any{}, "rein denied go.stamp: stamps are refused here"},
		{"write_note", map[string]any{"text": "limited"}, ""},
		{"write_note", map[string]any{"text": "limited"}, "rein rate-limited go.write_note"},
		{"write_note", map[string]any{"text": "ask"}, "Nobody decided within 1s"},
	}
	runs := []struct {
		name, server, key string
		cases             []answerCase
	}{
		{"rein up", e.S.URL, e.Keys["builder"], up},
		{"key refused", e.S.URL, "rein_notakey", []answerCase{{"echo", map[string]any{"text": "hi"}, "rein refused the check of go.echo"}}},
		{"rein down", down, e.Keys["builder"], []answerCase{{"echo", map[string]any{"text": "hi"}, "rein is unreachable"}}},
	}
	gatewayArgs := []string{"mcp", "--name", "go", "--wait", "1s", "--rein-timeout", "5s", "--upstream", e.server, "--upstream-arg", e.record}

	clients := []struct {
		name string
		run  func(t *testing.T, server, key string, cases []answerCase) []clientAnswer
	}{}
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		clients = append(clients, struct {
			name string
			run  func(t *testing.T, server, key string, cases []answerCase) []clientAnswer
		}{"go-sdk " + v, func(t *testing.T, server, key string, cases []answerCase) []clientAnswer {
			return goClientAnswers(t, gatewayArgs, server, key, v, cases)
		}})
	}
	script := func(name, file string, extra map[string]any) {
		clients = append(clients, struct {
			name string
			run  func(t *testing.T, server, key string, cases []answerCase) []clientAnswer
		}{name, func(t *testing.T, server, key string, cases []answerCase) []clientAnswer {
			var steps []map[string]any
			for _, c := range cases {
				steps = append(steps, map[string]any{"op": "call", "name": c.tool, "arguments": c.args})
			}
			plan := map[string]any{"transport": "stdio", "command": harness.Bin, "args": gatewayArgs, "elicitation": "none",
				"env": map[string]string{"REIN_SERVER": server, "REIN_KEY": key}, "steps": steps}
			for k, v := range extra {
				plan[k] = v
			}
			return scriptAnswers(t, npm, file, plan)
		}})
	}
	script("typescript-sdk v1", "client.mjs", nil)
	script("typescript-client v2 2026-07-28", "client-v2.mjs", map[string]any{"version": "2026-07-28"})
	script("typescript-client v2 legacy", "client-v2.mjs", map[string]any{"version": "legacy"})

	for _, c := range clients {
		for _, r := range runs {
			got := c.run(t, r.server, r.key, r.cases)
			if len(got) != len(r.cases) {
				t.Errorf("%s, %s: %d answers for %d calls: %+v", c.name, r.name, len(got), len(r.cases), got)
				continue
			}
			for i, want := range r.cases {
				a := got[i]
				switch {
				case a.Error != "":
					t.Errorf("%s, %s: %s %v: the client could not read the answer: %s", c.name, r.name, want.tool, want.args, a.Error)
				case want.want == "" && a.IsError:
					t.Errorf("%s, %s: %s %v must run: %+v", c.name, r.name, want.tool, want.args, a)
				case want.want != "" && (!a.IsError || !strings.Contains(a.Text, want.want)):
					t.Errorf("%s, %s: %s %v: want a tool error saying %q, got %+v", c.name, r.name, want.tool, want.args, want.want, a)
				}
			}
		}
	}
	// Only the allowed calls reached the server: one limited note per
	// client's session, no stamp, no asked note.
	if got, want := e.ran(), strings.Repeat("limited\n", len(clients)); got != want {
		t.Errorf("what ran upstream: %q, want %q", got, want)
	}
}

// goClientAnswers makes the calls with the official Go SDK client on
// protocol version through `rein mcp` over stdio.
func goClientAnswers(t *testing.T, gatewayArgs []string, server, key, version string, cases []answerCase) []clientAnswer {
	t.Helper()
	cmd := exec.Command(harness.Bin, gatewayArgs...)
	cmd.Env = harness.CleanEnv("REIN_SERVER="+server, "REIN_KEY="+key)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "rein-e2e-go", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("go-sdk %s: connect through the gateway: %v", version, err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("go-sdk: negotiated %s through the gateway, want %s", got, version)
	}
	var out []clientAnswer
	for _, k := range cases {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: k.tool, Arguments: k.args})
		if err != nil {
			out = append(out, clientAnswer{Op: "call", Name: k.tool, Error: err.Error()})
			continue
		}
		out = append(out, clientAnswer{Op: "call", Name: k.tool, Text: callText(r), IsError: r.IsError})
	}
	return out
}

// scriptAnswers runs one of the TypeScript client scripts with plan and
// returns its calls' answers.
func scriptAnswers(t *testing.T, npm, script string, plan map[string]any) []clientAnswer {
	t.Helper()
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(npm, script), string(b))
	cmd.Dir = npm
	cmd.Env = harness.CleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	var r struct{ Results []clientAnswer }
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || len(r.Results) == 0 || r.Results[0].Error != "" {
		t.Fatalf("%s printed %q (%v)\nstderr: %s", script, stdout.String(), err, stderr.String())
	}
	return r.Results[1:]
}
