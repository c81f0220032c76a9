package client

import (
	"context"
	"net/url"

	"github.com/reinhq/rein"
)

// Reviews lists reviews after the fact (status open by default; "" lists
// every status only with q.Status "all").
func (c *Client) Reviews(ctx context.Context, q ListQuery) ([]rein.Review, error) {
	var out []rein.Review
	v := url.Values{}
	status := q.Status
	switch status {
	case "":
		status = "all"
	case "pending": // the waiting ones, as for approvals
		status = rein.ReviewOpen
	}
	v.Set("status", status)
	if q.Agent != "" {
		v.Set("agent", q.Agent)
	}
	if err := c.doJSON(ctx, "GET", "/v1/reviews?"+v.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Verdict is a reviewer's decision on a review.
type Verdict struct {
	Verdict  string `json:"verdict"` // ok or concern
	Message  string `json:"message,omitempty"`
	Lock     string `json:"lock,omitempty"`     // with a concern: agent or session
	Proposal string `json:"proposal,omitempty"` // with a concern: a tighter policy, as text
}

// DecideReview records a verdict on a review.
func (c *Client) DecideReview(ctx context.Context, id string, v Verdict) (*rein.Review, error) {
	var out rein.Review
	if err := c.doJSON(ctx, "POST", "/v1/reviews/"+url.PathEscape(id)+"/verdict", v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
