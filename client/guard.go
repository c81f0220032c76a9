package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/reinhq/rein"
)

// DeniedError is what Guard returns when rein does not let the action run:
// a deny (by policy, lock or a rejected or expired approval), a throttle, or
// an approval still pending when the caller's context ended.
type DeniedError struct {
	Decision   rein.Decision  // deny, throttle, or ask (still pending)
	Reason     string         // why, in words fit to show a person or a model
	Rule       string         // the policy rule that decided, when one did
	CheckID    string         // the recorded check
	ApprovalID string         // the approval the decision came from or waits on
	Approval   *rein.Approval // the approval as it was at the end of a wait
	RetryAfter time.Duration  // for throttle: when a retry may pass
	err        error          // the context's error when a wait ended early
}

func (e *DeniedError) Error() string {
	s := fmt.Sprintf("rein: %s: %s", e.Decision, e.Reason)
	if e.err != nil {
		s += " (" + e.err.Error() + ")"
	}
	return s
}

// Unwrap returns the context error that ended a wait, if any.
func (e *DeniedError) Unwrap() error { return e.err }

// Pending reports whether the action was not refused but is still waiting
// for its approval (the context ended first); retrying later may run it.
func (e *DeniedError) Pending() bool { return e.Decision == rein.Ask }

// Guard checks tool with args (anything that marshals to a JSON object) and
// runs fn only if rein allows it, with the arguments to run: the request's,
// the policy's modification, or an approver's edit. When rein asks, Guard
// waits for the approval until it is resolved or ctx ends. Any other
// outcome is a *DeniedError; fn's own error is returned as it is.
func (c *Client) Guard(ctx context.Context, tool string, args any, fn func(ctx context.Context, args json.RawMessage) error) error {
	raw, err := marshalArgs(args)
	if err != nil {
		return err
	}
	return c.GuardCheck(ctx, rein.CheckRequest{Tool: tool, Args: raw}, fn)
}

// GuardCheck is Guard for a full check request (session, agent, intent,
// labels, cost, request_id).
func (c *Client) GuardCheck(ctx context.Context, req rein.CheckRequest, fn func(ctx context.Context, args json.RawMessage) error) error {
	res, err := c.Check(ctx, req)
	if err != nil {
		return err
	}
	run, err := c.Decide(ctx, res)
	if err != nil {
		return err
	}
	return fn(ctx, run)
}

// Decide turns a check's answer into the arguments to run or a
// *DeniedError, waiting for the approval (WaitDecision) when the answer is
// ask.
func (c *Client) Decide(ctx context.Context, res *rein.CheckResponse) (json.RawMessage, error) {
	ans := res.Answer(res.Args)
	switch ans.Do {
	case rein.DoRun:
		return ans.Args, nil
	case rein.DoWait:
		w, err := c.WaitDecision(ctx, res.Approval.ID)
		if w == nil {
			return nil, err
		}
		if wa := w.Answer(nil); wa.Do == rein.DoRun {
			return wa.Args, nil
		} else if w.Decision == rein.Allow {
			w.Decision, w.Reason = rein.Deny, wa.Reason
		}
		a := w.Approval
		return nil, &DeniedError{Decision: w.Decision, Reason: w.Reason, Rule: res.Rule, CheckID: res.ID,
			ApprovalID: res.Approval.ID, Approval: &a, err: err}
	default:
		d := &DeniedError{Decision: res.Decision, Reason: ans.Reason, Rule: res.Rule, CheckID: res.ID}
		if res.Decision.Allows() {
			d.Decision = rein.Deny // an allow without arguments to run is refused
		}
		if res.Approval != nil {
			d.ApprovalID = res.Approval.ID
		}
		if res.RetryAfterMS != nil {
			d.RetryAfter = time.Duration(*res.RetryAfterMS) * time.Millisecond
		}
		if d.Decision == rein.Ask { // ask without an approval: nobody can approve it
			d.Decision = rein.Deny
		}
		return nil, d
	}
}

// waitSlice is one long-poll of WaitDecision; a slice shorter than the
// server's 5-minute limit keeps idle proxies from cutting the connection.
const waitSlice = 60 * time.Second

// WaitDecision waits for an approval to be resolved, as the agent that
// asked, until ctx ends. It returns the outcome: allow (the grant is
// consumed, RunArgs are the arguments to run), deny (rejected, expired,
// cancelled or invalidated, with the reason), or ask when ctx ended first,
// together with ctx's error.
func (c *Client) WaitDecision(ctx context.Context, id string) (*WaitResult, error) {
	var last *WaitResult
	for {
		slice := waitSlice
		if d, ok := ctx.Deadline(); ok {
			slice = min(slice, time.Until(d))
		}
		if slice <= 0 || ctx.Err() != nil {
			break
		}
		w, err := c.Wait(ctx, id, slice.Milliseconds())
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return last, err
		}
		last = w
		if w.Decision != rein.Ask {
			return w, nil
		}
	}
	if last == nil {
		a, err := c.Approval(context.WithoutCancel(ctx), id)
		if err != nil {
			return nil, errors.Join(ended(ctx), err)
		}
		last = &WaitResult{Approval: *a, Decision: rein.Ask, Reason: "still pending: " + a.Reason}
	}
	return last, ended(ctx)
}

// ended is the error of a context whose deadline has passed or that was
// cancelled; a deadline can pass a moment before ctx.Err() reports it.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}

// Result is what an agent reports after running an allowed action.
type Result struct {
	Status  string   `json:"status"` // "succeeded" or "failed"
	Summary string   `json:"summary,omitempty"`
	Cost    *float64 `json:"cost,omitempty"` // corrects the session's spend
	// Args are the arguments that actually ran (or ArgsHash their hash):
	// rein records whether they match the allowed ones.
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsHash string          `json:"args_hash,omitempty"`
	// Address is what a net.connect check's name resolved to (rein run's
	// egress proxy reports it).
	Address string `json:"address,omitempty"`
	// ExecutedBy is "agent" (the default) or "rein" (rein exec ran it; the
	// server accepts that only from rein exec's own session and key).
	ExecutedBy string `json:"executed_by,omitempty"`
	// ExitStatus and the hashes and lengths of standard output and
	// standard error ("sha256:" + hex) say what the execution produced.
	ExitStatus   *int   `json:"exit_status,omitempty"`
	StdoutSHA256 string `json:"stdout_sha256,omitempty"`
	StdoutBytes  *int64 `json:"stdout_bytes,omitempty"`
	StderrSHA256 string `json:"stderr_sha256,omitempty"`
	StderrBytes  *int64 `json:"stderr_bytes,omitempty"`
}

// Report records what happened after an allowed check (POST
// /v1/checks/{id}/result). Reporting on a check that was not allowed is a
// conflict.
func (c *Client) Report(ctx context.Context, checkID string, r Result) error {
	return c.doJSON(ctx, "POST", "/v1/checks/"+url.PathEscape(checkID)+"/result", r, nil)
}

func marshalArgs(args any) (json.RawMessage, error) {
	switch a := args.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		return a, nil
	case []byte:
		return json.RawMessage(a), nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("rein: args must marshal to a JSON object: %w", err)
	}
	return raw, nil
}
