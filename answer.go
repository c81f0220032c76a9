package rein

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Do is what the caller of a check must do next with the action.
type Do string

const (
	// DoRun: run the action with exactly Answer.Args, nothing else.
	DoRun Do = "run"
	// DoRefuse: do not run the action; Answer.Reason says why.
	DoRefuse Do = "refuse"
	// DoWait: a person must decide first; wait on Answer.Approval.
	DoWait Do = "wait"
	// DoRetry: rate limited; do not run now, a retry after RetryAfter may pass.
	DoRetry Do = "retry"
)

// Answer is rein's one answer to a check, whatever the entry point: every
// adapter (HTTP, Claude Code hook, ACS, MCP gateway, SDKs) renders it in its
// own wire format and decides nothing itself. An allow always carries the
// arguments to run, whether they came from the request, a modify rule or an
// approver's edit; Changed says that they differ from what the caller asked
// about, so that a wire format that cannot carry changed arguments refuses
// instead of running the original.
type Answer struct {
	Do         Do
	Decision   Decision
	Args       json.RawMessage // Do == DoRun: the arguments to run, canonical JSON
	Changed    bool            // Do == DoRun: Args differ from the arguments asked about
	Reason     string
	Approval   *ApprovalRef
	RetryAfter time.Duration
}

// AnswerFor is the answer to a caller that asked about the arguments asked
// and got decision d with reason and run arguments args. An allow without
// arguments to run, or with arguments that are not a JSON object, is refused:
// rein never lets a caller guess what to run.
func AnswerFor(d Decision, reason string, args, asked json.RawMessage, approval *ApprovalRef, retryAfterMS *int64) Answer {
	a := Answer{Decision: d, Reason: reason, Approval: approval}
	switch d {
	case Allow, Modify:
		run, err := Canonical(args)
		if err != nil || len(run) == 0 || run[0] != '{' {
			a.Do, a.Reason = DoRefuse, fmt.Sprintf("rein allowed the action but its answer carries no arguments object to run (%s), so it must not run", reason)
			return a
		}
		a.Do, a.Args = DoRun, run
		orig, err := Canonical(asked)
		a.Changed = err != nil || !bytes.Equal(orig, run)
	case Ask:
		a.Do = DoWait
		if approval == nil {
			a.Do = DoRefuse
			a.Reason = "rein asks for an approval but named none: " + reason
		}
	case Throttle:
		a.Do = DoRetry
		if retryAfterMS != nil {
			a.RetryAfter = time.Duration(*retryAfterMS) * time.Millisecond
		}
	case Deny:
		a.Do = DoRefuse
	default:
		a.Do, a.Reason = DoRefuse, fmt.Sprintf("rein answered %q, which is not a decision; the action must not run", d)
	}
	return a
}

// Answer is the response's answer to a caller that asked about asked.
func (r *CheckResponse) Answer(asked json.RawMessage) Answer {
	return AnswerFor(r.Decision, r.Reason, r.Args, asked, r.Approval, r.RetryAfterMS)
}
