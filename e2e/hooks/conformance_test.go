package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	reinapi "github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

// The conformance table: every scenario through every entry point, against
// the real binary, asserting what ran — with exactly which arguments. An
// entry point only renders rein's one answer; if it drops or replaces the
// arguments rein allowed, a row fails. A new entry point needs a row here.

// conformancePolicy decides fs.write_file by the content it would write.
const conformancePolicy = `version: 1
default: deny
rules:
  - {id: allow, when: 'tool == "fs.write_file" && args.content.startsWith("allow")', decision: allow}
  - {id: modify, when: 'tool == "fs.write_file" && args.content.startsWith("modify")', decision: modify,
     modify: {set: {content: "modified by policy"}}, reason: "content is replaced"}
  - {id: deny, when: 'tool == "fs.write_file" && args.content.startsWith("deny")', decision: deny, reason: "denied content"}
  - {id: throttle, when: 'tool == "fs.write_file" && args.content.startsWith("throttle")', decision: allow}
  - {id: throttle-limit, when: 'tool == "fs.write_file" && args.content.startsWith("throttle")', limit: {rate: 1, per: 1h, by: [session]}}
  - {id: ask, when: 'tool == "fs.write_file" && args.content.startsWith("ask")', decision: ask,
     approval: {approvers: ["group:oncall"], ttl: 5m}}
`

// act is what the approver does once the call asks: nothing, or a vote.
type act struct {
	vote string // approve, reject, edit
	edit string // the edited content
	lock bool   // lock the agent first (a lock during the wait)
}

type scenario struct {
	name  string
	calls []string // the contents written, in one session
	act   act
	// want is the content each call ran with; "" means it did not run.
	want []string
}

var scenarios = []scenario{
	{"allow", []string{"allow me"}, act{}, []string{"allow me"}},
	{"modify", []string{"modify me"}, act{}, []string{"modified by policy"}},
	{"deny", []string{"deny me"}, act{}, []string{""}},
	{"throttle", []string{"throttle one", "throttle two"}, act{}, []string{"throttle one", ""}},
	{"ask-approve", []string{"ask approve"}, act{vote: "approve"}, []string{"ask approve"}},
	{"ask-edit-approve", []string{"ask edit"}, act{vote: "edit", edit: "ask edited by the approver"}, []string{"ask edited by the approver"}},
	{"ask-reject", []string{"ask reject"}, act{vote: "reject"}, []string{""}},
	{"ask-lock-during-wait", []string{"ask locked"}, act{vote: "lock", lock: true}, []string{""}},
}

// entryPoint runs calls (fs.write_file with path and content) in one session
// the way its integration does and returns, per call, the arguments that
// ran (nil: nothing ran). approver acts on each pending approval it finds.
type entryPoint struct {
	name string
	run  func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any
}

type conformance struct {
	*harness.MCPEnv
	seq atomic.Int64
}

func TestConformanceOfEveryEntryPoint(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	m := harness.NewMCPEnv(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, conformancePolicy)
	m.S.Stop()
	m.S = harness.StartServer(t, m.S.Data, nil, "--policy", pol)
	c := &conformance{MCPEnv: m}

	for _, ep := range entryPoints() {
		t.Run(ep.name, func(t *testing.T) {
			for _, sc := range scenarios {
				if failures := c.runScenario(t, ep, sc); len(failures) > 0 {
					t.Errorf("%s / %s:\n  %s", ep.name, sc.name, strings.Join(failures, "\n  "))
				}
			}
		})
	}

	// The table catches a broken adapter: a Claude Code hook renderer that
	// drops updatedInput runs the original arguments after an edit.
	broken := entryPoint{name: "hook-dropping-updatedInput", run: func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
		return c.hook(t, session, calls, true, true)
	}}
	var caught []string
	for _, sc := range scenarios {
		if failures := c.runScenario(t, broken, sc); len(failures) > 0 {
			caught = append(caught, sc.name)
		}
	}
	if strings.Join(caught, ",") != "modify,ask-edit-approve" {
		t.Errorf("a hook adapter that drops updatedInput must fail exactly the modify and edit rows; it failed %v", caught)
	}
}

// runScenario runs one scenario through one entry point and lists what
// differs from the expected outcome.
func (c *conformance) runScenario(t *testing.T, ep entryPoint, sc scenario) []string {
	n := c.seq.Add(1)
	session := fmt.Sprintf("conf-%d", n)
	var calls []map[string]any
	for i, content := range sc.calls {
		calls = append(calls, map[string]any{"path": filepath.Join(c.Root, fmt.Sprintf("out-%d-%d.txt", n, i)), "content": content + fmt.Sprintf(" #%d", n)})
	}
	done := make(chan string, 1)
	if sc.act.vote != "" {
		go func() { done <- c.approver(t, calls[0], sc.act, fmt.Sprintf(" #%d", n)) }()
	} else {
		done <- ""
	}
	ran := ep.run(t, c, session, calls)
	var failures []string
	if problem := <-done; problem != "" {
		failures = append(failures, "approver: "+problem)
	}
	for i, want := range sc.want {
		var got any
		if i < len(ran) && ran[i] != nil {
			got = ran[i]["content"]
			if !reflect.DeepEqual(ran[i]["path"], calls[i]["path"]) {
				failures = append(failures, fmt.Sprintf("call %d ran with path %v, want %v", i, ran[i]["path"], calls[i]["path"]))
			}
		}
		switch {
		case want == "" && got != nil:
			failures = append(failures, fmt.Sprintf("call %d ran with %q; it must not run", i, got))
		case want != "" && got == nil:
			failures = append(failures, fmt.Sprintf("call %d did not run; want it run with %q", i, want))
		case want != "" && got != want && got != want+fmt.Sprintf(" #%d", n):
			failures = append(failures, fmt.Sprintf("call %d ran with %q, want %q", i, got, want))
		}
	}
	return failures
}

// approver waits for the call's approval to be pending, then acts on it.
func (c *conformance) approver(t *testing.T, call map[string]any, a act, suffix string) string {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var list []struct {
			ID   string
			Args map[string]any
		}
		code, body := harness.HTTPDo(t, "GET", c.S.URL+"/v1/approvals?status=pending", c.Keys["alice"], nil, "")
		if code == 200 && json.Unmarshal(body, &list) == nil {
			for _, p := range list {
				if p.Args["content"] != call["content"] {
					continue
				}
				if a.lock {
					code, body := harness.HTTPDo(t, "POST", c.S.URL+"/v1/locks", c.S.AdminKey(), []byte(`{"tenant":"acme","target":{"agent":"builder"},"reason":"conformance: lock during wait"}`), "application/json")
					if code != 201 {
						return fmt.Sprintf("lock: %d %s", code, body)
					}
					var l struct{ ID string }
					json.Unmarshal(body, &l)
					// The lock invalidates the pending approval; it is held while
					// the entry point answers, then lifted for the next row.
					time.Sleep(3 * time.Second)
					harness.HTTPDo(t, "DELETE", c.S.URL+"/v1/locks/"+l.ID, c.S.AdminKey(), nil, "")
					return ""
				}
				extra := ""
				if a.vote == "edit" {
					b, _ := json.Marshal(map[string]any{"path": call["path"], "content": a.edit + suffix})
					extra = `,"args":` + string(b)
				}
				if code, body := c.Vote("alice", p.ID, a.vote, extra); code != 200 {
					return fmt.Sprintf("%s: %d %v", a.vote, code, body)
				}
				return ""
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "no pending approval for " + fmt.Sprint(call["content"])
}

func entryPoints() []entryPoint {
	return []entryPoint{
		{"http-check-wait_ms", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.httpCheck(t, session, calls, "wait_ms")
		}},
		{"http-check-then-approval-wait", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.httpCheck(t, session, calls, "wait")
		}},
		{"http-check-resubmit", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.httpCheck(t, session, calls, "resubmit")
		}},
		{"claude-code-hook-http", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.hook(t, session, calls, false, false)
		}},
		{"claude-code-hook-cli", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.hook(t, session, calls, true, false)
		}},
		{"acs", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.acs(t, session, calls)
		}},
		{"mcp-gateway-stdio", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.gateway(t, calls)
		}},
		{"go-sdk-guard", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.goGuard(t, session, calls)
		}},
		{"typescript-sdk-guard", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.script(t, session, calls, "node", "--input-type=module", "-e", tsGuard, filepath.Join(harness.ModuleRoot, "sdk", "typescript", "src", "index.js"))
		}},
		{"python-sdk-guarded", func(t *testing.T, c *conformance, session string, calls []map[string]any) []map[string]any {
			return c.script(t, session, calls, "python3", "-c", pyGuarded, filepath.Join(harness.ModuleRoot, "sdk", "python"))
		}},
	}
}

// goGuard runs each call through the Go client's Guard: what ran is what
// the guarded function was called with.
func (c *conformance) goGuard(t *testing.T, session string, calls []map[string]any) []map[string]any {
	cl := client.New(c.S.URL, c.Keys["builder"])
	var ran []map[string]any
	for _, call := range calls {
		raw, _ := json.Marshal(call)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var got map[string]any
		err := cl.GuardCheck(ctx, reinapi.CheckRequest{Tool: "fs.write_file", Args: raw, Session: session}, func(_ context.Context, args json.RawMessage) error {
			return json.Unmarshal(args, &got)
		})
		cancel()
		var denied *client.DeniedError
		if err != nil && !errors.As(err, &denied) {
			t.Fatalf("Guard: %v", err)
		}
		ran = append(ran, got)
	}
	return ran
}

// tsGuard and pyGuarded call the SDK's guard for each call of the plan in
// argv and print what the guarded function was called with (null: it was
// not called).
const tsGuard = `
const { ReinClient, DeniedError } = await import("file://" + process.argv[1]);
const plan = JSON.parse(process.argv[2]);
const client = new ReinClient({ server: plan.server, key: plan.key });
const ran = [];
for (const call of plan.calls) {
  try {
    ran.push(await client.guard("fs.write_file", call, async (args) => args, { session: plan.session, timeoutMs: 30000 }));
  } catch (err) {
    if (!(err instanceof DeniedError)) throw err;
    ran.push(null);
  }
}
process.stdout.write(JSON.stringify(ran));
`

const pyGuarded = `
import json, sys
sys.path.insert(0, sys.argv[1])
import rein
plan = json.loads(sys.argv[2])
client = rein.Client(server=plan["server"], key=plan["key"])
ran = []
for call in plan["calls"]:
    try:
        ran.append(client.guarded("fs.write_file", call, lambda args: args, timeout=30, session=plan["session"]))
    except rein.Denied:
        ran.append(None)
print(json.dumps(ran))
`

// script runs an SDK script with the plan as its last argument and decodes
// the JSON list it prints.
func (c *conformance) script(t *testing.T, session string, calls []map[string]any, name string, args ...string) []map[string]any {
	plan, _ := json.Marshal(map[string]any{"server": c.S.URL, "key": c.Keys["builder"], "session": session, "calls": calls})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, append(args, string(plan))...)
	cmd.Env = harness.CleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr: %s", name, err, stderr.String())
	}
	var ran []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &ran); err != nil {
		t.Fatalf("%s printed %q: %v\nstderr: %s", name, stdout.String(), err, stderr.String())
	}
	return ran
}

// httpCheck is an SDK-style caller of POST /v1/check: it runs exactly the
// args of an allow; on ask it waits (wait_ms in the check, the approval's
// wait endpoint, or a re-submission once the approver acted).
func (c *conformance) httpCheck(t *testing.T, session string, calls []map[string]any, how string) []map[string]any {
	agent := c.Keys["builder"]
	var ran []map[string]any
	check := func(args map[string]any, waitMS int) map[string]any {
		body, _ := json.Marshal(map[string]any{"tool": "fs.write_file", "args": args, "session": session, "wait_ms": waitMS})
		code, out := harness.HTTPDo(t, "POST", c.S.URL+"/v1/check", agent, body, "application/json")
		var a map[string]any
		if json.Unmarshal(out, &a) != nil || code != 200 {
			t.Fatalf("POST /v1/check: %d %s", code, out)
		}
		return a
	}
	for _, call := range calls {
		wait := 0
		if how == "wait_ms" {
			wait = 30000
		}
		a := check(call, wait)
		if a["decision"] == "ask" && how == "wait" {
			id := a["approval"].(map[string]any)["id"].(string)
			_, a = c.Wait("builder", id, 30000)
		}
		if a["decision"] == "ask" && how == "resubmit" {
			id := a["approval"].(map[string]any)["id"].(string)
			harness.Eventually(t, 30*time.Second, "approval "+id+" decided", func() string {
				var ap struct{ Status string }
				harness.GetJSON(t, c.S.URL+"/v1/approvals/"+id, c.Keys["alice"], &ap)
				if ap.Status == "pending" {
					return "pending"
				}
				return ""
			})
			a = check(call, 0)
		}
		if d := a["decision"]; d == "allow" || d == "modify" {
			args, _ := a["args"].(map[string]any)
			ran = append(ran, args)
		} else {
			ran = append(ran, nil)
		}
	}
	return ran
}

// hook runs Claude Code's PreToolUse exchange (CLI or HTTP, on-ask wait)
// and applies the answer as Claude Code does: allow runs updatedInput when
// present, else the original input. dropUpdated is the broken adapter.
func (c *conformance) hook(t *testing.T, session string, calls []map[string]any, cli, dropUpdated bool) []map[string]any {
	var ran []map[string]any
	for _, call := range calls {
		input, _ := json.Marshal(call)
		in := ccInput(session, "fs.write_file", string(input))
		var o hookOutput
		if cli {
			o = runHook(t, c.S.ClientEnv(c.Keys["builder"]), in, "--on-ask", "wait", "--wait", "30s")
		} else {
			code, out := harness.HTTPDo(t, "POST", c.S.URL+"/v1/hooks/claude-code?on_ask=wait&wait=30s", c.Keys["builder"], []byte(in), "application/json")
			if code != 200 {
				t.Fatalf("hook: %d %s", code, out)
			}
			o = parseHookOutput(t, "hook http", out)
		}
		if o.decision() != "allow" {
			ran = append(ran, nil)
			continue
		}
		run := call
		if u := o.HookSpecificOutput.UpdatedInput; len(u) > 0 && !dropUpdated {
			run = nil
			json.Unmarshal(u, &run)
		}
		ran = append(ran, run)
	}
	return ran
}

// acs sends steps/toolCallRequest and applies the result as an ACS agent
// does: allow runs the step's arguments, modify applies parameter_overrides
// (null removes); on ask it re-submits with a new request_id once the
// approver acted.
func (c *conformance) acs(t *testing.T, session string, calls []map[string]any) []map[string]any {
	var ran []map[string]any
	for _, call := range calls {
		send := func() acsReply {
			r := acsToolCall(t, c.S.URL, c.Keys["builder"], session, call)
			if r.Result == nil {
				t.Fatalf("acs: %+v", r.Error)
			}
			return r
		}
		r := send()
		if r.Result.Decision == "ask" {
			id, _ := r.Result.PolicyData["rein"].(map[string]any)["approval_id"].(string)
			harness.Eventually(t, 30*time.Second, "approval "+id+" decided", func() string {
				var ap struct{ Status string }
				harness.GetJSON(t, c.S.URL+"/v1/approvals/"+id, c.Keys["alice"], &ap)
				if ap.Status == "pending" {
					return "pending"
				}
				return ""
			})
			r = send()
		}
		switch r.Result.Decision {
		case "allow":
			ran = append(ran, call)
		case "modify":
			run := map[string]any{}
			for k, v := range call {
				run[k] = v
			}
			for k, v := range r.Result.Modifications.ParameterOverrides {
				if v == nil {
					delete(run, k)
				} else {
					run[k] = v
				}
			}
			ran = append(ran, run)
		default:
			ran = append(ran, nil)
		}
	}
	return ran
}

// gateway calls write_file through `rein mcp` over stdio with the official
// MCP client; what ran is what the upstream filesystem server wrote.
func (c *conformance) gateway(t *testing.T, calls []map[string]any) []map[string]any {
	var steps []map[string]any
	for _, call := range calls {
		steps = append(steps, map[string]any{"op": "call", "name": "write_file", "arguments": call})
	}
	c.RunClient(t, c.StdioPlan(c.S.URL, c.Keys["builder"], "none", "30s", steps...))
	var ran []map[string]any
	for _, call := range calls {
		b, err := os.ReadFile(call["path"].(string))
		if err != nil {
			ran = append(ran, nil)
			continue
		}
		ran = append(ran, map[string]any{"path": call["path"], "content": string(b)})
	}
	return ran
}

// TestSessionsEndAtEveryEntryPoint: every entry point records the end of
// its session (session.ended); later checks in it are denied.
func TestSessionsEndAtEveryEntryPoint(t *testing.T) {
	m := harness.NewMCPEnv(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, conformancePolicy)
	m.S.Stop()
	m.S = harness.StartServer(t, m.S.Data, nil, "--policy", pol)
	c := &conformance{MCPEnv: m}
	agent := m.Keys["builder"]
	write := func(n int) map[string]any {
		return map[string]any{"path": filepath.Join(m.Root, fmt.Sprintf("end-%d.txt", n)), "content": "allow end"}
	}
	ended := func(session string) {
		t.Helper()
		harness.Eventually(t, 10*time.Second, "session "+session+" ended", func() string {
			var s struct {
				EndedAt *time.Time `json:"ended_at"`
			}
			harness.GetJSON(t, m.S.URL+"/v1/sessions/"+session, m.Keys["alice"], &s)
			if s.EndedAt == nil {
				return "not ended"
			}
			return ""
		})
		if ran := c.httpCheck(t, session, []map[string]any{write(99)}, "resubmit"); ran[0] != nil {
			t.Errorf("a check in ended session %s ran", session)
		}
	}

	c.httpCheck(t, "end-http", []map[string]any{write(1)}, "resubmit")
	if code, body := harness.HTTPDo(t, "POST", m.S.URL+"/v1/sessions/end-http/end", agent, nil, ""); code != 200 {
		t.Fatalf("POST /v1/sessions/end-http/end: %d %s", code, body)
	}
	ended("end-http")

	c.hook(t, "end-hook-http", []map[string]any{write(2)}, false, false)
	endInput := `{"session_id":"end-hook-http","hook_event_name":"SessionEnd","reason":"exit"}`
	if code, out := harness.HTTPDo(t, "POST", m.S.URL+"/v1/hooks/claude-code", agent, []byte(endInput), "application/json"); code != 200 || strings.TrimSpace(string(out)) != "{}" {
		t.Fatalf("SessionEnd over HTTP: %d %s", code, out)
	}
	ended("end-hook-http")

	c.hook(t, "end-hook-cli", []map[string]any{write(3)}, true, false)
	if r := harness.Rein(t, m.S.ClientEnv(agent), "hook", "claude-code"); r.Code != 0 {
		t.Logf("hook with no input: %v", r) // reading nothing is a deny; the next call ends the session
	}
	cmd := exec.Command(harness.Bin, "hook", "claude-code")
	cmd.Env, cmd.Stdin = m.S.ClientEnv(agent), strings.NewReader(`{"session_id":"end-hook-cli","hook_event_name":"SessionEnd","reason":"exit"}`)
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "{}" {
		t.Fatalf("SessionEnd over the CLI: %q %v", out, err)
	}
	ended("end-hook-cli")

	c.acs(t, "end-acs", []map[string]any{write(4)})
	if _, r := postACS(t, m.S.URL, agent, acsEnvelope(agent, "steps/sessionEnd", uuid(), time.Now(), "end-acs", map[string]any{"reason": "done"})); r.Result == nil {
		t.Fatalf("steps/sessionEnd: %+v", r.Error)
	}
	ended("end-acs")

	c.gateway(t, []map[string]any{write(5)})
	var checks []struct {
		Check struct{ Session string } `json:"check"`
	}
	harness.GetJSON(t, m.S.URL+"/v1/checks?tool=fs.write_file&limit=1", m.Keys["alice"], &checks)
	if len(checks) != 1 || !strings.HasPrefix(checks[0].Check.Session, "mcp-") {
		t.Fatalf("the gateway's check: %+v", checks)
	}
	ended(checks[0].Check.Session)
}
