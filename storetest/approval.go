package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

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
