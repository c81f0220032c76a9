package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// Client talks to one rein server with one key.
type Client struct {
	BaseURL string
	Key     string
	HTTP    *http.Client
}

// New returns a client with a 5-minute overall timeout (long enough for waits).
func New(baseURL, key string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: &http.Client{Timeout: 5*time.Minute + 10*time.Second}}
}

// Error is a non-2xx answer from rein: Code is the machine code of the
// API's error body (bad_request, unauthenticated, forbidden, not_found,
// conflict, stale_revision, gone, too_large, unavailable), Message says what
// is wrong and how to fix it. A policy deny is not an Error: see DeniedError.
type Error struct {
	Status   int
	Code     string
	Message  string
	Problems []Problem
	// Details is the error's "details", as sent (a stale vote's current
	// approval: see StaleRevisionError).
	Details json.RawMessage
}

// Problem is one thing wrong with a pushed or simulated policy.
type Problem struct {
	Rule    string `json:"rule,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("rein: %s (%d): %s", e.Code, e.Status, e.Message) }

// IsCode reports whether err is a rein error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

func (c *Client) do(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return err
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("rein at %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("rein at %s: reading answer: %w", c.BaseURL, err)
	}
	if resp.StatusCode >= 300 {
		var eb struct {
			Error struct {
				Code     string          `json:"code"`
				Message  string          `json:"message"`
				Problems []Problem       `json:"problems"`
				Details  json.RawMessage `json:"details"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return &Error{Status: resp.StatusCode, Code: "http_" + fmt.Sprint(resp.StatusCode), Message: strings.TrimSpace(string(data))}
		}
		return &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message, Problems: eb.Error.Problems, Details: eb.Error.Details}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if raw, ok := out.(*[]byte); ok { // text and NDJSON answers, as they are
		*raw = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("rein at %s: unexpected answer: %w", c.BaseURL, err)
	}
	return nil
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	return c.do(ctx, method, path, "application/json", body, out)
}

// Check asks rein whether an action may run.
func (c *Client) Check(ctx context.Context, req rein.CheckRequest) (*rein.CheckResponse, error) {
	var out rein.CheckResponse
	if err := c.doJSON(ctx, "POST", "/v1/check", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckByRequestID returns the check this key made with request_id id.
func (c *Client) CheckByRequestID(ctx context.Context, id string) (*rein.CheckRecord, error) {
	var out rein.CheckRecord
	if err := c.doJSON(ctx, "GET", "/v1/request-ids/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetCheck returns a stored check.
func (c *Client) GetCheck(ctx context.Context, id string) (*rein.CheckRecord, error) {
	var out rein.CheckRecord
	if err := c.doJSON(ctx, "GET", "/v1/checks/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// NewKey is a key to create.
type NewKey struct {
	Name   string      `json:"name"`
	Tenant string      `json:"tenant,omitempty"`
	Roles  []rein.Role `json:"roles"`
	Groups []string    `json:"groups,omitempty"`
}

// CreatedKey is a new key with its secret, which rein shows only once.
type CreatedKey struct {
	rein.Key
	Secret string `json:"key"`
}

// CreateKey creates a key (admin).
func (c *Client) CreateKey(ctx context.Context, k NewKey) (*CreatedKey, error) {
	var out CreatedKey
	if err := c.doJSON(ctx, "POST", "/v1/keys", k, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Keys lists the keys of the caller's tenant (admin).
func (c *Client) Keys(ctx context.Context) ([]rein.Key, error) {
	var out struct {
		Keys []rein.Key `json:"keys"`
	}
	if err := c.doJSON(ctx, "GET", "/v1/keys", nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// RevokeKey revokes a key at once (admin).
func (c *Client) RevokeKey(ctx context.Context, id string) error {
	return c.doJSON(ctx, "DELETE", "/v1/keys/"+url.PathEscape(id), nil, nil)
}

// PolicyView is the live policy of a tier.
type PolicyView struct {
	Version     string `json:"version"`
	Source      string `json:"source"`
	LoadedAt    string `json:"loaded_at"`
	Tier        string `json:"tier"`
	Tenant      string `json:"tenant"`
	TierVersion string `json:"tier_version"`
	Origin      string `json:"origin"`
}

func tenantQuery(tenant string) string {
	if tenant == "" {
		return ""
	}
	return "?tenant=" + url.QueryEscape(tenant)
}

// Policy returns the live policy (tenant "" for the caller's own tier).
func (c *Client) Policy(ctx context.Context, tenant string) (*PolicyView, error) {
	var out PolicyView
	if err := c.doJSON(ctx, "GET", "/v1/policy"+tenantQuery(tenant), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PushPolicy replaces a policy tier with YAML source (admin).
func (c *Client) PushPolicy(ctx context.Context, tenant string, yaml []byte) (*PolicyView, error) {
	var out PolicyView
	if err := c.do(ctx, "PUT", "/v1/policy"+tenantQuery(tenant), "application/yaml", yaml, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Replay asks what a candidate policy would change on the recorded checks
// (POST /v1/policy/replay): since is an RFC 3339 time or a duration back
// from now ("7d"); tier is "global" or "tenant" ("" for the default).
func (c *Client) Replay(ctx context.Context, policyYAML []byte, since, tenant, tier string) (*rein.Replay, error) {
	return c.replay(ctx, policyYAML, since, tenant, tier, rein.ReplayAll)
}

// ReplayConcerns is Replay over the checks reviewers marked a concern
// (and the sessions of session reviews marked a concern).
func (c *Client) ReplayConcerns(ctx context.Context, policyYAML []byte, since, tenant, tier string) (*rein.Replay, error) {
	return c.replay(ctx, policyYAML, since, tenant, tier, rein.ReplayConcerns)
}

func (c *Client) replay(ctx context.Context, policyYAML []byte, since, tenant, tier, input string) (*rein.Replay, error) {
	var out rein.Replay
	in := map[string]any{"policy": string(policyYAML), "since": since, "tenant": tenant, "tier": tier, "input": input}
	if err := c.doJSON(ctx, "POST", "/v1/policy/replay", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Simulate asks what a check would get, with a per-rule trace.
func (c *Client) Simulate(ctx context.Context, check rein.CheckRequest, policyYAML *string, session map[string]any) (json.RawMessage, error) {
	var out json.RawMessage
	in := map[string]any{"check": check}
	if policyYAML != nil {
		in["policy"] = *policyYAML
	}
	if session != nil {
		in["session"] = session
	}
	if err := c.doJSON(ctx, "POST", "/v1/policy/simulate", in, &out); err != nil {
		return nil, err
	}
	return out, nil
}
