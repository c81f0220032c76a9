package rein

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gowebpki/jcs"
)

// Audit entry kinds (audit.md, Entries).
const (
	KindCheck             = "check"
	KindCheckResult       = "check.result"
	KindApprovalCreated   = "approval.created"
	KindApprovalVote      = "approval.vote"
	KindApprovalResolved  = "approval.resolved"
	KindApprovalConsumed  = "approval.consumed"
	KindQuestionCreated   = "question.created"
	KindQuestionAnswered  = "question.answered"
	KindQuestionResolved  = "question.resolved"
	KindPolicyUpdated     = "policy.updated"
	KindKeyCreated        = "key.created"
	KindKeyRevoked        = "key.revoked"
	KindLockCreated       = "lock.created"
	KindLockRemoved       = "lock.removed"
	KindServerStarted     = "server.started"
	KindSigningKeyRotated = "signing_key.rotated"
)

// Entry is one audit log entry before it has an index. The store assigns the
// index inside the transaction that makes the entry durable, then encodes it.
type Entry struct {
	TS            time.Time
	Tenant        string
	Kind          string
	Actor         string
	Subject       string
	PolicyVersion string
	Data          any
}

// StoredEntry is an entry as the log holds it: its index and exact bytes.
type StoredEntry struct {
	Index  int64
	Tenant string
	Bytes  []byte
}

// Encode returns the entry's canonical bytes (RFC 8785) at the given index.
// The bytes are what the Merkle tree hashes; they are stored as they are and
// never re-serialised.
func (e *Entry) Encode(index int64) ([]byte, error) {
	raw, err := json.Marshal(map[string]any{
		"v":              1,
		"index":          index,
		"ts":             e.TS.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"tenant":         e.Tenant,
		"kind":           e.Kind,
		"actor":          e.Actor,
		"subject":        e.Subject,
		"policy_version": e.PolicyVersion,
		"data":           e.Data,
	})
	if err != nil {
		return nil, fmt.Errorf("encode audit entry %s: %w", e.Kind, err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalise audit entry %s: %w", e.Kind, err)
	}
	return out, nil
}

// Decimal renders an amount (money, cost) as a decimal string: audit entries
// hold integers only, so that every verifier reads the same value.
func Decimal(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
