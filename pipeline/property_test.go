package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// The policies the randomized test switches between: the grants policy, one
// that denies large payments, one that asks for three approvals.
var propertyPolicies = []string{
	grantsPolicy,
	strings.Replace(grantsPolicy, "args.amount > 100000", "args.amount >= 500", 1),
	strings.Replace(grantsPolicy, `approvers: ["group:finance"]}}`, `approvers: ["group:finance"], quorum: 3}}`, 1),
}

// TestGrantInvariantsUnderRandomSequences drives random sequences of checks,
// waits, votes, edits, locks, policy pushes and key revocations, and asserts
// after every allow: it used a grant that no other allow used; it runs
// exactly the approved arguments (the edit when there was one); the policy in
// force does not deny what runs and the votes meet what it asks for; no lock
// stopped the agent; the key that got it was not revoked.
func TestGrantInvariantsUnderRandomSequences(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	allows, wait := 0, 0
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			a, w := runRandomSequence(t, uint64(seed))
			allows, wait = allows+a, wait+w
		})
	}
	// The sequences must reach the cases the invariants are about.
	if allows < seeds/2 || wait == 0 {
		t.Fatalf("the random sequences reached %d allows (%d through a wait) in %d runs; the generator no longer exercises grants", allows, wait, seeds)
	}
	t.Logf("%d allows checked, %d of them through a wait", allows, wait)
}

func runRandomSequence(t *testing.T, seed uint64) (allows, viaWait int) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 7))
	f := grantsFixture(t)
	approvers := []*rein.Key{
		stored(t, f, approver("fin1", "finance")), stored(t, f, approver("fin2", "finance")),
		stored(t, f, approver("fin3", "finance")), stored(t, f, approver("oncall1", "oncall")),
	}
	admin := stored(t, f, &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}})
	amounts := []int{10, 150, 500}
	policyNow := 0
	var lockID string
	used := map[string]string{} // approval id -> the check that used its grant
	keyN := 0
	var log []string

	randomArgs := func() string {
		to := "a"
		if r.IntN(4) == 0 {
			to = "b"
		}
		return fmt.Sprintf(`{"amount":%d,"to":"%s"}`, amounts[r.IntN(len(amounts))], to)
	}
	listed := func(status string) []*rein.Approval {
		list, err := f.store.Approvals(ctx, "acme", rein.ApprovalFilter{Status: status, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	pending := func() []*rein.Approval { return listed(rein.StatusPending) }
	// verify is called for every allow (rec from a check, or the wait's check).
	verify := func(how string, rec *rein.CheckRecord) {
		t.Helper()
		fail := func(format string, args ...any) {
			t.Fatalf("seed %d, %s: %s\nsteps:\n  %s", seed, how, fmt.Sprintf(format, args...), strings.Join(log, "\n  "))
		}
		if rec.Approval == nil {
			fail("an allow of a payment without an approval: %+v", rec)
		}
		if prev, ok := used[rec.Approval.ID]; ok {
			fail("grant %s used twice: by %s and %s", rec.Approval.ID, prev, rec.ID)
		}
		used[rec.Approval.ID] = rec.ID
		a, err := f.store.Approval(ctx, rec.Approval.ID)
		if err != nil || a.Status != rein.StatusConsumed {
			fail("the used approval is %v (%v), not consumed", a.Status, err)
		}
		want := a.Args
		if len(a.ApprovedArgs) > 0 {
			want = a.ApprovedArgs
		}
		if string(rec.Args) != string(want) {
			fail("ran %s, approved %s", rec.Args, want)
		}
		set := f.p.Policies.For("acme")
		for _, args := range []json.RawMessage{a.Args, rec.Args} {
			sim, err := Simulate(set, "acme", &rein.CheckRequest{Tool: "pay", Args: args, Agent: a.Agent, Session: a.Session}, nil, f.p.now())
			if err != nil || sim.Decision == rein.Deny {
				fail("the policy in force denies %s: %v %v", args, sim.Reason, err)
			}
			if sim.Approval != nil {
				sets, q := simNeeds(sim.Approval)
				if !approval.Meets(a, sets, q) {
					fail("the votes %v do not meet %v quorum %d for %s", a.Votes, sets, q, args)
				}
			}
		}
		if lockID != "" {
			fail("allowed while lock %s stops the agent", lockID)
		}
		allows++
		if k, err := f.store.KeyByID(ctx, rec.KeyID); err != nil || k.RevokedAt != nil {
			fail("allowed to a revoked key %s", rec.KeyID)
		}
	}

	for step := range 60 {
		switch op := r.IntN(13); op {
		case 0, 1, 9: // the agent checks (asks, or re-submits)
			args := randomArgs()
			log = append(log, fmt.Sprintf("%d check %s", step, args))
			rec := f.check(t, "pay", args)
			if rec.Decision.Allows() {
				verify("check "+args, rec)
			}
		case 2, 3, 10, 11: // an approver votes approve or reject
			list := pending()
			if len(list) == 0 {
				continue
			}
			a, k := list[r.IntN(len(list))], approvers[r.IntN(len(approvers))]
			kind := approval.Approve
			if r.IntN(4) == 0 {
				kind = approval.Reject
			}
			_, err := f.vote(t, k, a.ID, kind, "")
			log = append(log, fmt.Sprintf("%d %s %s %s: %v", step, k.Name, kind, a.ID, err))
		case 4: // an approver edits
			list := pending()
			if len(list) == 0 {
				continue
			}
			a, k := list[r.IntN(len(list))], approvers[r.IntN(len(approvers))]
			args := randomArgs()
			_, err := f.vote(t, k, a.ID, approval.Edit, args)
			log = append(log, fmt.Sprintf("%d %s edits %s into %s: %v", step, k.Name, a.ID, args, err))
		case 5, 12: // the agent waits on an approval (with its key, or from a console session)
			list := append(listed(rein.StatusApproved), pending()...)
			if len(list) == 0 {
				continue
			}
			a := list[r.IntN(len(list))]
			bearer := r.IntN(4) != 0
			w, err := f.p.Wait(ctx, f.key, a.ID, time.Millisecond, bearer)
			if err != nil {
				log = append(log, fmt.Sprintf("%d wait %s: %v", step, a.ID, err))
				continue
			}
			log = append(log, fmt.Sprintf("%d wait %s (bearer %v): %s %s", step, a.ID, bearer, w.Decision, w.Reason))
			if w.Decision == rein.Allow {
				if !bearer {
					t.Fatalf("seed %d: a console session used a grant", seed)
				}
				rec, err := f.store.CheckByID(ctx, w.CheckID)
				if err != nil {
					t.Fatalf("seed %d: the wait's allow has no check: %v", seed, err)
				}
				if string(rec.Args) != string(w.RunArgs) {
					t.Fatalf("seed %d: the wait answers %s, its check ran %s", seed, w.RunArgs, rec.Args)
				}
				verify("wait "+a.ID, rec)
				viaWait++
			}
		case 6: // a lock stops the agent for a while: checks and waits meanwhile allow nothing
			l, err := f.p.CreateLock(ctx, admin, &LockRequest{Target: rein.LockTarget{Agent: "builder"}, Reason: "random"})
			if err != nil {
				t.Fatal(err)
			}
			lockID = l.ID
			args := randomArgs()
			if rec := f.check(t, "pay", args); rec.Decision.Allows() {
				verify("check under a lock "+args, rec) // fails: allowed while locked
			}
			for _, a := range pending() {
				if w, err := f.p.Wait(ctx, f.key, a.ID, time.Millisecond, true); err == nil && w.Decision == rein.Allow {
					t.Fatalf("seed %d: a wait under lock %s allowed %s", seed, lockID, a.ID)
				}
			}
			if _, err := f.p.RemoveLock(ctx, admin, lockID); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("%d lock %s held for a check of %s and waits, then removed", step, lockID, args))
			lockID = ""
		case 7: // push another policy (recheck may or may not have run)
			policyNow = r.IntN(len(propertyPolicies))
			f.p.Policies.Set("", mustCompile(t, propertyPolicies[policyNow]))
			if r.IntN(2) == 0 {
				if _, err := f.p.Recheck(ctx); err != nil {
					t.Fatal(err)
				}
			}
			log = append(log, fmt.Sprintf("%d policy %d", step, policyNow))
		case 8: // revoke the agent's key and re-issue it under the same name
			if err := f.store.RevokeKey(ctx, f.key.ID, time.Now(), nil); err != nil {
				t.Fatal(err)
			}
			keyN++
			f.key = stored(t, f, &rein.Key{ID: fmt.Sprintf("key_builder_%d", keyN), Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}})
			log = append(log, fmt.Sprintf("%d key re-issued: %s", step, f.key.ID))
		}
	}
	return allows, viaWait
}
