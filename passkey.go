package rein

import (
	"context"
	"encoding/json"
	"time"
)

// Audit entry kinds of passkeys (approvers.md, Passkeys for step-up).
const (
	KindPasskeyAdded   = "passkey.added"
	KindPasskeyRemoved = "passkey.removed"
)

// Passkey is a WebAuthn credential a person registered to confirm votes on
// approvals that need step-up. It belongs to the person — the key name in a
// tenant — not to one key: a key re-issued under the same name keeps its
// person's passkeys.
type Passkey struct {
	ID     string `json:"id"` // the credential id, base64url
	Tenant string `json:"tenant"`
	Name   string `json:"name"` // the key name of the person
	Label  string `json:"label"`
	// Credential is the verified credential as the WebAuthn library keeps
	// it (public key, sign count, flags): opaque to the store.
	Credential json.RawMessage `json:"credential"`
	CreatedAt  time.Time       `json:"created_at"`
	LastUsedAt *time.Time      `json:"last_used_at"`
}

// PasskeyStore keeps passkeys.
type PasskeyStore interface {
	// AddPasskey stores a new passkey with its audit entry; an id stored
	// already is a conflict.
	AddPasskey(ctx context.Context, p *Passkey, e *Entry) error
	// PasskeysOf lists a person's passkeys, oldest first.
	PasskeysOf(ctx context.Context, tenant, name string) ([]*Passkey, error)
	// UsePasskey records a use: the credential as updated by the assertion
	// (its sign count) and when.
	UsePasskey(ctx context.Context, id string, credential json.RawMessage, at time.Time) error
	// RemovePasskey deletes a passkey (ErrNotFound when it is gone) and
	// appends e.
	RemovePasskey(ctx context.Context, id string, e *Entry) error
}
