// Package hook translates Claude Code's PreToolUse hook exchange into one
// rein check and rein's answer back into hook output (integrations.md). It
// is pure: the CLI (`rein hook claude-code`) and the HTTP endpoint
// (POST /v1/hooks/claude-code) do the I/O around it.
//
// Claude Code treats a failing hook as "no decision" and lets the tool run.
// rein does not: every failure, whatever its cause, becomes a deny with a
// reason that names it (see Deny).
package hook

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// EventPreToolUse is the only hook event rein decides.
const EventPreToolUse = "PreToolUse"

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
)

// ParseOnAsk reads an --on-ask / on_ask value.
func ParseOnAsk(s string) (OnAsk, error) {
	switch o := OnAsk(s); o {
	case AskWait, AskPrompt, AskDeny:
		return o, nil
	}
	return "", fmt.Errorf("on-ask %q: use wait, prompt or deny", s)
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
}

// Output is what the hook prints (or the HTTP endpoint answers).
type Output struct {
	HookSpecificOutput Decision `json:"hookSpecificOutput"`
}

// Decision is the PreToolUse decision inside Output.
type Decision struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision is allow, deny or ask.
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
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
	if in.HookEventName != EventPreToolUse {
		return nil, fmt.Errorf("hook_event_name is %q; rein decides only %s hooks (register it under \"%s\" in settings.json)",
			in.HookEventName, EventPreToolUse, EventPreToolUse)
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
	req := &rein.CheckRequest{Tool: in.ToolName, Args: in.ToolInput, Session: in.SessionID}
	if onAsk == AskWait && wait > 0 {
		req.WaitMS = min(wait.Milliseconds(), rein.MaxWaitMS)
	}
	return req
}

// Answer maps rein's decision onto the hook's. modify becomes allow with
// the changed input; throttle becomes deny with the retry time; ask follows
// onAsk (with AskWait an ask still standing means the wait ran out).
func Answer(res *rein.CheckResponse, onAsk OnAsk) Output {
	reason := res.Reason
	switch res.Decision {
	case rein.Allow:
		return out("allow", "rein: allowed: "+reason, nil)
	case rein.Modify:
		return out("allow", "rein: allowed with changed input: "+reason, res.Args)
	case rein.Deny:
		return Deny("denied: " + reason)
	case rein.Throttle:
		retry := ""
		if res.RetryAfterMS != nil {
			retry = fmt.Sprintf("; retry after %s", (time.Duration(*res.RetryAfterMS) * time.Millisecond).Round(time.Millisecond))
		}
		return Deny("rate limited: " + reason + retry)
	case rein.Ask:
		ref := "an approval"
		if res.Approval != nil {
			ref = "approval " + res.Approval.ID
			if res.Approval.URL != "" {
				ref += " (" + res.Approval.URL + ")"
			}
		}
		switch onAsk {
		case AskPrompt:
			return out("ask", "rein asks for a person's approval: "+reason+"; rein's "+ref+" stays pending, your answer here is not recorded by rein", nil)
		case AskWait:
			return Deny("not approved in time: " + reason + "; " + ref + " is still pending; approve it and run the tool again")
		default:
			return Deny("needs approval: " + reason + "; approve " + ref + " and run the tool again")
		}
	}
	return Deny(fmt.Sprintf("unknown decision %q from rein", res.Decision))
}

// Deny is the hook's answer to anything that went wrong: a deny whose
// reason names the cause.
func Deny(reason string) Output {
	return out("deny", "rein: "+reason, nil)
}

func out(decision, reason string, updated json.RawMessage) Output {
	return Output{HookSpecificOutput: Decision{
		HookEventName: EventPreToolUse, PermissionDecision: decision,
		PermissionDecisionReason: reason, UpdatedInput: updated,
	}}
}
