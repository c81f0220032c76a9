package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/reinhq/rein"
)

// ListQuery filters Approvals and Questions; zero fields do not filter.
type ListQuery struct {
	Status, Session, Agent, Tenant, Cursor string
	Limit                                  int
}

// ApprovalQuery filters Approvals.
type ApprovalQuery = ListQuery

// encode is the query string of a list request.
func (q ListQuery) encode() string {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "session": q.Session, "agent": q.Agent, "tenant": q.Tenant, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", fmt.Sprint(q.Limit))
	}
	return v.Encode()
}

// Approvals lists approvals, newest first.
func (c *Client) Approvals(ctx context.Context, q ApprovalQuery) ([]rein.Approval, error) {
	var out []rein.Approval
	if err := c.doJSON(ctx, "GET", "/v1/approvals?"+q.encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Approval returns one approval.
func (c *Client) Approval(ctx context.Context, id string) (*rein.Approval, error) {
	var out rein.Approval
	if err := c.doJSON(ctx, "GET", "/v1/approvals/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Vote casts a vote: "approve", "reject", or "edit" with the edited args.
// It names no revision, which rein accepts only while the action was never
// edited (else 400): a voter who was shown the action votes with Cast.
func (c *Client) Vote(ctx context.Context, id, vote, message string, args json.RawMessage) (*rein.Approval, error) {
	return c.Cast(ctx, id, Ballot{Vote: vote, Message: message, Args: args})
}

// VoteGrant is Vote with the grant scope an approving vote chooses: "once"
// (or ""), "session", or a window such as "1h", within what the rule permits.
func (c *Client) VoteGrant(ctx context.Context, id, vote, message string, args json.RawMessage, grant string) (*rein.Approval, error) {
	return c.Cast(ctx, id, Ballot{Vote: vote, Message: message, Args: args, Grant: grant})
}

// Ballot is one vote on an approval.
type Ballot struct {
	// Vote is "approve", "reject" or "edit".
	Vote    string
	Message string
	// Args are an edit's arguments (an edit counts as an approval of them).
	Args json.RawMessage
	// Grant is the scope an approving vote chooses: "once" (or ""),
	// "session", or a window such as "1h", within what the rule permits.
	Grant string
	// Revision is the revision of the action the voter was shown
	// (rein.Approval.Revision). An approve or edit of another revision is
	// refused with a *StaleRevisionError; a reject always counts. 0 names
	// none, which rein accepts only while the action was never edited.
	Revision int
}

// StaleRevisionError is the answer to an approve or edit that named a
// revision of the action other than the current one (code stale_revision,
// 409): the action was edited since the voter saw it, and nothing counted.
// Current is the approval as it is now, to show before voting again.
type StaleRevisionError struct {
	Err     *Error
	Current *rein.Approval
}

func (e *StaleRevisionError) Error() string { return e.Err.Error() }
func (e *StaleRevisionError) Unwrap() error { return e.Err }

// Cast casts ballot b on approval id and returns the approval as the vote
// left it. A vote on a stale revision is a *StaleRevisionError with the
// current approval.
func (c *Client) Cast(ctx context.Context, id string, b Ballot) (*rein.Approval, error) {
	body := map[string]any{"vote": b.Vote, "message": b.Message}
	if b.Grant != "" {
		body["grant"] = b.Grant
	}
	if len(b.Args) > 0 {
		body["args"] = b.Args
	}
	if b.Revision > 0 {
		body["revision"] = b.Revision
	}
	var out rein.Approval
	err := c.doJSON(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/votes", body, &out)
	var e *Error
	if errors.As(err, &e) && e.Code == rein.ECodeStaleRevision {
		stale := &StaleRevisionError{Err: e}
		var cur rein.Approval
		if json.Unmarshal(e.Details, &cur) == nil && cur.ID != "" {
			stale.Current = &cur
		}
		return nil, stale
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitResult is the answer of Wait: the approval, and for the waiting agent
// the decision (allow with the arguments to run, deny, or ask if still
// pending when the wait ended).
type WaitResult struct {
	rein.Approval
	Decision rein.Decision   `json:"decision"`
	Reason   string          `json:"reason"`
	RunArgs  json.RawMessage `json:"args"`
	// UseCheckID is the check recorded when the wait used (or refused to
	// use) the grant.
	UseCheckID string `json:"use_check_id"`
}

// EndSession ends a session of the key's agent (POST /v1/sessions/{id}/end):
// rein records session.ended, and later checks in it are denied.
func (c *Client) EndSession(ctx context.Context, id string) (*rein.Session, error) {
	var out rein.Session
	if err := c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(id)+"/end", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Answer is the wait's outcome as rein's one answer to a caller that asked
// about the arguments asked: run (with exactly the arguments to run),
// refuse, or keep waiting.
func (w *WaitResult) Answer(asked json.RawMessage) rein.Answer {
	ref := &rein.ApprovalRef{ID: w.ID, Status: w.Status, ExpiresAt: w.ExpiresAt, Quorum: w.Quorum}
	return rein.AnswerFor(w.Decision, w.Reason, w.RunArgs, asked, ref, nil)
}

// Wait long-polls an approval (timeoutMS at most 300000).
func (c *Client) Wait(ctx context.Context, id string, timeoutMS int64) (*WaitResult, error) {
	var out WaitResult
	if err := c.doJSON(ctx, "GET", fmt.Sprintf("/v1/approvals/%s/wait?timeout_ms=%d", url.PathEscape(id), timeoutMS), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// VoteBatch casts one vote on every pending approval of an agent turn
// (checks that carried batch), all or nothing. seen, when not empty, is the
// approvals the voter was shown: unless the batch holds exactly those,
// nothing is voted (409). Each is an approval id, or "id@N" with the
// revision N the voter was shown; an approval that was edited must be named
// with its current revision.
func (c *Client) VoteBatch(ctx context.Context, batch, vote, message, grant string, seen []string) ([]*rein.Approval, error) {
	var out []*rein.Approval
	body := map[string]any{"vote": vote, "message": message}
	if grant != "" {
		body["grant"] = grant
	}
	if len(seen) > 0 {
		body["approvals"] = seen
	}
	if err := c.doJSON(ctx, "POST", "/v1/batches/"+url.PathEscape(batch)+"/votes", body, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Revoke ends an approved grant before its window closes.
func (c *Client) Revoke(ctx context.Context, id, message string) (*rein.Approval, error) {
	var out rein.Approval
	if err := c.doJSON(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/revoke", map[string]any{"message": message}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Cancel withdraws a pending approval.
func (c *Client) Cancel(ctx context.Context, id string) (*rein.Approval, error) {
	var out rein.Approval
	if err := c.doJSON(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/cancel", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
