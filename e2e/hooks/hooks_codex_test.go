package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/pb33f/jsonschema/v6"
)

// codexPolicy decides Codex's tools: shell commands by their risk, an MCP
// tool rewritten by a modify rule, and Codex asking to approve a command
// (the codex_hook label) denied for one command that PreToolUse allows.
const codexPolicy = `version: 1
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
  - id: no-escalation
    when: '"codex_hook" in labels && labels.codex_hook == "PermissionRequest" && tool == "Bash" && args.command == "ls -R"'
    decision: deny
    reason: a recursive listing stays in the sandbox
  - id: publish-draft
    when: 'tool == "mcp__docs__publish"'
    decision: modify
    modify: {set: {draft: true}}
    reason: pages are published as drafts
`

var codexCallSeq atomic.Int64

// codexInput is a hook input shaped as Codex sends it (the vendored
// schemas in hook/testdata/codex): PreToolUse and PostToolUse carry a
// tool_use_id of their own, PermissionRequest a turn_id and none.
func codexInput(event, session, tool, toolInput string) string {
	base := fmt.Sprintf(`"session_id":%q,"transcript_path":"/home/dev/.codex/sessions/%s.jsonl","cwd":"/srv/app","hook_event_name":%q,`+
		`"model":"gpt-5-codex","permission_mode":"default","tool_name":%q,"tool_input":%s`, session, session, event, tool, toolInput)
	switch event {
	case "PermissionRequest":
		return `{` + base + `,"turn_id":"turn-1"}`
	case "PostToolUse":
		return `{` + base + `,"turn_id":"turn-1","tool_response":{"exit_code":0,"output":""},"tool_use_id":"call_` + fmt.Sprint(codexCallSeq.Add(1)) + `"}`
	}
	return `{` + base + `,"tool_use_id":"call_` + fmt.Sprint(codexCallSeq.Add(1)) + `"}`
}

// asPost is the PostToolUse of a PreToolUse input: the same call, ran.
func asPost(pre, response string) string {
	post := strings.Replace(pre, `"hook_event_name":"PreToolUse"`, `"hook_event_name":"PostToolUse"`, 1)
	return strings.Replace(post, `"tool_use_id"`, `"turn_id":"turn-1","tool_response":`+response+`,"tool_use_id"`, 1)
}

var codexSchemaFiles = map[string]string{
	"PreToolUse": "pre-tool-use", "PermissionRequest": "permission-request", "PostToolUse": "post-tool-use",
}

// codexOutputSchema compiles Codex's output schema for an event.
func codexOutputSchema(t *testing.T, event string) *jsonschema.Schema {
	t.Helper()
	name := codexSchemaFiles[event] + ".command.output.schema.json"
	f, err := os.Open(filepath.Join(harness.ModuleRoot, "hook", "testdata", "codex", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///"+name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file:///" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// codexOutput is `rein hook codex`'s answer, decoded.
type codexOutput struct {
	raw                string
	HookSpecificOutput *struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		Decision                 *struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
	SystemMessage string `json:"systemMessage"`
}

// decision is the answer as one word ("" for no decision) and its reason.
func (o codexOutput) decision() (string, string) {
	h := o.HookSpecificOutput
	switch {
	case h == nil:
		return "", o.SystemMessage
	case h.Decision != nil:
		return h.Decision.Behavior, h.Decision.Message
	}
	return h.PermissionDecision, h.PermissionDecisionReason
}

// runCodexHook runs `rein hook codex ARGS` with input on stdin: it must exit
// 0 and print one JSON answer that Codex's output schema for the event
// accepts, without updatedInput or updatedPermissions.
func runCodexHook(t *testing.T, env []string, event, input string, args ...string) codexOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Bin, append([]string{"hook", "codex"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = harness.ModuleRoot, env, strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rein hook codex %v: %v (it must exit 0)\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if bytes.Count(out, []byte("\n")) != 0 {
		t.Fatalf("more than one line: %s", out)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %q (%v)", out, err)
	}
	if err := codexOutputSchema(t, event).Validate(v); err != nil {
		t.Fatalf("the %s answer does not match Codex's schema: %v\n%s", event, err, out)
	}
	if bytes.Contains(out, []byte("updatedInput")) || bytes.Contains(out, []byte("updatedPermissions")) {
		t.Fatalf("Codex fails closed on (or may ignore) updatedInput and updatedPermissions: %s", out)
	}
	o := codexOutput{raw: string(out)}
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatal(err)
	}
	if d, why := o.decision(); d == "deny" && !strings.HasPrefix(why, "rein: ") {
		t.Fatalf("a deny without rein's reason: %s", out)
	}
	return o
}

// TestCodexHook runs `rein hook codex` as Codex would: allow, deny, a modify
// rule and an approver's edit (changed input Codex cannot run: denied,
// naming it), ask in each --on-ask mode, PermissionRequest, PostToolUse, and
// every way the hook can fail, each ending in an answer Codex reads.
func TestCodexHook(t *testing.T) {
	e := newHookEnvWith(t, codexPolicy)
	env := e.S.ClientEnv(e.Keys["builder"])
	want := func(what string, o codexOutput, decision, reason string) {
		t.Helper()
		if d, why := o.decision(); d != decision || !strings.Contains(why, reason) {
			t.Errorf("%s: %s; want %q with %q", what, o.raw, decision, reason)
		}
	}

	t.Run("allow", func(t *testing.T) {
		o := runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-allow", "Bash", `{"command":"ls -la"}`))
		if o.raw != "{}" {
			t.Fatalf("an allow is no decision ({}), so Codex's own sandbox and approval policy still apply: %s", o.raw)
		}
		o = runCodexHook(t, env, "PermissionRequest", codexInput("PermissionRequest", "x-allow", "Bash", `{"command":"ls -la","description":"list files"}`))
		want("PermissionRequest allowed", o, "allow", "")
	})
	t.Run("deny", func(t *testing.T) {
		o := runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-deny", "mcp__db__drop_table", `{"table":"users"}`))
		want("a tool no rule allows", o, "deny", "denied")
		// Allowed at PreToolUse, denied when Codex asks to approve it: the label tells them apart.
		o = runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-deny", "Bash", `{"command":"ls -R"}`))
		want("ls -R at PreToolUse", o, "", "")
		o = runCodexHook(t, env, "PermissionRequest", codexInput("PermissionRequest", "x-deny", "Bash", `{"command":"ls -R","description":"needs the whole tree"}`))
		want("ls -R as a PermissionRequest", o, "deny", "stays in the sandbox")
	})
	t.Run("modify", func(t *testing.T) {
		page := `{"page":"release-notes"}`
		o := runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-mod", "mcp__docs__publish", page))
		want("modify at PreToolUse", o, "deny", `exactly this input: {"draft":true,"page":"release-notes"}`)
		o = runCodexHook(t, env, "PermissionRequest", codexInput("PermissionRequest", "x-mod", "mcp__docs__publish", page))
		want("modify as a PermissionRequest", o, "deny", "Codex cannot be made to run changed input")
		// The model calls again with what rein allows: it runs as asked.
		o = runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-mod", "mcp__docs__publish", `{"page":"release-notes","draft":true}`))
		want("the allowed input", o, "", "")
	})
	t.Run("ask", func(t *testing.T) {
		rm := `{"command":"rm -rf build/"}`
		o := runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-ask-deny", "Bash", rm), "--on-ask", "deny")
		want("--on-ask deny", o, "deny", "approve approval apr_")
		o = runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-ask-prompt", "Bash", rm), "--on-ask", "prompt")
		want("--on-ask prompt at PreToolUse", o, "deny", "cannot put the call to the user")
		o = runCodexHook(t, env, "PermissionRequest", codexInput("PermissionRequest", "x-ask-prompt", "Bash", rm), "--on-ask", "prompt")
		if o.raw != "{}" {
			t.Errorf("--on-ask prompt for a PermissionRequest leaves it to Codex's prompt: %s", o.raw)
		}
		o = runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-ask-late", "Bash", rm), "--on-ask", "wait", "--wait", "1s")
		want("--on-ask wait past --wait", o, "deny", "not approved in time")

		// wait, approved: PreToolUse runs it as asked, and PostToolUse records it.
		pre := codexInput("PreToolUse", "x-ask-wait", "Bash", rm)
		done := make(chan codexOutput, 1)
		go func() { done <- runCodexHook(t, env, "PreToolUse", pre, "--on-ask", "wait", "--wait", "20s") }()
		harness.MustVote(t, e, "alice", e.PendingApproval(t, "x-ask-wait"), "approve", "")
		o = receiveCodex(t, done)
		want("--on-ask wait, approved", o, "", "")
		if o := runCodexHook(t, env, "PostToolUse", asPost(pre, `{"exit_code":0,"output":""}`)); o.raw != "{}" {
			t.Fatalf("PostToolUse: %s", o.raw)
		}
		var rec recordedCheck
		harness.GetJSON(t, e.S.URL+"/v1/request-ids/codex:"+toolUseID(t, pre), e.Keys["builder"], &rec)
		if rec.Decision != "allow" || rec.Result == nil || rec.Result.Status != "succeeded" || rec.Result.ArgsMatch == nil || !*rec.Result.ArgsMatch {
			t.Fatalf("the result of a call allowed after a wait: %+v", rec)
		}

		// wait, as a PermissionRequest: approved -> allow.
		go func() {
			done <- runCodexHook(t, env, "PermissionRequest", codexInput("PermissionRequest", "x-ask-perm", "Bash", `{"command":"rm -rf dist/","description":"clean"}`), "--on-ask", "wait", "--wait", "20s")
		}()
		harness.MustVote(t, e, "alice", e.PendingApproval(t, "x-ask-perm"), "approve", "")
		want("PermissionRequest, approved", receiveCodex(t, done), "allow", "")

		// wait, the approver edits the command: Codex cannot run the edit, so
		// the call is denied, naming the edited input, never run as asked.
		go func() {
			done <- runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-ask-edit", "Bash", rm), "--on-ask", "wait", "--wait", "20s")
		}()
		harness.MustVote(t, e, "alice", e.PendingApproval(t, "x-ask-edit"), "edit", `,"args":{"command":"rm -rf build/tmp"}`)
		want("an approver's edit", receiveCodex(t, done), "deny", `{"command":"rm -rf build/tmp"}`)

		// wait, rejected: deny.
		go func() {
			done <- runCodexHook(t, env, "PreToolUse", codexInput("PreToolUse", "x-ask-no", "Bash", rm), "--on-ask", "wait", "--wait", "20s")
		}()
		harness.MustVote(t, e, "alice", e.PendingApproval(t, "x-ask-no"), "reject", `,"message":"not today"`)
		want("rejected", receiveCodex(t, done), "deny", "")
	})
	t.Run("post tool use", func(t *testing.T) {
		pre := codexInput("PreToolUse", "x-post", "Bash", `{"command":"ls"}`)
		want("pre", runCodexHook(t, env, "PreToolUse", pre), "", "")
		if o := runCodexHook(t, env, "PostToolUse", asPost(pre, `{"exit_code":2,"output":"ls: no such file"}`)); o.raw != "{}" {
			t.Fatalf("PostToolUse: %s", o.raw)
		}
		var rec recordedCheck
		harness.GetJSON(t, e.S.URL+"/v1/request-ids/codex:"+toolUseID(t, pre), e.Keys["builder"], &rec)
		if rec.Result == nil || rec.Result.Status != "failed" || rec.Result.Summary != "exit code 2" {
			t.Fatalf("a call that failed: %+v", rec)
		}
		// A call rein never decided: not recorded, said so to the user.
		o := runCodexHook(t, env, "PostToolUse", codexInput("PostToolUse", "x-post", "Bash", `{"command":"whoami"}`))
		if !strings.Contains(o.SystemMessage, "not recorded") {
			t.Fatalf("PostToolUse of an unknown call: %s", o.raw)
		}
	})
	t.Run("failures", func(t *testing.T) {
		ls := codexInput("PreToolUse", "x-fail", "Bash", `{"command":"ls"}`)
		for _, c := range []struct{ name, input, want string }{
			{"garbage", "this is not json", "not Codex hook JSON"},
			{"empty", "", "not Codex hook JSON"},
			{"other event", strings.Replace(ls, `"PreToolUse"`, `"Stop"`, 1), `"Stop"`},
			{"no tool", strings.Replace(ls, `"tool_name":"Bash",`, ``, 1), "no tool_name"},
			{"input not an object", codexInput("PreToolUse", "x-fail", "Bash", `"ls"`), "must be a JSON object"},
		} {
			want(c.name, runCodexHook(t, env, "PreToolUse", c.input), "deny", c.want)
		}
		want("no key", runCodexHook(t, harness.CleanEnv("REIN_SERVER="+e.S.URL), "PreToolUse", ls), "deny", "REIN_KEY")
		want("unknown key", runCodexHook(t, e.S.ClientEnv("rein_notakey"), "PreToolUse", ls), "deny", "unauthenticated")
		want("approver key", runCodexHook(t, e.S.ClientEnv(e.Keys["alice"]), "PreToolUse", ls), "deny", "rein refused the check")
		want("bad --on-ask", runCodexHook(t, env, "PreToolUse", ls, "--on-ask", "defer"), "deny", "no defer")
		want("bad flag", runCodexHook(t, env, "PreToolUse", ls, "--no-such-flag"), "deny", "misconfigured")
		down := harness.CleanEnv("REIN_SERVER=http://"+harness.FreeAddr(t), "REIN_KEY="+e.Keys["builder"])
		want("rein down", runCodexHook(t, down, "PreToolUse", ls), "deny", "unreachable")
		perm := codexInput("PermissionRequest", "x-fail", "Bash", `{"command":"ls"}`)
		want("rein down, PermissionRequest", runCodexHook(t, down, "PermissionRequest", perm), "deny", "unreachable")
		want("bad key, PermissionRequest", runCodexHook(t, e.S.ClientEnv("rein_notakey"), "PermissionRequest", perm), "deny", "unauthenticated")
		want("cut-off PermissionRequest", runCodexHook(t, env, "PermissionRequest", `{"hook_event_name":"PermissionRequest",`), "deny", "not Codex hook JSON")
		o := runCodexHook(t, down, "PostToolUse", codexInput("PostToolUse", "x-fail", "Bash", `{"command":"ls"}`))
		if !strings.Contains(o.SystemMessage, "not recorded") {
			t.Errorf("rein down, PostToolUse: %s", o.raw)
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
		hang := harness.CleanEnv("REIN_SERVER=http://"+l.Addr().String(), "REIN_KEY="+e.Keys["builder"])
		want("rein hangs", runCodexHook(t, hang, "PreToolUse", ls, "--wait", "1s"), "deny", "did not answer")
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("the hook took %s against a hanging server with --wait 1s", d)
		}
	})
}

func receiveCodex(t *testing.T, done chan codexOutput) codexOutput {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(30 * time.Second):
		t.Fatal("the hook did not answer within 30s (or failed on its goroutine; see the errors above)")
		return codexOutput{}
	}
}
