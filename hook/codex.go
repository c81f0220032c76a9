package hook

// Codex's command hooks (openai/codex, codex-rs/hooks/schema/generated/*.json;
// the schemas are vendored under testdata/codex and every answer here is
// validated against them). Codex has command hooks only: `rein hook codex`
// reads the hook JSON on stdin and prints the answer.
//
// What Codex does with an answer, and so what rein may send:
//   - PreToolUse: "deny" with a reason blocks the call and tells the model
//     why. No decision ({}) lets the call go on to Codex's own sandbox and
//     approval policy, which rein's allow does not lift. Codex versions
//     differ on "allow", "ask" and updatedInput (older ones ignore them and
//     run the original input), so rein sends none of them.
//   - PermissionRequest (Codex about to ask the user to approve a command,
//     e.g. to run outside its sandbox): decision "allow" or "deny"; no
//     decision shows Codex's own prompt. updatedInput and updatedPermissions
//     make Codex fail closed, so rein never sends them: an allow with
//     changed input (a modify rule, an approver's edit) is a deny whose
//     reason says what rein would allow.
//   - PostToolUse: recorded as the result of the check that allowed the
//     call; the answer is {}.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// CodexInput is a Codex hook input. Fields rein does not use (model,
// transcript_path, permission_mode and any Codex adds later) are ignored.
type CodexInput struct {
	SessionID     string          `json:"session_id"`
	TurnID        string          `json:"turn_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response,omitempty"`
}

// CodexOutput is what `rein hook codex` prints: the fields of Codex's hook
// output schemas rein uses. It has no updatedInput or updatedPermissions
// field, so rein cannot send either.
type CodexOutput struct {
	HookSpecificOutput *CodexDecision `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is shown to the user: a PostToolUse failure to record.
	SystemMessage string `json:"systemMessage,omitempty"`
}

// CodexDecision is the hook-specific output: for PreToolUse a permission
// decision (rein sends only deny), for PermissionRequest a decision object.
type CodexDecision struct {
	HookEventName            string                   `json:"hookEventName"`
	PermissionDecision       string                   `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string                   `json:"permissionDecisionReason,omitempty"`
	Decision                 *CodexPermissionDecision `json:"decision,omitempty"`
}

// CodexPermissionDecision answers a PermissionRequest: allow or deny.
type CodexPermissionDecision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// ParseCodexOnAsk reads --on-ask for Codex: wait, prompt or deny. Codex has
// no defer.
func ParseCodexOnAsk(s string) (OnAsk, error) {
	o, err := ParseOnAsk(s)
	if err != nil || o == AskDefer {
		return "", fmt.Errorf("on-ask %q: use wait, prompt or deny (Codex hooks have no defer)", s)
	}
	return o, nil
}

// ParseCodex reads Codex hook input: a PreToolUse, PermissionRequest or
// PostToolUse of a named tool with an object as input. Anything else is an
// error that says what was wrong.
func ParseCodex(data []byte) (*CodexInput, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("hook input is %d bytes; the limit is %d", len(data), MaxInputBytes)
	}
	var in CodexInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("hook input is not Codex hook JSON: %v", err)
	}
	switch in.HookEventName {
	case EventPreToolUse, EventPermissionRequest:
	case EventPostToolUse:
		if in.ToolUseID == "" {
			return nil, fmt.Errorf("a %s hook input needs tool_use_id, to find the check that allowed the call", EventPostToolUse)
		}
	default:
		return nil, fmt.Errorf("hook_event_name is %q; rein decides Codex's %s and %s hooks and records %s (register it under \"%s\" in hooks.json)",
			in.HookEventName, EventPreToolUse, EventPermissionRequest, EventPostToolUse, EventPreToolUse)
	}
	if in.ToolName == "" {
		return nil, fmt.Errorf("hook input has no tool_name")
	}
	if t := strings.TrimSpace(string(in.ToolInput)); t == "" || t == "null" {
		in.ToolInput = json.RawMessage("{}")
	} else if t[0] != '{' {
		return nil, fmt.Errorf("tool_input must be a JSON object")
	}
	return &in, nil
}

// RequestID is the check's request_id: "codex:" + Codex's tool_use_id, so
// that its PostToolUse finds the check. A PermissionRequest carries no
// tool_use_id; its check has no request_id.
func (in *CodexInput) RequestID() string {
	if in.ToolUseID == "" || in.HookEventName == EventPermissionRequest {
		return ""
	}
	return "codex:" + in.ToolUseID
}

// CodexHookLabel is the label a check made for a Codex PermissionRequest
// carries: labels.codex_hook == "PermissionRequest" in a policy tells Codex
// asking to approve a command (which can mean running it outside Codex's
// sandbox, or with network access) from the PreToolUse check of the call.
const CodexHookLabel = "codex_hook"

// Check is the rein check for a Codex hook input: the tool as Codex names
// it (Bash, apply_patch, mcp__server__tool), its input as args, Codex's
// session as the session. With AskWait the check holds for up to wait.
//
// A PermissionRequest check carries the label codex_hook=PermissionRequest;
// for Bash, whose input Codex's schema fixes as {command, description}, the
// description (the model's justification, not part of what runs) is the
// check's intent and the args are {command}: the same action as the call's
// PreToolUse check, so an approver's grant for it applies to both.
func (in *CodexInput) Check(onAsk OnAsk, wait time.Duration) *rein.CheckRequest {
	req := &rein.CheckRequest{Tool: in.ToolName, Args: in.ToolInput, Session: in.SessionID, RequestID: in.RequestID()}
	if in.HookEventName == EventPermissionRequest {
		req.Labels = map[string]string{CodexHookLabel: EventPermissionRequest}
		var bash struct {
			Command     *string `json:"command"`
			Description string  `json:"description"`
		}
		if in.ToolName == "Bash" && decodeOnly(in.ToolInput, &bash, "command", "description") && bash.Command != nil {
			req.Args, _ = json.Marshal(map[string]string{"command": *bash.Command})
			req.Intent = bash.Description
			if len(req.Intent) > rein.MaxIntentLen {
				req.Intent = strings.ToValidUTF8(req.Intent[:rein.MaxIntentLen], "")
			}
		}
	}
	if onAsk == AskWait && wait > 0 {
		req.WaitMS = min(wait.Milliseconds(), rein.MaxWaitMS)
	}
	return req
}

// Result is the check result a PostToolUse records: the input that ran and
// whether the tool reported an error (is_error, error, or a non-zero
// exit_code in an object tool_response).
func (in *CodexInput) Result() *rein.CheckResult {
	res := &rein.CheckResult{Status: "succeeded", Args: in.ToolInput}
	var r struct {
		IsError  bool   `json:"is_error"`
		Error    string `json:"error"`
		ExitCode *int   `json:"exit_code"`
	}
	if json.Unmarshal(in.ToolResponse, &r) == nil {
		switch {
		case r.IsError || r.Error != "":
			res.Status, res.Summary = "failed", r.Error
		case r.ExitCode != nil && *r.ExitCode != 0:
			res.Status, res.Summary = "failed", fmt.Sprintf("exit code %d", *r.ExitCode)
		}
	}
	return res
}

// AnswerCodex renders rein's answer to a Codex hook of the given event.
//   - A run of exactly the asked input: PreToolUse {} (Codex's own sandbox
//     and approval policy still apply), PermissionRequest allow.
//   - A run of changed input: deny, naming the input rein would allow, as
//     Codex cannot be made to run changed input from here.
//   - A pending approval: wait (the check held) means it ran out; deny
//     names the approval; prompt leaves a PermissionRequest to Codex's own
//     prompt, and denies a PreToolUse, which cannot put a call to the user.
//   - Everything else: deny with the reason.
func AnswerCodex(event string, a rein.Answer, onAsk OnAsk) CodexOutput {
	switch a.Do {
	case rein.DoRun:
		if a.Changed {
			return CodexDenyFor(event, "allowed only with changed input ("+a.Reason+"), and Codex cannot be made to run changed input, so the call as asked does not run; to run what rein allows, call the tool with exactly this input: "+string(a.Args))
		}
		if event == EventPermissionRequest {
			return CodexOutput{HookSpecificOutput: &CodexDecision{HookEventName: EventPermissionRequest,
				Decision: &CodexPermissionDecision{Behavior: "allow"}}}
		}
		return CodexOutput{}
	case rein.DoRetry:
		retry := ""
		if a.RetryAfter > 0 {
			retry = fmt.Sprintf("; retry after %s", a.RetryAfter.Round(time.Millisecond))
		}
		return CodexDenyFor(event, "rate limited: "+a.Reason+retry)
	case rein.DoWait:
		ref := "an approval"
		if a.Approval != nil {
			ref = "approval " + a.Approval.ID
			if a.Approval.URL != "" {
				ref += " (" + a.Approval.URL + ")"
			}
		}
		switch onAsk {
		case AskWait:
			return CodexDenyFor(event, "not approved in time: "+a.Reason+"; "+ref+" is still pending; approve it and run the tool again")
		case AskPrompt:
			if event == EventPermissionRequest {
				return CodexOutput{} // Codex asks its user; rein's approval stays pending.
			}
			return CodexDenyFor(event, "needs approval: "+a.Reason+"; a Codex PreToolUse hook cannot put the call to the user, so approve "+ref+" and run the tool again")
		default:
			return CodexDenyFor(event, "needs approval: "+a.Reason+"; approve "+ref+" and run the tool again")
		}
	}
	return CodexDenyFor(event, "denied: "+a.Reason)
}

// CodexDenyFor is a deny in the shape the event's output schema takes: a
// PermissionRequest decision, or a PreToolUse permission decision (also for
// input whose event cannot be read). A PostToolUse cannot deny (the call
// ran): it gets a systemMessage naming what was not recorded.
func CodexDenyFor(event, reason string) CodexOutput {
	switch event {
	case EventPermissionRequest:
		return CodexOutput{HookSpecificOutput: &CodexDecision{HookEventName: EventPermissionRequest,
			Decision: &CodexPermissionDecision{Behavior: "deny", Message: "rein: " + reason}}}
	case EventPostToolUse:
		return CodexOutput{SystemMessage: "rein: " + reason}
	}
	return CodexOutput{HookSpecificOutput: &CodexDecision{HookEventName: EventPreToolUse,
		PermissionDecision: "deny", PermissionDecisionReason: "rein: " + reason}}
}

// CodexEventOf reads only the hook event name, for answering input that
// cannot be decided in the shape its event expects. Input it cannot read is
// PreToolUse's.
func CodexEventOf(data []byte) string {
	var in struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(data, &in) != nil {
		for _, ev := range []string{EventPermissionRequest, EventPostToolUse} {
			if bytes.Contains(data, []byte(`"hook_event_name":"`+ev+`"`)) ||
				bytes.Contains(data, []byte(`"hook_event_name": "`+ev+`"`)) {
				return ev
			}
		}
	}
	return in.HookEventName
}

// decodeOnly decodes an object that has no fields but the named ones.
func decodeOnly(data json.RawMessage, v any, fields ...string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	for k := range m {
		known := false
		for _, f := range fields {
			known = known || k == f
		}
		if !known {
			return false
		}
	}
	return json.Unmarshal(data, v) == nil
}
