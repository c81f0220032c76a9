// Package hook translates the permission hooks of coding agents, Claude
// Code's and Codex's (codex.go), into one rein check and rein's answer back
// into hook output (integrations.md). It is pure: the CLI (`rein hook
// claude-code`, `rein hook codex`) and the HTTP endpoint
// (POST /v1/hooks/claude-code) do the I/O around it.
//
// Claude Code treats a failing hook as "no decision" and lets the tool run.
// rein does not: every failure, whatever its cause, becomes a deny with a
// reason that names it (see Deny, CodexDenyFor).
package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein"
)

// EventPreToolUse is the hook event rein decides.
const EventPreToolUse = "PreToolUse"

// EventPermissionRequest is Claude Code's permission dialog about to be
// shown: rein decides it as it decides PreToolUse.
const EventPermissionRequest = "PermissionRequest"

// EventPostToolUse is a tool call that ran: rein records it as the result
// of the check that allowed it, with the input that was executed.
const EventPostToolUse = "PostToolUse"

// EventPermissionDenied is Claude Code's report that it denied a tool call
// itself (its auto mode classifier, after rein's PreToolUse allowed it):
// rein records the call as not run, the result of the check that allowed
// it, and answers nothing (no retry: rein does not invite the model to try
// again; a new call is decided again anyway).
const EventPermissionDenied = "PermissionDenied"

// EventSessionEnd is Claude Code's end of a session: rein records the end of
// its session of the same id (session.ended) and decides nothing.
const EventSessionEnd = "SessionEnd"

// MaxInputBytes bounds the hook input rein reads.
const MaxInputBytes = 1 << 20

// OnAsk says what the hook does when rein answers ask.
type OnAsk string

const (
	// AskWait holds the tool call until the approval is decided or the wait
	// runs out (then deny).
	AskWait OnAsk = "wait"
	// AskPrompt answers "ask": the user at the terminal decides, and that
	// answer is not rein's (the approval stays pending until it expires).
	AskPrompt OnAsk = "prompt"
	// AskDeny denies at once, naming the approval to decide before a retry.
	AskDeny OnAsk = "deny"
	// AskDefer answers PreToolUse with "defer", for headless runs (`claude
	// -p`): Claude Code stops with the tool call pending, to be resumed
	// (`claude -p --resume SESSION`) once the approval it names is decided;
	// the resumed call is checked again and finds the approval. A
	// PermissionRequest, which has no defer, is denied naming the approval.
	AskDefer OnAsk = "defer"
)

// ParseOnAsk reads an --on-ask / on_ask value.
func ParseOnAsk(s string) (OnAsk, error) {
	switch o := OnAsk(s); o {
	case AskWait, AskPrompt, AskDeny, AskDefer:
		return o, nil
	}
	return "", fmt.Errorf("on-ask %q: use wait, prompt, deny or defer", s)
}

// Input is the PreToolUse hook input as Claude Code sends it. Fields rein
// does not use (transcript_path and any Claude Code adds later) are ignored.
type Input struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	// Reason is why Claude Code denied the call (PermissionDenied).
	Reason string `json:"reason,omitempty"`
}

// Output is what the hook prints (or the HTTP endpoint answers).
type Output struct {
	HookSpecificOutput *Decision `json:"hookSpecificOutput,omitempty"`
}

// Decision is the hook-specific output: for PreToolUse a permission
// decision, for PermissionRequest a decision object.
type Decision struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision is allow, deny, ask or defer (PreToolUse).
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	// Decision answers a PermissionRequest.
	Decision *PermissionDecision `json:"decision,omitempty"`
}

// PermissionDecision is the answer to a PermissionRequest: allow (with the
// input to run) or deny (with a message). It has no updatedPermissions
// field, so rein cannot send one: not even for an approver's session or
// window grant. A Claude Code permission rule cannot say "exactly this
// input" (a Bash rule matches the command alone, with * as a wildcard, and
// not run_in_background or timeout; file rules are path patterns; WebFetch
// rules match a domain; an MCP rule matches every argument), and a session
// rule has no end, where a window grant does. Any rule rein could send would
// allow more than rein decided (integrations.md).
type PermissionDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// Parse reads hook input. Anything that is not a PreToolUse call of a named
// tool with an object as input is an error that says what was wrong.
func Parse(data []byte) (*Input, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("hook input is %d bytes; the limit is %d", len(data), MaxInputBytes)
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("hook input is not Claude Code hook JSON: %v", err)
	}
	switch in.HookEventName {
	case EventSessionEnd:
		if in.SessionID == "" {
			return nil, fmt.Errorf("a %s hook input needs session_id", EventSessionEnd)
		}
		return &in, nil
	case EventPostToolUse, EventPermissionDenied:
		if in.ToolUseID == "" {
			return nil, fmt.Errorf("a %s hook input needs tool_use_id, to find the check that allowed the call", in.HookEventName)
		}
	case EventPreToolUse, EventPermissionRequest:
	default:
		return nil, fmt.Errorf("hook_event_name is %q; rein decides %s and %s hooks and records %s, %s and %s (register it under \"%s\" in settings.json)",
			in.HookEventName, EventPreToolUse, EventPermissionRequest, EventPostToolUse, EventPermissionDenied, EventSessionEnd, EventPreToolUse)
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

// Check is the rein check for a hook input: the tool as Claude Code names
// it (Bash, Write, mcp__server__tool), its input as args, Claude Code's
// session as the session. With AskWait the check holds for up to wait.
func (in *Input) Check(onAsk OnAsk, wait time.Duration) *rein.CheckRequest {
	req := &rein.CheckRequest{Tool: in.ToolName, Args: in.ToolInput, Session: in.SessionID, RequestID: in.RequestID()}
	if onAsk == AskWait && wait > 0 {
		req.WaitMS = min(wait.Milliseconds(), rein.MaxWaitMS)
	}
	return req
}

// RequestID is the check's request_id for a tool call: Claude Code's
// tool_use_id, so that its PostToolUse finds the check, and a repeated hook
// for the same call gets the same answer ("" without a tool_use_id).
func (in *Input) RequestID() string {
	if in.ToolUseID == "" {
		return ""
	}
	return "claude-code:" + in.ToolUseID
}

// Resumed is the check a deferred call makes when it is resumed and its
// approval has been approved. Claude Code resumes the same tool call, with
// the same tool_use_id and so the same request_id, whose stored answer is
// the ask; the decision made once an ask's approval is resolved has the
// ask's request_id + "#wait" (api.md, request_id), so this check uses that
// id: the re-submission uses the grant once, a repeated resume gets the same
// answer, and the call's PostToolUse meets the allow. A call without a
// tool_use_id has no stored answer to get past (false).
func (in *Input) Resumed() (*rein.CheckRequest, bool) {
	req := in.Check(AskDefer, 0)
	if req.RequestID == "" || utf8.RuneCountInString(req.RequestID)+len("#wait") > rein.MaxRequestIDLen {
		return nil, false
	}
	req.RequestID += "#wait"
	return req, true
}

// NotResumed is the answer to a resumed deferred call whose approval was
// decided other than approved (rejected, expired, cancelled, invalidated, or
// its once grant used by another call): a deny naming it, not another defer.
func NotResumed(a *rein.Approval) Output {
	why := "approval " + a.ID + " is " + a.Status
	for _, v := range a.Votes {
		if v.Vote == "reject" && v.Message != "" {
			why += " (" + v.Message + ")"
			break
		}
	}
	return Deny(why + "; run the tool again to ask anew")
}

// Result is the check result a PostToolUse records: the input that ran
// (the executed arguments rein compares with the allowed ones) and whether
// the tool reported an error.
func (in *Input) Result() *rein.CheckResult {
	res := &rein.CheckResult{Status: "succeeded", Args: in.ToolInput}
	var r struct {
		IsError bool   `json:"is_error"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(in.ToolResponse, &r) == nil && (r.IsError || r.Error != "") {
		res.Status, res.Summary = "failed", r.Error
	}
	return res
}

// Denied is the check result a PermissionDenied records: the call did not
// run, because Claude Code denied it after rein allowed it.
func (in *Input) Denied() *rein.CheckResult {
	why := "Claude Code denied the call"
	if r := strings.TrimSpace(in.Reason); r != "" {
		why += ": " + r
	}
	return &rein.CheckResult{Status: "failed", Summary: "not run: " + why}
}

// AnswerPermission renders rein's answer to a PermissionRequest: a run is
// allow with exactly the input rein allowed; a wait follows onAsk (prompt:
// no decision, Claude Code shows its dialog; otherwise deny naming the
// approval; defer too, as a PermissionRequest cannot defer); everything else
// is deny with the reason. It never carries updatedPermissions (see
// PermissionDecision).
func AnswerPermission(a rein.Answer, onAsk OnAsk) Output {
	decide := func(d *PermissionDecision) Output {
		return Output{HookSpecificOutput: &Decision{HookEventName: EventPermissionRequest, Decision: d}}
	}
	switch a.Do {
	case rein.DoRun:
		return decide(&PermissionDecision{Behavior: "allow", UpdatedInput: a.Args})
	case rein.DoWait:
		if onAsk == AskPrompt {
			return Output{}
		}
		ref := "an approval"
		if a.Approval != nil {
			ref = "approval " + a.Approval.ID
		}
		return decide(&PermissionDecision{Behavior: "deny", Message: "rein: needs approval: " + a.Reason + "; approve " + ref + " and run the tool again"})
	}
	return decide(&PermissionDecision{Behavior: "deny", Message: Answer(a, onAsk).HookSpecificOutput.PermissionDecisionReason})
}

// Answer renders rein's answer as the hook's. A run always carries
// updatedInput with exactly the arguments rein allowed (the request's, a
// modify rule's or an approver's edit), so Claude Code runs what rein
// allowed and nothing else; a retry becomes deny with the retry time; a wait
// follows onAsk (with AskWait a wait still standing means it ran out).
func Answer(a rein.Answer, onAsk OnAsk) Output {
	reason := a.Reason
	switch a.Do {
	case rein.DoRun:
		if a.Changed {
			return out("allow", "rein: allowed with changed input: "+reason, a.Args)
		}
		return out("allow", "rein: allowed: "+reason, a.Args)
	case rein.DoRetry:
		retry := ""
		if a.RetryAfter > 0 {
			retry = fmt.Sprintf("; retry after %s", a.RetryAfter.Round(time.Millisecond))
		}
		return Deny("rate limited: " + reason + retry)
	case rein.DoWait:
		ref := "an approval"
		if a.Approval != nil {
			ref = "approval " + a.Approval.ID
			if a.Approval.URL != "" {
				ref += " (" + a.Approval.URL + ")"
			}
		}
		switch onAsk {
		case AskPrompt:
			return out("ask", "rein asks for a person's approval: "+reason+"; rein's "+ref+" stays pending, your answer here is not recorded by rein", nil)
		case AskWait:
			return Deny("not approved in time: " + reason + "; " + ref + " is still pending; approve it and run the tool again")
		case AskDefer:
			return out("defer", "rein: needs approval: "+reason+"; "+ref+" is pending; approve it, then resume this session (claude -p --resume SESSION_ID) to run the tool", nil)
		default:
			return Deny("needs approval: " + reason + "; approve " + ref + " and run the tool again")
		}
	}
	return Deny("denied: " + reason)
}

// Ended is the output for a SessionEnd, PostToolUse or PermissionDenied
// hook: nothing to decide.
func Ended() Output { return Output{} }

// Deny is the hook's answer to anything that went wrong: a deny whose
// reason names the cause.
func Deny(reason string) Output {
	return out("deny", "rein: "+reason, nil)
}

// DenyFor is Deny in the shape the hook event expects: a PermissionRequest
// hook is answered with its own decision object (Claude Code would not read
// a PreToolUse answer there and would ask the user instead).
func DenyFor(event, reason string) Output {
	if event == EventPermissionRequest {
		return Output{HookSpecificOutput: &Decision{HookEventName: EventPermissionRequest,
			Decision: &PermissionDecision{Behavior: "deny", Message: "rein: " + reason}}}
	}
	return Deny(reason)
}

// EventOf reads only the hook event name from hook input, for answering an
// input that cannot be decided (too large, not JSON, missing fields) in the
// shape its event expects. Input it cannot read is PreToolUse's.
func EventOf(data []byte) string {
	var in struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(data, &in) != nil {
		// Not JSON, or cut off at the size limit: look for the field in the text.
		if bytes.Contains(data, []byte(`"hook_event_name":"`+EventPermissionRequest+`"`)) ||
			bytes.Contains(data, []byte(`"hook_event_name": "`+EventPermissionRequest+`"`)) {
			return EventPermissionRequest
		}
	}
	return in.HookEventName
}

func out(decision, reason string, updated json.RawMessage) Output {
	return Output{HookSpecificOutput: &Decision{
		HookEventName: EventPreToolUse, PermissionDecision: decision,
		PermissionDecisionReason: reason, UpdatedInput: updated,
	}}
}
