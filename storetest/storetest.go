// Package storetest is the conformance suite every rein.Store passes: the
// SQLite and the PostgreSQL store run the same tests, so that rein behaves
// the same on either. A store's own tests call Run with a function that
// opens an empty store.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
)

// Open opens an empty store for one test; the test closes it.
type Open func(t *testing.T) rein.Store

// Run runs every conformance test against stores made by open.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, rein.Store)
	}{
		{"AuditIndexesAreContiguousUnderConcurrency", auditIndexesContiguous},
		{"EntriesCarryTheirIndex", entriesCarryIndex},
		{"Keys", keys},
		{"LastAdminKeyIsKept", lastAdminKey},
		{"RevokedKeyStopsAtOnceUnderReads", revokedKeyUnderReads},
		{"RecordCheckIdempotency", recordCheckIdempotency},
		{"ConcurrentRequestIDOneWins", concurrentRequestID},
		{"FailedWritesLeaveNothing", failedWritesLeaveNothing},
		{"OnePendingApprovalPerAction", onePendingApproval},
		{"ChangeApproval", changeApproval},
		{"GrantConsumedOnce", grantConsumedOnce},
		{"ApprovalsListAndDue", approvalsListAndDue},
		{"DueEscalations", dueEscalations},
		{"Questions", questions},
		{"Locks", locks},
		{"SessionsAndResults", sessionsAndResults},
		{"SessionEndAmongConcurrentChecks", sessionEndAmongChecks},
		{"NewSessionAmongConcurrentChecks", newSessionAmongChecks},
		{"ChecksList", checksList},
		{"Deliveries", deliveries},
		{"Policies", policies},
		{"TreeAndCheckpoints", treeAndCheckpoints},
		{"AuditKeys", auditKeys},
		{"Reviews", reviews},
		{"Passkeys", passkeys},
		{"PushSubscriptions", pushSubscriptions},
		{"Proposals", proposals},
		{"RewriteRecordsOnce", rewriteRecordsOnce},
		{"ContainSession", containSession},
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

func auditIndexesContiguous(t *testing.T, s rein.Store) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				if err := s.Append(ctx, entry(rein.KindServerStarted, fmt.Sprintf("%d-%d", i, j))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if es := entries(t, s); len(es) != 200 {
		t.Fatalf("%d entries, want 200", len(es))
	}
	n, _, err := s.AuditSize(ctx)
	if err != nil || n != 200 {
		t.Fatalf("audit size %d %v, want 200", n, err)
	}
}

func entriesCarryIndex(t *testing.T, s rein.Store) {
	a := &rein.Entry{TS: t0, Tenant: "acme", Kind: rein.KindServerStarted, Actor: "t", Subject: "a", Data: map[string]any{"n": 1}}
	b := &rein.Entry{TS: t0, Tenant: "*", Kind: rein.KindKeyCreated, Actor: "t", Subject: "b", Data: map[string]any{}}
	if err := s.Append(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	es := entries(t, s)
	if len(es) != 2 || es[0].Tenant != "acme" || es[1].Tenant != "*" || es[1].Kind != rein.KindKeyCreated {
		t.Fatalf("entries %+v", es)
	}
	for i, e := range []*rein.Entry{a, b} {
		want, _ := e.Encode(int64(i))
		if string(es[i].Bytes) != string(want) {
			t.Errorf("entry %d stored as\n%s\nwant the canonical bytes\n%s", i, es[i].Bytes, want)
		}
	}
	page, err := s.Entries(ctx, 1, 10)
	if err != nil || len(page) != 1 || page[0].Index != 1 {
		t.Fatalf("entries from 1: %+v %v", page, err)
	}
}

func newKey(tenant, name string, roles ...rein.Role) *rein.Key {
	_, hash := rein.NewSecret()
	return &rein.Key{ID: rein.NewID("key"), Name: name, Tenant: tenant, Roles: roles, Groups: []string{"g"}, CreatedAt: t0, SecretHash: hash}
}

func keys(t *testing.T, s rein.Store) {
	k := newKey("acme", "builder", rein.RoleAgent)
	if err := s.CreateKey(ctx, k, entry(rein.KindKeyCreated, k.ID)); err != nil {
		t.Fatal(err)
	}
	dup := newKey("acme", "builder", rein.RoleAgent)
	if err := s.CreateKey(ctx, dup, entry(rein.KindKeyCreated, dup.ID)); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("a second active key named builder: %v, want a conflict", err)
	}
	other := newKey("globex", "builder", rein.RoleAgent)
	if err := s.CreateKey(ctx, other, nil); err != nil {
		t.Errorf("the same name in another tenant: %v", err)
	}
	got, err := s.KeyBySecretHash(ctx, k.SecretHash)
	if err != nil || got.ID != k.ID || got.Name != "builder" || got.Groups[0] != "g" || got.Roles[0] != rein.RoleAgent || !got.CreatedAt.Equal(t0) {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if list, err := s.Keys(ctx, "acme"); err != nil || len(list) != 1 || list[0].ID != k.ID {
		t.Errorf("acme's keys: %v %v", list, err)
	}
	if list, err := s.Keys(ctx, rein.AllTenants); err != nil || len(list) != 2 {
		t.Errorf("every tenant's keys: %v %v", list, err)
	}
	if err := s.RevokeKey(ctx, k.ID, t0.Add(time.Hour), entry(rein.KindKeyRevoked, k.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyBySecretHash(ctx, k.SecretHash); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("a revoked key still authenticates: %v", err)
	}
	if got, err := s.KeyByID(ctx, k.ID); err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("by id after revoke: %+v %v", got, err)
	}
	if err := s.RevokeKey(ctx, k.ID, time.Now(), nil); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("second revoke: %v, want not found", err)
	}
	if _, err := s.KeyByID(ctx, "key_missing"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	// The name is free again once revoked.
	if err := s.CreateKey(ctx, dup, nil); err != nil {
		t.Errorf("name reuse after revoke: %v", err)
	}
	if got := subjects(t, s, rein.KindKeyCreated); got[k.ID] != 1 || got[dup.ID] != 0 {
		t.Errorf("key.created entries %v: want one for the first key, none for the refused one", got)
	}
	if got := subjects(t, s, rein.KindKeyRevoked); got[k.ID] != 1 {
		t.Errorf("key.revoked entries %v", got)
	}
}

// revokedKeyUnderReads: a key read again and again (a store may remember
// it) stops authenticating as soon as its revocation returns, also when
// reads raced the revocation.
func revokedKeyUnderReads(t *testing.T, s rein.Store) {
	for round := range 5 {
		k := newKey("acme", fmt.Sprint("reader-", round), rein.RoleAgent)
		if err := s.CreateKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						s.KeyBySecretHash(ctx, k.SecretHash)
					}
				}
			}()
		}
		time.Sleep(5 * time.Millisecond)
		if err := s.RevokeKey(ctx, k.ID, time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			if _, err := s.KeyBySecretHash(ctx, k.SecretHash); !errors.Is(err, rein.ErrNotFound) {
				t.Fatalf("round %d, read %d after the revocation returned: %v, want not found", round, i, err)
			}
		}
		close(stop)
		wg.Wait()
		if _, err := s.KeyBySecretHash(ctx, k.SecretHash); !errors.Is(err, rein.ErrNotFound) {
			t.Fatalf("round %d, after the racing reads ended: %v, want not found", round, err)
		}
	}
}

func lastAdminKey(t *testing.T, s rein.Store) {
	a, b := newKey("*", "admin-a", rein.RoleAdmin), newKey("*", "admin-b", rein.RoleAdmin)
	for _, k := range []*rein.Key{a, b} {
		if err := s.CreateKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Both revoked at once: exactly one may go.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, k := range []*rein.Key{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.RevokeKey(ctx, k.ID, t0, nil) }()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case rein.ErrorCode(err) != rein.ECodeConflict:
			t.Errorf("revoke: %v, want success or a conflict", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of the last two admin keys were revoked at once; want 1", ok)
	}
}

// check makes a check record.
func check(id, tenant, keyID, requestID, session, actionHash string, d rein.Decision) *rein.CheckRecord {
	return &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: d, Reason: "r", ActionHash: actionHash, Args: json.RawMessage(`{"a":1}`), Risk: []string{}},
		Tenant: tenant, CreatedAt: t0, KeyID: keyID, Facts: map[string]any{}, Shadow: []rein.ShadowMatch{},
		Check: rein.CheckInput{Tool: "shell.exec", Agent: "builder", Session: session, RequestID: requestID, Args: json.RawMessage(`{"a":1}`)}}
}

func checkEntry(rec *rein.CheckRecord) []*rein.Entry {
	return []*rein.Entry{{TS: rec.CreatedAt, Tenant: rec.Tenant, Kind: rein.KindCheck, Actor: "builder", Subject: rec.ID, Data: map[string]any{"decision": string(rec.Decision)}}}
}

func recordCheckIdempotency(t *testing.T, s rein.Store) {
	s.Append(ctx, entry(rein.KindServerStarted, "boot"))
	first, err := s.RecordCheck(ctx, check("chk_1", "acme", "key_1", "r1", "", "sha256:x", rein.Allow), nil, nil, checkEntry(check("chk_1", "acme", "", "", "", "", rein.Allow)))
	if err != nil || first.AuditIndex != 1 {
		t.Fatalf("%+v %v; want audit index 1", first, err)
	}
	again, err := s.RecordCheck(ctx, check("chk_2", "acme", "key_1", "r1", "", "sha256:x", rein.Allow), nil, nil, checkEntry(check("chk_2", "acme", "", "", "", "", rein.Allow)))
	if !errors.Is(err, rein.ErrDuplicateRequest) || again == nil || again.ID != "chk_1" || again.AuditIndex != 1 {
		t.Fatalf("duplicate request_id: %+v %v", again, err)
	}
	if es := entries(t, s); len(es) != 2 {
		t.Errorf("a replayed request must not write audit entries: %d", len(es))
	}
	got, err := s.CheckByRequestID(ctx, "key_1", "r1")
	if err != nil || got.ID != "chk_1" || got.KeyID != "key_1" || got.AuditIndex != 1 || string(got.Args) != `{"a":1}` {
		t.Errorf("by request id: %+v %v", got, err)
	}
	if got, err := s.CheckByID(ctx, "chk_1"); err != nil || got.AuditIndex != 1 || got.Tenant != "acme" || !got.CreatedAt.Equal(t0) {
		t.Errorf("by id: %+v %v", got, err)
	}
	if _, err := s.CheckByID(ctx, "chk_2"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("chk_2 must not exist: %v", err)
	}
	// Another key may use the same request_id.
	if _, err := s.RecordCheck(ctx, check("chk_3", "acme", "key_2", "r1", "", "sha256:x", rein.Allow), nil, nil, nil); err != nil {
		t.Errorf("the same request_id from another key: %v", err)
	}
}

func concurrentRequestID(t *testing.T, s rein.Store) {
	const n = 8
	var wg sync.WaitGroup
	var recorded atomic.Int32
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := check(fmt.Sprintf("chk_%d", i), "acme", "key_1", "same", "", "sha256:x", rein.Allow)
			got, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec))
			switch {
			case err == nil:
				recorded.Add(1)
			case !errors.Is(err, rein.ErrDuplicateRequest):
				t.Errorf("check %d: %v", i, err)
				return
			}
			ids[i] = got.ID
		}()
	}
	wg.Wait()
	if recorded.Load() != 1 {
		t.Fatalf("%d checks recorded with one request_id; want 1", recorded.Load())
	}
	for i := range ids {
		if ids[i] != ids[0] {
			t.Errorf("callers were told different checks: %v", ids)
		}
	}
	if es := entries(t, s); len(es) != 1 {
		t.Errorf("%d entries, want 1", len(es))
	}
}

// failedWritesLeaveNothing: many writers at once; a write that fails after
// changing rows leaves nothing behind, the others are all durable, and the
// audit indexes stay contiguous.
func failedWritesLeaveNothing(t *testing.T, s rein.Store) {
	const n = 90
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := newKey("acme", "", rein.RoleAgent)
			k.ID = fmt.Sprintf("key_%d", i)
			switch i % 3 {
			case 0: // writes the key, then fails encoding its entry
				k.Name = fmt.Sprintf("broken-%d", i)
				errs[i] = s.CreateKey(ctx, k, &rein.Entry{Kind: rein.KindKeyCreated, Data: make(chan int)})
			case 1:
				errs[i] = s.Append(ctx, entry(rein.KindServerStarted, fmt.Sprint(i)))
			case 2: // all the same name: exactly one wins
				k.Name = "dup"
				errs[i] = s.CreateKey(ctx, k, entry(rein.KindKeyCreated, k.ID))
			}
		}()
	}
	wg.Wait()
	dupWins := 0
	for i, err := range errs {
		switch i % 3 {
		case 0:
			if err == nil {
				t.Fatalf("job %d: a failing write reported success", i)
			}
			if _, err := s.KeyByID(ctx, fmt.Sprintf("key_%d", i)); !errors.Is(err, rein.ErrNotFound) {
				t.Errorf("write %d failed but its key row stayed: %v", i, err)
			}
		case 1:
			if err != nil {
				t.Errorf("append %d: %v", i, err)
			}
		case 2:
			if err == nil {
				dupWins++
			} else if rein.ErrorCode(err) != rein.ECodeConflict {
				t.Errorf("write %d: %v, want a conflict", i, err)
			}
		}
	}
	if dupWins != 1 {
		t.Errorf("%d keys named dup were created; want 1", dupWins)
	}
	if es := entries(t, s); len(es) != n/3+1 {
		t.Fatalf("%d entries; want %d", len(es), n/3+1)
	}
}

func newApproval(id, tenant, actionHash string, expires time.Time) *rein.Approval {
	return &rein.Approval{ID: id, Tenant: tenant, Status: rein.StatusPending, ActionHash: actionHash, Agent: "builder", AgentKeyID: "key_1",
		Session: "s1", Tool: "shell.exec", Args: json.RawMessage(`{"a":1}`), Risk: []string{"shell"}, Rule: "r", Reason: "why",
		Approvers: []string{"group:oncall"}, ApproverSets: [][]string{{"group:oncall"}}, Quorum: 1, RejectQuorum: 1,
		GrantTTL: 5 * time.Minute, Votes: []rein.Vote{}, CreatedAt: t0, ExpiresAt: expires}
}

// ask records an ask check that creates approval a.
func ask(s rein.Store, id string, a *rein.Approval) error {
	rec := check(id, a.Tenant, "key_1", "", "s1", a.ActionHash, rein.Ask)
	rec.CreatedAt = a.CreatedAt
	a.CheckID = id
	es := append(checkEntry(rec), &rein.Entry{TS: t0, Tenant: a.Tenant, Kind: rein.KindApprovalCreated, Subject: a.ID, Data: map[string]any{}})
	_, err := s.RecordCheck(ctx, rec, a, nil, es)
	return err
}

func onePendingApproval(t *testing.T, s rein.Store) {
	// Concurrent asks of one action: one approval is created, the others
	// are told one is pending.
	const n = 6
	var wg sync.WaitGroup
	var created atomic.Int32
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := ask(s, fmt.Sprintf("chk_%d", i), newApproval(fmt.Sprintf("apr_%d", i), "acme", "sha256:act", t0.Add(time.Hour)))
			switch {
			case err == nil:
				created.Add(1)
			case !errors.Is(err, rein.ErrApprovalPending):
				t.Errorf("ask %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if created.Load() != 1 {
		t.Fatalf("%d approvals created for one action; want 1", created.Load())
	}
	if got := subjects(t, s, rein.KindCheck); len(got) != 1 {
		t.Errorf("check entries %v: the refused asks must not be recorded", got)
	}
	// Another tenant's identical action is independent.
	if err := ask(s, "chk_g", newApproval("apr_g", "globex", "sha256:act", t0.Add(time.Hour))); err != nil {
		t.Errorf("another tenant: %v", err)
	}
	// A pending approval whose time ran out is expired (and audited) to
	// make room for a new one.
	old := newApproval("apr_old", "acme", "sha256:old", t0.Add(time.Minute))
	if err := ask(s, "chk_old", old); err != nil {
		t.Fatal(err)
	}
	fresh := newApproval("apr_new", "acme", "sha256:old", t0.Add(2*time.Minute))
	fresh.CreatedAt = t0.Add(2 * time.Minute)
	fresh.ExpiresAt = t0.Add(time.Hour)
	if err := ask(s, "chk_new", fresh); err != nil {
		t.Fatalf("a new approval after the old one expired: %v", err)
	}
	if a, err := s.Approval(ctx, "apr_old"); err != nil || a.Status != rein.StatusExpired {
		t.Errorf("the stale approval: %+v %v, want expired", a, err)
	}
	if got := subjects(t, s, rein.KindApprovalResolved); got["apr_old"] != 1 {
		t.Errorf("resolved entries %v: the expiry must be audited", got)
	}
	latest, err := s.LatestApproval(ctx, "acme", "sha256:old")
	if err != nil || latest.ID != "apr_new" {
		t.Errorf("latest approval: %+v %v", latest, err)
	}
	if _, err := s.LatestApproval(ctx, "acme", "sha256:none"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("latest of an action never asked: %v", err)
	}
}

func changeApproval(t *testing.T, s rein.Store) {
	a := newApproval("apr_1", "acme", "sha256:a", t0.Add(time.Hour))
	if err := ask(s, "chk_1", a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Approval(ctx, "apr_1")
	if err != nil || got.GrantTTL != 5*time.Minute || got.Quorum != 1 || got.ApproverSets[0][0] != "group:oncall" ||
		!got.ExpiresAt.Equal(t0.Add(time.Hour)) || got.CheckID != "chk_1" || got.ApprovedArgs != nil {
		t.Fatalf("stored approval: %+v %v", got, err)
	}
	// An error writes nothing.
	_, err = s.ChangeApproval(ctx, "apr_1", func(x *rein.Approval) ([]*rein.Entry, error) {
		x.Status = rein.StatusRejected
		return []*rein.Entry{entry(rein.KindApprovalResolved, x.ID)}, errors.New("no")
	})
	if err == nil {
		t.Fatal("the change's error was lost")
	}
	if got, _ := s.Approval(ctx, "apr_1"); got.Status != rein.StatusPending {
		t.Fatalf("a failed change was stored: %s", got.Status)
	}
	// No entries: nothing changes.
	s.ChangeApproval(ctx, "apr_1", func(x *rein.Approval) ([]*rein.Entry, error) { x.Status = rein.StatusRejected; return nil, nil })
	if got, _ := s.Approval(ctx, "apr_1"); got.Status != rein.StatusPending {
		t.Fatalf("a change without entries was stored: %s", got.Status)
	}
	// Concurrent votes are serialised: each sees the others'.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.ChangeApproval(ctx, "apr_1", func(x *rein.Approval) ([]*rein.Entry, error) {
				x.Votes = append(x.Votes, rein.Vote{By: fmt.Sprint("p", i), Vote: "approve", At: t0})
				return []*rein.Entry{entry(rein.KindApprovalVote, x.ID)}, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	grant := t0.Add(10 * time.Minute)
	got, err = s.ChangeApproval(ctx, "apr_1", func(x *rein.Approval) ([]*rein.Entry, error) {
		x.Status, x.GrantExpiresAt, x.ApprovedArgs = rein.StatusApproved, &grant, json.RawMessage(`{"a":2}`)
		return []*rein.Entry{entry(rein.KindApprovalResolved, x.ID)}, nil
	})
	if err != nil || len(got.Votes) != 10 || got.Status != rein.StatusApproved {
		t.Fatalf("after 10 concurrent votes: %d votes, %v", len(got.Votes), err)
	}
	got, _ = s.Approval(ctx, "apr_1")
	if len(got.Votes) != 10 || got.Status != rein.StatusApproved || !got.GrantExpiresAt.Equal(grant) || string(got.ApprovedArgs) != `{"a":2}` {
		t.Errorf("stored: %+v", got)
	}
	if n := subjects(t, s, rein.KindApprovalVote)["apr_1"]; n != 10 {
		t.Errorf("%d vote entries, want 10", n)
	}
	if _, err := s.ChangeApproval(ctx, "apr_missing", func(*rein.Approval) ([]*rein.Entry, error) { return nil, nil }); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("missing approval: %v", err)
	}
}

func grantConsumedOnce(t *testing.T, s rein.Store) {
	a := newApproval("apr_1", "acme", "sha256:a", t0.Add(time.Hour))
	if err := ask(s, "chk_ask", a); err != nil {
		t.Fatal(err)
	}
	s.ChangeApproval(ctx, "apr_1", func(x *rein.Approval) ([]*rein.Entry, error) {
		x.Status = rein.StatusApproved
		return []*rein.Entry{entry(rein.KindApprovalResolved, x.ID)}, nil
	})
	gone := errors.New("the grant is gone")
	const n = 8
	var wg sync.WaitGroup
	var allowed atomic.Int32
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := check(fmt.Sprintf("chk_%d", i), "acme", "key_1", "", "s1", "sha256:a", rein.Allow)
			use := &rein.ApprovalUse{ID: "apr_1", Change: func(x *rein.Approval) ([]*rein.Entry, error) {
				if x.Status != rein.StatusApproved {
					return nil, gone
				}
				x.Status = rein.StatusConsumed
				return []*rein.Entry{entry(rein.KindApprovalConsumed, x.ID)}, nil
			}}
			_, err := s.RecordCheck(ctx, rec, nil, use, checkEntry(rec))
			switch {
			case err == nil:
				allowed.Add(1)
			case !errors.Is(err, gone):
				t.Errorf("check %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 1 {
		t.Fatalf("the grant was used by %d checks; want 1", allowed.Load())
	}
	if n := subjects(t, s, rein.KindApprovalConsumed)["apr_1"]; n != 1 {
		t.Errorf("%d consumed entries", n)
	}
	if got := subjects(t, s, rein.KindCheck); len(got) != 2 {
		t.Errorf("check entries %v: the ask and the one allowed check", got)
	}
}

func approvalsListAndDue(t *testing.T, s rein.Store) {
	for i := range 5 {
		a := newApproval(fmt.Sprintf("apr_%d", i), "acme", fmt.Sprintf("sha256:%d", i), t0.Add(time.Duration(i+1)*time.Minute))
		a.Session, a.Agent = fmt.Sprintf("s%d", i%2), fmt.Sprintf("agent%d", i%2)
		if err := ask(s, fmt.Sprintf("chk_%d", i), a); err != nil {
			t.Fatal(err)
		}
	}
	if err := ask(s, "chk_g", newApproval("apr_g", "globex", "sha256:g", t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	ids := func(list []*rein.Approval, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, a := range list {
			out += a.ID + " "
		}
		return out
	}
	if got := ids(s.Approvals(ctx, "acme", rein.ApprovalFilter{})); got != "apr_4 apr_3 apr_2 apr_1 apr_0 " {
		t.Errorf("acme's approvals: %s", got)
	}
	if got := ids(s.Approvals(ctx, "*", rein.ApprovalFilter{Limit: 2})); got != "apr_g apr_4 " {
		t.Errorf("every tenant, 2: %s", got)
	}
	if got := ids(s.Approvals(ctx, "acme", rein.ApprovalFilter{Session: "s0", Before: "apr_4"})); got != "apr_2 apr_0 " {
		t.Errorf("session s0 before apr_4: %s", got)
	}
	if got := ids(s.Approvals(ctx, "acme", rein.ApprovalFilter{Agent: "agent1"})); got != "apr_3 apr_1 " {
		t.Errorf("agent1: %s", got)
	}
	grant := t0.Add(90 * time.Second)
	s.ChangeApproval(ctx, "apr_3", func(x *rein.Approval) ([]*rein.Entry, error) {
		x.Status, x.GrantExpiresAt = rein.StatusApproved, &grant
		return []*rein.Entry{entry(rein.KindApprovalResolved, x.ID)}, nil
	})
	if got := ids(s.Approvals(ctx, "acme", rein.ApprovalFilter{Status: rein.StatusApproved})); got != "apr_3 " {
		t.Errorf("approved: %s", got)
	}
	due, err := s.DueApprovals(ctx, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, id := range due {
		got[id] = true
	}
	if len(due) != 3 || !got["apr_0"] || !got["apr_1"] || !got["apr_3"] {
		t.Errorf("due at +2m: %v; want apr_0, apr_1 (pending, expired) and apr_3 (grant expired)", due)
	}
}

func questions(t *testing.T, s rein.Store) {
	for i := range 3 {
		q := &rein.Question{ID: fmt.Sprintf("qst_%d", i), Tenant: "acme", Status: rein.StatusPending, Agent: fmt.Sprint("agent", i%2),
			Session: "s1", Text: "which?", Choices: []string{"a", "b"}, Ask: []string{"group:oncall"},
			CreatedAt: t0, ExpiresAt: t0.Add(time.Duration(i+1) * time.Minute)}
		if err := s.CreateQuestion(ctx, q, []*rein.Entry{entry(rein.KindQuestionCreated, q.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.Question(ctx, "qst_1")
	if err != nil || q.Text != "which?" || q.Choices[1] != "b" || !q.ExpiresAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("question: %+v %v", q, err)
	}
	if _, err := s.Question(ctx, "qst_missing"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	q, err = s.ChangeQuestion(ctx, "qst_1", func(q *rein.Question) ([]*rein.Entry, error) {
		q.Status, q.Answer, q.AnsweredBy = "answered", json.RawMessage(`"a"`), "pat"
		return []*rein.Entry{entry(rein.KindQuestionAnswered, q.ID)}, nil
	})
	if err != nil || q.Status != "answered" {
		t.Fatalf("answer: %+v %v", q, err)
	}
	if q, _ := s.Question(ctx, "qst_1"); string(q.Answer) != `"a"` || q.AnsweredBy != "pat" {
		t.Errorf("stored answer: %+v", q)
	}
	list, err := s.Questions(ctx, "acme", rein.QuestionFilter{Status: rein.StatusPending})
	if err != nil || len(list) != 2 || list[0].ID != "qst_2" {
		t.Errorf("pending questions: %v %v", list, err)
	}
	if list, _ := s.Questions(ctx, "acme", rein.QuestionFilter{Agent: "agent0"}); len(list) != 2 {
		t.Errorf("agent0's questions: %d", len(list))
	}
	if list, _ := s.Questions(ctx, "globex", rein.QuestionFilter{}); len(list) != 0 {
		t.Errorf("another tenant sees %d questions", len(list))
	}
	due, err := s.DueQuestions(ctx, t0.Add(3*time.Minute))
	if err != nil || len(due) != 2 {
		t.Errorf("due: %v %v; want qst_0 and qst_2", due, err)
	}
	if n := subjects(t, s, rein.KindQuestionAnswered)["qst_1"]; n != 1 {
		t.Errorf("answered entries: %d", n)
	}
}

func locks(t *testing.T, s rein.Store) {
	exp := t0.Add(time.Hour)
	l := &rein.Lock{ID: "lck_1", Tenant: "acme", Target: rein.LockTarget{Agent: "builder", Tool: "shell.*"}, Reason: "incident", CreatedBy: "ops", CreatedAt: t0, ExpiresAt: &exp}
	if err := s.CreateLock(ctx, l, []*rein.Entry{entry(rein.KindLockCreated, l.ID)}); err != nil {
		t.Fatal(err)
	}
	all := &rein.Lock{ID: "lck_2", Tenant: "*", Reason: "everything", CreatedBy: "ops", CreatedAt: t0.Add(time.Second)}
	if err := s.CreateLock(ctx, all, []*rein.Entry{entry(rein.KindLockCreated, all.ID)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lock(ctx, "lck_1")
	if err != nil || got.Target.Tool != "shell.*" || !got.ExpiresAt.Equal(exp) {
		t.Fatalf("lock: %+v %v", got, err)
	}
	list, err := s.Locks(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "lck_1" {
		t.Fatalf("locks: %v %v", list, err)
	}
	removed, err := s.RemoveLock(ctx, "lck_1", "pat", t0.Add(time.Minute), entry(rein.KindLockRemoved, "lck_1"))
	if err != nil || removed.RemovedBy != "pat" || !removed.RemovedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("remove: %+v %v", removed, err)
	}
	if _, err := s.RemoveLock(ctx, "lck_1", "pat", t0, entry(rein.KindLockRemoved, "lck_1")); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("second remove: %v", err)
	}
	if list, _ := s.Locks(ctx); len(list) != 1 || list[0].ID != "lck_2" {
		t.Errorf("locks after removal: %v", list)
	}
	if got, _ := s.Lock(ctx, "lck_1"); got == nil || got.RemovedAt == nil {
		t.Errorf("a removed lock is kept for the record: %+v", got)
	}
	if n := subjects(t, s, rein.KindLockRemoved)["lck_1"]; n != 1 {
		t.Errorf("lock.removed entries: %d", n)
	}
}

func sessionsAndResults(t *testing.T, s rein.Store) {
	record := func(id string, d rein.Decision, cost float64, hash string, taints bool) *rein.CheckRecord {
		rec := check(id, "acme", "key_1", "", "run-1", hash, d)
		rec.Check.Cost, rec.Taints = cost, taints
		if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if sess, n, err := s.SessionState(ctx, "acme", "run-1", "sha256:a"); err != nil || sess != nil || n != 0 {
		t.Fatalf("before any check: %+v %d %v", sess, n, err)
	}
	if sess, err := s.SessionEnded(ctx, "acme", "run-1"); err != nil || sess != nil {
		t.Fatalf("ended, before any check: %+v %v", sess, err)
	}
	a := record("chk_1", rein.Allow, 0.5, "sha256:a", false)
	for range 2 { // the second may come from memory
		if sess, err := s.SessionEnded(ctx, "acme", "run-1"); err != nil || sess != nil {
			t.Fatalf("ended, while open: %+v %v", sess, err)
		}
	}
	record("chk_2", rein.Deny, 7, "sha256:a", false)
	record("chk_3", rein.Modify, 0.25, "sha256:b", true)
	record("chk_4", rein.Ask, 1, "sha256:a", false)
	sess, n, err := s.SessionState(ctx, "acme", "run-1", "sha256:a")
	if err != nil || sess == nil {
		t.Fatalf("session: %v", err)
	}
	if sess.Checks != 4 || sess.Calls != 2 || sess.Denials != 1 || sess.Cost != 0.75 || !sess.Tainted || n != 3 || sess.Agent != "builder" {
		t.Errorf("session %+v, %d repeats; want 4 checks, 2 calls, 1 denial, cost 0.75, tainted, 3 repeats", sess, n)
	}
	if _, n, _ := s.SessionState(ctx, "globex", "run-1", "sha256:a"); n != 0 {
		t.Errorf("another tenant's session shares repeats: %d", n)
	}
	list, err := s.SessionChecks(ctx, "acme", "run-1", 2, "")
	if err != nil || len(list) != 2 || list[0].ID != "chk_4" || list[1].ID != "chk_3" {
		t.Fatalf("session checks: %v %v", list, err)
	}
	if list, _ := s.SessionChecks(ctx, "acme", "run-1", 10, "chk_3"); len(list) != 2 || list[0].ID != "chk_2" {
		t.Errorf("session checks before chk_3: %v", list)
	}
	cost := 2.5
	if err := s.RecordResult(ctx, a, &rein.CheckResult{Status: "succeeded", Cost: &cost}, entry(rein.KindCheckResult, a.ID)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordResult(ctx, a, &rein.CheckResult{Status: "failed"}, entry(rein.KindCheckResult, a.ID)); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("a second result: %v, want a conflict", err)
	}
	sess, _, _ = s.SessionState(ctx, "acme", "run-1", "sha256:a")
	if sess.Cost != 2.75 {
		t.Errorf("cost after the reported result: %v, want 2.75", sess.Cost)
	}
	if n := subjects(t, s, rein.KindCheckResult)[a.ID]; n != 1 {
		t.Errorf("result entries: %d", n)
	}
	// Ending a session: once, audited; unknown sessions are not found.
	at := time.Now().UTC().Truncate(time.Millisecond)
	ended, err := s.EndSession(ctx, "acme", "run-1", "builder", at, entry(rein.KindSessionEnded, "run-1"))
	if err != nil || ended.EndedAt == nil || !ended.EndedAt.Equal(at) || ended.EndedBy != "builder" || ended.Checks != 4 {
		t.Fatalf("end session: %+v %v", ended, err)
	}
	if sess, _, _ := s.SessionState(ctx, "acme", "run-1", ""); sess.EndedAt == nil {
		t.Errorf("the end is not stored: %+v", sess)
	}
	if sess, err := s.SessionEnded(ctx, "acme", "run-1"); err != nil || sess == nil || sess.EndedAt == nil || sess.EndedBy != "builder" {
		t.Errorf("ended, after the end: %+v %v", sess, err)
	}
	if sess, err := s.SessionEnded(ctx, "globex", "run-1"); err != nil || sess != nil {
		t.Errorf("another tenant's session of that name ended too: %+v %v", sess, err)
	}
	if _, err := s.EndSession(ctx, "acme", "run-1", "builder", at, entry(rein.KindSessionEnded, "run-1")); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("ending twice: %v, want a conflict", err)
	}
	if _, err := s.EndSession(ctx, "globex", "run-1", "builder", at, entry(rein.KindSessionEnded, "run-1")); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("another tenant's session: %v, want not found", err)
	}
	if n := subjects(t, s, rein.KindSessionEnded)["run-1"]; n != 1 {
		t.Errorf("session.ended entries: %d, want 1", n)
	}
	// Concurrent checks of one session all count.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := check(fmt.Sprint("chk_c", i), "acme", "key_1", "", "run-2", "sha256:c", rein.Allow)
			if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if sess, n, _ := s.SessionState(ctx, "acme", "run-2", "sha256:c"); sess == nil || sess.Checks != 10 || sess.Calls != 10 || n != 10 {
		t.Errorf("10 concurrent checks: %+v %d", sess, n)
	}
}

// sessionEndAmongChecks: a session ended while checks of it are recorded
// concurrently (in the same write transactions, where a store batches) stays
// ended, and counts every check recorded.
func sessionEndAmongChecks(t *testing.T, s rein.Store) {
	for round := range 3 {
		sess := fmt.Sprint("run-end-", round)
		first := check(fmt.Sprint("chk_e", round), "acme", "key_1", "", sess, "sha256:e", rein.Allow)
		if _, err := s.RecordCheck(ctx, first, nil, nil, checkEntry(first)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var recorded atomic.Int64
		recorded.Add(1)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := check(fmt.Sprint("chk_e", round, "_", i), "acme", "key_1", "", sess, fmt.Sprint("sha256:e", i), rein.Deny)
				if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err == nil {
					recorded.Add(1)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.EndSession(ctx, "acme", sess, "builder", time.Now(), entry(rein.KindSessionEnded, sess)); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		got, _, err := s.SessionState(ctx, "acme", sess, "sha256:e")
		if err != nil || got == nil {
			t.Fatalf("session: %+v %v", got, err)
		}
		if got.EndedAt == nil {
			t.Errorf("round %d: the end of the session was lost among concurrent checks: %+v", round, got)
		}
		if got.Checks != recorded.Load() {
			t.Errorf("round %d: the session counts %d checks, %d were recorded", round, got.Checks, recorded.Load())
		}
	}
}

// newSessionAmongChecks: the first checks of a session, recorded at once,
// each count once (whoever creates the session's row, the others add to it).
func newSessionAmongChecks(t *testing.T, s rein.Store) {
	for round := range 3 {
		sess := fmt.Sprint("run-new-", round)
		var wg sync.WaitGroup
		var allowed, denied atomic.Int64
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := rein.Allow
				if i%4 == 0 {
					d = rein.Deny
				}
				rec := check(fmt.Sprint("chk_n", round, "_", i), "acme", "key_1", "", sess, fmt.Sprint("sha256:n", i), d)
				if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err != nil {
					t.Error(err)
					return
				}
				if d == rein.Allow {
					allowed.Add(1)
				} else {
					denied.Add(1)
				}
			}()
		}
		wg.Wait()
		got, _, err := s.SessionState(ctx, "acme", sess, "sha256:none")
		if err != nil || got == nil {
			t.Fatalf("session: %+v %v", got, err)
		}
		if got.Checks != 16 || got.Calls != allowed.Load() || got.Denials != denied.Load() {
			t.Errorf("round %d: the session counts %d checks, %d calls, %d denials; recorded 16, %d allowed, %d denied",
				round, got.Checks, got.Calls, got.Denials, allowed.Load(), denied.Load())
		}
	}
}

// checksList: Checks filters by tenant, decision, agent (with sub-agents),
// tool, session and time, newest first, continues after a cursor, and
// returns each check's reported result.
func checksList(t *testing.T, s rein.Store) {
	record := func(id, tenant, agent, tool, session string, d rein.Decision, at time.Time) *rein.CheckRecord {
		rec := check(id, tenant, "key_1", "", session, "sha256:"+id, d)
		rec.Check.Agent, rec.Check.Tool, rec.CreatedAt = agent, tool, at
		if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	first := record("chk_1", "acme", "builder", "fs.read", "run-1", rein.Allow, t0)
	record("chk_2", "acme", "builder/sub", "shell.exec", "run-1", rein.Deny, t0.Add(time.Minute))
	record("chk_3", "acme", "builder_x", "fs.read", "run-2", rein.Allow, t0.Add(2*time.Minute))
	record("chk_4", "globex", "builder", "fs.read", "run-1", rein.Allow, t0.Add(3*time.Minute))
	if err := s.RecordResult(ctx, first, &rein.CheckResult{Status: "succeeded", Summary: "ok"}, entry(rein.KindCheckResult, first.ID)); err != nil {
		t.Fatal(err)
	}
	ids := func(tenant string, f rein.CheckFilter) string {
		t.Helper()
		list, err := s.Checks(ctx, tenant, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range list {
			out = append(out, c.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		tenant string
		f      rein.CheckFilter
		want   string
	}{
		{"acme", rein.CheckFilter{}, "chk_3 chk_2 chk_1"},
		{rein.AllTenants, rein.CheckFilter{}, "chk_4 chk_3 chk_2 chk_1"},
		{"acme", rein.CheckFilter{Decision: rein.Deny}, "chk_2"},
		{"acme", rein.CheckFilter{Agent: "builder"}, "chk_2 chk_1"},
		{"acme", rein.CheckFilter{Agent: "builder/sub"}, "chk_2"},
		{"acme", rein.CheckFilter{Tool: "fs.read", Session: "run-1"}, "chk_1"},
		{"acme", rein.CheckFilter{Since: t0.Add(time.Minute)}, "chk_3 chk_2"},
		{"acme", rein.CheckFilter{Until: t0.Add(time.Minute)}, "chk_1"},
		{"acme", rein.CheckFilter{Limit: 1, Before: "chk_3"}, "chk_2"},
		{"other", rein.CheckFilter{}, ""},
	} {
		if got := ids(c.tenant, c.f); got != c.want {
			t.Errorf("Checks(%q, %+v) = %q, want %q", c.tenant, c.f, got, c.want)
		}
	}
	list, _ := s.Checks(ctx, "acme", rein.CheckFilter{Session: "run-1", Tool: "fs.read"})
	if len(list) != 1 || list[0].Result == nil || list[0].Result.Summary != "ok" {
		t.Errorf("the reported result does not come with the check: %+v", list)
	}
	if got, err := s.CheckByID(ctx, "chk_2"); err != nil || got.Result != nil {
		t.Errorf("a check without a result: %+v %v", got, err)
	}
}

func deliveries(t *testing.T, s rein.Store) {
	for i := range 3 {
		if err := s.LogDelivery(ctx, &rein.WebhookDelivery{Target: "ops", MessageID: fmt.Sprint("msg_", i), EventID: int64(i), Attempt: 1, Status: 200, Delivered: true, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Deliveries(ctx, 2)
	if err != nil || len(list) != 2 || list[0].MessageID != "msg_2" || !list[0].Delivered {
		t.Errorf("deliveries: %+v %v", list, err)
	}
}

func policies(t *testing.T, s rein.Store) {
	for i, d := range []*rein.PolicyDoc{
		{Tenant: "", Version: "v1", Source: "rules: []", LoadedAt: t0, LoadedBy: "file", Origin: "file:p.yaml"},
		{Tenant: "acme", Version: "a1", Source: "x", LoadedAt: t0, LoadedBy: "pat", Origin: "api"},
		{Tenant: "", Version: "v2", Source: "rules: [1]", LoadedAt: t0.Add(time.Minute), LoadedBy: "file", Origin: "file:p.yaml"},
	} {
		if err := s.SavePolicy(ctx, d, entry(rein.KindPolicyUpdated, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Policies(ctx)
	if err != nil || len(list) != 2 || list[0].Tenant != "" || list[0].Version != "v2" || list[1].Version != "a1" || !list[0].LoadedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("policies: %+v %v; want the newest of each tier", list, err)
	}
}

func treeAndCheckpoints(t *testing.T, s rein.Store) {
	s.Append(ctx, entry(rein.KindServerStarted, "a"), entry(rein.KindServerStarted, "b"))
	if n, h, err := s.AuditSize(ctx); err != nil || n != 2 || h != 0 {
		t.Fatalf("size %d hashed %d %v", n, h, err)
	}
	if _, err := s.LatestCheckpoint(ctx); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("no checkpoint yet: %v", err)
	}
	h := func(b byte) tlog.Hash { var x tlog.Hash; x[0] = b; return x }
	u := &rein.TreeUpdate{From: 0, Hashes: [][]tlog.Hash{{h(1)}, {h(2), h(3)}}}
	if err := s.SaveTree(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTree(ctx, &rein.TreeUpdate{From: 1, Hashes: [][]tlog.Hash{{h(9)}}}); err == nil {
		t.Error("a tree record was overwritten")
	}
	got, err := s.ReadHashes(ctx, []int64{0, 1, 2})
	if err != nil || got[0] != h(1) || got[1] != h(2) || got[2] != h(3) {
		t.Fatalf("hashes %v %v", got, err)
	}
	if _, err := s.ReadHashes(ctx, []int64{3}); err == nil {
		t.Error("a hash beyond the tree was read")
	}
	for _, size := range []int64{1, 2} {
		c := &rein.SignedCheckpoint{Size: size, Note: []byte(fmt.Sprint("note ", size)), SignedAt: t0.Add(time.Duration(size) * time.Second)}
		if err := s.SaveTree(ctx, &rein.TreeUpdate{From: 2, Checkpoint: c}); err != nil {
			t.Fatal(err)
		}
	}
	if _, h, _ := s.AuditSize(ctx); h != 2 {
		t.Errorf("hashed %d, want 2", h)
	}
	latest, err := s.LatestCheckpoint(ctx)
	if err != nil || latest.Size != 2 || string(latest.Note) != "note 2" || !latest.SignedAt.Equal(t0.Add(2*time.Second)) {
		t.Errorf("latest: %+v %v", latest, err)
	}
	list, err := s.Checkpoints(ctx, 0, 1)
	if err != nil || len(list) != 1 || list[0].Size != 1 {
		t.Errorf("checkpoints up to 1: %+v %v", list, err)
	}
}

func auditKeys(t *testing.T, s rein.Store) {
	for _, k := range []*rein.AuditKey{{Verifier: "k1", From: t0}, {Verifier: "k1", From: t0.Add(time.Hour)}, {Verifier: "k2", From: t0.Add(2 * time.Hour)}} {
		if err := s.AddAuditKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.AuditKeys(ctx)
	if err != nil || len(list) != 2 || list[0].Verifier != "k1" || !list[0].From.Equal(t0) || list[0].To == nil ||
		!list[0].To.Equal(t0.Add(2*time.Hour)) || list[1].To != nil {
		t.Errorf("keys: %+v %v", list, err)
	}
}

func reviews(t *testing.T, s rein.Store) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	mk := func(id, tenant, agent string) *rein.Review {
		return &rein.Review{ID: id, Tenant: tenant, Status: rein.ReviewOpen, Kind: "check", CheckID: "chk_" + id, Agent: agent,
			Risk: []string{}, Why: []string{"test"}, Reviewers: []string{"role:approver"}, CreatedAt: now}
	}
	for _, r := range []*rein.Review{mk("rev_1", "acme", "builder"), mk("rev_2", "acme", "other"), mk("rev_3", "globex", "builder")} {
		if err := s.CreateReview(ctx, r, []*rein.Entry{entry(rein.KindReviewCreated, r.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Review(ctx, "rev_1"); err != nil || got.CheckID != "chk_rev_1" || got.Status != rein.ReviewOpen {
		t.Fatalf("review: %+v %v", got, err)
	}
	if _, err := s.Review(ctx, "rev_none"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("unknown review: %v", err)
	}
	if list, _ := s.Reviews(ctx, "acme", rein.ReviewFilter{}); len(list) != 2 || list[0].ID != "rev_2" {
		t.Errorf("acme's reviews, newest first: %v", list)
	}
	if list, _ := s.Reviews(ctx, rein.AllTenants, rein.ReviewFilter{Agent: "builder"}); len(list) != 2 {
		t.Errorf("every tenant's reviews of builder: %v", list)
	}
	decided, err := s.ChangeReview(ctx, "rev_1", func(r *rein.Review) ([]*rein.Entry, error) {
		return []*rein.Entry{entry(rein.KindReviewDecided, r.ID)}, r.Decide(rein.ReviewOK, "fine", "alice", now)
	})
	if err != nil || decided.Status != rein.ReviewOK || decided.DecidedBy != "alice" {
		t.Fatalf("decide: %+v %v", decided, err)
	}
	if _, err := s.ChangeReview(ctx, "rev_1", func(r *rein.Review) ([]*rein.Entry, error) {
		return []*rein.Entry{entry(rein.KindReviewDecided, r.ID)}, r.Decide(rein.ReviewConcern, "", "bob", now)
	}); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("a second verdict: %v", err)
	}
	if list, _ := s.Reviews(ctx, "acme", rein.ReviewFilter{Status: rein.ReviewOpen}); len(list) != 1 || list[0].ID != "rev_2" {
		t.Errorf("open reviews after a verdict: %v", list)
	}
	if n := subjects(t, s, rein.KindReviewDecided)["rev_1"]; n != 1 {
		t.Errorf("review.decided entries: %d", n)
	}
	// A review queued with the check it reviews is stored in the check's
	// transaction, with the check's entries; a retried request_id stores
	// neither again.
	rec := check("chk_rev_4", "acme", "key_rev", "rq-rev", "", "sha256:rev", rein.Allow)
	rec.Review = mk("rev_4", "acme", "builder")
	rec.Review.CheckID = rec.ID
	entries := append(checkEntry(rec), entry(rein.KindReviewCreated, "rev_4"))
	if _, err := s.RecordCheck(ctx, rec, nil, nil, entries); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Review(ctx, "rev_4"); err != nil || got.CheckID != "chk_rev_4" || got.Status != rein.ReviewOpen {
		t.Fatalf("a review recorded with its check: %+v %v", got, err)
	}
	again := check("chk_rev_5", "acme", "key_rev", "rq-rev", "", "sha256:rev", rein.Allow)
	again.Review = mk("rev_5", "acme", "builder")
	if _, err := s.RecordCheck(ctx, again, nil, nil, checkEntry(again)); !errors.Is(err, rein.ErrDuplicateRequest) {
		t.Fatalf("a retried request_id: %v", err)
	}
	if _, err := s.Review(ctx, "rev_5"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("the review of a retried request_id was stored: %v", err)
	}
	if n := subjects(t, s, rein.KindReviewCreated)["rev_4"]; n != 1 {
		t.Errorf("review.created entries of a review recorded with its check: %d", n)
	}
}

func proposals(t *testing.T, s rein.Store) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	mk := func(id, tenant, agent string) *rein.Proposal {
		return &rein.Proposal{ID: id, Tenant: tenant, Status: rein.ProposalOpen, Tier: "tenant", Approval: "apr_" + id, Agent: agent,
			Tool: "shell.exec", Args: json.RawMessage(`{"command":"npm test"}`), Narrowed: []string{"shell"}, Rule: "always-" + id,
			BaseVersion: "sha256:base", Candidate: "version: 1\n", ProposedBy: "alice", CreatedAt: now}
	}
	for _, p := range []*rein.Proposal{mk("prp_1", "acme", "builder"), mk("prp_2", "acme", "other"), mk("prp_3", "globex", "builder")} {
		if err := s.CreateProposal(ctx, p, []*rein.Entry{entry(rein.KindProposalCreated, p.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Proposal(ctx, "prp_1"); err != nil || got.Rule != "always-prp_1" || string(got.Args) != `{"command":"npm test"}` || !got.CreatedAt.Equal(now) {
		t.Fatalf("proposal: %+v %v", got, err)
	}
	if _, err := s.Proposal(ctx, "prp_none"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("unknown proposal: %v", err)
	}
	if list, _ := s.Proposals(ctx, "acme", rein.ListFilter{}); len(list) != 2 || list[0].ID != "prp_2" {
		t.Errorf("acme's proposals, newest first: %v", list)
	}
	if list, _ := s.Proposals(ctx, rein.AllTenants, rein.ListFilter{Agent: "builder"}); len(list) != 2 {
		t.Errorf("every tenant's proposals for builder: %v", list)
	}
	accepted, err := s.ChangeProposal(ctx, "prp_1", func(p *rein.Proposal) ([]*rein.Entry, error) {
		if p.Status != rein.ProposalOpen {
			return nil, rein.Errorf(rein.ECodeConflict, "decided")
		}
		p.Status, p.DecidedBy, p.DecidedAt, p.Version = rein.ProposalAccepted, "ops", &now, "sha256:next"
		return []*rein.Entry{entry(rein.KindProposalDecided, p.ID)}, nil
	})
	if err != nil || accepted.Status != rein.ProposalAccepted || accepted.Version != "sha256:next" {
		t.Fatalf("accept: %+v %v", accepted, err)
	}
	if list, _ := s.Proposals(ctx, "acme", rein.ListFilter{Status: rein.ProposalOpen}); len(list) != 1 || list[0].ID != "prp_2" {
		t.Errorf("open proposals after a decision: %v", list)
	}
	if _, err := s.ChangeProposal(ctx, "prp_1", func(p *rein.Proposal) ([]*rein.Entry, error) {
		return nil, rein.Errorf(rein.ECodeConflict, "proposal %s was already %s", p.ID, p.Status)
	}); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("a second decision: %v", err)
	}
	if n := subjects(t, s, rein.KindProposalDecided)["prp_1"]; n != 1 {
		t.Errorf("proposal.decided entries: %d", n)
	}
}

// dueEscalations: a pending approval is due for escalation when its next
// stage's time has come, until its last stage or until it is resolved;
// the longest due first, at most limit.
func dueEscalations(t *testing.T, s rein.Store) {
	due := func(at time.Duration, limit int) []string {
		t.Helper()
		ids, err := s.DueEscalations(ctx, t0.Add(at), limit)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	stages := []rein.Escalation{{After: 20 * time.Minute, Approvers: []string{"group:vp"}}, {After: 10 * time.Minute, Approvers: []string{"group:leads"}}}
	a := newApproval("apr_esc", "acme", "sha256:esc", t0.Add(time.Hour))
	a.Escalations = stages
	b := newApproval("apr_esc2", "globex", "sha256:esc", t0.Add(time.Hour))
	b.CreatedAt = t0.Add(time.Minute)
	b.Escalations = stages[1:]
	none := newApproval("apr_plain", "acme", "sha256:plain", t0.Add(time.Hour))
	for i, x := range []*rein.Approval{a, b, none} {
		if err := ask(s, fmt.Sprintf("chk_esc_%d", i), x); err != nil {
			t.Fatal(err)
		}
	}
	if got := due(9*time.Minute, 10); len(got) != 0 {
		t.Fatalf("before any stage: %v", got)
	}
	if got := due(10*time.Minute, 10); !slices.Equal(got, []string{"apr_esc"}) {
		t.Fatalf("at the first stage of apr_esc: %v", got)
	}
	if got := due(12*time.Minute, 10); !slices.Equal(got, []string{"apr_esc", "apr_esc2"}) {
		t.Fatalf("both due, the longest due first: %v", got)
	}
	if got := due(12*time.Minute, 1); !slices.Equal(got, []string{"apr_esc"}) {
		t.Fatalf("limit 1: %v", got)
	}
	escalate := func(id string, to int) {
		t.Helper()
		if _, err := s.ChangeApproval(ctx, id, func(x *rein.Approval) ([]*rein.Entry, error) {
			x.Escalated = to
			return []*rein.Entry{entry(rein.KindApprovalEscalated, id)}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	escalate("apr_esc", 1)
	if got := due(15*time.Minute, 10); !slices.Equal(got, []string{"apr_esc2"}) {
		t.Fatalf("after apr_esc's first stage: %v", got)
	}
	if got := due(20*time.Minute, 10); !slices.Equal(got, []string{"apr_esc2", "apr_esc"}) {
		t.Fatalf("apr_esc's second stage: %v", got)
	}
	escalate("apr_esc", 2)
	if _, err := s.ChangeApproval(ctx, "apr_esc2", func(x *rein.Approval) ([]*rein.Entry, error) {
		x.Status = rein.StatusRejected
		return []*rein.Entry{entry(rein.KindApprovalResolved, x.ID)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := due(24*time.Hour, 10); len(got) != 0 {
		t.Fatalf("every stage done or resolved: %v", got)
	}
}

// EscalationsFromBeforeTheColumn checks the migration that added the
// escalation time to approvals: exec runs SQL on the store, update is the
// migration's UPDATE. Pending approvals with escalations, stored before,
// are due at once; the first look that changes nothing stores their real
// time, and they are due again only then.
func EscalationsFromBeforeTheColumn(t *testing.T, s rein.Store, exec func(sql string) error, update string) {
	a := newApproval("apr_old_esc", "acme", "sha256:old-esc", t0.Add(time.Hour))
	a.Escalations = []rein.Escalation{{After: 10 * time.Minute, Approvers: []string{"group:leads"}}}
	plain := newApproval("apr_old_plain", "acme", "sha256:old-plain", t0.Add(time.Hour))
	for i, x := range []*rein.Approval{a, plain} {
		if err := ask(s, fmt.Sprintf("chk_old_%d", i), x); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec("UPDATE approvals SET escalate_at = NULL"); err != nil {
		t.Fatal(err)
	}
	if err := exec(update); err != nil {
		t.Fatalf("the migration's update: %v", err)
	}
	due := func(at time.Duration) []string {
		t.Helper()
		ids, err := s.DueEscalations(ctx, t0.Add(at), 10)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := due(time.Second); !slices.Equal(got, []string{"apr_old_esc"}) {
		t.Fatalf("after the migration: %v, want apr_old_esc to be looked at", got)
	}
	if _, err := s.ChangeApproval(ctx, "apr_old_esc", func(*rein.Approval) ([]*rein.Entry, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got := due(time.Second); len(got) != 0 {
		t.Fatalf("after one look: %v, want none until its stage", got)
	}
	if got := due(10 * time.Minute); !slices.Equal(got, []string{"apr_old_esc"}) {
		t.Fatalf("at its stage: %v", got)
	}
}

// MigrationStatement returns the statement of a migration that begins with
// prefix (up to its semicolon).
func MigrationStatement(t *testing.T, migration []byte, prefix string) string {
	t.Helper()
	src := string(migration)
	i := strings.Index(src, prefix)
	if i < 0 {
		t.Fatalf("no statement %q… in the migration", prefix)
	}
	j := strings.Index(src[i:], ";")
	return src[i : i+j]
}

// RecordRewriter is the one-time rewrite of stored records both stores
// offer (the redaction of secrets kept before rein redacted them).
type RecordRewriter interface {
	RewriteRecords(ctx context.Context, name string, change func(table string, record []byte) []byte) (int, error)
}

// rewriteRecordsOnce: every check, approval and review record passes
// through the change once; what it returns replaces the record, the rest of
// the record (an approval's grant TTL) is kept, and a second run of the
// same rewrite changes nothing.
func rewriteRecordsOnce(t *testing.T, s rein.Store) {
	rw, ok := s.(RecordRewriter)
	if !ok {
		t.Fatal("the store cannot rewrite its records")
	}
	a := newApproval("apr_rw", "acme", "sha256:rw", t0.Add(time.Hour))
	a.Args = json.RawMessage(`{"token":"PLAIN-SECRET"}`)
	rec := check("chk_rw", "acme", "key_1", "", "s1", a.ActionHash, rein.Ask)
	rec.Args, rec.Check.Args = a.Args, a.Args
	a.CheckID = rec.ID
	if _, err := s.RecordCheck(ctx, rec, a, nil, append(checkEntry(rec), entry(rein.KindApprovalCreated, a.ID))); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	change := func(table string, record []byte) []byte {
		seen[table]++
		if !bytes.Contains(record, []byte("PLAIN-SECRET")) {
			return nil
		}
		return bytes.ReplaceAll(record, []byte("PLAIN-SECRET"), []byte("REDACTED"))
	}
	n, err := rw.RewriteRecords(ctx, "test-rewrite", change)
	if err != nil || n != 2 || seen["checks"] != 1 || seen["approvals"] != 1 {
		t.Fatalf("rewrite: %d changed, %v; seen %v", n, err, seen)
	}
	got, err := s.CheckByID(ctx, rec.ID)
	if err != nil || string(got.Args) != `{"token":"REDACTED"}` || string(got.Check.Args) != `{"token":"REDACTED"}` {
		t.Fatalf("the rewritten check: %v %+v", err, got)
	}
	ga, err := s.Approval(ctx, a.ID)
	if err != nil || string(ga.Args) != `{"token":"REDACTED"}` || ga.GrantTTL != a.GrantTTL {
		t.Fatalf("the rewritten approval: %v %+v", err, ga)
	}
	if n, err := rw.RewriteRecords(ctx, "test-rewrite", change); err != nil || n != 0 {
		t.Fatalf("the same rewrite again: %d changed, %v", n, err)
	}
}

// containSession: a new session can be started contained, keeps its
// sandbox through the checks recorded in it, and a session that already
// has checks (or is contained) cannot be.
func containSession(t *testing.T, s rein.Store) {
	sb := &rein.Sandbox{Profile: "coding", FS: "workspace", Net: "proxied", Workspace: "/w", Command: []string{"make"}, KeyID: "key_1", StartedAt: t0}
	e := &rein.Entry{TS: t0, Tenant: "acme", Kind: rein.KindSandboxStarted, Actor: "builder", Subject: "sb1", Data: map[string]any{}}
	got, err := s.ContainSession(ctx, "acme", "sb1", "builder", sb, e)
	if err != nil || got.Sandbox == nil || got.Sandbox.Profile != "coding" {
		t.Fatalf("contain a new session: %v %+v", err, got)
	}
	rec := check("chk_sb1", "acme", "key_1", "", "sb1", "sha256:sb", rein.Allow)
	if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err != nil {
		t.Fatal(err)
	}
	st, _, err := s.SessionState(ctx, "acme", "sb1", "sha256:sb")
	if err != nil || st == nil || st.Sandbox == nil || st.Sandbox.Net != "proxied" || st.Checks != 1 {
		t.Fatalf("the contained session after a check: %v %+v", err, st)
	}
	if _, err := s.ContainSession(ctx, "acme", "sb1", "builder", sb, e); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("contain a contained session again: %v", err)
	}
	plain := check("chk_sb2", "acme", "key_1", "", "sb2", "sha256:sb2", rein.Allow)
	if _, err := s.RecordCheck(ctx, plain, nil, nil, checkEntry(plain)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ContainSession(ctx, "acme", "sb2", "builder", sb, e); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("contain a session that ran uncontained: %v", err)
	}
	if st, _, _ := s.SessionState(ctx, "acme", "sb2", ""); st == nil || st.Sandbox != nil {
		t.Fatalf("the uncontained session: %+v", st)
	}
	// The end of the contained command is kept with the session, once, for
	// the key that contains it.
	end := &rein.Entry{TS: t0, Tenant: "acme", Kind: rein.KindSandboxEnded, Actor: "builder", Subject: "sb1", Data: map[string]any{}}
	if _, err := s.EndSandbox(ctx, "acme", "sb1", "key_2", rein.SandboxEnd{ExitStatus: 0}, t0, end); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("another key ends the contained command: %v", err)
	}
	if _, err := s.EndSandbox(ctx, "acme", "sb2", "key_1", rein.SandboxEnd{ExitStatus: 0}, t0, end); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("end the command of an uncontained session: %v", err)
	}
	got, err = s.EndSandbox(ctx, "acme", "sb1", "key_1", rein.SandboxEnd{ExitStatus: 137, StoppedBy: "lck_1"}, t0.Add(time.Minute), end)
	if err != nil || got.Sandbox.EndedAt == nil || *got.Sandbox.ExitStatus != 137 || got.Sandbox.StoppedBy != "lck_1" {
		t.Fatalf("end the contained command: %v %+v", err, got)
	}
	if st, _, _ := s.SessionState(ctx, "acme", "sb1", ""); st == nil || st.Sandbox.EndedAt == nil || !st.Sandbox.EndedAt.Equal(t0.Add(time.Minute)) || st.Sandbox.Profile != "coding" {
		t.Fatalf("the ended contained session as read back: %+v", st)
	}
	if _, err := s.EndSandbox(ctx, "acme", "sb1", "key_1", rein.SandboxEnd{}, t0, end); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("end the contained command twice: %v", err)
	}
}
