package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinhq/rein/risk"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/sqlite"
)

const testPolicy = `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: deploys, when: 'tool == "deploy"', decision: ask, approval: {approvers: ["group:oncall"], ttl: 1h}}
  - {id: broken, when: 'tool == "pay" && args.amount > 10', decision: allow}
  - {id: redact, when: 'tool == "http.get" && has(args.token)', decision: modify, modify: {remove: [token]}}
  - {id: trial, when: 'tool == "fs.read"', decision: deny, mode: shadow}
`

type fixture struct {
	p     *Pipeline
	store *sqlite.DB
	key   *rein.Key
}

func setup(t testing.TB, src string) *fixture {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	active := &policy.Active{}
	if src != "" {
		pol, err := policy.Compile([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		active.Set("", pol)
	}
	key := &rein.Key{ID: "key_1", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}}
	p := &Pipeline{Store: store, Policies: active, BaseURL: "http://rein", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return &fixture{p: p, store: store, key: key}
}

func (f *fixture) check(t testing.TB, tool, args string) *rein.CheckRecord {
	t.Helper()
	rec, err := f.p.Check(context.Background(), f.key, &rein.CheckRequest{Tool: tool, Args: json.RawMessage(args), Session: "s1"})
	if err != nil {
		t.Fatalf("check %s: %v", tool, err)
	}
	return rec
}

func entryAt(t *testing.T, store rein.Store, index int64) map[string]any {
	t.Helper()
	es, err := store.Entries(context.Background(), index, 1)
	if err != nil || len(es) != 1 {
		t.Fatalf("entry %d: %v", index, err)
	}
	var m map[string]any
	json.Unmarshal(es[0].Bytes, &m)
	return m
}

func TestDecisionsAreRecordedAndAudited(t *testing.T) {
	f := setup(t, testPolicy)
	cases := []struct {
		tool, args string
		decision   rein.Decision
		rule       string
		reason     string
	}{
		{"fs.read", `{"path":"a"}`, rein.Allow, "reads", "matched rule reads"},
		{"deploy", `{}`, rein.Ask, "deploys", "matched rule deploys"},
		{"pay", `{"amount":"ten"}`, rein.Deny, "broken", "policy error in rule broken: "},
		{"rm", `{}`, rein.Deny, "", "no rule allows rm"},
		{"http.get", `{"url":"u","token":"t"}`, rein.Modify, "redact", "matched rule redact"},
	}
	for _, c := range cases {
		rec := f.check(t, c.tool, c.args)
		if rec.Decision != c.decision || rec.Rule != c.rule || !strings.HasPrefix(rec.Reason, c.reason) {
			t.Errorf("%s: got %s/%s %q", c.tool, rec.Decision, rec.Rule, rec.Reason)
		}
		e := entryAt(t, f.store, rec.AuditIndex)
		d := e["data"].(map[string]any)
		if e["kind"] != "check" || e["subject"] != rec.ID || d["decision"] != string(c.decision) || d["reason"] != rec.Reason {
			t.Errorf("%s: audit entry %v", c.tool, e)
		}
		stored, err := f.store.CheckByID(context.Background(), rec.ID)
		if err != nil || stored.Decision != rec.Decision || stored.AuditIndex != rec.AuditIndex {
			t.Errorf("%s: stored %+v %v", c.tool, stored, err)
		}
	}
	// The shadow rule matched fs.read and is recorded, not enforced.
	rec := f.check(t, "fs.read", `{"path":"b"}`)
	if len(rec.Shadow) != 1 || rec.Shadow[0].Rule != "trial" || rec.Decision != rein.Allow {
		t.Errorf("shadow: %+v", rec.Shadow)
	}
	if string(f.check(t, "http.get", `{"url":"u","token":"t"}`).Args) != `{"url":"u"}` {
		t.Error("modify must return the changed args")
	}
}

func TestAskCreatesOnePendingApproval(t *testing.T) {
	f := setup(t, testPolicy)
	first := f.check(t, "deploy", `{"v":1}`)
	if first.Approval == nil || first.Approval.Status != rein.StatusPending || first.Approval.URL != "http://rein/approvals/"+first.Approval.ID {
		t.Fatalf("approval: %+v", first.Approval)
	}
	if ttl := time.Until(first.Approval.ExpiresAt); ttl < 59*time.Minute || ttl > time.Hour {
		t.Errorf("rule ttl 1h not applied: %v", ttl)
	}
	again := f.check(t, "deploy", `{"v":1}`)
	if again.Approval.ID != first.Approval.ID || again.ID == first.ID {
		t.Errorf("re-submission must reuse the pending approval: %s vs %s", again.Approval.ID, first.Approval.ID)
	}
	other := f.check(t, "deploy", `{"v":2}`)
	if other.Approval.ID == first.Approval.ID {
		t.Error("different args must need a different approval")
	}
	a, err := f.store.LatestApproval(context.Background(), "acme", first.ActionHash)
	if err != nil || a.CheckID != first.ID || a.Approvers[0] != "group:oncall" || a.Status != rein.StatusPending {
		t.Errorf("stored approval %+v %v", a, err)
	}
	created := entryAt(t, f.store, first.AuditIndex+1)
	if created["kind"] != rein.KindApprovalCreated || created["subject"] != first.Approval.ID {
		t.Errorf("approval.created entry: %v", created)
	}
}

func TestNoPolicyDenies(t *testing.T) {
	f := setup(t, "")
	rec := f.check(t, "fs.read", `{}`)
	if rec.Decision != rein.Deny || rec.Reason != "no policy loaded" || rec.PolicyVersion != "" {
		t.Errorf("%+v", rec)
	}
	if entryAt(t, f.store, rec.AuditIndex)["kind"] != "check" {
		t.Error("a deny without policy must be audited")
	}
}

func TestRequestIDReplay(t *testing.T) {
	f := setup(t, testPolicy)
	ctx := context.Background()
	req := &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"a"}`), RequestID: "r-1"}
	a, err := f.p.Check(ctx, f.key, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{ "path" : "a" }`), RequestID: "r-1"})
	if err != nil || b.ID != a.ID || b.AuditIndex != a.AuditIndex {
		t.Fatalf("replay: %+v %v", b, err)
	}
	_, err = f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"b"}`), RequestID: "r-1"})
	if rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("reused request_id for another action: %v", err)
	}
}

// TestReplayAfterLock: a retried request_id does not bring back an allow
// once a kill switch or an ended session stops the action; the refusal is
// recorded and audited, and a denied answer is still replayed as it was.
func TestReplayAfterLock(t *testing.T) {
	ctx := context.Background()
	admin := &rein.Key{ID: "key_admin", Name: "admin", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	for _, stop := range []string{"lock", "session end"} {
		f := setup(t, testPolicy)
		req := func() *rein.CheckRequest {
			return &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"a"}`), Session: "s1", RequestID: "r-1"}
		}
		first, err := f.p.Check(ctx, f.key, req())
		if err != nil || first.Decision != rein.Allow {
			t.Fatalf("%s: %v %+v", stop, err, first)
		}
		if stop == "lock" {
			_, err = f.p.CreateLock(ctx, admin, &LockRequest{Target: rein.LockTarget{Agent: "builder"}, Reason: "incident"})
		} else {
			_, err = f.p.EndSession(ctx, admin, "acme", "s1")
		}
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.p.Check(ctx, f.key, req())
		if err != nil || again.Decision != rein.Deny || again.ID == first.ID || !strings.Contains(again.Reason, `request_id "r-1" was answered allow`) {
			t.Fatalf("%s: a retried allow after it: %v %+v", stop, err, again)
		}
		if entryAt(t, f.store, again.AuditIndex)["kind"] != "check" {
			t.Fatalf("%s: the refused retry is not audited", stop)
		}
	}
}

// failingStore fails the calls named in fail.
type failingStore struct {
	rein.Store
	fail map[string]bool
}

func (s *failingStore) LatestApproval(ctx context.Context, tenant, hash string) (*rein.Approval, error) {
	if s.fail["LatestApproval"] {
		return nil, errors.New("disk I/O error")
	}
	return s.Store.LatestApproval(ctx, tenant, hash)
}

func (s *failingStore) SessionState(ctx context.Context, tenant, id, hash string) (*rein.Session, int64, error) {
	if s.fail["sessions"] {
		return nil, 0, errors.New("disk I/O error")
	}
	return s.Store.SessionState(ctx, tenant, id, hash)
}

func (s *failingStore) SessionEnded(ctx context.Context, tenant, id string) (*rein.Session, error) {
	if s.fail["sessions"] {
		return nil, errors.New("disk I/O error")
	}
	return s.Store.SessionEnded(ctx, tenant, id)
}

func (s *failingStore) RecordCheck(ctx context.Context, rec *rein.CheckRecord, a *rein.Approval, use *rein.ApprovalUse, es []*rein.Entry) (*rein.CheckRecord, error) {
	if s.fail["RecordCheck"] {
		return nil, errors.New("database is locked")
	}
	return s.Store.RecordCheck(ctx, rec, a, use, es)
}

func TestStoreErrorsFailClosed(t *testing.T) {
	f := setup(t, testPolicy)
	fs := &failingStore{Store: f.store, fail: map[string]bool{"LatestApproval": true}}
	f.p.Store = fs
	rec := f.check(t, "deploy", `{}`)
	if rec.Decision != rein.Deny || !strings.Contains(rec.Reason, "cannot look up approvals") || !strings.Contains(rec.Reason, "disk I/O error") {
		t.Errorf("approval lookup failure must deny with its cause: %+v", rec)
	}
	if e := entryAt(t, f.store, rec.AuditIndex); e["data"].(map[string]any)["decision"] != "deny" {
		t.Errorf("and be audited: %v", e)
	}
	fs.fail = map[string]bool{"RecordCheck": true}
	_, err := f.p.Check(context.Background(), f.key, &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{}`)})
	if rein.ErrorCode(err) != rein.ECodeUnavailable || !strings.Contains(rein.ErrorMessage(err), "denied") {
		t.Errorf("an unrecordable decision must not be returned as allow: %v", err)
	}
}

func TestIdentity(t *testing.T) {
	f := setup(t, testPolicy)
	ctx := context.Background()
	if _, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "fs.read", Agent: "someone-else"}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Errorf("impersonation: %v", err)
	}
	rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "fs.read", Agent: "builder/sub-1", Args: json.RawMessage(`{}`)})
	if err != nil || rec.Check.Agent != "builder/sub-1" {
		t.Errorf("sub-agent: %+v %v", rec, err)
	}
	approver := &rein.Key{ID: "key_2", Name: "alice", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}}
	if _, err := f.p.Check(ctx, approver, &rein.CheckRequest{Tool: "fs.read"}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Errorf("approver key checking: %v", err)
	}
}

func TestGuardTurnsPanicsIntoDeny(t *testing.T) {
	f := setup(t, testPolicy)
	c := &check{decision: rein.Allow}
	f.p.guard(c, "facts", func() { panic("classifier bug") })
	if !c.done || c.decision != rein.Deny || c.reason != "facts stage failed: internal error (classifier bug)" {
		t.Errorf("%+v", c)
	}
}

func TestExpiredPendingApprovalIsReplaced(t *testing.T) {
	f := setup(t, testPolicy)
	now := time.Now()
	f.p.Now = func() time.Time { return now }
	first := f.check(t, "deploy", `{}`)
	now = now.Add(2 * time.Hour) // past the rule's 1h ttl, before any sweeper ran
	second := f.check(t, "deploy", `{}`)
	if second.Approval.ID == first.Approval.ID || second.Approval.Status != rein.StatusPending {
		t.Fatalf("an expired approval must not be reused: %s vs %s", second.Approval.ID, first.Approval.ID)
	}
	// The old one is recorded as a timeout, before the new check's entries.
	e := entryAt(t, f.store, second.AuditIndex-1)
	d := e["data"].(map[string]any)
	if e["kind"] != rein.KindApprovalResolved || e["subject"] != first.Approval.ID || d["status"] != "expired" || d["cause"] != "timeout" {
		t.Errorf("expiry entry: %v", e)
	}
}

// TestLabelsNeverOverrideRisk: whatever labels a client sends (claiming a
// command is safe, naming tags, emptying risk), rein's derived tags stand,
// and a policy that reads labels cannot be used to lift them.
func TestLabelsNeverOverrideRisk(t *testing.T) {
	f := setup(t, `
version: 1
default: deny
rules:
  - {id: trusted-label, when: '"risk" in labels && labels.risk == "none"', decision: allow}
  - {id: destructive, when: '"shell.destructive" in risk', decision: deny, reason: "destructive"}
`)
	labelSets := []map[string]string{
		{"risk": "none"},
		{"shell.destructive": "false", "shell": ""},
		{"risk": "", "facts": "{}", "tags": "safe"},
	}
	for _, labels := range labelSets {
		rec, err := f.p.Check(context.Background(), f.key, &rein.CheckRequest{Tool: "Bash",
			Args: json.RawMessage(`{"command":"r''m -rf /"}`), Labels: labels, Session: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(rec.Risk, "shell.destructive") || !slices.Contains(rec.Risk, "shell") {
			t.Errorf("labels %v: risk %v lost a derived tag", labels, rec.Risk)
		}
		if labels["risk"] == "none" && rec.Decision != rein.Deny {
			t.Errorf("labels %v: %s by %s; the derived tag's deny must win", labels, rec.Decision, rec.Rule)
		}
		cmds := rec.Facts["shell"].(map[string]any)["commands"].([]any)
		if len(cmds) != 1 || cmds[0].(map[string]any)["name"] != "rm" {
			t.Errorf("labels %v: facts %v", labels, rec.Facts)
		}
	}
}

// TestResolveUsesTheRealResolver: a resolve: true tool's host name is looked
// up, and a name that resolves to a private address is private.
func TestResolveUsesTheRealResolver(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// The machine's own name usually resolves (to a loopback or LAN
	// address); where it does not, the URL is judged by its name alone.
	addrs := LookupHost(host)
	private := slices.ContainsFunc(addrs, func(a netip.Addr) bool { return risk.IsPrivate(a.Unmap()) })
	f := setup(t, `
version: 1
default: deny
tools:
  "web.get": {url: [url], resolve: true}
  "web.raw": {url: [url]}
rules:
  - {id: ok, when: 'true', decision: allow}
`)
	// A name without a dot is local whatever it resolves to: the resolver
	// tries the search domains, and LLMNR and NetBIOS answer it from the
	// local network (risk.md).
	dotless := !strings.Contains(strings.TrimSuffix(host, "."), ".")
	private = private || dotless
	rec := f.check(t, "web.get", `{"url":"http://`+host+`:8080/admin"}`)
	if got := slices.Contains(rec.Risk, "url.private"); got != private {
		t.Errorf("%s resolves to %v: url.private %v, want %v (risk %v)", host, addrs, got, private, rec.Risk)
	}
	if ip := rec.Facts["urls"].([]any)[0].(map[string]any)["ip"]; !dotless && (ip == "") != (len(addrs) == 0) {
		t.Errorf("%s resolves to %v: ip in the facts %q", host, addrs, ip)
	}
	raw := f.check(t, "web.raw", `{"url":"http://`+host+`:8080/admin"}`)
	if slices.Contains(raw.Risk, "url.private") != dotless {
		t.Errorf("without resolve the name is judged by itself alone: %v", raw.Risk)
	}
}

func TestSweepExpires(t *testing.T) {
	f := setup(t, testPolicy)
	now := time.Now()
	f.p.Now = func() time.Time { return now }
	rec := f.check(t, "deploy", `{}`)
	if rec.Approval == nil {
		t.Fatal("no approval")
	}
	now = now.Add(2 * time.Hour)
	if err := f.p.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, err := f.store.Approval(context.Background(), rec.Approval.ID)
	if err != nil || a.Status != rein.StatusExpired {
		t.Fatalf("after sweep: %v %v", a.Status, err)
	}
}

// countingStore counts the session reads of each kind.
type countingStore struct {
	rein.Store
	state, ended int
}

func (s *countingStore) SessionState(ctx context.Context, tenant, id, hash string) (*rein.Session, int64, error) {
	s.state++
	return s.Store.SessionState(ctx, tenant, id, hash)
}

func (s *countingStore) SessionEnded(ctx context.Context, tenant, id string) (*rein.Session, error) {
	s.ended++
	return s.Store.SessionEnded(ctx, tenant, id)
}

// A policy that reads the session gets its counters; one that does not
// reads only whether the session ended; with either, a check in an ended
// session is denied, and a session that cannot be read fails closed.
func TestSessionReadAsPolicyNeeds(t *testing.T) {
	ctx := context.Background()
	admin := &rein.Key{ID: "key_admin", Name: "admin", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	for _, tc := range []struct {
		name, policy string
		reads        bool
	}{
		{"counters", `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: budget, when: 'session.calls >= 2', decision: deny, reason: "two calls per session"}
`, true},
		{"reason", `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow, reason_expr: '"call " + string(session.calls)'}
`, true},
		{"none", testPolicy, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, tc.policy)
			cs := &countingStore{Store: f.store}
			f.p.Store = cs
			for i := range 3 {
				rec := f.check(t, "fs.read", fmt.Sprintf(`{"path":"%d"}`, i))
				want := rein.Allow
				if tc.name == "counters" && i == 2 {
					want = rein.Deny // two calls counted before it
				}
				if rec.Decision != want {
					t.Fatalf("check %d: %s (%s), want %s", i, rec.Decision, rec.Reason, want)
				}
				if tc.name == "reason" && rec.Reason != fmt.Sprintf("call %d", i) {
					t.Errorf("check %d: reason %q, want the session's calls in it", i, rec.Reason)
				}
			}
			if tc.reads && (cs.state != 3 || cs.ended != 0) || !tc.reads && (cs.state != 0 || cs.ended != 3) {
				t.Errorf("session reads: %d of its state, %d of whether it ended", cs.state, cs.ended)
			}
			if _, err := f.p.EndSession(ctx, admin, "acme", "s1"); err != nil {
				t.Fatal(err)
			}
			if rec := f.check(t, "fs.read", `{"path":"after"}`); rec.Decision != rein.Deny || !strings.Contains(rec.Reason, `session "s1" was ended`) {
				t.Errorf("a check in the ended session: %s (%s)", rec.Decision, rec.Reason)
			}
			f.p.Store = &failingStore{Store: f.store, fail: map[string]bool{"sessions": true}}
			rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"x"}`), Session: "s2"})
			if err != nil || rec.Decision != rein.Deny || !strings.Contains(rec.Reason, "could not be read") {
				t.Errorf("an unreadable session: %v %+v", err, rec)
			}
		})
	}
}
