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
	body := map[string]any{"vote": vote, "message": message}
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
}

// Wait long-polls an approval (timeoutMS at most 300000).
func (c *Client) Wait(ctx context.Context, id string, timeoutMS int64) (*WaitResult, error) {
	var out WaitResult
	if err := c.doJSON(ctx, "GET", fmt.Sprintf("/v1/approvals/%s/wait?timeout_ms=%d", url.PathEscape(id), timeoutMS), nil, &out); err != nil {
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
