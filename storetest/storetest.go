// Package storetest is the conformance suite every rein.Store passes: the
// SQLite and the PostgreSQL store run the same tests, so that rein behaves
// the same on either. A store's own tests call Run with a function that
// opens an empty store.
package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// Open opens an empty store for one test; the test closes it.
type Open func(t *testing.T) rein.Store

// Run runs every conformance test against stores made by open, concept by
// concept in the order of the root package's store interfaces; each
// concept's tests are in the file of its name.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, rein.Store)
	}{
		// KeyStore (key.go)
		{"Keys", keys},
		{"LastAdminKeyIsKept", lastAdminKey},
		{"RevokedKeyStopsAtOnceUnderReads", revokedKeyUnderReads},
		// CheckStore (check.go)
		{"RecordCheckIdempotency", recordCheckIdempotency},
		{"ConcurrentRequestIDOneWins", concurrentRequestID},
		{"FailedWritesLeaveNothing", failedWritesLeaveNothing},
		{"ChecksList", checksList},
		{"RewriteRecordsOnce", rewriteRecordsOnce},
		// ApprovalStore (approval.go)
		{"OnePendingApprovalPerAction", onePendingApproval},
		{"ChangeApproval", changeApproval},
		{"GrantConsumedOnce", grantConsumedOnce},
		{"ApprovalsListAndDue", approvalsListAndDue},
		{"DueEscalations", dueEscalations},
		// QuestionStore (question.go), LockStore (lock.go)
		{"Questions", questions},
		{"Locks", locks},
		// SessionStore (session.go)
		{"SessionsAndResults", sessionsAndResults},
		{"SessionEndAmongConcurrentChecks", sessionEndAmongChecks},
		{"NewSessionAmongConcurrentChecks", newSessionAmongChecks},
		{"ContainSession", containSession},
		// DelegationStore (delegation.go)
		{"Delegations", delegations},
		// ReviewStore (review.go), ProposalStore (proposal.go)
		{"Reviews", reviews},
		{"Proposals", proposals},
		// DeliveryStore (webhook.go), PolicyStore (policy.go)
		{"Deliveries", deliveries},
		{"Policies", policies},
		// AuditStore and CheckpointStore (auditlog.go)
		{"AuditIndexesAreContiguousUnderConcurrency", auditIndexesContiguous},
		{"EntriesCarryTheirIndex", entriesCarryIndex},
		{"TreeAndCheckpoints", treeAndCheckpoints},
		{"AuditKeys", auditKeys},
		// PasskeyStore (passkey.go), PushSubscriptionStore (push.go)
		{"Passkeys", passkeys},
		{"PushSubscriptions", pushSubscriptions},
		// SignOutStore (signout.go)
		{"SignOuts", signOuts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func entry(kind, subject string) *rein.Entry {
	return &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: kind, Actor: "t", Subject: subject, Data: map[string]any{}}
}

// entries reads the whole log and checks that indexes are contiguous from 0
// and that each entry's bytes carry its index.
func entries(t *testing.T, s rein.Store) []*rein.StoredEntry {
	t.Helper()
	es, err := s.Entries(ctx, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		if e.Index != int64(i) {
			t.Fatalf("position %d holds index %d: not contiguous", i, e.Index)
		}
		var m map[string]any
		if err := json.Unmarshal(e.Bytes, &m); err != nil || m["index"] != float64(i) {
			t.Fatalf("entry %d bytes say index %v (%v)", i, m["index"], err)
		}
	}
	return es
}

// subjects lists the subjects of the log's entries of one kind.
func subjects(t *testing.T, s rein.Store, kind string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range entries(t, s) {
		if e.Kind != kind {
			continue
		}
		var m map[string]any
		json.Unmarshal(e.Bytes, &m)
		sub, _ := m["subject"].(string)
		out[sub]++
	}
	return out
}
