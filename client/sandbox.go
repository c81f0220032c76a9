package client

import (
	"context"
	"fmt"
	"net/url"

	"github.com/reinhq/rein"
)

// SandboxStart and SandboxEnd are what rein run says of a contained session.
type (
	SandboxStart = rein.SandboxStart
	SandboxEnd   = rein.SandboxEnd
)

// StartSandbox records that session starts contained (POST
// /v1/sessions/{id}/sandbox, event started).
func (c *Client) StartSandbox(ctx context.Context, session string, s SandboxStart) (*rein.Session, error) {
	var out rein.Session
	body := struct {
		Event string `json:"event"`
		SandboxStart
	}{"started", s}
	if err := c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(session)+"/sandbox", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EndSandbox records how the contained command of session ended.
func (c *Client) EndSandbox(ctx context.Context, session string, e SandboxEnd) error {
	body := struct {
		Event string `json:"event"`
		SandboxEnd
	}{"ended", e}
	return c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(session)+"/sandbox", body, nil)
}

// SandboxStop is a contained session and the lock that stops it, if any.
type SandboxStop = rein.SandboxStop

// Sandbox reads a contained session and the lock that stops it (GET
// /v1/sessions/{id}/sandbox): rein run and rein exec poll it to end every
// process of the run once people stop the session.
func (c *Client) Sandbox(ctx context.Context, session string) (*SandboxStop, error) {
	var out SandboxStop
	if err := c.doJSON(ctx, "GET", "/v1/sessions/"+url.PathEscape(session)+"/sandbox", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitSandbox is Sandbox as a long poll: rein answers once a lock stops the
// session or its run has ended, or after timeoutMS milliseconds.
func (c *Client) WaitSandbox(ctx context.Context, session string, timeoutMS int64) (*SandboxStop, error) {
	var out SandboxStop
	path := fmt.Sprintf("/v1/sessions/%s/sandbox?timeout_ms=%d", url.PathEscape(session), timeoutMS)
	if err := c.doJSON(ctx, "GET", path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
