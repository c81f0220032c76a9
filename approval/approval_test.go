package approval

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func pending(quorum, rejectQuorum int, approvers ...string) *rein.Approval {
	return &rein.Approval{ID: "apr_1", Status: rein.StatusPending, AgentKeyID: "key_agent", Approvers: approvers,
		Quorum: quorum, RejectQuorum: rejectQuorum, GrantTTL: 10 * time.Minute, Votes: []rein.Vote{},
		Args: json.RawMessage(`{"command":"rm -rf ./build"}`), CreatedAt: t0, ExpiresAt: t0.Add(15 * time.Minute)}
}

var (
	alice = Voter{KeyID: "key_alice", Name: "alice", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}}
	bob   = Voter{KeyID: "key_bob", Name: "bob", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall", "finance"}}
	carol = Voter{KeyID: "key_carol", Name: "carol", Roles: []rein.Role{rein.RoleAdmin}}
	agent = Voter{KeyID: "key_agent", Name: "builder", Roles: []rein.Role{rein.RoleAgent, rein.RoleApprover}, Groups: []string{"oncall"}}
)

func TestMatches(t *testing.T) {
	cases := []struct {
		sel  string
		v    Voter
		want bool
	}{
		{"group:oncall", alice, true},
		{"group:finance", alice, false},
		{"user:alice", alice, true},
		{"user:alice", bob, false},
		{"role:approver", alice, true},
		{"role:admin", alice, false},
		{"role:admin", carol, true},
		{"client", alice, false},
		{"client", Voter{KeyID: "client:k1", Name: "client", Client: true}, true},
		{"user:client", Voter{KeyID: "client:k1", Name: "client", Client: true}, false},
		{"role:approver", Voter{KeyID: "client:k1", Name: "client", Roles: []rein.Role{rein.RoleApprover}, Client: true}, false},
		{"group:", alice, false},
		{"oncall", alice, false},
	}
	for _, c := range cases {
		if got := Matches(c.sel, c.v); got != c.want {
			t.Errorf("Matches(%q, %s) = %v", c.sel, c.v.Name, got)
		}
	}
}

// TestVoteTable runs sequences of votes and checks where each one lands.
func TestVoteTable(t *testing.T) {
	type step struct {
		v      Voter
		kind   string
		args   string
		err    error
		status string
	}
	cases := []struct {
		name      string
		approval  *rein.Approval
		steps     []step
		approvals int
	}{
		{"one approval approves", pending(1, 0, "group:oncall"), []step{{alice, Approve, "", nil, rein.StatusApproved}}, 1},
		{"one rejection rejects", pending(2, 0, "group:oncall"), []step{{alice, Reject, "", nil, rein.StatusRejected}}, 0},
		{"quorum 2 needs two voters", pending(2, 0, "group:oncall"), []step{
			{alice, Approve, "", nil, rein.StatusPending},
			{alice, Approve, "", ErrVoted, rein.StatusPending},
			{bob, Approve, "", nil, rein.StatusApproved}}, 2},
		{"reject quorum 2 needs two rejections", pending(3, 2, "group:oncall"), []step{
			{alice, Reject, "", nil, rein.StatusPending},
			{bob, Reject, "", nil, rein.StatusRejected}}, 0},
		{"the asking key never votes", pending(1, 0, "group:oncall"), []step{{agent, Approve, "", ErrSelfVote, rein.StatusPending}}, 0},
		{"a voter outside the selectors", pending(1, 0, "group:finance"), []step{{alice, Approve, "", ErrNotApprover, rein.StatusPending}}, 0},
		{"an admin outside the selectors", pending(1, 0, "group:finance"), []step{{carol, Approve, "", ErrNotApprover, rein.StatusPending}}, 0},
		{"no votes after resolution", pending(1, 0, "role:approver"), []step{
			{alice, Reject, "", nil, rein.StatusRejected},
			{bob, Approve, "", ErrNotPending, rein.StatusRejected}}, 0},
		{"edit approves the edited action", pending(1, 0, "group:oncall"), []step{
			{alice, Edit, `{"command":"rm -rf ./build/tmp"}`, nil, rein.StatusApproved}}, 1},
		{"an edit resets earlier approvals", pending(2, 0, "group:oncall"), []step{
			{alice, Approve, "", nil, rein.StatusPending},
			{bob, Edit, `{"command":"rm -rf ./build/tmp"}`, nil, rein.StatusPending}}, 1},
		{"edit without args", pending(1, 0, "group:oncall"), []step{{alice, Edit, "", ErrBadVote, rein.StatusPending}}, 0},
		{"approve with args", pending(1, 0, "group:oncall"), []step{{alice, Approve, `{"x":1}`, ErrBadVote, rein.StatusPending}}, 0},
		{"unknown vote", pending(1, 0, "group:oncall"), []step{{alice, "maybe", "", ErrBadVote, rein.StatusPending}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.approval
			for i, s := range c.steps {
				var args json.RawMessage
				if s.args != "" {
					args = json.RawMessage(s.args)
				}
				_, err := Vote(a, s.v, s.kind, "", args, t0.Add(time.Minute))
				if !errors.Is(err, s.err) {
					t.Fatalf("step %d: err %v, want %v", i, err, s.err)
				}
				if a.Status != s.status {
					t.Fatalf("step %d: status %s, want %s", i, a.Status, s.status)
				}
			}
			if n := len(a.Counting()); n != c.approvals {
				t.Errorf("approvals %d, want %d", n, c.approvals)
			}
		})
	}
}

func TestApproverSetsMustEachBeSatisfied(t *testing.T) {
	a := pending(2, 0, "group:oncall", "group:finance")
	a.ApproverSets = [][]string{{"group:oncall"}, {"group:finance"}}
	if _, err := Vote(a, alice, Approve, "", nil, t0); err != nil {
		t.Fatal(err)
	}
	other := Voter{KeyID: "key_dave", Name: "dave", Groups: []string{"oncall"}}
	if _, err := Vote(a, other, Approve, "", nil, t0); err != nil || a.Status != rein.StatusPending {
		t.Fatalf("two oncall approvals must not satisfy the finance set: %v %s", err, a.Status)
	}
	c := pending(2, 0, "group:oncall", "group:finance")
	c.ApproverSets = [][]string{{"group:oncall"}, {"group:finance"}}
	Vote(c, alice, Approve, "", nil, t0)
	if tr, _ := Vote(c, bob, Approve, "", nil, t0); c.Status != rein.StatusApproved || tr.Cause != CauseQuorum {
		t.Fatalf("oncall + finance: %s %+v", c.Status, tr)
	}
}

func TestGrantLifecycle(t *testing.T) {
	a := pending(1, 0, "group:oncall")
	now := t0.Add(time.Minute)
	Vote(a, alice, Approve, "ok", nil, now)
	if a.GrantExpiresAt == nil || !a.GrantExpiresAt.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("grant_expires_at %v", a.GrantExpiresAt)
	}
	tr, err := Consume(a, now.Add(time.Minute))
	if err != nil || a.Status != rein.StatusConsumed || tr.To != rein.StatusConsumed || a.ConsumedAt == nil {
		t.Fatalf("consume: %v %s", err, a.Status)
	}
	if _, err := Consume(a, now.Add(2*time.Minute)); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("a second consume: %v", err)
	}
	// A grant not used in time expires instead.
	b := pending(1, 0, "group:oncall")
	Vote(b, alice, Approve, "", nil, now)
	tr, err = Consume(b, now.Add(10*time.Minute))
	if !errors.Is(err, ErrNoGrant) || b.Status != rein.StatusExpired || tr.Cause != CauseGrantTimeout {
		t.Fatalf("late consume: %v %s %+v", err, b.Status, tr)
	}
	// A pending approval cannot be consumed.
	if _, err := Consume(pending(1, 0, "group:oncall"), now); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("consume pending: %v", err)
	}
}

func TestExpiry(t *testing.T) {
	a := pending(1, 0, "group:oncall")
	if tr := Expire(a, t0.Add(14*time.Minute)); tr.Changed() {
		t.Fatalf("expired early: %+v", tr)
	}
	tr := Expire(a, t0.Add(15*time.Minute))
	if a.Status != rein.StatusExpired || tr.Cause != CauseTimeout || a.ResolvedAt == nil {
		t.Fatalf("expiry: %s %+v", a.Status, tr)
	}
	if _, err := Vote(a, alice, Approve, "", nil, t0.Add(16*time.Minute)); !errors.Is(err, ErrNotPending) {
		t.Fatalf("vote after expiry: %v", err)
	}
	// Voting at the deadline is too late even before the sweeper ran.
	b := pending(1, 0, "group:oncall")
	if _, err := Vote(b, alice, Approve, "", nil, b.ExpiresAt); !errors.Is(err, ErrNotPending) {
		t.Fatalf("vote at expires_at: %v", err)
	}
}

// TestTerminalStatesNeverChange drives every operation against every
// terminal state.
func TestTerminalStatesNeverChange(t *testing.T) {
	for _, status := range []string{rein.StatusRejected, rein.StatusExpired, rein.StatusCancelled, rein.StatusInvalidated, rein.StatusConsumed} {
		a := pending(1, 0, "group:oncall")
		a.Status = status
		later := t0.Add(time.Hour)
		grant := later.Add(-time.Hour)
		a.GrantExpiresAt = &grant
		if _, err := Vote(a, alice, Approve, "", nil, t0); !errors.Is(err, ErrNotPending) {
			t.Errorf("%s: vote %v", status, err)
		}
		if _, err := Consume(a, t0); err == nil {
			t.Errorf("%s: consumed", status)
		}
		Expire(a, later)
		Withdraw(a, rein.StatusCancelled, CauseCancelled, later)
		Withdraw(a, rein.StatusInvalidated, CausePolicyChanged, later)
		if a.Status != status || !Terminal(a.Status) {
			t.Errorf("%s changed to %s", status, a.Status)
		}
	}
}

func TestWithdraw(t *testing.T) {
	a := pending(1, 0, "group:oncall")
	if tr := Withdraw(a, rein.StatusCancelled, CauseCancelled, t0); a.Status != rein.StatusCancelled || tr.Cause != CauseCancelled {
		t.Fatalf("cancel: %s", a.Status)
	}
	b := pending(1, 0, "group:oncall")
	Vote(b, alice, Approve, "", nil, t0)
	if Withdraw(b, rein.StatusCancelled, CauseCancelled, t0); b.Status != rein.StatusApproved {
		t.Fatalf("an approved grant is not cancelled, only invalidated: %s", b.Status)
	}
	if tr := Withdraw(b, rein.StatusInvalidated, CauseLocked, t0); b.Status != rein.StatusInvalidated || tr.From != rein.StatusApproved {
		t.Fatalf("invalidate grant: %s %+v", b.Status, tr)
	}
}

// TestClientVote: the MCP client's user counts only where a rule names
// "client", is never the asking key, and votes once.
func TestClientVote(t *testing.T) {
	now := time.Unix(1000, 0)
	agent := &rein.Key{ID: "key_agent", Name: "builder", Roles: []rein.Role{rein.RoleAgent}}
	client := ClientVoter(agent)
	mk := func(sets ...[]string) *rein.Approval {
		return &rein.Approval{Status: rein.StatusPending, AgentKeyID: agent.ID, Approvers: sets[0], ApproverSets: sets,
			Quorum: 1, ExpiresAt: now.Add(time.Hour), GrantTTL: time.Minute}
	}
	a := mk([]string{"client", "group:oncall"})
	if !AsksClient(a) {
		t.Fatal("AsksClient: the rule names client")
	}
	if tr, err := Vote(a, client, Approve, "", nil, now); err != nil || tr.To != rein.StatusApproved {
		t.Fatalf("the client user approves a client rule: %v %+v", err, tr)
	}
	a = mk([]string{"role:approver"})
	if AsksClient(a) {
		t.Fatal("AsksClient on a rule without client")
	}
	if _, err := Vote(a, client, Approve, "", nil, now); !errors.Is(err, ErrNotApprover) {
		t.Fatalf("a client vote where no rule names client: %v", err)
	}
	// Combined sets: the client's approval satisfies its set, not the other.
	a = mk([]string{"client"}, []string{"group:oncall"})
	a.Quorum = 2
	if tr, err := Vote(a, client, Approve, "", nil, now); err != nil || tr.Changed() {
		t.Fatalf("client alone on combined sets: %v %+v", err, tr)
	}
	if _, err := Vote(a, client, Approve, "", nil, now); !errors.Is(err, ErrVoted) {
		t.Fatalf("a second client vote: %v", err)
	}
	oncall := Voter{KeyID: "key_alice", Name: "alice", Groups: []string{"oncall"}}
	if tr, err := Vote(a, oncall, Approve, "", nil, now); err != nil || tr.To != rein.StatusApproved {
		t.Fatalf("client + oncall: %v %+v", err, tr)
	}
	// The asking key itself is still refused.
	a = mk([]string{"client", "role:agent"})
	if _, err := Vote(a, VoterOf(agent), Approve, "", nil, now); !errors.Is(err, ErrSelfVote) {
		t.Fatalf("the asking key votes: %v", err)
	}
	// A client reject rejects.
	a = mk([]string{"client"})
	if tr, err := Vote(a, client, Reject, "no", nil, now); err != nil || tr.To != rein.StatusRejected {
		t.Fatalf("client reject: %v %+v", err, tr)
	}
}

// TestVotesCountPerIdentity: a person whose key was revoked and re-issued
// under the same name is still one voter, and an agent cannot approve its
// own request with an approver key of the same name.
func TestVotesCountPerIdentity(t *testing.T) {
	a := pending(2, 1, "group:oncall")
	a.Agent = "builder/n1"
	if _, err := Vote(a, alice, Approve, "", nil, t0); err != nil {
		t.Fatal(err)
	}
	reissued := alice
	reissued.KeyID = "key_alice_2"
	if _, err := Vote(a, reissued, Approve, "", nil, t0); !errors.Is(err, ErrVoted) {
		t.Fatalf("a re-issued key of the same person voted again: %v", err)
	}
	sameName := Voter{KeyID: "key_other", Name: "builder", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}}
	if _, err := Vote(a, sameName, Approve, "", nil, t0); !errors.Is(err, ErrSelfVote) {
		t.Fatalf("the agent's own identity approved its request: %v", err)
	}
	if a.Status != rein.StatusPending {
		t.Fatalf("quorum 2 met by one person: %s", a.Status)
	}
	// Votes stored before identities counted (two keys of one name) still count once.
	a.Votes = append(a.Votes, rein.Vote{By: "alice", ByKey: "key_alice_2", Groups: []string{"oncall"}, Vote: Approve, At: t0})
	if satisfied(a, t0) {
		t.Fatal("two votes of one identity satisfied a quorum of 2")
	}
}

// TestOnePersonOneVoteWithDelegations: a delegate is one person. Voting in
// their own name and for a delegator, or for two delegators, or once for a
// delegator who then votes in person, never makes two votes that count.
func TestOnePersonOneVoteWithDelegations(t *testing.T) {
	bob := Voter{KeyID: "key_bob", Name: "bob", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}}
	forAlice := Voter{KeyID: "key_bob", Name: "bob", Roles: alice.Roles, Groups: alice.Groups, OnBehalfOf: "alice"}
	forCarol := Voter{KeyID: "key_bob", Name: "bob", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}, OnBehalfOf: "carol"}
	for name, c := range map[string][2]Voter{
		"self, then for a delegator":     {bob, forAlice},
		"for a delegator, then self":     {forAlice, bob},
		"for two delegators":             {forAlice, forCarol},
		"for a delegator, then the same": {forAlice, alice},
	} {
		a := pending(2, 1, "group:oncall")
		if _, err := Vote(a, c[0], Approve, "", nil, t0); err != nil {
			t.Fatalf("%s: first vote: %v", name, err)
		}
		if _, err := Vote(a, c[1], Approve, "", nil, t0); !errors.Is(err, ErrVoted) {
			t.Fatalf("%s: second vote: %v", name, err)
		}
		// Votes stored by an older server still count once per person.
		a.Votes = append(a.Votes, rein.Vote{By: c[1].Name, ByKey: c[1].KeyID, Groups: c[1].Groups, Vote: Approve, OnBehalfOf: c[1].OnBehalfOf, At: t0})
		if satisfied(a, t0) || a.Status != rein.StatusPending {
			t.Fatalf("%s: one person met a quorum of 2", name)
		}
	}
}

// TestRejectionsCountPeople: a person who rejects again after an edit still
// counts once toward the rejection quorum.
func TestRejectionsCountPeople(t *testing.T) {
	a := pending(2, 2, "group:oncall")
	carol := Voter{KeyID: "key_carol", Name: "carol", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}}
	if _, err := Vote(a, alice, Reject, "", nil, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := Vote(a, carol, Edit, "", json.RawMessage(`{"x":1}`), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := Vote(a, alice, Reject, "", nil, t0); err != nil {
		t.Fatal(err)
	}
	if a.Status != rein.StatusPending || rejections(a) != 1 {
		t.Fatalf("one person's two rejections: %s, %d counted", a.Status, rejections(a))
	}
}

// TestRequireMergesAnEditsApprovals: the edited action's approver sets are
// added to the original's and the larger quorum wins; votes cast before the
// edit do not count for it.
func TestRequireMergesAnEditsApprovals(t *testing.T) {
	a := pending(1, 1, "group:finance")
	if _, err := Vote(a, bob, Approve, "", nil, t0); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("baseline: %v %s", err, a.Status)
	}
	a = pending(1, 1, "group:finance")
	Require(a, [][]string{{"group:oncall"}}, 2)
	if a.Quorum != 2 || len(a.ApproverSets) != 2 || len(a.Approvers) != 2 {
		t.Fatalf("merged: quorum %d sets %v approvers %v", a.Quorum, a.ApproverSets, a.Approvers)
	}
	if _, err := Vote(a, bob, Edit, "", json.RawMessage(`{"amount":5000}`), t0); err != nil || a.Status != rein.StatusPending {
		t.Fatalf("one edit met a merged quorum of 2: %v %s", err, a.Status)
	}
	if _, err := Cast(a, alice, Ballot{Kind: Approve, Revision: 2}, t0); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("second approver: %v %s", err, a.Status)
	}
	if !Meets(a, [][]string{{"group:oncall"}}, 2) || Meets(a, [][]string{{"role:admin"}}, 1) || Meets(a, [][]string{{"group:oncall"}}, 3) {
		t.Fatal("Meets does not judge the votes against the requirements given")
	}
}

// EscalateAt is the first time Escalation passes the stages already
// announced, whatever the order the stages are listed in; nil once none is
// left or the approval is no longer pending.
func TestEscalateAtAgreesWithEscalation(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		a := &rein.Approval{Status: rein.StatusPending, CreatedAt: t0}
		for range rng.IntN(4) {
			a.Escalations = append(a.Escalations, rein.Escalation{After: time.Duration(1+rng.IntN(30)) * time.Minute})
		}
		a.Escalated = rng.IntN(len(a.Escalations) + 1)
		at := a.EscalateAt()
		if a.Escalated >= len(a.Escalations) {
			if at != nil {
				t.Fatalf("%+v: no stage left, yet due at %v", a, at)
			}
			continue
		}
		if at == nil {
			t.Fatalf("%+v: a stage is left, yet never due", a)
		}
		if Escalation(a, at.Add(-time.Nanosecond)) > a.Escalated || Escalation(a, *at) <= a.Escalated {
			t.Fatalf("%+v: due at %v, but Escalation gives %d just before and %d then", a, at,
				Escalation(a, at.Add(-time.Nanosecond)), Escalation(a, *at))
		}
		a.Status = rein.StatusApproved
		if a.EscalateAt() != nil {
			t.Fatalf("a resolved approval is due for escalation")
		}
	}
}

// TestVotesBindToTheRevisionTheirVoterSaw: the insider's edit race. Two
// approvals from finance are needed; dave edits the payee; carol's approve
// of the version she was shown (revision 1) must not become the second vote
// for dave's payee. It is refused as stale, with nothing recorded; an
// approve without a revision is refused once the action was edited; an
// approve of the current revision counts; a stale reject always counts.
func TestVotesBindToTheRevisionTheirVoterSaw(t *testing.T) {
	carol := Voter{KeyID: "k_carol", Name: "carol", Groups: []string{"finance"}}
	dave := Voter{KeyID: "k_dave", Name: "dave", Groups: []string{"finance"}}
	erin := Voter{KeyID: "k_erin", Name: "erin", Groups: []string{"finance"}}
	fresh := func() *rein.Approval {
		a := pending(2, 0, "group:finance")
		a.Args = json.RawMessage(`{"amount":50,"to":"acct-a"}`)
		a.Revision, a.ArgsHash = 1, rein.ArgsHash(a.Args)
		return a
	}
	a := fresh()
	if _, err := Cast(a, dave, Ballot{Kind: Edit, Args: json.RawMessage(`{"amount":50,"to":"acct-mallory"}`), Revision: 1}, t0); err != nil {
		t.Fatal(err)
	}
	if a.Revision != 2 || a.ArgsHash != rein.ArgsHash(a.ApprovedArgs) || len(a.Changes) != 1 || a.Changes[0].Path != "to" ||
		a.Votes[0].Revision != 2 {
		t.Fatalf("after the edit: revision %d hash %s changes %+v votes %+v", a.Revision, a.ArgsHash, a.Changes, a.Votes)
	}
	if _, err := Cast(a, carol, Ballot{Kind: Approve, Revision: 1}, t0); !errors.Is(err, ErrStaleRevision) {
		t.Fatalf("carol's approve of revision 1 after the edit: %v", err)
	}
	if _, err := Cast(a, carol, Ballot{Kind: Approve}, t0); !errors.Is(err, ErrNoRevision) {
		t.Fatalf("an approve naming no revision after an edit: %v", err)
	}
	if _, err := Cast(a, carol, Ballot{Kind: Edit, Args: json.RawMessage(`{"amount":50,"to":"acct-a"}`), Revision: 1}, t0); !errors.Is(err, ErrStaleRevision) {
		t.Fatalf("an edit of a stale revision: %v", err)
	}
	if a.Status != rein.StatusPending || len(a.Votes) != 1 {
		t.Fatalf("refused votes changed the approval: %s, %d votes", a.Status, len(a.Votes))
	}
	if _, err := Cast(a, erin, Ballot{Kind: Approve, Revision: 2}, t0); err != nil || a.Status != rein.StatusApproved {
		t.Fatalf("erin's approve of the edited version: %v %s", err, a.Status)
	}

	// A reject of a version no longer current still rejects.
	a = fresh()
	if _, err := Cast(a, dave, Ballot{Kind: Edit, Args: json.RawMessage(`{"amount":50,"to":"acct-mallory"}`), Revision: 1}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := Cast(a, carol, Ballot{Kind: Reject, Revision: 1}, t0); err != nil || a.Status != rein.StatusRejected {
		t.Fatalf("a stale reject: %v %s", err, a.Status)
	}

	// Before any edit, a vote without a revision is the revision shown.
	a = fresh()
	if _, err := Cast(a, carol, Ballot{Kind: Approve}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := Cast(a, erin, Ballot{Kind: Approve, Revision: 2}, t0); !errors.Is(err, ErrStaleRevision) {
		t.Fatalf("a vote naming a revision that does not exist yet: %v", err)
	}
	// An approval made before revisions were numbered is revision 1.
	a = fresh()
	a.Revision = 0
	if _, err := Cast(a, carol, Ballot{Kind: Approve, Revision: 1}, t0); err != nil {
		t.Fatalf("revision 1 of an unnumbered approval: %v", err)
	}
}
