package hooks

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// hooksGrantPolicy is hooksPolicy where an approver of a destructive
// command may grant it once, for the session or for an hour.
var hooksGrantPolicy = strings.Replace(hooksPolicy, `    decision: ask
    reason: destructive commands need an approval`, `    decision: ask
    approval: {approvers: ["role:approver"], grants: [once, session, 1h]}
    reason: destructive commands need an approval`, 1)

func newHookEnvWith(t *testing.T, policy string) *harness.ApprovalEnv {
	t.Helper()
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, policy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	return e
}

// toolUseID reads the tool_use_id of a hook input.
func toolUseID(t *testing.T, input string) string {
	t.Helper()
	var in struct {
		ToolUseID string `json:"tool_use_id"`
	}
	if err := json.Unmarshal([]byte(input), &in); err != nil || in.ToolUseID == "" {
		t.Fatalf("no tool_use_id in %s", input)
	}
	return in.ToolUseID
}

type recordedCheck struct {
	ID       string
	Decision string
	Result   *struct {
		Status    string
		Summary   string
		ArgsMatch *bool `json:"args_match"`
	}
}

// TestClaudeCodeHookDefer: a headless run (`claude -p`) with --on-ask defer
// stops at a call that needs an approval; resumed (the same tool call, so
// the same tool_use_id) it is deferred while the approval is pending, runs
// once it is approved, and is denied once it is rejected.
func TestClaudeCodeHookDefer(t *testing.T) {
	e := newHookEnv(t)
	env := e.S.ClientEnv(e.Keys["builder"])
	rm := ccInput("s-defer", "Bash", `{"command":"rm -rf build/","description":"clean"}`)
	id := toolUseID(t, rm)

	o := runHook(t, env, rm, "--on-ask", "defer")
	if o.decision() != "defer" || !strings.Contains(o.reason(), "apr_") || !strings.Contains(o.reason(), "resume") {
		t.Fatalf("--on-ask defer: %+v; want defer naming the approval", o)
	}
	apr := e.PendingApproval(t, "s-defer")
	if !strings.Contains(o.reason(), apr) {
		t.Fatalf("the reason names %s? %q", apr, o.reason())
	}
	// Resumed before anyone decides: deferred again, the same approval.
	if o := runHook(t, env, rm, "--on-ask", "defer"); o.decision() != "defer" || !strings.Contains(o.reason(), apr) {
		t.Fatalf("resumed while pending: %+v", o)
	}
	harness.MustVote(t, e, "alice", apr, "approve", "")
	o = runHook(t, env, rm, "--on-ask", "defer")
	if o.decision() != "allow" {
		t.Fatalf("resumed after the approval: %+v", o)
	}
	var in map[string]any
	if json.Unmarshal(o.HookSpecificOutput.UpdatedInput, &in) != nil || in["command"] != "rm -rf build/" {
		t.Fatalf("updatedInput %s", o.HookSpecificOutput.UpdatedInput)
	}
	// A repeated resume gets the same allow (the once grant is not used twice).
	if o := runHook(t, env, rm, "--on-ask", "defer"); o.decision() != "allow" {
		t.Fatalf("a repeated resume: %+v", o)
	}
	var apv struct {
		Status string
		Uses   int
	}
	harness.GetJSON(t, e.S.URL+"/v1/approvals/"+apr, e.Keys["alice"], &apv)
	if apv.Status != "consumed" {
		t.Fatalf("approval after the resumed run: %+v", apv)
	}
	// What ran is the result of the allow the resume got.
	ran := strings.Replace(rm, `"PreToolUse"`, `"PostToolUse"`, 1)
	mustPost(t, e.S.URL+"/v1/hooks/claude-code", e.Keys["builder"], ran)
	var rec recordedCheck
	harness.GetJSON(t, e.S.URL+"/v1/request-ids/claude-code:"+id, e.Keys["builder"], &rec)
	if rec.Decision != "allow" || rec.Result == nil || rec.Result.Status != "succeeded" || rec.Result.ArgsMatch == nil || !*rec.Result.ArgsMatch {
		t.Fatalf("the result of a resumed call: %+v", rec)
	}

	// Rejected: the resumed call is denied, with the approver's message.
	rm2 := ccInput("s-defer-no", "Bash", `{"command":"rm -rf dist/"}`)
	if o := runHook(t, env, rm2, "--on-ask", "defer"); o.decision() != "defer" {
		t.Fatalf("defer: %+v", o)
	}
	harness.MustVote(t, e, "alice", e.PendingApproval(t, "s-defer-no"), "reject", `,"message":"keep dist"`)
	if o := runHook(t, env, rm2, "--on-ask", "defer"); o.decision() != "deny" || !strings.Contains(o.reason(), "rejected") || !strings.Contains(o.reason(), "keep dist") {
		t.Fatalf("resumed after a rejection: %+v", o)
	}

	// The HTTP hook: on_ask=defer, the same flow.
	rm3 := ccInput("s-defer-http", "Bash", `{"command":"rm -rf out/"}`)
	post := func() hookOutput {
		return parseHookOutput(t, "defer over HTTP", mustPost(t, e.S.URL+"/v1/hooks/claude-code?on_ask=defer", e.Keys["builder"], rm3))
	}
	if o := post(); o.decision() != "defer" {
		t.Fatalf("on_ask=defer: %+v", o)
	}
	harness.MustVote(t, e, "alice", e.PendingApproval(t, "s-defer-http"), "approve", "")
	if o := post(); o.decision() != "allow" {
		t.Fatalf("on_ask=defer, resumed after the approval: %+v", o)
	}
	// A deny is never deferred.
	if o := runHook(t, env, ccInput("s-defer", "Write", `{"file_path":"/etc/hosts","content":"x"}`), "--on-ask", "defer"); o.decision() != "deny" {
		t.Fatalf("a deny in defer mode: %+v", o)
	}
}

// TestClaudeCodePermissionDenied: Claude Code denying a call rein allowed
// is recorded as the call not having run.
func TestClaudeCodePermissionDenied(t *testing.T) {
	e := newHookEnv(t)
	agent := e.Keys["builder"]
	for _, via := range []string{"http", "cli"} {
		pre := ccInput("s-denied-"+via, "Bash", `{"command":"ls -la"}`)
		id := toolUseID(t, pre)
		if o := parseHookOutput(t, "pre", mustPost(t, e.S.URL+"/v1/hooks/claude-code", agent, pre)); o.decision() != "allow" {
			t.Fatalf("pre: %+v", o)
		}
		denied := strings.Replace(pre, `"PreToolUse"`, `"PermissionDenied"`, 1)
		denied = strings.Replace(denied, `"tool_use_id"`, `"reason":"the classifier blocked it","tool_use_id"`, 1)
		var out []byte
		if via == "http" {
			out = mustPost(t, e.S.URL+"/v1/hooks/claude-code", agent, denied)
		} else {
			cmd := exec.Command(harness.Bin, "hook", "claude-code")
			cmd.Env, cmd.Stdin = e.S.ClientEnv(agent), strings.NewReader(denied)
			var err error
			if out, err = cmd.Output(); err != nil {
				t.Fatalf("PermissionDenied over the CLI: %v", err)
			}
		}
		if strings.TrimSpace(string(out)) != "{}" {
			t.Fatalf("%s: PermissionDenied answers {} (no retry): %s", via, out)
		}
		var rec recordedCheck
		harness.GetJSON(t, e.S.URL+"/v1/request-ids/claude-code:"+id, agent, &rec)
		if rec.Result == nil || rec.Result.Status != "failed" || !strings.Contains(rec.Result.Summary, "not run") ||
			!strings.Contains(rec.Result.Summary, "classifier") || rec.Result.ArgsMatch != nil {
			t.Fatalf("%s: the denied call's record: %+v", via, rec)
		}
	}
}

// TestClaudeCodeNeverSendsUpdatedPermissions: a PermissionRequest is never
// answered with updatedPermissions (Claude Code's "always allow"): not for a
// plain allow, nor for an allow by a once, session or window grant.
func TestClaudeCodeNeverSendsUpdatedPermissions(t *testing.T) {
	e := newHookEnvWith(t, hooksGrantPolicy)
	agent := e.Keys["builder"]
	permission := func(session, input string) string {
		return strings.Replace(ccInput(session, "Bash", input), `"PreToolUse"`, `"PermissionRequest"`, 1)
	}
	check := func(what string, out []byte, behavior string) {
		t.Helper()
		if strings.Contains(string(out), "updatedPermissions") || strings.Contains(string(out), "addRules") {
			t.Fatalf("%s: %s", what, out)
		}
		var m struct {
			HookSpecificOutput struct {
				Decision struct{ Behavior string }
			}
		}
		if json.Unmarshal(out, &m) != nil || m.HookSpecificOutput.Decision.Behavior != behavior {
			t.Fatalf("%s: %s; want %s", what, out, behavior)
		}
	}
	check("plain allow", mustPost(t, e.S.URL+"/v1/hooks/claude-code", agent, permission("g-plain", `{"command":"ls"}`)), "allow")

	for _, grant := range []string{"once", "session", "1h"} {
		session := "g-" + grant
		rm := `{"command":"rm -rf build/"}`
		done := make(chan []byte, 1)
		go func() {
			done <- mustPost(t, e.S.URL+"/v1/hooks/claude-code?on_ask=wait&wait=20s", agent, permission(session, rm))
		}()
		harness.MustVote(t, e, "alice", e.PendingApproval(t, session), "approve", `,"grant":"`+grant+`"`)
		var out []byte
		select {
		case out = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the hook did not answer after the approval", grant)
		}
		check(grant+" grant, the waiting call", out, "allow")
		// The next call of the same action: allowed by a scoped grant, asked
		// anew after a once grant; never a rule for Claude Code to keep.
		next := mustPost(t, e.S.URL+"/v1/hooks/claude-code?on_ask=deny", agent, permission(session, rm))
		if grant == "once" {
			check("after a once grant", next, "deny")
		} else {
			check(grant+" grant, the next call", next, "allow")
		}
	}
}

// TestClaudeCodeHookContentType: the hook endpoint decides only input sent
// as application/json (as Claude Code sends it); the same input as
// text/plain, a form or with no Content-Type is denied, naming the cause,
// and answered 200 like every refusal of the hook.
func TestClaudeCodeHookContentType(t *testing.T) {
	e := newHookEnv(t)
	ls := ccInput("s-content-type", "Bash", `{"command":"ls -la"}`)
	for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
		if o := parseHookOutput(t, ct, mustPostAs(t, e.S.URL+"/v1/hooks/claude-code", e.Keys["builder"], ct, ls)); o.decision() != "allow" {
			t.Errorf("as %s: %+v", ct, o)
		}
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		o := parseHookOutput(t, ct, mustPostAs(t, e.S.URL+"/v1/hooks/claude-code", e.Keys["builder"], ct, ls))
		if o.decision() != "deny" || !strings.Contains(o.reason(), "Content-Type: application/json") {
			t.Errorf("as %q: %+v; want a deny naming the Content-Type", ct, o)
		}
	}
}

// mustPostAs posts body with Content-Type ct ("" for none); the answer
// must be 200.
func mustPostAs(t *testing.T, url, key, ct, body string) []byte {
	t.Helper()
	code, out := harness.HTTPDo(t, "POST", url, key, []byte(body), ct)
	if code != 200 {
		t.Fatalf("POST %s as %q: %d %s", url, ct, code, out)
	}
	return out
}
