// Package rein holds the domain of the rein control plane: checks, decisions,
// keys, approvals and audit entries, each concept in a file of its name with
// the narrow store interface (KeyStore in key.go, ApprovalStore in
// approval.go) that the storage adapters (sqlite, postgres) implement. It does
// no I/O of its own.
package rein

import (
	"context"
	"errors"
)

// DevVersion is the version of a build that was not stamped.
const DevVersion = "0.1.0-dev"

// The release this binary was built as. A release build stamps all three
// with -ldflags "-X github.com/reinhq/rein.Version=... -X ...Commit=...
// -X ...BuildDate=..." (see the Makefile); a plain go build leaves Commit and
// BuildDate empty and `rein version` falls back to what the Go toolchain
// recorded in the binary (runtime/debug.ReadBuildInfo).
var (
	Version   = DevVersion
	Commit    = ""
	BuildDate = ""
)

// Decision is rein's answer to a check.
type Decision string

const (
	Allow    Decision = "allow"
	Deny     Decision = "deny"
	Ask      Decision = "ask"
	Throttle Decision = "throttle"
	Modify   Decision = "modify"
)

// Restrictiveness orders decisions for combination: deny > ask > throttle > modify > allow.
func (d Decision) Restrictiveness() int {
	switch d {
	case Deny:
		return 4
	case Ask:
		return 3
	case Throttle:
		return 2
	case Modify:
		return 1
	case Allow:
		return 0
	}
	return 5 // unknown decisions are treated as stricter than deny: never allow them
}

// Allows reports whether the action may run (allow or modify).
func (d Decision) Allows() bool { return d == Allow || d == Modify }

// ErrNotFound is returned by stores for a missing object; the API maps it to 404.
var ErrNotFound = Errorf(ECodeNotFound, "not found")

// ErrDuplicateRequest is returned by Store.RecordCheck when the key already
// used the check's request_id; the stored record is returned alongside.
var ErrDuplicateRequest = errors.New("duplicate request_id")

// ErrApprovalPending is returned by Store.RecordCheck when the approval it
// would create already exists: another check of the same action created a
// pending approval first. The caller looks again and joins that one.
var ErrApprovalPending = errors.New("a pending approval for this action already exists")

// Store is all of rein's persistent state, as each storage adapter (sqlite,
// postgres) implements it: the union of the per-concept stores, which is what
// the server wires and the conformance suite (storetest) tests. Consumers take
// the narrow interface of the concept they use. Every method that changes
// state takes the audit entries describing the change and writes them in the
// same transaction, so that nothing is acknowledged that the audit log does
// not hold.
type Store interface {
	KeyStore
	CheckStore
	ApprovalStore
	QuestionStore
	LockStore
	SessionStore
	DelegationStore
	ReviewStore
	ProposalStore
	DeliveryStore
	PolicyStore
	AuditStore
	CheckpointStore
	PasskeyStore
	PushSubscriptionStore
	SignOutStore

	Ping(ctx context.Context) error
	Close() error
}
