package rein

import (
	"fmt"
	"strconv"
	"time"

	"github.com/reinhq/rein/canonjson"
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
	KindAgentStep         = "agent.step"
	KindSessionEnded      = "session.ended"
	KindSandboxStarted    = "sandbox.started"
	KindSandboxEnded      = "sandbox.ended"
	KindApprovalEscalated = "approval.escalated"
	KindReviewCreated     = "review.created"
	KindDelegationCreated = "delegation.created"
	KindDelegationRevoked = "delegation.revoked"
	KindReviewDecided     = "review.decided"
	KindProposalCreated   = "proposal.created"
	KindProposalDecided   = "proposal.decided"
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
	Kind   string
	Bytes  []byte
}

// Encode returns the entry's canonical bytes (RFC 8785) at the given index.
// The bytes are what the Merkle tree hashes; they are stored as they are and
// never re-serialised.
func (e *Entry) Encode(index int64) ([]byte, error) {
	enc, err := e.Encoding()
	if err != nil {
		return nil, err
	}
	return enc.At(index), nil
}

// Encoding canonicalises the entry once, before it has an index, so that the
// costly part of encoding happens outside the store's single writer; the
// writer only places the index (EntryEncoding.At).
func (e *Entry) Encoding() (*EntryEncoding, error) {
	// The members in canonical (sorted) order; "index" goes between data
	// and kind.
	head := []byte(`{"actor":`)
	head, err := canonjson.AppendValue(head, e.Actor)
	if err == nil {
		head = append(head, `,"data":`...)
		head, err = canonjson.AppendValue(head, e.Data)
	}
	tail := []byte(`,"kind":`)
	for i, f := range []struct{ name, val string }{{"", e.Kind}, {"policy_version", e.PolicyVersion},
		{"subject", e.Subject}, {"tenant", e.Tenant}, {"ts", e.TS.UTC().Format("2006-01-02T15:04:05.000000Z")}} {
		if err != nil {
			break
		}
		if i > 0 {
			tail = append(tail, `,"`+f.name+`":`...)
		}
		tail, err = canonjson.AppendValue(tail, f.val)
	}
	if err != nil {
		return nil, fmt.Errorf("encode audit entry %s: %w", e.Kind, err)
	}
	tail = append(tail, `,"v":1}`...)
	return &EntryEncoding{Tenant: e.Tenant, Kind: e.Kind, head: append(head, ','), tail: tail}, nil
}

// EntryEncoding is an entry's canonical bytes with the place of its index.
type EntryEncoding struct {
	Tenant, Kind string
	head, tail   []byte // before `"index":N` and from the `,"kind":` after it
}

// At returns the canonical bytes of the entry at index.
func (x *EntryEncoding) At(index int64) []byte {
	b := make([]byte, 0, len(x.head)+len(x.tail)+28)
	b = append(b, x.head...)
	b = append(b, `"index":`...)
	b = strconv.AppendInt(b, index, 10)
	return append(b, x.tail[:len(x.tail)]...)
}

// Parts returns the bytes before and after the index, for a store that
// assigns the index later (the PostgreSQL outbox keeps them until then).
func (x *EntryEncoding) Parts() (head, tail []byte) { return x.head, x.tail }

// EncodingFromParts is the inverse of Parts.
func EncodingFromParts(tenant, kind string, head, tail []byte) *EntryEncoding {
	return &EntryEncoding{Tenant: tenant, Kind: kind, head: head, tail: tail}
}

// EncodeEntries prepares the encodings of several entries.
func EncodeEntries(entries []*Entry) ([]*EntryEncoding, error) {
	out := make([]*EntryEncoding, len(entries))
	for i, e := range entries {
		var err error
		if out[i], err = e.Encoding(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Decimal renders an amount (money, cost) as a decimal string: audit entries
// hold integers only, so that every verifier reads the same value.
func Decimal(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
