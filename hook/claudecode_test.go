package hook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func TestParse(t *testing.T) {
	in, err := Parse([]byte(`{"session_id":"s","cwd":"/w","permission_mode":"default","hook_event_name":"PreToolUse",` +
		`"tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1","transcript_path":"/t","future_field":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req := in.Check(AskWait, 90*time.Second)
	if req.Tool != "Bash" || req.Session != "s" || string(req.Args) != `{"command":"ls"}` || req.WaitMS != 90000 {
		t.Fatalf("check %+v", req)
	}
	if req := in.Check(AskDeny, time.Minute); req.WaitMS != 0 {
		t.Fatalf("only --on-ask wait waits: %+v", req)
	}
	if req := in.Check(AskWait, time.Hour); req.WaitMS != rein.MaxWaitMS {
		t.Fatalf("a wait past the API's maximum is capped: %d", req.WaitMS)
	}
	in, err = Parse([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Glob"}`))
	if err != nil || string(in.ToolInput) != "{}" {
		t.Fatalf("no tool_input is an empty object: %v %s", err, in.ToolInput)
	}

	for _, bad := range []string{``, `[]`, `{"hook_event_name":"Stop","tool_name":"Bash"}`,
		`{"hook_event_name":"PreToolUse"}`, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":[1]}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"rm -rf /"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}} trailing`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", MaxInputBytes) + `"}}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%.60q) accepted it", bad)
		}
	}
}

func TestAnswer(t *testing.T) {
	ms := int64(1500)
	ask := &rein.ApprovalRef{ID: "apr_1", URL: "http://rein/approvals/apr_1"}
	for _, c := range []struct {
		res     rein.CheckResponse
		onAsk   OnAsk
		want    string
		reason  string
		updated string
	}{
		{rein.CheckResponse{Decision: rein.Allow, Reason: "reads are fine"}, AskWait, "allow", "reads are fine", ""},
		{rein.CheckResponse{Decision: rein.Modify, Reason: "foreground", Args: json.RawMessage(`{"x":1}`)}, AskWait, "allow", "foreground", `{"x":1}`},
		{rein.CheckResponse{Decision: rein.Deny, Reason: "no"}, AskWait, "deny", "denied: no", ""},
		{rein.CheckResponse{Decision: rein.Throttle, Reason: "too many", RetryAfterMS: &ms}, AskWait, "deny", "retry after 1.5s", ""},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "risky", Approval: ask}, AskDeny, "deny", "approve approval apr_1 (http://rein/approvals/apr_1)", ""},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "risky", Approval: ask}, AskWait, "deny", "not approved in time", ""},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "risky", Approval: ask}, AskPrompt, "ask", "not recorded by rein", ""},
		{rein.CheckResponse{Decision: "maybe"}, AskWait, "deny", "unknown decision", ""},
	} {
		out := Answer(&c.res, c.onAsk).HookSpecificOutput
		if out.HookEventName != EventPreToolUse || out.PermissionDecision != c.want ||
			!strings.Contains(out.PermissionDecisionReason, c.reason) || string(out.UpdatedInput) != c.updated {
			t.Errorf("%s/%s: %+v; want %s with %q", c.res.Decision, c.onAsk, out, c.want, c.reason)
		}
	}
	b, _ := json.Marshal(Deny("x"))
	if string(b) != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"rein: x"}}` {
		t.Fatalf("deny output %s", b)
	}
}

func TestParseOnAsk(t *testing.T) {
	for _, s := range []string{"wait", "prompt", "deny"} {
		if o, err := ParseOnAsk(s); err != nil || string(o) != s {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseOnAsk("allow"); err == nil {
		t.Error("on-ask allow must not exist: an ask never becomes allow without an approval")
	}
}
