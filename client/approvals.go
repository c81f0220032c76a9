package client

import (
	"context"
	"encoding/json"
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
func (c *Client) Vote(ctx context.Context, id, vote, message string, args json.RawMessage) (*rein.Approval, error) {
	return c.VoteGrant(ctx, id, vote, message, args, "")
}

// VoteGrant is Vote with the grant scope an approving vote chooses: "once"
// (or ""), "session", or a window such as "1h", within what the rule permits.
func (c *Client) VoteGrant(ctx context.Context, id, vote, message string, args json.RawMessage, grant string) (*rein.Approval, error) {
	body := map[string]any{"vote": vote, "message": message}
	if grant != "" {
		body["grant"] = grant
	}
	if len(args) > 0 {
		body["args"] = args
	}
	var out rein.Approval
	if err := c.doJSON(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/votes", body, &out); err != nil {
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
// nothing is voted (409).
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
