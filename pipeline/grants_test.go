package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/policy"
)

// The grants policy: small payments need one finance approval, large ones
// two; cleaning the build needs a developer, deleting data needs on-call.
const grantsPolicy = `version: 1
tools:
  "shell.exec": {shell: [command]}
rules:
  - {id: small-pay, when: 'tool == "pay" && args.amount <= 200', decision: ask, approval: {approvers: ["group:finance"]}}
  - {id: large-pay, when: 'tool == "pay" && args.amount > 200', decision: ask, approval: {approvers: ["group:finance"], quorum: 2}}
  - {id: no-huge-pay, when: 'tool == "pay" && args.amount > 100000', decision: deny, reason: "too large"}
  - {id: clean, when: 'tool == "shell.exec" && args.command == "make clean"', decision: ask, approval: {approvers: ["group:dev"]}}
  - {id: delete-data, when: 'tool == "shell.exec" && args.command.startsWith("rm ")', decision: ask, approval: {approvers: ["group:oncall"]}}
  - {id: email, when: 'tool == "email.send"', decision: allow}
  - {id: email-rate, when: 'tool == "email.send"', limit: {rate: 2, per: 1h, by: [agent]}}
  - {id: mcp, when: 'tool.startsWith("mcp/")', decision: allow}
`

func stored(t *testing.T, f *fixture, k *rein.Key) *rein.Key {
	t.Helper()
	k.CreatedAt, k.SecretHash = time.Now(), rein.HashSecret(k.ID)
	if err := f.store.CreateKey(context.Background(), k, nil); err != nil {
		t.Fatal(err)
	}
	return k
}

func approver(name string, groups ...string) *rein.Key {
	return &rein.Key{ID: "key_" + name, Name: name, Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: groups}
}

func grantsFixture(t *testing.T) *fixture {
	f := setup(t, grantsPolicy)
	stored(t, f, f.key)
	return f
}

func (f *fixture) vote(t *testing.T, k *rein.Key, id, kind, args string) (*rein.Approval, error) {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	// The voter was shown the approval as it is now.
	cur, err := f.p.Store.Approval(context.Background(), id)
	if err != nil {
		return nil, err
	}
	return f.p.Cast(context.Background(), k, id, approval.Ballot{Kind: kind, Args: raw, Revision: cur.Revision})
}

// TestAnEditNeedsWhatPolicyAsksForTheEditedAction: an edit is decided as a
// new check; its approver sets and quorum are added to the original's.
func TestAnEditNeedsWhatPolicyAsksForTheEditedAction(t *testing.T) {
	f := grantsFixture(t)
	fin1, fin2, dev, oncall := approver("fin1", "finance"), approver("fin2", "finance"), approver("dev1", "dev"), approver("oncall1", "oncall")

	// 150 -> 5,000: one finance vote is not enough where policy asks for two.
	ask := f.check(t, "pay", `{"amount":150,"to":"acme-supplies"}`)
	a, err := f.vote(t, fin1, ask.Approval.ID, approval.Edit, `{"amount":5000,"to":"someone-else"}`)
	if err != nil || a.Status != rein.StatusPending || a.Quorum != 2 {
		t.Fatalf("edit into a two-approval payment: %v, status %s quorum %d", err, a.Status, a.Quorum)
	}
	if a, err = f.vote(t, fin2, ask.Approval.ID, approval.Approve, ""); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("second finance approver: %v %s", err, a.Status)
	}
	got := f.check(t, "pay", `{"amount":150,"to":"acme-supplies"}`)
	if got.Decision != rein.Allow || string(got.Args) != `{"amount":5000,"to":"someone-else"}` {
		t.Fatalf("the edited grant: %s %s (%s)", got.Decision, got.Args, got.Reason)
	}

	// make clean -> rm -rf ./data: the developer's edit waits for on-call.
	ask = f.check(t, "shell.exec", `{"command":"make clean"}`)
	a, err = f.vote(t, dev, ask.Approval.ID, approval.Edit, `{"command":"rm -rf ./data"}`)
	if err != nil || a.Status != rein.StatusPending {
		t.Fatalf("edit into an on-call action: %v %s", err, a.Status)
	}
	if got := f.check(t, "shell.exec", `{"command":"make clean"}`); got.Decision != rein.Ask {
		t.Fatalf("pending edit allowed: %s", got.Decision)
	}
	if a, err = f.vote(t, oncall, ask.Approval.ID, approval.Approve, ""); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("on-call approval: %v %s", err, a.Status)
	}

	// An edit that policy denies is refused.
	ask = f.check(t, "pay", `{"amount":10}`)
	if _, err := f.vote(t, fin1, ask.Approval.ID, approval.Edit, `{"amount":200000}`); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("edit into a denied action: %v", err)
	}
}

// TestAGrantIsUsedOnlyIfStillGranted: at use, by re-submission or wait, the
// policy in force decides again; a revoked key, a console session and
// another agent use nothing; every use is a recorded check.
func TestAGrantIsUsedOnlyIfStillGranted(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	fin1 := approver("fin1", "finance")
	approve := func(args string) *rein.CheckRecord {
		t.Helper()
		ask := f.check(t, "pay", args)
		if _, err := f.vote(t, fin1, ask.Approval.ID, approval.Approve, ""); err != nil {
			t.Fatal(err)
		}
		return ask
	}

	// The wait uses the grant through the pipeline and records the check.
	ask := approve(`{"amount":20}`)
	w, err := f.p.Wait(ctx, f.key, ask.Approval.ID, time.Second, true)
	if err != nil || w.Decision != rein.Allow || w.CheckID == "" || string(w.RunArgs) != `{"amount":20}` {
		t.Fatalf("wait: %+v %v", w, err)
	}
	if rec, err := f.store.CheckByID(ctx, w.CheckID); err != nil || rec.Decision != rein.Allow || rec.Approval == nil || rec.Approval.ID != ask.Approval.ID {
		t.Fatalf("the wait's check: %+v %v", rec, err)
	}
	if w, _ := f.p.Wait(ctx, f.key, ask.Approval.ID, time.Second, true); w.Decision != rein.Deny {
		t.Fatalf("a grant used twice: %s", w.Decision)
	}

	// A console session (no bearer key) sees the outcome and consumes nothing.
	ask = approve(`{"amount":21}`)
	if w, _ := f.p.Wait(ctx, f.key, ask.Approval.ID, time.Second, false); w.Decision != rein.Deny || w.Status != rein.StatusApproved {
		t.Fatalf("cookie wait: %s %s", w.Decision, w.Status)
	}

	// A policy pushed after the approval denies: the wait and the
	// re-submission both deny (before any recheck ran).
	ask = approve(`{"amount":22}`)
	pol, err := policy.Compile([]byte(strings.Replace(grantsPolicy, "args.amount > 100000", "args.amount > 21", 1)))
	if err != nil {
		t.Fatal(err)
	}
	f.p.Policies.Set("", pol)
	if w, _ := f.p.Wait(ctx, f.key, ask.Approval.ID, time.Second, true); w.Decision != rein.Deny || !strings.Contains(w.Reason, "too large") {
		t.Fatalf("wait after the policy denies: %s %q", w.Decision, w.Reason)
	}
	if got := f.check(t, "pay", `{"amount":22}`); got.Decision != rein.Deny {
		t.Fatalf("re-submission after the policy denies: %s", got.Decision)
	}
	if n, err := f.p.Recheck(ctx); err != nil || n != 1 {
		t.Fatalf("recheck invalidates the approved grant: %d %v", n, err)
	}
	f.p.Policies.Set("", mustCompile(t, grantsPolicy))

	// A key revoked while it waits uses nothing.
	ask = approve(`{"amount":23}`)
	if err := f.store.RevokeKey(ctx, f.key.ID, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	w, err = f.p.Wait(ctx, f.key, ask.Approval.ID, time.Second, true)
	if err != nil || w.Decision != rein.Deny || !strings.Contains(w.Reason, "revoked") {
		t.Fatalf("revoked key: %+v %v", w, err)
	}
	if a, _ := f.store.Approval(ctx, ask.Approval.ID); a.Status != rein.StatusApproved {
		t.Fatalf("a revoked key consumed the grant: %s", a.Status)
	}

	// The key re-issued under the same name is the same agent: it may use it.
	reissued := stored(t, f, &rein.Key{ID: "key_1b", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}})
	f.key = reissued
	if got := f.check(t, "pay", `{"amount":23}`); got.Decision != rein.Allow {
		t.Fatalf("the same agent with a new key: %s %s", got.Decision, got.Reason)
	}

	// An admin may wait on it but never uses another agent's grant.
	ask = approve(`{"amount":24}`)
	admin := stored(t, f, &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}})
	if w, err := f.p.Wait(ctx, admin, ask.Approval.ID, time.Second, true); err != nil || w.Decision != rein.Deny {
		t.Fatalf("admin wait: %+v %v", w, err)
	}
	if a, _ := f.store.Approval(ctx, ask.Approval.ID); a.Status != rein.StatusApproved {
		t.Fatalf("an admin's wait consumed the agent's grant: %s", a.Status)
	}
}

// TestAnEditedGrantIsDecidedAgainAtUse: the policy now denies the edited
// action: the grant is not used, and a re-submission asks anew.
func TestAnEditedGrantIsDecidedAgainAtUse(t *testing.T) {
	f := grantsFixture(t)
	fin1, fin2 := approver("fin1", "finance"), approver("fin2", "finance")
	ask := f.check(t, "pay", `{"amount":100}`)
	f.vote(t, fin1, ask.Approval.ID, approval.Edit, `{"amount":300}`)
	if a, err := f.vote(t, fin2, ask.Approval.ID, approval.Approve, ""); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("approve the edit: %v", err)
	}
	f.p.Policies.Set("", mustCompile(t, strings.Replace(grantsPolicy, "args.amount > 100000", "args.amount > 250", 1)))
	got := f.check(t, "pay", `{"amount":100}`)
	if got.Decision == rein.Allow || got.Approval == nil || got.Approval.ID == ask.Approval.ID {
		t.Fatalf("an edit the policy now denies was used: %s %s approval %v", got.Decision, got.Args, got.Approval)
	}
}

// TestQuorumCountsPeopleNotKeys: one person's revoked and re-issued key does
// not make a second vote.
func TestQuorumCountsPeopleNotKeys(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	fin1 := stored(t, f, approver("fin1", "finance"))
	ask := f.check(t, "pay", `{"amount":500}`)
	if _, err := f.vote(t, fin1, ask.Approval.ID, approval.Approve, ""); err != nil {
		t.Fatal(err)
	}
	f.store.RevokeKey(ctx, fin1.ID, time.Now(), nil)
	again := stored(t, f, &rein.Key{ID: "key_fin1_b", Name: "fin1", Tenant: "acme", Roles: fin1.Roles, Groups: fin1.Groups})
	if _, err := f.vote(t, again, ask.Approval.ID, approval.Approve, ""); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a re-issued key voted again: %v", err)
	}
}

// TestControlsKeyedOnIdentity: a rate limit by agent counts the key's
// identity whatever sub-agent name the caller picks; a lock on "*" stops
// every tool, names with '/' and '.' included.
func TestControlsKeyedOnIdentity(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	var decisions []rein.Decision
	for i := range 4 {
		rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "email.send", Args: json.RawMessage(`{}`), Agent: "builder/n" + string(rune('0'+i))})
		if err != nil {
			t.Fatal(err)
		}
		decisions = append(decisions, rec.Decision)
	}
	if decisions[2] != rein.Throttle || decisions[3] != rein.Throttle {
		t.Fatalf("a limit of 2 by agent across sub-agents: %v", decisions)
	}
	admin := &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	if _, err := f.p.CreateLock(ctx, admin, &LockRequest{Target: rein.LockTarget{Tool: "*"}, Reason: "incident"}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"mcp/shell.exec", "mcp/fs/read", "pay"} {
		if rec := f.check(t, tool, `{"amount":1}`); rec.Decision != rein.Deny || !strings.Contains(rec.Reason, "locked") {
			t.Errorf("lock on * and tool %s: %s %s", tool, rec.Decision, rec.Reason)
		}
	}
}

func mustCompile(t testing.TB, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Compile([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAGrantMustMeetTheApprovalsAskedForNow: policy raised the quorum after
// one vote approved; the grant is not used and the action is asked anew.
func TestAGrantMustMeetTheApprovalsAskedForNow(t *testing.T) {
	f := grantsFixture(t)
	ask := f.check(t, "pay", `{"amount":100}`)
	if a, err := f.vote(t, approver("fin1", "finance"), ask.Approval.ID, approval.Approve, ""); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("approve: %v", err)
	}
	f.p.Policies.Set("", mustCompile(t, strings.Replace(grantsPolicy, `approvers: ["group:finance"]}}`, `approvers: ["group:finance"], quorum: 3}}`, 1)))
	got := f.check(t, "pay", `{"amount":100}`)
	if got.Decision != rein.Ask || got.Approval.ID == ask.Approval.ID || !strings.Contains(got.Reason, "no longer meets") {
		t.Fatalf("a grant below today's quorum: %s %q", got.Decision, got.Reason)
	}
}

// TestResultsCarryEvidenceOfWhatRan: an auditor can tell from the result's
// audit entry that the agent ran something other than what was allowed; a
// second result and a result after a lock are recorded as anomalies.
func TestResultsCarryEvidenceOfWhatRan(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	fin1 := approver("fin1", "finance")
	ask := f.check(t, "pay", `{"amount":100}`)
	f.vote(t, fin1, ask.Approval.ID, approval.Edit, `{"amount":90}`)
	allowed := f.check(t, "pay", `{"amount":100}`)
	if allowed.Decision != rein.Allow {
		t.Fatalf("grant: %s", allowed.Decision)
	}
	resultEntry := func() map[string]any { // the latest check.result entry
		t.Helper()
		n, _, err := f.store.AuditSize(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := n - 1; i >= 0; i-- {
			if e := entryAt(t, f.store, i); e["kind"] == rein.KindCheckResult {
				return e["data"].(map[string]any)
			}
		}
		t.Fatal("no check.result entry")
		return nil
	}
	// The agent ran the original 100, not the approved 90.
	err := f.p.Result(ctx, f.key, allowed.ID, &rein.CheckResult{Status: "succeeded", Args: json.RawMessage(`{"amount":100}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := resultEntry()
	if d["args_match"] != false || d["executed_args_hash"] == d["allowed_args_hash"] || !strings.Contains(strings.Join(anyStrings(d["anomalies"]), " "), "args_mismatch") {
		t.Fatalf("mismatch not flagged: %v", d)
	}
	if err := f.p.Result(ctx, f.key, allowed.ID, &rein.CheckResult{Status: "succeeded"}); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("second result: %v", err)
	}
	if d := resultEntry(); !strings.HasPrefix(d["anomaly"].(string), "second_result") {
		t.Fatalf("second result not recorded: %v", d)
	}
	// The executed arguments equal the allowed ones: args_match true, by hash too.
	ok := f.check(t, "email.send", `{"to":"a"}`)
	if err := f.p.Result(ctx, f.key, ok.ID, &rein.CheckResult{Status: "succeeded", ArgsHash: rein.ArgsHash(ok.Args)}); err != nil {
		t.Fatal(err)
	}
	if d := resultEntry(); d["args_match"] != true || d["anomalies"] != nil {
		t.Fatalf("matching result: %v", d)
	}
	// Arguments with characters JSON may escape (<, >, &, U+2028) match when
	// sent back as written, in another key order or with other escapes, and
	// by the hash of their canonical form (RFC 8785) computed by the agent.
	const odd = `{"to":"a<b>&c","note":"x\u2028y é"}`
	for i, executed := range []*rein.CheckResult{
		{Status: "succeeded", Args: json.RawMessage(odd)},
		{Status: "succeeded", Args: json.RawMessage(`{"note":"x\u2028y \u00e9","to":"a\u003cb\u003e\u0026c"}`)},
		{Status: "succeeded", ArgsHash: rein.ArgsHash(mustCanonical(t, odd))},
	} {
		c := f.check(t, "mcp/notes", odd)
		if err := f.p.Result(ctx, f.key, c.ID, executed); err != nil {
			t.Fatal(err)
		}
		if d := resultEntry(); d["args_match"] != true || d["anomalies"] != nil || d["allowed_args_hash"] != rein.ArgsHash(mustCanonical(t, odd)) {
			t.Fatalf("result %d with the allowed arguments: %v", i, d)
		}
	}
	if err := f.p.Result(ctx, f.key, ok.ID, &rein.CheckResult{Status: "succeeded", ArgsHash: "md5:x"}); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("bad hash: %v", err)
	}
	// A lock after the allow: the late result is kept and flagged.
	late := f.check(t, "email.send", `{"to":"b"}`)
	time.Sleep(2 * time.Millisecond)
	admin := &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	if _, err := f.p.CreateLock(ctx, admin, &LockRequest{Target: rein.LockTarget{Agent: "builder"}, Reason: "incident"}); err != nil {
		t.Fatal(err)
	}
	if err := f.p.Result(ctx, f.key, late.ID, &rein.CheckResult{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	if d := resultEntry(); !strings.Contains(strings.Join(anyStrings(d["anomalies"]), " "), "result_after_lock") {
		t.Fatalf("result after a lock: %v", d)
	}
}

func mustCanonical(t *testing.T, args string) json.RawMessage {
	t.Helper()
	c, err := rein.Canonical(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestAnEndedSessionAllowsNothing: the agent ends its session; later checks
// in it are denied, and nobody else's key can end it.
func TestAnEndedSessionAllowsNothing(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	f.check(t, "email.send", `{"to":"a"}`)
	other := &rein.Key{ID: "key_other", Name: "other", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}}
	if _, err := f.p.EndSession(ctx, other, "acme", "s1"); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("another agent ended the session: %v", err)
	}
	s, err := f.p.EndSession(ctx, f.key, "acme", "s1")
	if err != nil || s.EndedAt == nil {
		t.Fatalf("end: %+v %v", s, err)
	}
	if rec := f.check(t, "email.send", `{"to":"b"}`); rec.Decision != rein.Deny || !strings.Contains(rec.Reason, "ended") {
		t.Fatalf("a check in an ended session: %s %q", rec.Decision, rec.Reason)
	}
}

// TestAModifyNeverProducesWhatPolicyDenies: a modify rule (of a tenant tier,
// say) that rewrites an action into one another rule denies or asks for is a
// deny; a modify whose result no rule matches runs.
func TestAModifyNeverProducesWhatPolicyDenies(t *testing.T) {
	f := setup(t, `version: 1
default: deny
rules:
  - {id: move, when: 'tool == "fs.write" && args.path == "notes.txt"', decision: modify, modify: {set: {path: "/etc/cron.d/job"}}}
  - {id: cron, when: 'tool == "fs.write" && args.path.startsWith("/etc/cron.d")', decision: ask, approval: {approvers: ["group:oncall"]}}
  - {id: strip, when: 'tool == "http.get" && has(args.token)', decision: modify, modify: {remove: [token]}}
`)
	if rec := f.check(t, "fs.write", `{"path":"notes.txt"}`); rec.Decision != rein.Deny || !strings.Contains(rec.Reason, `rule "cron"`) {
		t.Fatalf("a modify into an ask: %s %q", rec.Decision, rec.Reason)
	}
	if rec := f.check(t, "http.get", `{"url":"u","token":"t"}`); rec.Decision != rein.Modify || string(rec.Args) != `{"url":"u"}` {
		t.Fatalf("a modify no rule objects to: %s %s %q", rec.Decision, rec.Args, rec.Reason)
	}
	// The simulator answers as the check does.
	sim, err := Simulate(f.p.Policies.For("acme"), "acme", &rein.CheckRequest{Tool: "fs.write", Args: json.RawMessage(`{"path":"notes.txt"}`)}, nil, time.Now())
	if err != nil || sim.Decision != rein.Deny || !strings.Contains(sim.Reason, `rule "cron"`) {
		t.Fatalf("simulated modify into an ask: %+v %v", sim, err)
	}
}

const scopesPolicy = `version: 1
rules:
  - {id: deploy, when: 'tool == "deploy"', decision: ask, approval: {approvers: ["group:oncall"], grants: [once, session, 1h]}}
  - {id: pay, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"], quorum: 2, grants: [once, session]}}
  - {id: freeze, when: 'tool == "deploy" && args.env == "frozen"', decision: deny}
`

// TestGrantScopes: an approver may grant this exact action for the rest of
// the session or for a window, within what the rule permits; every use is
// re-decided and audited; another session, a closed window, a revocation or
// a policy that now denies end it.
func TestGrantScopes(t *testing.T) {
	ctx := context.Background()
	f := setup(t, scopesPolicy)
	stored(t, f, f.key)
	now := time.Now()
	f.p.Now = func() time.Time { return now }
	oncall := approver("oncall1", "oncall")

	ask := f.check(t, "deploy", `{"env":"staging"}`)
	if _, err := f.p.VoteGrant(ctx, oncall, ask.Approval.ID, approval.Approve, "", nil, "2h"); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("a grant the rule does not permit: %v", err)
	}
	a, err := f.p.VoteGrant(ctx, oncall, ask.Approval.ID, approval.Approve, "", nil, rein.GrantSession)
	if err != nil || a.Status != rein.StatusApproved || a.Grant != rein.GrantSession {
		t.Fatalf("session grant: %v %+v", err, a)
	}
	for i := range 3 {
		if rec := f.check(t, "deploy", `{"env":"staging"}`); rec.Decision != rein.Allow || rec.Approval.ID != ask.Approval.ID {
			t.Fatalf("use %d of a session grant: %s %q", i+1, rec.Decision, rec.Reason)
		}
	}
	// Another session is another action: it asks anew.
	other, _ := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "deploy", Args: json.RawMessage(`{"env":"staging"}`), Session: "s2"})
	if other.Decision != rein.Ask || other.Approval.ID == ask.Approval.ID {
		t.Fatalf("a session grant used from another session: %s", other.Decision)
	}
	got, _ := f.store.Approval(ctx, ask.Approval.ID)
	if got.Uses != 3 || got.Status != rein.StatusApproved {
		t.Fatalf("uses %d status %s", got.Uses, got.Status)
	}
	// Revoked: the next check asks anew.
	if _, err := f.p.Revoke(ctx, approver("bob", "finance"), ask.Approval.ID, ""); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a revocation by someone the approval does not name: %v", err)
	}
	if _, err := f.p.Revoke(ctx, oncall, ask.Approval.ID, "done"); err != nil {
		t.Fatal(err)
	}
	if rec := f.check(t, "deploy", `{"env":"staging"}`); rec.Decision != rein.Ask {
		t.Fatalf("after revocation: %s", rec.Decision)
	}

	// A window: allowed until it closes.
	ask = f.check(t, "deploy", `{"env":"qa"}`)
	f.p.VoteGrant(ctx, oncall, ask.Approval.ID, approval.Approve, "", nil, "1h")
	if rec := f.check(t, "deploy", `{"env":"qa"}`); rec.Decision != rein.Allow {
		t.Fatalf("in the window: %s", rec.Decision)
	}
	now = now.Add(61 * time.Minute)
	if rec := f.check(t, "deploy", `{"env":"qa"}`); rec.Decision != rein.Ask || rec.Approval.ID == ask.Approval.ID {
		t.Fatalf("after the window: %s", rec.Decision)
	}

	// A policy that now denies wins over a scoped grant.
	ask = f.check(t, "deploy", `{"env":"frozen-later"}`)
	f.p.VoteGrant(ctx, oncall, ask.Approval.ID, approval.Approve, "", nil, rein.GrantSession)
	f.p.Policies.Set("", mustCompile(t, strings.Replace(scopesPolicy, `args.env == "frozen"`, `args.env.startsWith("frozen")`, 1)))
	if rec := f.check(t, "deploy", `{"env":"frozen-later"}`); rec.Decision != rein.Deny {
		t.Fatalf("a scoped grant after the policy denies: %s", rec.Decision)
	}

	// Two approvers choosing different scopes: the narrowest, once.
	ask = f.check(t, "pay", `{"amount":5}`)
	f.p.VoteGrant(ctx, approver("fin1", "finance"), ask.Approval.ID, approval.Approve, "", nil, rein.GrantSession)
	a, _ = f.p.VoteGrant(ctx, approver("fin2", "finance"), ask.Approval.ID, approval.Approve, "", nil, rein.GrantOnce)
	if a.Grant != rein.GrantOnce {
		t.Fatalf("mixed scopes resolved as %q", a.Grant)
	}
	f.check(t, "pay", `{"amount":5}`)
	if rec := f.check(t, "pay", `{"amount":5}`); rec.Decision != rein.Ask {
		t.Fatalf("a once grant used twice: %s", rec.Decision)
	}
}

// TestBatchVotes: one vote decides every pending approval of an agent turn,
// all or nothing: a batch holding an action the approver is not eligible for
// is refused without recording any vote.
func TestBatchVotes(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	checkIn := func(tool, args, batch string) *rein.CheckRecord {
		rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: tool, Args: json.RawMessage(args), Session: "s1", Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	a1 := checkIn("pay", `{"amount":10}`, "turn-1")
	a2 := checkIn("pay", `{"amount":20}`, "turn-1")
	checkIn("pay", `{"amount":30}`, "turn-2")
	fin1, oncall := approver("fin1", "finance"), approver("oncall1", "oncall")
	list, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-1", approval.Approve, "ok", "", nil)
	if err != nil || len(list) != 2 || list[0].Status != rein.StatusApproved || list[1].Status != rein.StatusApproved {
		t.Fatalf("batch approve: %v %+v", err, list)
	}
	for _, a := range []*rein.CheckRecord{a1, a2} {
		if rec := f.check(t, "pay", string(a.Check.Args)); rec.Decision != rein.Allow {
			t.Fatalf("a batch-approved action: %s", rec.Decision)
		}
	}
	// turn-3 mixes a payment and a deletion: finance may not vote on the deletion.
	checkIn("pay", `{"amount":40}`, "turn-3")
	del := checkIn("shell.exec", `{"command":"rm -rf ./data"}`, "turn-3")
	if _, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-3", approval.Approve, "", "", nil); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a batch with an action the approver may not approve: %v", err)
	}
	if a, _ := f.store.Approval(ctx, del.Approval.ID); len(a.Votes) != 0 {
		t.Fatalf("a refused batch recorded votes: %+v", a.Votes)
	}
	if _, err := f.p.VoteBatch(ctx, oncall, "other", "turn-2", approval.Approve, "", "", nil); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("another tenant's batch: %v", err)
	}
	if _, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-2", approval.Edit, "", "", nil); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("a batch edit: %v", err)
	}
}

// TestBatchVoteOnlyOnWhatWasSeen: an agent that adds to its turn while a
// person reads it cannot have the addition approved in bulk; nor does a
// vote listing an approval decided meanwhile go through.
func TestBatchVoteOnlyOnWhatWasSeen(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	checkIn := func(args string) *rein.CheckRecord {
		rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(args), Session: "s1", Batch: "turn-9"})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	fin1 := approver("fin1", "finance")
	a1, a2 := checkIn(`{"amount":10}`), checkIn(`{"amount":20}`)
	seen := []string{a1.Approval.ID, a2.Approval.ID}
	sneaked := checkIn(`{"amount":9000}`) // added after the approver looked
	_, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-9", approval.Approve, "", "", seen)
	if rein.ErrorCode(err) != rein.ECodeConflict || !strings.Contains(err.Error(), sneaked.Approval.ID) {
		t.Fatalf("a batch grown since it was seen: %v", err)
	}
	for _, id := range []string{a1.Approval.ID, a2.Approval.ID, sneaked.Approval.ID} {
		if a, _ := f.store.Approval(ctx, id); len(a.Votes) != 0 || a.Status != rein.StatusPending {
			t.Fatalf("a refused batch vote recorded a vote on %s: %+v", id, a)
		}
	}
	// The sneaked one rejected on its own: the batch holds what was seen
	// again... plus nothing else, so the vote goes through.
	if _, err := f.p.VoteGrant(ctx, fin1, sneaked.Approval.ID, approval.Reject, "no", nil, ""); err != nil {
		t.Fatal(err)
	}
	// Listing an approval that is no longer pending is refused too.
	if _, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-9", approval.Approve, "", "", append(seen, sneaked.Approval.ID)); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a vote listing a decided approval: %v", err)
	}
	list, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-9", approval.Approve, "", "", seen)
	if err != nil || len(list) != 2 {
		t.Fatalf("a batch holding exactly what was seen: %v %+v", err, list)
	}
	if rec := f.check(t, "pay", `{"amount":9000}`); rec.Decision == rein.Allow {
		t.Fatal("the sneaked payment was allowed")
	}
}

// TestWaitedAnswerKeepsTheRequestID: a check that waited for its approval
// answers allow as a check of its own, found through the ask's request_id:
// a retry gets that allow back without using the grant again, and a result
// reported by the request_id is for the allowed check (no false anomaly).
func TestWaitedAnswerKeepsTheRequestID(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	fin1 := approver("fin1", "finance")
	long := strings.Repeat("r", rein.MaxRequestIDLen)
	for _, rid := range []string{"claude-code:toolu_1", long} {
		args := fmt.Sprintf(`{"amount":%d}`, 20+len(rid)%7)
		req := func() *rein.CheckRequest {
			return &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(args), Session: "s1", RequestID: rid, WaitMS: 5000}
		}
		go func() {
			for range 100 {
				time.Sleep(20 * time.Millisecond)
				list, _ := f.store.Approvals(ctx, "acme", rein.ApprovalFilter{Status: rein.StatusPending})
				for _, a := range list {
					if string(a.Args) == args {
						f.p.Vote(ctx, fin1, a.ID, approval.Approve, "", nil)
						return
					}
				}
			}
		}()
		allowed, err := f.p.Check(ctx, f.key, req())
		if err != nil || allowed.Decision != rein.Allow {
			t.Fatalf("%.20s: the waited check: %v %+v", rid, err, allowed)
		}
		found, err := f.p.CheckByRequest(ctx, f.key, rid)
		if err != nil || found.ID != allowed.ID {
			t.Fatalf("%.20s: by request_id: %v %+v", rid, err, found)
		}
		retried, err := f.p.Check(ctx, f.key, req())
		if err != nil || retried.ID != allowed.ID || retried.Decision != rein.Allow {
			t.Fatalf("%.20s: a retry: %v %+v", rid, err, retried)
		}
		if err := f.p.Result(ctx, f.key, found.ID, &rein.CheckResult{Status: "succeeded", Args: json.RawMessage(args)}); err != nil {
			t.Fatalf("%.20s: the result: %v", rid, err)
		}
		// The grant was used once: the same action asks again.
		if again := f.check(t, "pay", args); again.Decision != rein.Ask {
			t.Fatalf("%.20s: a once grant used by the retry too: %s", rid, again.Decision)
		}
	}
}

// TestRetriedWaitDecides: a retry of an ask that waits again waits on the
// same approval and, once it is approved, answers allow; retries after that
// get the same allow, and the grant is used once.
func TestRetriedWaitDecides(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	req := func(wait int64) *rein.CheckRequest {
		return &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"amount":33}`), Session: "s1", RequestID: "retry-1", WaitMS: wait}
	}
	ask, err := f.p.Check(ctx, f.key, req(50))
	if err != nil || ask.Decision != rein.Ask {
		t.Fatalf("the first wait: %v %+v", err, ask)
	}
	if again, _ := f.p.Check(ctx, f.key, req(50)); again.Decision != rein.Ask || again.ID != ask.ID {
		t.Fatalf("a retry while pending: %+v", again)
	}
	if _, err := f.p.Vote(ctx, approver("fin1", "finance"), ask.Approval.ID, approval.Approve, "", nil); err != nil {
		t.Fatal(err)
	}
	allowed, err := f.p.Check(ctx, f.key, req(1000))
	if err != nil || allowed.Decision != rein.Allow || allowed.ID == ask.ID {
		t.Fatalf("a retry that waits after the approval: %v %+v", err, allowed)
	}
	for _, wait := range []int64{0, 1000} {
		if again, _ := f.p.Check(ctx, f.key, req(wait)); again.ID != allowed.ID || again.Decision != rein.Allow {
			t.Fatalf("a retry after the allow (wait %d): %+v", wait, again)
		}
	}
	if next := f.check(t, "pay", `{"amount":33}`); next.Decision != rein.Ask {
		t.Fatalf("the once grant was used twice: %s", next.Decision)
	}
}

// TestBatchInjection: the batch name comes from the agent, so another agent
// (or the same agent in another session) claiming a batch name must not get
// its action approved by a bulk vote on someone else's turn.
func TestBatchInjection(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	intruder := stored(t, f, &rein.Key{ID: "key_intruder", Name: "intruder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}})
	fin1 := approver("fin1", "finance")
	for i, c := range []struct {
		name    string
		key     *rein.Key
		session string
	}{
		{"another agent", intruder, "s1"},
		{"another session of the same agent", f.key, "s2"},
	} {
		amount := fmt.Sprintf(`{"amount":%d}`, 10+i)
		batch := "turn-" + c.name
		own, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(amount), Session: "s1", Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		slipped, err := f.p.Check(ctx, c.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"amount":9000}`), Session: c.session, Batch: batch})
		if err != nil || slipped.Approval == nil {
			t.Fatalf("%s: %v %+v", c.name, err, slipped)
		}
		if _, err := f.p.VoteBatch(ctx, fin1, "acme", batch, approval.Approve, "", "", nil); rein.ErrorCode(err) != rein.ECodeConflict {
			t.Fatalf("%s: a mixed batch was voted: %v", c.name, err)
		}
		for _, id := range []string{own.Approval.ID, slipped.Approval.ID} {
			if a, _ := f.store.Approval(ctx, id); a.Status != rein.StatusPending || len(a.Votes) != 0 {
				t.Fatalf("%s: a refused batch changed %s: %s %+v", c.name, id, a.Status, a.Votes)
			}
		}
	}
	// Across tenants: an admin of every tenant voting a batch name another
	// tenant's agent also used gets a conflict, not a vote on both.
	other := stored(t, f, &rein.Key{ID: "key_other", Name: "builder", Tenant: "other", Roles: []rein.Role{rein.RoleAgent}})
	for _, k := range []*rein.Key{f.key, other} {
		if _, err := f.p.Check(ctx, k, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"amount":12}`), Session: "s1", Batch: "shared"}); err != nil {
			t.Fatal(err)
		}
	}
	root := &rein.Key{ID: "key_root", Name: "root", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleAdmin}}
	if _, err := f.p.VoteBatch(ctx, root, rein.AllTenants, "shared", approval.Approve, "", "", nil); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a batch across tenants was voted: %v", err)
	}
}

// escalating is a pipeline whose deploys ask group:oncall, escalating as
// given, on the clock *now.
func escalating(t *testing.T, escalate string, now *time.Time) *fixture {
	f := setup(t, `version: 1
rules:
  - id: deploy
    when: 'tool == "deploy"'
    decision: ask
    approval: {approvers: ["group:oncall"], ttl: 1h, escalate: `+escalate+`}
`)
	stored(t, f, f.key)
	f.p.Now = func() time.Time { return *now }
	return f
}

// TestEscalation: after the rule's delay more people may approve; the
// escalation is announced once in the audit log; expiry stays a timeout.
func TestEscalation(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	f := escalating(t, `[{after: 10m, approvers: ["group:leads"]}]`, &now)
	lead := approver("lead1", "leads")
	ask := f.check(t, "deploy", `{}`)
	if _, err := f.p.Vote(ctx, lead, ask.Approval.ID, approval.Approve, "", nil); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a lead before the escalation: %v", err)
	}
	now = now.Add(11 * time.Minute)
	if err := f.p.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	f.p.Sweep(ctx) // announced once
	if a, _ := f.store.Approval(ctx, ask.Approval.ID); a.Escalated != 1 {
		t.Fatalf("escalated %d", a.Escalated)
	}
	if n := countKind(t, f, rein.KindApprovalEscalated); n != 1 {
		t.Fatalf("%d approval.escalated entries, want 1", n)
	}
	a, err := f.p.Vote(ctx, lead, ask.Approval.ID, approval.Approve, "", nil)
	if err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("a lead after the escalation: %v", err)
	}
	if rec := f.check(t, "deploy", `{}`); rec.Decision != rein.Allow {
		t.Fatalf("the escalated approval's grant: %s %q", rec.Decision, rec.Reason)
	}
}

func countKind(t *testing.T, f *fixture, kind string) int {
	t.Helper()
	n, _, _ := f.store.AuditSize(context.Background())
	es, err := f.store.Entries(context.Background(), 0, int(n))
	if err != nil {
		t.Fatal(err)
	}
	c := 0
	for _, e := range es {
		var m map[string]any
		json.Unmarshal(e.Bytes, &m)
		if m["kind"] == kind {
			c++
		}
	}
	return c
}

// TestReviewsAfterTheFact: a rule's review samples allowed checks
// deterministically; a result flagged as an anomaly and a tainted session
// queue reviews; a reviewer marks them, a concern locks the agent; nobody
// else reviews, and the agent never reviews itself.
func TestReviewsAfterTheFact(t *testing.T) {
	ctx := context.Background()
	f := setup(t, `version: 1
reviews: {tainted_sessions: true, reviewers: ["group:security"]}
tools:
  "web.fetch": {url: [url], taints_session: true}
rules:
  - {id: deploy-log, when: 'tool == "deploy"', decision: allow, review: {reviewers: ["group:security"]}}
  - {id: reads, when: 'tool == "fs.read"', decision: allow, review: {sample: 0.25}}
  - {id: web, when: 'tool == "web.fetch"', decision: allow}
`)
	stored(t, f, f.key)
	sec := approver("sec1", "security")
	admin := &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	dep := f.check(t, "deploy", `{"v":1}`)
	reads := 0
	for i := range 200 {
		if rec := f.check(t, "fs.read", fmt.Sprintf(`{"path":"f%d"}`, i)); sampled(rec.ID, 0.25) {
			reads++
		}
	}
	list, err := f.p.Reviews(ctx, sec, "acme", rein.ReviewFilter{Status: rein.ReviewOpen, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	byRule := map[string]int{}
	for _, r := range list {
		byRule[r.Rule]++
	}
	if byRule["deploy-log"] != 1 || byRule["reads"] != reads || reads < 25 || reads > 75 {
		t.Fatalf("queued %v, want deploy-log 1 and reads %d (a quarter of 200)", byRule, reads)
	}
	var depReview *rein.Review
	for _, r := range list {
		if r.CheckID == dep.ID {
			depReview = r
		}
	}
	// An anomalous result queues a review too.
	f.p.Result(ctx, f.key, dep.ID, &rein.CheckResult{Status: "succeeded", Args: json.RawMessage(`{"v":2}`)})
	// A tainted session queues a session review when it ends.
	f.check(t, "web.fetch", `{"url":"https://example.com"}`)
	f.p.EndSession(ctx, f.key, "acme", "s1")
	list, _ = f.p.Reviews(ctx, sec, "acme", rein.ReviewFilter{Status: rein.ReviewOpen, Limit: 500})
	var anomaly, session bool
	for _, r := range list {
		anomaly = anomaly || r.CheckID == dep.ID && r.Result != nil
		session = session || r.Kind == "session" && r.Session == "s1"
	}
	if !anomaly || !session {
		t.Fatalf("anomaly review %v, session review %v", anomaly, session)
	}
	// Who may decide: the named reviewers or an admin.
	if _, err := f.p.DecideReview(ctx, approver("fin1", "finance"), depReview.ID, ReviewVerdict{Verdict: "ok"}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a reviewer the review does not name: %v", err)
	}
	self := &rein.Key{ID: "key_x", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	if _, err := f.p.DecideReview(ctx, self, depReview.ID, ReviewVerdict{Verdict: "ok"}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("the agent reviewed itself: %v", err)
	}
	if _, err := f.p.DecideReview(ctx, sec, depReview.ID, ReviewVerdict{Verdict: "concern", Lock: "agent"}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a lock by a non-admin reviewer: %v", err)
	}
	r, err := f.p.DecideReview(ctx, admin, depReview.ID, ReviewVerdict{Verdict: "concern", Message: "unexpected deploy", Lock: "agent", Proposal: "ask for deploys"})
	if err != nil || r.Status != rein.ReviewConcern || r.LockID == "" {
		t.Fatalf("concern with a lock: %v %+v", err, r)
	}
	if rec := f.check(t, "deploy", `{"v":3}`); rec.Decision != rein.Deny || !strings.Contains(rec.Reason, "locked") {
		t.Fatalf("after the concern's lock: %s %q", rec.Decision, rec.Reason)
	}
	if _, err := f.p.DecideReview(ctx, sec, depReview.ID, ReviewVerdict{Verdict: "ok"}); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a second verdict: %v", err)
	}
	if n := countKind(t, f, rein.KindReviewDecided); n != 1 {
		t.Fatalf("%d review.decided entries", n)
	}
}

// TestDelegation: an approver away delegates their eligibility for a
// window; the delegate's vote counts as the delegator's (never twice),
// never to an agent identity, never chained, and not after revocation.
func TestDelegation(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	fin1 := stored(t, f, approver("fin1", "finance"))
	fin2 := stored(t, f, approver("fin2", "finance"))
	deputy := stored(t, f, approver("deputy", "ops"))
	other := stored(t, f, approver("other", "ops"))
	until := time.Now().Add(24 * time.Hour)
	if _, err := f.p.Delegate(ctx, fin1, &DelegationRequest{To: "builder", Until: until}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a delegation to the requester: %v", err)
	}
	if _, err := f.p.Delegate(ctx, fin1, &DelegationRequest{From: "fin2", To: "deputy", Until: until}); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("an approver delegating someone else's eligibility: %v", err)
	}
	d, err := f.p.Delegate(ctx, fin1, &DelegationRequest{To: "deputy", Until: until, Reason: "holiday"})
	if err != nil {
		t.Fatal(err)
	}
	// The deputy can pass nothing on: a chain is refused where it is used.
	f.p.Delegate(ctx, deputy, &DelegationRequest{To: "other", Until: until})

	ask := f.check(t, "pay", `{"amount":500}`) // quorum 2, finance
	a, err := f.p.Vote(ctx, deputy, ask.Approval.ID, approval.Approve, "", nil)
	if err != nil || a.Votes[0].OnBehalfOf != "fin1" {
		t.Fatalf("the deputy's vote: %v %+v", err, a)
	}
	if _, err := f.p.Vote(ctx, fin1, ask.Approval.ID, approval.Approve, "", nil); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("the delegator voting again after the deputy: %v", err)
	}
	if _, err := f.p.Vote(ctx, other, ask.Approval.ID, approval.Approve, "", nil); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a chained delegation counted: %v", err)
	}
	if a, err = f.p.Vote(ctx, fin2, ask.Approval.ID, approval.Approve, "", nil); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("second finance vote: %v %s", err, a.Status)
	}
	if rec := f.check(t, "pay", `{"amount":500}`); rec.Decision != rein.Allow {
		t.Fatalf("the grant a delegate helped approve: %s %q", rec.Decision, rec.Reason)
	}
	// Revoked: the deputy is no longer eligible.
	if _, err := f.p.RevokeDelegation(ctx, fin1, d.ID); err != nil {
		t.Fatal(err)
	}
	ask = f.check(t, "pay", `{"amount":600}`)
	if _, err := f.p.Vote(ctx, deputy, ask.Approval.ID, approval.Approve, "", nil); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("a vote on a revoked delegation: %v", err)
	}
}

// TestApprovalNamesItsRules: an approval asked by two rules names each with
// its reason and approvers, and an edit adds the rules that ask for the
// edited action.
func TestApprovalNamesItsRules(t *testing.T) {
	f := setup(t, `version: 1
rules:
  - {id: deploys, when: 'tool == "deploy"', decision: ask, reason: "deploys need on-call", approval: {approvers: ["group:oncall"]}}
  - {id: prod, when: 'tool == "deploy" && args.env.startsWith("prod")', decision: ask, reason: "prod needs a lead", approval: {approvers: ["group:leads"]}}
  - {id: eu, when: 'tool == "deploy" && args.env == "prod-eu"', decision: ask, reason: "EU data", approval: {approvers: ["group:dpo"]}}
`)
	stored(t, f, f.key)
	ask := f.check(t, "deploy", `{"env":"prod"}`)
	a, err := f.store.Approval(context.Background(), ask.Approval.ID)
	if err != nil || len(a.Asks) != 2 || a.Asks[0].Rule != "deploys" || a.Asks[1].Reason != "prod needs a lead" || a.Asks[1].Approvers[0] != "group:leads" {
		t.Fatalf("asks: %v %+v", err, a.Asks)
	}
	if _, err := f.vote(t, approver("lead1", "leads"), a.ID, approval.Edit, `{"env":"prod-eu"}`); err != nil {
		t.Fatal(err)
	}
	a, _ = f.store.Approval(context.Background(), a.ID)
	if len(a.Asks) != 3 || a.Asks[2].Rule != "eu" {
		t.Fatalf("asks after the edit: %+v", a.Asks)
	}
}

// TestAGrantUsedOnceUnderConcurrentChecks: twenty checks of an approved
// once-grant at the same moment: exactly one allow, and every other one an
// answer (ask or deny), never an error the agent could read as "try until
// it passes".
func TestAGrantUsedOnceUnderConcurrentChecks(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	ask := f.check(t, "pay", `{"amount":5}`)
	if _, err := f.p.VoteGrant(ctx, approver("fin1", "finance"), ask.Approval.ID, approval.Approve, "", nil, rein.GrantOnce); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	answers := make(chan rein.Decision, 20)
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"amount":5}`), Session: "s1"})
			if err != nil {
				errs <- err
				return
			}
			answers <- rec.Decision
		}()
	}
	wg.Wait()
	close(answers)
	close(errs)
	for err := range errs {
		t.Errorf("a concurrent check answered an error: %v", err)
	}
	allows := 0
	for d := range answers {
		if d == rein.Allow {
			allows++
		}
	}
	if allows != 1 {
		t.Fatalf("%d allows of a once-grant", allows)
	}
}

// TestArgumentsWithKeysThatDifferOnlyInCase: whatever the entry point, and
// in an approver's edit, two keys that a case-insensitive decoder reads as
// one are refused: rein would judge one and the tool could run the other.
func TestArgumentsWithKeysThatDifferOnlyInCase(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	for _, args := range []string{`{"amount":5,"Amount":5000}`, `{"amount":5,"to":{"iban":"x","IBAN":"y"}}`, `{"amount":5,"amount":6}`} {
		if _, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(args), Session: "s1"}); rein.ErrorCode(err) != rein.ECodeBadRequest {
			t.Errorf("%s: %v, want bad_request", args, err)
		}
	}
	ask := f.check(t, "pay", `{"amount":150}`)
	if _, err := f.vote(t, approver("fin1", "finance"), ask.Approval.ID, approval.Edit, `{"amount":150,"AMOUNT":9000}`); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("an edit with keys differing in case: %v", err)
	}
}

// TestEscalationAmongManyPending: the approval due first escalates however
// many newer ones are pending, and the sweep reads only what is due.
func TestEscalationAmongManyPending(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	f := escalating(t, `[{after: 10m, approvers: ["group:leads"]}, {after: 20m, approvers: ["group:vp"]}]`, &now)
	first := f.check(t, "deploy", `{"n":0}`)
	now = now.Add(time.Minute)
	const newer = 600
	for i := 1; i <= newer; i++ {
		f.check(t, "deploy", fmt.Sprintf(`{"n":%d}`, i))
	}
	cs := &countingApprovals{Store: f.store}
	f.p.Store = cs
	now = now.Add(9*time.Minute + 30*time.Second) // the first is due, the others are not
	if err := f.p.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.store.Approval(ctx, first.Approval.ID); a.Escalated != 1 {
		t.Fatalf("the oldest of %d pending approvals escalated %d times, want 1", newer+1, a.Escalated)
	}
	if n := countKind(t, f, rein.KindApprovalEscalated); n != 1 {
		t.Fatalf("%d approval.escalated entries, want 1", n)
	}
	if cs.read > 1 {
		t.Errorf("the sweep read %d approvals to escalate one", cs.read)
	}
	now = now.Add(time.Minute) // every newer one is due now
	if err := f.p.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countKind(t, f, rein.KindApprovalEscalated); n != newer+1 {
		t.Fatalf("%d approval.escalated entries, want %d", n, newer+1)
	}
	now = now.Add(10 * time.Minute) // the second stage of all
	f.p.Sweep(ctx)
	f.p.Sweep(ctx)
	if a, _ := f.store.Approval(ctx, first.Approval.ID); a.Escalated != 2 {
		t.Fatalf("the first approval's second stage: escalated %d", a.Escalated)
	}
	if n := countKind(t, f, rein.KindApprovalEscalated); n != 2*(newer+1) {
		t.Fatalf("%d approval.escalated entries, want %d", n, 2*(newer+1))
	}
}

// countingApprovals counts the approvals read, through lists or to change
// them.
type countingApprovals struct {
	rein.Store
	read int
}

func (s *countingApprovals) Approvals(ctx context.Context, tenant string, f rein.ApprovalFilter) ([]*rein.Approval, error) {
	list, err := s.Store.Approvals(ctx, tenant, f)
	s.read += len(list)
	return list, err
}

func (s *countingApprovals) ChangeApproval(ctx context.Context, id string, change rein.ApprovalChange) (*rein.Approval, error) {
	s.read++
	return s.Store.ChangeApproval(ctx, id, change)
}

// TestADelegateNeverVotesOnItsDelegatorsRequest: separation of duties
// holds across delegation. A key that asked (an admin running a check)
// and delegated its eligibility to a deputy cannot have that deputy
// approve its request, even when the deputy also holds another approver's
// delegation and votes on that one's behalf.
func TestADelegateNeverVotesOnItsDelegatorsRequest(t *testing.T) {
	ctx := context.Background()
	f := grantsFixture(t)
	lead := stored(t, f, &rein.Key{ID: "key_lead", Name: "lead", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}, Groups: []string{"finance"}})
	fin1 := stored(t, f, approver("fin1", "finance"))
	deputy := stored(t, f, approver("deputy", "ops"))
	until := time.Now().Add(24 * time.Hour)
	if _, err := f.p.Delegate(ctx, fin1, &DelegationRequest{To: "deputy", Until: until}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Delegate(ctx, lead, &DelegationRequest{To: "deputy", Until: until}); err != nil {
		t.Fatal(err)
	}
	rec, err := f.p.Check(ctx, lead, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"amount":50}`), Session: "s1"})
	if err != nil || rec.Approval == nil {
		t.Fatalf("the lead's check: %v %+v", err, rec)
	}
	a, err := f.p.Vote(ctx, deputy, rec.Approval.ID, approval.Approve, "", nil)
	if rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("the lead's deputy approved the lead's own request: %v %+v", err, a)
	}
	// The deputy still votes for fin1 on a request that is not its delegator's.
	ask := f.check(t, "pay", `{"amount":60}`)
	if a, err = f.p.Vote(ctx, deputy, ask.Approval.ID, approval.Approve, "", nil); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("the deputy's vote for fin1: %v %+v", err, a)
	}
}
