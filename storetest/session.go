package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

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
