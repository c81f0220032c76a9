package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/reinhq/rein"
)

// Propose turns an approved action into a proposed policy change ("always
// allow"), for an admin to accept or reject.
func (c *Client) Propose(ctx context.Context, approvalID, message string) (*rein.Proposal, error) {
	var out rein.Proposal
	if err := c.doJSON(ctx, "POST", "/v1/approvals/"+url.PathEscape(approvalID)+"/propose", map[string]any{"message": message}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Proposals lists policy proposals (every status unless q.Status names one;
// "pending" means open).
func (c *Client) Proposals(ctx context.Context, q ListQuery) ([]rein.Proposal, error) {
	var out []rein.Proposal
	v := url.Values{}
	status := q.Status
	switch status {
	case "":
		status = "all"
	case "pending":
		status = rein.ProposalOpen
	}
	v.Set("status", status)
	if q.Agent != "" {
		v.Set("agent", q.Agent)
	}
	if err := c.doJSON(ctx, "GET", "/v1/proposals?"+v.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Proposal returns one proposal, with its diff and replay.
func (c *Client) Proposal(ctx context.Context, id string) (*rein.Proposal, error) {
	var out rein.Proposal
	if err := c.doJSON(ctx, "GET", "/v1/proposals/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DecideProposal accepts (pushing the proposed policy) or rejects a proposal.
func (c *Client) DecideProposal(ctx context.Context, id string, accept bool, message string) (*rein.Proposal, error) {
	decision := "reject"
	if accept {
		decision = "accept"
	}
	var out rein.Proposal
	if err := c.doJSON(ctx, "POST", "/v1/proposals/"+url.PathEscape(id)+"/decision", map[string]any{"decision": decision, "message": message}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Suggestions lists actions approved at least min times since since (a
// duration such as 30d, or an RFC 3339 time) and never rejected.
func (c *Client) Suggestions(ctx context.Context, min int, since string) ([]rein.Suggestion, error) {
	v := url.Values{}
	if min > 0 {
		v.Set("min", strconv.Itoa(min))
	}
	if since != "" {
		v.Set("since", since)
	}
	var out []rein.Suggestion
	if err := c.doJSON(ctx, "GET", "/v1/proposals/suggestions?"+v.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}
