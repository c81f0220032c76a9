package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein/audit"
)

// Receipt returns the receipt of audit entry index: a C2SP tlog-proof with
// the entry, its inclusion proof and the latest signed checkpoint.
func (c *Client) Receipt(ctx context.Context, index int64) ([]byte, error) {
	var out []byte
	err := c.do(ctx, "GET", fmt.Sprintf("/v1/audit/receipts/%d", index), "", nil, &out)
	return out, err
}

// CheckReceipt returns the receipt of a check's audit entry.
func (c *Client) CheckReceipt(ctx context.Context, checkID string) ([]byte, error) {
	var out []byte
	err := c.do(ctx, "GET", "/v1/checks/"+url.PathEscape(checkID)+"/receipt", "", nil, &out)
	return out, err
}

// StaleError is a witness that has cosigned a larger tree than the
// checkpoint offered: the caller needs a newer checkpoint.
type StaleError struct {
	Witness string
	Size    int64
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("witness %s has already cosigned a tree of %d entries; offer a newer checkpoint", e.Witness, e.Size)
}

// Witness submits the signed checkpoint to a C2SP tlog-witness
// (add-checkpoint) and returns the checkpoint with the witness's
// cosignature added. The consistency proof the witness needs, from the
// size it last cosigned, comes from rein (GET /v1/audit/proof/consistency).
func (c *Client) Witness(ctx context.Context, w *audit.PolicyWitness, signed []byte) ([]byte, error) {
	if w.URL == "" {
		return nil, fmt.Errorf("witness %s has no URL in the policy", w.Name)
	}
	cp, err := audit.ParseCheckpoint(noteText(signed))
	if err != nil {
		return nil, err
	}
	endpoint := strings.TrimRight(w.URL, "/") + "/add-checkpoint"
	old := int64(0)
	var proof []tlog.Hash
	for try := 0; try < 3; try++ {
		body := audit.AddCheckpointRequest(old, proof, signed)
		req, err := http.NewRequestWithContext(ctx, "POST", endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return nil, fmt.Errorf("witness %s: %w", w.Name, err)
		}
		answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("witness %s: reading answer: %w", w.Name, err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			return audit.AddCosignatures(signed, answer, w)
		case http.StatusConflict:
			size, err := audit.WitnessSize(answer)
			if err != nil {
				return nil, fmt.Errorf("witness %s: %v", w.Name, err)
			}
			if size > cp.Size {
				return nil, &StaleError{Witness: w.Name, Size: size}
			}
			if size == old && try > 0 {
				return nil, fmt.Errorf("witness %s keeps answering that it has cosigned %d entries", w.Name, size)
			}
			old, proof = size, nil
			if size > 0 && size < cp.Size {
				p, err := c.Consistency(ctx, size, cp.Size)
				if err != nil {
					return nil, fmt.Errorf("consistency proof from %d to %d for witness %s: %w", size, cp.Size, w.Name, err)
				}
				if proof, err = hashes(p.Hashes); err != nil {
					return nil, err
				}
			}
		default:
			return nil, fmt.Errorf("witness %s: %s", w.Name, audit.WitnessStatus(resp.StatusCode))
		}
	}
	return nil, fmt.Errorf("witness %s did not accept the checkpoint", w.Name)
}

// WitnessAll submits the checkpoint to every witness of the policy that has
// a URL and returns it with every cosignature gathered, and an error for
// each witness that did not cosign. It does not judge the quorum.
func (c *Client) WitnessAll(ctx context.Context, p *audit.Policy, signed []byte) ([]byte, []error) {
	var errs []error
	out := signed
	for _, w := range p.Witnesses {
		if w.URL == "" {
			continue
		}
		cosigned, err := c.Witness(ctx, w, out)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = cosigned
	}
	return out, errs
}

func hashes(b64 []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(b64))
	for i, s := range b64 {
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(raw) != tlog.HashSize {
			return nil, errors.New("rein sent a bad proof hash")
		}
		copy(out[i][:], raw)
	}
	return out, nil
}

// noteText is the text of a signed note (before the blank line).
func noteText(signed []byte) string {
	text, _, _ := bytes.Cut(signed, []byte("\n\n"))
	return string(text) + "\n"
}
