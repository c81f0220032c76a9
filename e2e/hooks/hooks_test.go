package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// hooksPolicy decides Claude Code's own tools the way a team might.
const hooksPolicy = `version: 1
default: deny
workspace: /srv/app
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - id: bash-read
    when: 'tool == "Bash" && risk.all(t, t == "shell")'
    decision: allow
    reason: read-only commands run
  - id: bash-destructive
    when: 'tool == "Bash" && "shell.destructive" in risk'
    decision: ask
    reason: destructive commands need an approval
  - id: bash-foreground
    when: 'tool == "Bash" && has(args.run_in_background) && args.run_in_background'
    decision: modify
    modify: {set: {run_in_background: false}}
    reason: commands run in the foreground, where their output is seen
  - id: write-workspace
    when: 'tool == "Write" && !("path.outside_workspace" in risk)'
    decision: allow
  - id: write-outside
    when: 'tool == "Write" && "path.outside_workspace" in risk'
    decision: deny
    reason: writes outside the workspace are not allowed
  - {id: web, when: 'tool == "WebFetch"', decision: allow}
  - {id: web-rate, when: 'tool == "WebFetch"', limit: {rate: 1, per: 1h, by: [agent]}}
  - {id: mcp-read, when: 'tool == "mcp__filesystem__read_file"', decision: allow}
`

// hookOutput is Claude Code's PreToolUse hook output, decoded strictly
// enough to catch a malformed answer.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

func (o hookOutput) decision() string { return o.HookSpecificOutput.PermissionDecision }
func (o hookOutput) reason() string   { return o.HookSpecificOutput.PermissionDecisionReason }

// parseHookOutput requires exactly one line of valid hook JSON with a
// known decision and a reason.
func parseHookOutput(t *testing.T, what string, stdout []byte) hookOutput {
	t.Helper()
	var o hookOutput
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("%s: the hook printed no valid hook JSON (%v):\n%s", what, err, stdout)
	}
	if rest := strings.TrimSpace(string(stdout[dec.InputOffset():])); rest != "" {
		t.Fatalf("%s: the hook printed more than one JSON value: %q", what, rest)
	}
	h := o.HookSpecificOutput
	if h.HookEventName != "PreToolUse" {
		t.Fatalf("%s: hookEventName %q, want PreToolUse", what, h.HookEventName)
	}
	switch h.PermissionDecision {
	case "allow", "deny", "ask", "defer":
	default:
		t.Fatalf("%s: permissionDecision %q", what, h.PermissionDecision)
	}
	if h.PermissionDecisionReason == "" {
		t.Fatalf("%s: no permissionDecisionReason", what)
	}
	return o
}

// runHook runs `rein hook claude-code ARGS` with input on stdin; it must
// exit 0 whatever happens.
func runHook(t *testing.T, env []string, input string, args ...string) hookOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Bin, append([]string{"hook", "claude-code"}, args...)...)
	cmd.Dir = harness.ModuleRoot
	cmd.Env = env
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rein hook claude-code %v: %v (it must exit 0 and print a decision)\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	return parseHookOutput(t, fmt.Sprintf("hook %v <<< %.80s", args, input), stdout.Bytes())
}

// ccInput is a PreToolUse input shaped as Claude Code documents it, with a
// tool_use_id of its own (Claude Code's ids are unique per call).
func ccInput(session, tool, toolInput string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/home/dev/.claude/projects/app/%s.jsonl","cwd":"/srv/app",`+
		`"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"toolu_01%s%d"}`,
		session, session, tool, toolInput, strings.ReplaceAll(session, "-", ""), toolUseSeq.Add(1))
}

var toolUseSeq atomic.Int64

func newHookEnv(t *testing.T) *harness.ApprovalEnv {
	t.Helper()
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, hooksPolicy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	return e
}

// TestClaudeCodeHookCLI runs `rein hook claude-code` as Claude Code would:
// every decision kind, the three --on-ask modes, and every way the hook
// can fail, each ending in valid hook JSON and exit 0.
func TestClaudeCodeHookCLI(t *testing.T) {
	e := newHookEnv(t)
	env := e.S.ClientEnv(e.Keys["builder"])

	t.Run("allow", func(t *testing.T) {
		o := runHook(t, env, ccInput("s-allow", "Bash", `{"command":"ls -la","description":"list files"}`))
		if o.decision() != "allow" || !strings.Contains(o.reason(), "read-only commands run") {
			t.Fatalf("ls: %+v", o)
		}
		o = runHook(t, env, ccInput("s-allow", "mcp__filesystem__read_file", `{"path":"/srv/app/README.md"}`))
		if o.decision() != "allow" {
			t.Fatalf("MCP read: %+v", o)
		}
		o = runHook(t, env, ccInput("s-allow", "Write", `{"file_path":"/srv/app/notes.md","content":"hi"}`))
		if o.decision() != "allow" {
			t.Fatalf("write in the workspace: %+v", o)
		}
	})
	t.Run("modify", func(t *testing.T) {
		o := runHook(t, env, ccInput("s-modify", "Bash", `{"command":"ls","run_in_background":true}`))
		if o.decision() != "allow" {
			t.Fatalf("modify must become allow: %+v", o)
		}
		var in map[string]any
		if err := json.Unmarshal(o.HookSpecificOutput.UpdatedInput, &in); err != nil || in["run_in_background"] != false || in["command"] != "ls" {
			t.Fatalf("updatedInput %s: want the command with run_in_background false", o.HookSpecificOutput.UpdatedInput)
		}
	})
	t.Run("deny", func(t *testing.T) {
		o := runHook(t, env, ccInput("s-deny", "Write", `{"file_path":"/etc/cron.d/job","content":"* * * * * root sh"}`))
		if o.decision() != "deny" || !strings.Contains(o.reason(), "outside the workspace") {
			t.Fatalf("write outside: %+v", o)
		}
		o = runHook(t, env, ccInput("s-deny", "NotebookEdit", `{"notebook_path":"/srv/app/a.ipynb","new_source":"x"}`))
		if o.decision() != "deny" {
			t.Fatalf("a tool no rule allows: %+v", o)
		}
	})
	t.Run("throttle", func(t *testing.T) {
		o := runHook(t, env, ccInput("s-web", "WebFetch", `{"url":"https://example.com/docs","prompt":"summarise"}`))
		if o.decision() != "allow" {
			t.Fatalf("first fetch: %+v", o)
		}
		o = runHook(t, env, ccInput("s-web", "WebFetch", `{"url":"https://example.com/more","prompt":"summarise"}`))
		if o.decision() != "deny" || !strings.Contains(o.reason(), "rate limited") || !strings.Contains(o.reason(), "retry after") {
			t.Fatalf("second fetch past the rate: %+v", o)
		}
	})
	t.Run("ask", func(t *testing.T) {
		rm := `{"command":"rm -rf build/","description":"clean"}`
		o := runHook(t, env, ccInput("s-ask-deny", "Bash", rm), "--on-ask", "deny")
		if o.decision() != "deny" || !strings.Contains(o.reason(), "apr_") {
			t.Fatalf("--on-ask deny: %+v; want deny naming the approval", o)
		}
		o = runHook(t, env, ccInput("s-ask-prompt", "Bash", rm), "--on-ask", "prompt")
		if o.decision() != "ask" || !strings.Contains(o.reason(), "destructive commands need an approval") {
			t.Fatalf("--on-ask prompt: %+v", o)
		}
		o = runHook(t, env, ccInput("s-ask-timeout", "Bash", rm), "--on-ask", "wait", "--wait", "1s")
		if o.decision() != "deny" || !strings.Contains(o.reason(), "not approved in time") {
			t.Fatalf("--on-ask wait past --wait: %+v", o)
		}

		// wait: the hook holds until an approver approves, then allows.
		done := make(chan hookOutput, 1)
		go func() {
			done <- runHook(t, env, ccInput("s-ask-wait", "Bash", rm), "--on-ask", "wait", "--wait", "20s")
		}()
		id := e.PendingApproval(t, "s-ask-wait")
		select {
		case o := <-done:
			t.Fatalf("the hook answered before anyone voted: %+v", o)
		default:
		}
		harness.MustVote(t, e, "alice", id, "approve", "")
		select {
		case o := <-done:
			if o.decision() != "allow" {
				t.Fatalf("approved: %+v", o)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the hook did not answer after the approval")
		}

		// reject while waiting: deny with the approver's message.
		go func() {
			done <- runHook(t, env, ccInput("s-ask-reject", "Bash", rm), "--on-ask", "wait", "--wait", "20s")
		}()
		id = e.PendingApproval(t, "s-ask-reject")
		harness.MustVote(t, e, "alice", id, "reject", `,"message":"not on a Friday"`)
		if o := receiveHook(t, done); o.decision() != "deny" {
			t.Fatalf("rejected: %+v", o)
		}
	})
	t.Run("failures", func(t *testing.T) {
		for _, c := range []struct{ name, input, want string }{
			{"garbage", "this is not json", "not Claude Code hook JSON"},
			{"empty", "", "not Claude Code hook JSON"},
			{"other event", strings.Replace(ccInput("s", "Bash", `{"command":"ls"}`), "PreToolUse", "Notification", 1), "Notification"},
			{"no tool", `{"hook_event_name":"PreToolUse","tool_input":{}}`, "no tool_name"},
			{"input not an object", ccInput("s", "Bash", `"ls"`), "must be a JSON object"},
			{"binary", "\x00\xff\xfe{", "not Claude Code hook JSON"},
		} {
			if o := runHook(t, env, c.input); o.decision() != "deny" || !strings.Contains(o.reason(), c.want) {
				t.Errorf("%s: %+v; want deny mentioning %q", c.name, o, c.want)
			}
		}
		ls := ccInput("s-fail", "Bash", `{"command":"ls"}`)
		if o := runHook(t, harness.CleanEnv("REIN_SERVER="+e.S.URL), ls); o.decision() != "deny" || !strings.Contains(o.reason(), "REIN_KEY") {
			t.Errorf("no key: %+v", o)
		}
		if o := runHook(t, e.S.ClientEnv("rein_notakey"), ls); o.decision() != "deny" || !strings.Contains(o.reason(), "unauthenticated") {
			t.Errorf("unknown key: %+v", o)
		}
		if o := runHook(t, env, ls, "--on-ask", "sometimes"); o.decision() != "deny" || !strings.Contains(o.reason(), "misconfigured") {
			t.Errorf("bad --on-ask: %+v", o)
		}
		if o := runHook(t, env, ls, "--no-such-flag"); o.decision() != "deny" || !strings.Contains(o.reason(), "misconfigured") {
			t.Errorf("bad flag: %+v", o)
		}

		// rein down: nothing listens on the address.
		down := harness.FreeAddr(t)
		if o := runHook(t, harness.CleanEnv("REIN_SERVER=http://"+down, "REIN_KEY="+e.Keys["builder"]), ls); o.decision() != "deny" || !strings.Contains(o.reason(), "unreachable") {
			t.Errorf("rein down: %+v", o)
		}

		// rein hangs: a listener that accepts and never answers.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		start := time.Now()
		o := runHook(t, harness.CleanEnv("REIN_SERVER=http://"+l.Addr().String(), "REIN_KEY="+e.Keys["builder"]), ls, "--wait", "1s")
		if o.decision() != "deny" || !strings.Contains(o.reason(), "did not answer") {
			t.Errorf("rein hangs: %+v", o)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("the hook took %s against a hanging server with --wait 1s", d)
		}
	})

	// Every check made through the hook is a real check of the session.
	var checks []struct{ Tool, Decision string }
	harness.GetJSON(t, e.S.URL+"/v1/sessions/s-allow/checks", e.Keys["alice"], &checks)
	if len(checks) != 3 {
		t.Fatalf("session s-allow holds %d checks, want the hook's 3: %+v", len(checks), checks)
	}
}

// TestClaudeCodeHookHTTP drives POST /v1/hooks/claude-code the way Claude
// Code's "http" hook type does: it always answers 200 with a decision.
func TestClaudeCodeHookHTTP(t *testing.T) {
	e := newHookEnv(t)
	post := func(query, key, body string) hookOutput {
		t.Helper()
		code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/hooks/claude-code"+query, key, []byte(body), "application/json")
		if code != 200 {
			t.Fatalf("POST /v1/hooks/claude-code%s: %d %s; the endpoint must answer 200", query, code, out)
		}
		return parseHookOutput(t, "POST "+query+" "+body, out)
	}
	agent := e.Keys["builder"]
	if o := post("", agent, ccInput("h1", "Bash", `{"command":"ls"}`)); o.decision() != "allow" {
		t.Fatalf("ls: %+v", o)
	}
	rm := ccInput("h2", "Bash", `{"command":"rm -rf dist"}`)
	if o := post("", agent, rm); o.decision() != "deny" || !strings.Contains(o.reason(), "needs approval") {
		t.Fatalf("ask with the default on_ask (deny): %+v", o)
	}
	if o := post("?on_ask=prompt", agent, rm); o.decision() != "ask" {
		t.Fatalf("on_ask=prompt: %+v", o)
	}
	done := make(chan hookOutput, 1)
	waited := ccInput("h3", "Bash", `{"command":"rm -rf dist"}`)
	go func() {
		done <- post("?on_ask=wait&wait=20s", agent, waited)
	}()
	harness.MustVote(t, e, "alice", e.PendingApproval(t, "h3"), "approve", "")
	if o := receiveHook(t, done); o.decision() != "allow" {
		t.Fatalf("on_ask=wait, approved: %+v", o)
	}
	// What ran after the wait is the result of the allow the wait answered,
	// not of the ask before it: no anomaly, and the arguments match.
	var call struct {
		ToolUseID string `json:"tool_use_id"`
	}
	json.Unmarshal([]byte(waited), &call)
	ran := strings.Replace(waited, `"PreToolUse"`, `"PostToolUse"`, 1)
	mustPost(t, e.S.URL+"/v1/hooks/claude-code", agent, strings.Replace(ran, `"tool_use_id"`, `"tool_response":{"stdout":""},"tool_use_id"`, 1))
	var after struct {
		Decision string
		Result   struct {
			Status    string
			ArgsMatch *bool `json:"args_match"`
		}
	}
	harness.GetJSON(t, e.S.URL+"/v1/request-ids/claude-code:"+call.ToolUseID, agent, &after)
	if after.Decision != "allow" || after.Result.Status != "succeeded" || after.Result.ArgsMatch == nil || !*after.Result.ArgsMatch {
		t.Fatalf("the result of a call allowed after a wait: %+v", after)
	}

	for _, c := range []struct{ name, query, key, body, want string }{
		{"no key", "", "", ccInput("h4", "Bash", `{"command":"ls"}`), "cannot authenticate"},
		{"unknown key", "", "rein_nope", ccInput("h4", "Bash", `{"command":"ls"}`), "cannot authenticate"},
		{"approver key", "", e.Keys["alice"], ccInput("h4", "Bash", `{"command":"ls"}`), "needs an agent key"},
		{"garbage", "", agent, "{{{", "not Claude Code hook JSON"},
		{"bad on_ask", "?on_ask=maybe", agent, ccInput("h4", "Bash", `{"command":"ls"}`), "misconfigured"},
		{"bad wait", "?on_ask=wait&wait=forever", agent, ccInput("h4", "Bash", `{"command":"ls"}`), "misconfigured"},
		{"too large", "", agent, ccInput("h4", "Bash", `{"command":"`+strings.Repeat("a", 2<<20)+`"}`), "over 1048576 bytes"},
	} {
		if o := post(c.query, c.key, c.body); o.decision() != "deny" || !strings.Contains(o.reason(), c.want) {
			t.Errorf("%s: %+v; want deny mentioning %q", c.name, o, c.want)
		}
	}
}

// receiveHook waits for a hook run on another goroutine. A run that failed
// there sends nothing (t.Fatalf ends only its goroutine), so the wait is
// bounded instead of hanging the suite.
func receiveHook(t *testing.T, done chan hookOutput) hookOutput {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(30 * time.Second):
		t.Fatal("the hook did not answer within 30s (or failed on its goroutine; see the errors above)")
		return hookOutput{}
	}
}

// TestClaudeCodePermissionRequestAndPostToolUse: a PermissionRequest hook is
// answered from policy (allow with the input to run, deny with why, or no
// decision when the user at the terminal decides); a PostToolUse hook records
// what ran as the check's result, and an executed input that differs from
// the allowed one is flagged.
func TestClaudeCodePermissionRequestAndPostToolUse(t *testing.T) {
	e := newHookEnv(t)
	agent := e.Keys["builder"]
	post := func(query, body string) map[string]any {
		t.Helper()
		code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/hooks/claude-code"+query, agent, []byte(body), "application/json")
		var m map[string]any
		if code != 200 || json.Unmarshal(out, &m) != nil {
			t.Fatalf("hook: %d %s", code, out)
		}
		return m
	}
	permission := func(tool, input string) string {
		return strings.Replace(ccInput("perm", tool, input), `"PreToolUse"`, `"PermissionRequest"`, 1)
	}
	decision := func(m map[string]any) map[string]any {
		h, _ := m["hookSpecificOutput"].(map[string]any)
		if h == nil || h["hookEventName"] != "PermissionRequest" {
			t.Fatalf("not a PermissionRequest answer: %v", m)
		}
		return h["decision"].(map[string]any)
	}
	if d := decision(post("", permission("Bash", `{"command":"ls"}`))); d["behavior"] != "allow" || d["updatedInput"].(map[string]any)["command"] != "ls" {
		t.Errorf("allowed: %v", d)
	}
	if d := decision(post("", permission("Write", `{"file_path":"/etc/passwd","content":"x"}`))); d["behavior"] != "deny" || !strings.Contains(d["message"].(string), "outside the workspace") {
		t.Errorf("denied: %v", d)
	}
	if m := post("?on_ask=prompt", permission("Bash", `{"command":"rm -rf dist"}`)); len(m) != 0 {
		t.Errorf("ask with on_ask=prompt must leave the dialog to the user: %v", m)
	}
	if d := decision(post("?on_ask=deny", permission("Bash", `{"command":"rm -rf dist2"}`))); d["behavior"] != "deny" || !strings.Contains(d["message"].(string), "approval apr_") {
		t.Errorf("ask with on_ask=deny: %v", d)
	}

	// Every refusal keeps the PermissionRequest shape: Claude Code would not
	// read a PreToolUse answer there and would put the call to the user.
	postAs := func(key, query, body string) map[string]any {
		t.Helper()
		code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/hooks/claude-code"+query, key, []byte(body), "application/json")
		var m map[string]any
		if code != 200 || json.Unmarshal(out, &m) != nil {
			t.Fatalf("hook: %d %s", code, out)
		}
		return m
	}
	big := permission("Write", `{"file_path":"a.txt","content":"`+strings.Repeat("x", 1<<20)+`"}`)
	for name, c := range map[string]struct{ key, query, body, why string }{
		"a bad key":        {"rk_not_a_key", "", permission("Bash", `{"command":"ls"}`), "cannot authenticate"},
		"a bad hook URL":   {agent, "?on_ask=sometimes", permission("Bash", `{"command":"ls"}`), "misconfigured"},
		"input over 1 MiB": {agent, "", big, "over"},
		"no tool name":     {agent, "", permission("", `{"command":"ls"}`), "tool_name"},
	} {
		if d := decision(postAs(c.key, c.query, c.body)); d["behavior"] != "deny" || !strings.Contains(d["message"].(string), c.why) {
			t.Errorf("%s over HTTP: %v", name, d)
		}
	}
	for name, c := range map[string]struct {
		env  []string
		body string
		why  string
	}{
		"no key":         {[]string{"REIN_SERVER=" + e.S.URL}, permission("Bash", `{"command":"ls"}`), "no API key"},
		"rein down":      {[]string{"REIN_SERVER=http://127.0.0.1:1", "REIN_KEY=" + agent}, permission("Bash", `{"command":"ls"}`), "unreachable"},
		"not JSON input": {e.S.ClientEnv(agent), `{"hook_event_name":"PermissionRequest",`, "not Claude Code hook JSON"},
	} {
		cmd := exec.Command(harness.Bin, "hook", "claude-code")
		cmd.Env, cmd.Stdin = c.env, strings.NewReader(c.body)
		out, err := cmd.Output()
		var m map[string]any
		if err != nil || json.Unmarshal(out, &m) != nil {
			t.Fatalf("%s over the CLI: %q %v", name, out, err)
		}
		if d := decision(m); d["behavior"] != "deny" || !strings.Contains(d["message"].(string), c.why) {
			t.Errorf("%s over the CLI: %v", name, d)
		}
	}

	// PostToolUse: the modify rule ran the command in the foreground; the
	// agent reports the original (background) input.
	pre := ccInput("post", "Bash", `{"command":"make test","run_in_background":true}`)
	var in struct {
		ToolUseID string `json:"tool_use_id"`
	}
	json.Unmarshal([]byte(pre), &in)
	if o := parseHookOutput(t, "pre", mustPost(t, e.S.URL+"/v1/hooks/claude-code", agent, pre)); o.decision() != "allow" {
		t.Fatalf("pre: %+v", o)
	}
	ran := strings.Replace(pre, `"PreToolUse"`, `"PostToolUse"`, 1)
	ran = strings.Replace(ran, `"tool_use_id"`, `"tool_response":{"stdout":"ok"},"tool_use_id"`, 1)
	if m := post("", ran); len(m) != 0 {
		t.Fatalf("PostToolUse answers {}: %v", m)
	}
	var rec struct {
		ID     string
		Result struct {
			Status    string
			ArgsMatch *bool `json:"args_match"`
		}
	}
	harness.GetJSON(t, e.S.URL+"/v1/request-ids/claude-code:"+in.ToolUseID, agent, &rec)
	if rec.Result.Status != "succeeded" || rec.Result.ArgsMatch == nil || *rec.Result.ArgsMatch {
		t.Fatalf("the result of a call that ran other input than allowed: %+v", rec)
	}
	// The same through the CLI, with the input rein allowed: args_match true.
	pre = ccInput("post-cli", "Bash", `{"command":"make lint"}`)
	json.Unmarshal([]byte(pre), &in)
	if o := runHook(t, e.S.ClientEnv(agent), pre); o.decision() != "allow" {
		t.Fatalf("pre over the CLI: %+v", o)
	}
	cmd := exec.Command(harness.Bin, "hook", "claude-code")
	cmd.Env, cmd.Stdin = e.S.ClientEnv(agent), strings.NewReader(strings.Replace(pre, `"PreToolUse"`, `"PostToolUse"`, 1))
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "{}" {
		t.Fatalf("PostToolUse over the CLI: %q %v", out, err)
	}
	harness.GetJSON(t, e.S.URL+"/v1/request-ids/claude-code:"+in.ToolUseID, agent, &rec)
	if rec.Result.ArgsMatch == nil || !*rec.Result.ArgsMatch {
		t.Fatalf("the result of a call that ran what was allowed: %+v", rec)
	}
}

func mustPost(t *testing.T, url, key, body string) []byte {
	t.Helper()
	code, out := harness.HTTPDo(t, "POST", url, key, []byte(body), "application/json")
	if code != 200 {
		t.Fatalf("POST %s: %d %s", url, code, out)
	}
	return out
}
