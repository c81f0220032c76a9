package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/jsonschema/v6"

	"github.com/reinhq/rein"
)

// codexSchema compiles one of Codex's vendored hook schemas (testdata/codex).
func codexSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "codex", name+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "file:///codex/" + name + ".schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate checks JSON against a schema.
func validate(t *testing.T, s *jsonschema.Schema, what string, data []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v: %s", what, err, data)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match Codex's schema: %v\n%s", what, err, data)
	}
}

var codexEventSchema = map[string]string{
	EventPreToolUse:        "pre-tool-use.command",
	EventPermissionRequest: "permission-request.command",
	EventPostToolUse:       "post-tool-use.command",
}

// Inputs shaped as Codex sends them (each is validated against the schema).
const (
	codexPre = `{"session_id":"019a-s1","transcript_path":"/home/dev/.codex/sessions/r.jsonl","cwd":"/srv/app","hook_event_name":"PreToolUse",` +
		`"model":"gpt-5-codex","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"tool_use_id":"call_1"}`
	codexPermission = `{"session_id":"019a-s1","turn_id":"t1","transcript_path":null,"cwd":"/srv/app","hook_event_name":"PermissionRequest",` +
		`"model":"gpt-5-codex","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"rm -rf build","description":"clean the build before packaging"}}`
	codexPost = `{"session_id":"019a-s1","turn_id":"t1","transcript_path":null,"cwd":"/srv/app","hook_event_name":"PostToolUse",` +
		`"model":"gpt-5-codex","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"rm -rf build"},` +
		`"tool_response":{"exit_code":1,"output":"rm: permission denied"},"tool_use_id":"call_1"}`
)

func TestParseCodex(t *testing.T) {
	for name, in := range map[string]string{EventPreToolUse: codexPre, EventPermissionRequest: codexPermission, EventPostToolUse: codexPost} {
		validate(t, codexSchema(t, codexEventSchema[name]+".input"), name+" test input", []byte(in))
	}

	pre, err := ParseCodex([]byte(codexPre))
	if err != nil {
		t.Fatal(err)
	}
	req := pre.Check(AskWait, 30*time.Second)
	if req.Tool != "Bash" || req.Session != "019a-s1" || string(req.Args) != `{"command":"rm -rf build"}` ||
		req.RequestID != "codex:call_1" || req.WaitMS != 30000 || req.Labels != nil {
		t.Fatalf("PreToolUse check %+v", req)
	}
	if req := pre.Check(AskDeny, time.Minute); req.WaitMS != 0 {
		t.Fatalf("only --on-ask wait holds: %+v", req)
	}

	// A PermissionRequest is the same action as the call's PreToolUse: the
	// description is the intent, the label tells a policy it is Codex asking.
	perm, err := ParseCodex([]byte(codexPermission))
	if err != nil {
		t.Fatal(err)
	}
	req = perm.Check(AskDeny, 0)
	if string(req.Args) != `{"command":"rm -rf build"}` || req.Intent != "clean the build before packaging" ||
		req.Labels[CodexHookLabel] != EventPermissionRequest || req.RequestID != "" {
		t.Fatalf("PermissionRequest check %+v", req)
	}
	// An MCP tool's input is its arguments, a "description" among them kept.
	mcp := strings.Replace(strings.Replace(codexPermission, `"Bash"`, `"mcp__docs__publish"`, 1), `"command":"rm -rf build",`, `"page":"x",`, 1)
	perm, err = ParseCodex([]byte(mcp))
	if err != nil {
		t.Fatal(err)
	}
	if req := perm.Check(AskDeny, 0); string(req.Args) != `{"page":"x","description":"clean the build before packaging"}` || req.Intent != "" {
		t.Fatalf("MCP PermissionRequest check %+v", req)
	}
	// A Bash input with other fields than the schema's is kept whole.
	perm, _ = ParseCodex([]byte(strings.Replace(codexPermission, `"command":"rm -rf build"`, `"command":"rm -rf build","sandbox":"off"`, 1)))
	if req := perm.Check(AskDeny, 0); !strings.Contains(string(req.Args), `"sandbox":"off"`) {
		t.Fatalf("unknown Bash fields are dropped: %+v", req)
	}

	post, err := ParseCodex([]byte(codexPost))
	if err != nil {
		t.Fatal(err)
	}
	if res := post.Result(); res.Status != "failed" || res.Summary != "exit code 1" || string(res.Args) != `{"command":"rm -rf build"}` {
		t.Fatalf("PostToolUse result %+v", res)
	}
	for resp, want := range map[string]string{`"ok"`: "succeeded", `{"exit_code":0}`: "succeeded", `{"error":"boom"}`: "failed", `{"is_error":true}`: "failed"} {
		post.ToolResponse = json.RawMessage(resp)
		if got := post.Result().Status; got != want {
			t.Errorf("tool_response %s: %s, want %s", resp, got, want)
		}
	}

	for _, bad := range []string{``, `nope`, `[]`,
		strings.Replace(codexPre, "PreToolUse", "Stop", 1),
		strings.Replace(codexPre, `"tool_name":"Bash",`, ``, 1),
		strings.Replace(codexPre, `{"command":"rm -rf build"}`, `"rm -rf build"`, 1),
		strings.Replace(codexPost, `"tool_use_id":"call_1"`, `"tool_use_id":""`, 1),
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", MaxInputBytes) + `"}}`} {
		if _, err := ParseCodex([]byte(bad)); err == nil {
			t.Errorf("ParseCodex(%.60q) accepted it", bad)
		}
	}
	if _, err := ParseCodexOnAsk("defer"); err == nil {
		t.Error("Codex has no defer")
	}
	for _, s := range []string{"wait", "prompt", "deny"} {
		if o, err := ParseCodexOnAsk(s); err != nil || string(o) != s {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// TestAnswerCodex: every answer matches Codex's output schema for its event,
// never carries updatedInput or updatedPermissions, and never lets changed
// input be replaced by the original.
func TestAnswerCodex(t *testing.T) {
	asked := json.RawMessage(`{"command":"rm -rf build"}`)
	ms := int64(2000)
	apr := &rein.ApprovalRef{ID: "apr_9", URL: "http://rein/approvals/apr_9"}
	type want struct{ decision, reason string } // decision "" = no decision ({})
	for _, c := range []struct {
		res   rein.CheckResponse
		onAsk OnAsk
		pre   want
		perm  want
	}{
		{rein.CheckResponse{Decision: rein.Allow, Reason: "fine", Args: asked}, AskWait, want{}, want{"allow", ""}},
		{rein.CheckResponse{Decision: rein.Modify, Reason: "keep build/cache", Args: json.RawMessage(`{"command":"rm -rf build/tmp"}`)}, AskWait,
			want{"deny", `exactly this input: {"command":"rm -rf build/tmp"}`}, want{"deny", "Codex cannot be made to run changed input"}},
		{rein.CheckResponse{Decision: rein.Allow, Reason: "approved with edited arguments", Args: json.RawMessage(`{"command":"rm -rf build/tmp"}`)}, AskWait,
			want{"deny", "changed input"}, want{"deny", "changed input"}},
		{rein.CheckResponse{Decision: rein.Allow, Reason: "ok"}, AskWait, want{"deny", "no arguments object"}, want{"deny", "no arguments object"}},
		{rein.CheckResponse{Decision: rein.Deny, Reason: "no rm"}, AskWait, want{"deny", "denied: no rm"}, want{"deny", "denied: no rm"}},
		{rein.CheckResponse{Decision: rein.Throttle, Reason: "slow down", RetryAfterMS: &ms}, AskWait, want{"deny", "retry after 2s"}, want{"deny", "retry after 2s"}},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "destructive", Approval: apr}, AskWait, want{"deny", "not approved in time"}, want{"deny", "not approved in time"}},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "destructive", Approval: apr}, AskDeny, want{"deny", "approve approval apr_9"}, want{"deny", "approve approval apr_9"}},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "destructive", Approval: apr}, AskPrompt, want{"deny", "cannot put the call to the user"}, want{}},
		{rein.CheckResponse{Decision: "maybe"}, AskWait, want{"deny", "not a decision"}, want{"deny", "not a decision"}},
	} {
		for _, ev := range []string{EventPreToolUse, EventPermissionRequest} {
			w := c.pre
			if ev == EventPermissionRequest {
				w = c.perm
			}
			out := AnswerCodex(ev, c.res.Answer(asked), c.onAsk)
			b, _ := json.Marshal(out)
			what := string(c.res.Decision) + "/" + string(c.onAsk) + "/" + ev
			validate(t, codexSchema(t, codexEventSchema[ev]+".output"), what, b)
			if bytes.Contains(b, []byte("updatedInput")) || bytes.Contains(b, []byte("updatedPermissions")) {
				t.Errorf("%s: %s", what, b)
			}
			got, reason := "", ""
			if h := out.HookSpecificOutput; h != nil {
				if h.HookEventName != ev {
					t.Errorf("%s: hookEventName %q", what, h.HookEventName)
				}
				got, reason = h.PermissionDecision, h.PermissionDecisionReason
				if h.Decision != nil {
					got, reason = h.Decision.Behavior, h.Decision.Message
				}
			}
			if got != w.decision || !strings.Contains(reason, w.reason) || (got == "deny" && !strings.HasPrefix(reason, "rein: ")) {
				t.Errorf("%s: %s; want %q with %q", what, b, w.decision, w.reason)
			}
		}
	}
	// The shapes exactly: no decision is {}, allow is the bare decision.
	allow := rein.CheckResponse{Decision: rein.Allow, Args: asked}
	if b, _ := json.Marshal(AnswerCodex(EventPreToolUse, allow.Answer(asked), AskWait)); string(b) != `{}` {
		t.Errorf("PreToolUse allow: %s", b)
	}
	if b, _ := json.Marshal(AnswerCodex(EventPermissionRequest, allow.Answer(asked), AskWait)); string(b) != `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` {
		t.Errorf("PermissionRequest allow: %s", b)
	}
}

func TestCodexDenyFor(t *testing.T) {
	for _, ev := range []string{EventPreToolUse, EventPermissionRequest, EventPostToolUse} {
		b, _ := json.Marshal(CodexDenyFor(ev, "rein is unreachable"))
		validate(t, codexSchema(t, codexEventSchema[ev]+".output"), "deny for "+ev, b)
		if !bytes.Contains(b, []byte("rein: rein is unreachable")) {
			t.Errorf("%s: %s", ev, b)
		}
	}
	// The schemas do reject what Codex would not read: a PreToolUse deny as
	// a PostToolUse answer, a PermissionRequest "ask".
	for name, bad := range map[string]string{
		"post-tool-use.command.output":      `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`,
		"permission-request.command.output": `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"ask"}}}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if codexSchema(t, name).Validate(v) == nil {
			t.Errorf("%s accepted %s", name, bad)
		}
	}
	// Input that names no event, or an event rein does not decide, gets the
	// PreToolUse deny: the one answer Codex reads as a block.
	for data, want := range map[string]string{
		`not json "hook_event_name":"PermissionRequest"`: EventPermissionRequest,
		`{"hook_event_name":"PostToolUse","tool_input":`: EventPostToolUse,
		`{"hook_event_name":"Stop"}`:                     "Stop",
		`garbage`:                                        "",
	} {
		if got := CodexEventOf([]byte(data)); got != want {
			t.Errorf("CodexEventOf(%q) = %q, want %q", data, got, want)
		}
	}
	if out := CodexDenyFor("Stop", "x"); out.HookSpecificOutput == nil || out.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("unknown event: %+v", out)
	}
}
