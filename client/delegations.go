package client

import (
	"context"
	"net/url"
	"time"

	"github.com/reinhq/rein"
)

// Delegate lets identity to vote with the key's eligibility (or from's, for
// admins) until until.
func (c *Client) Delegate(ctx context.Context, from, to string, until time.Time, reason string) (*rein.Delegation, error) {
	var out rein.Delegation
	body := map[string]any{"to": to, "until": until, "reason": reason}
	if from != "" {
		body["from"] = from
	}
	if err := c.doJSON(ctx, "POST", "/v1/delegations", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delegations lists the tenant's delegations.
func (c *Client) Delegations(ctx context.Context) ([]rein.Delegation, error) {
	var out []rein.Delegation
	return out, c.doJSON(ctx, "GET", "/v1/delegations", nil, &out)
}

// RevokeDelegation ends a delegation.
func (c *Client) RevokeDelegation(ctx context.Context, id string) (*rein.Delegation, error) {
	var out rein.Delegation
	return &out, c.doJSON(ctx, "DELETE", "/v1/delegations/"+url.PathEscape(id), nil, &out)
}
