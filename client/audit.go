package client

import (
	"context"
	"fmt"

	"github.com/reinhq/rein"
)

// Checkpoint returns the latest signed checkpoint (a C2SP signed note).
func (c *Client) Checkpoint(ctx context.Context) ([]byte, error) {
	var out []byte
	err := c.do(ctx, "GET", "/v1/audit/checkpoint", "", nil, &out)
	return out, err
}

// Checkpoints returns the signed checkpoints with sizes in [from, to],
// separated by blank lines.
func (c *Client) Checkpoints(ctx context.Context, from, to int64) ([]byte, error) {
	var out []byte
	err := c.do(ctx, "GET", fmt.Sprintf("/v1/audit/checkpoints?from=%d&to=%d", from, to), "", nil, &out)
	return out, err
}

// Entries returns up to limit entries from start as NDJSON: the stored
// bytes, or {"index","leaf_hash"} for entries of other tenants.
func (c *Client) Entries(ctx context.Context, start int64, limit int) ([]byte, error) {
	var out []byte
	err := c.do(ctx, "GET", fmt.Sprintf("/v1/audit/entries?start=%d&limit=%d", start, limit), "", nil, &out)
	return out, err
}

// InclusionProof is the answer of GET /v1/audit/proof/inclusion.
type InclusionProof struct {
	Index    int64    `json:"index"`
	Size     int64    `json:"size"`
	LeafHash string   `json:"leaf_hash"`
	Hashes   []string `json:"hashes"`
}

// Inclusion proves entry index in the tree of size (0: the latest checkpoint's).
func (c *Client) Inclusion(ctx context.Context, index, size int64) (*InclusionProof, error) {
	q := fmt.Sprintf("/v1/audit/proof/inclusion?index=%d", index)
	if size > 0 {
		q += fmt.Sprintf("&size=%d", size)
	}
	var out InclusionProof
	if err := c.doJSON(ctx, "GET", q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ConsistencyProof is the answer of GET /v1/audit/proof/consistency.
type ConsistencyProof struct {
	Old    int64    `json:"old"`
	New    int64    `json:"new"`
	Hashes []string `json:"hashes"`
}

// Consistency proves the tree of size old is a prefix of the tree of size new.
func (c *Client) Consistency(ctx context.Context, old, new int64) (*ConsistencyProof, error) {
	var out ConsistencyProof
	if err := c.doJSON(ctx, "GET", fmt.Sprintf("/v1/audit/proof/consistency?old=%d&new=%d", old, new), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AuditKeys lists the checkpoint signing keys.
func (c *Client) AuditKeys(ctx context.Context) ([]rein.AuditKey, error) {
	var out struct {
		Keys []rein.AuditKey `json:"keys"`
	}
	if err := c.doJSON(ctx, "GET", "/v1/audit/keys", nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// RotateAuditKey replaces the checkpoint signing key (admin of tenant *)
// and returns the new key's verifier.
func (c *Client) RotateAuditKey(ctx context.Context) (*rein.AuditKey, error) {
	var out rein.AuditKey
	if err := c.doJSON(ctx, "POST", "/v1/audit/rotate-key", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
