package client

import (
	"context"
	"net/url"
	"time"

	"github.com/reinhq/rein"
)

// Lock stops every check matching target (zero: the whole tenant) until
// it is removed or expires (nil: never). tenant is for admins of tenant *
// ("" for their own, "*" for every tenant).
func (c *Client) Lock(ctx context.Context, target rein.LockTarget, reason string, expires *time.Time, tenant string) (*rein.Lock, error) {
	var out rein.Lock
	body := map[string]any{"target": target, "reason": reason, "expires_at": expires}
	if tenant != "" {
		body["tenant"] = tenant
	}
	if err := c.doJSON(ctx, "POST", "/v1/locks", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Locks lists the locks not removed.
func (c *Client) Locks(ctx context.Context) ([]rein.Lock, error) {
	var out []rein.Lock
	if err := c.doJSON(ctx, "GET", "/v1/locks", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Unlock removes a lock.
func (c *Client) Unlock(ctx context.Context, id string) (*rein.Lock, error) {
	var out rein.Lock
	if err := c.doJSON(ctx, "DELETE", "/v1/locks/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
