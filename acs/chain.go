package acs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/canonjson"
)

// The session audit chain (ACS v0.1 §8.1, §8.2, §8.6). rein writes one
// ContextEntry per content-bearing step it answers (every steps/* hook) and
// publishes the resulting head as chain_hash in the signed response, so an
// Observed Agent that records the heads can detect a later rewrite.

// Entry is a ContextEntry without its hashes.
type Entry struct {
	EntryID  string `json:"entry_id"`
	StepID   string `json:"step_id"`
	StepType string `json:"step_type"`
	// RequestHash commits the entry to the request's content, not only its
	// metadata (ACS-Audit requires it; rein always writes it).
	RequestHash string `json:"request_hash,omitempty"`
	Timestamp   string `json:"timestamp,omitempty"`
}

// EntryHash is lowercase-hex SHA-256 of the entry's canonical JSON followed
// by the raw 32 bytes of the previous entry's hash ("" for the first).
func EntryHash(e Entry, previous string) (string, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	content, err := canonjson.Append(nil, raw)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(content)
	if previous != "" {
		prev, err := hex.DecodeString(previous)
		if err != nil || len(prev) != sha256.Size {
			return "", fmt.Errorf("previous hash %q is not 32 bytes of hex", previous)
		}
		h.Write(prev)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RequestHash is lowercase-hex SHA-256 of the canonical request params,
// without their signature (§8.1).
func RequestHash(raw []byte) (string, error) {
	var env struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return "", err
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(env.Params, &params); err != nil {
		return "", err
	}
	delete(params, "signature")
	b, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	c, err := canonjson.Append(nil, b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}
