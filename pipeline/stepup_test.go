package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

const stepUpPolicy = `version: 1
rules:
  - {id: pay, when: 'tool == "pay" && args.amount <= 1000', decision: ask, approval: {approvers: ["group:finance"]}}
  - {id: pay-big, when: 'tool == "pay" && args.amount > 1000', decision: ask, approval: {approvers: ["group:finance"], step_up: true}}
`

// TestStepUpVotes: an approval created by a rule with step_up needs a
// passkey-confirmed vote (the refusal names the console page, where Slack
// and e-mail send people); a confirmed vote counts and is audited as such;
// an edit into what a step-up rule asks for needs it too.
func TestStepUpVotes(t *testing.T) {
	f := setup(t, stepUpPolicy)
	ctx := context.Background()
	carol := &rein.Key{ID: "key_carol", Name: "carol", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}}

	big := f.check(t, "pay", `{"amount":5000}`)
	if big.Approval == nil {
		t.Fatal("big payment: no approval")
	}
	if a, _ := f.store.Approval(ctx, big.Approval.ID); a == nil || !a.StepUp {
		t.Fatalf("big payment's approval does not need step-up: %+v", a)
	}
	_, err := f.p.Vote(ctx, carol, big.Approval.ID, "approve", "", nil)
	if rein.ErrorCode(err) != rein.ECodeForbidden || !strings.Contains(err.Error(), "http://rein/approvals/"+big.Approval.ID) {
		t.Errorf("unconfirmed approve: %v", err)
	}
	a, err := f.p.VoteSteppedUp(ctx, carol, big.Approval.ID, approval.Ballot{Kind: "approve"})
	if err != nil || a.Status != rein.StatusApproved || !a.Votes[0].StepUp {
		t.Fatalf("confirmed approve: %+v %v", a, err)
	}
	es, _ := f.store.Entries(ctx, 0, 100)
	found := false
	for _, e := range es {
		var m map[string]any
		json.Unmarshal(e.Bytes, &m)
		if m["kind"] == rein.KindApprovalVote && m["subject"] == big.Approval.ID {
			found = m["data"].(map[string]any)["step_up"] == "passkey"
		}
	}
	if !found {
		t.Error("the confirmed vote's audit entry does not say step_up: passkey")
	}

	// A small payment needs no step-up, but editing it into a big one does.
	small := f.check(t, "pay", `{"amount":10}`)
	if a, _ := f.store.Approval(ctx, small.Approval.ID); a == nil || a.StepUp {
		t.Fatalf("small payment's approval: %+v", a)
	}
	if _, err := f.p.Vote(ctx, carol, small.Approval.ID, "edit", "", json.RawMessage(`{"amount":9000}`)); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Errorf("unconfirmed edit into a step-up payment: %v", err)
	}
	if _, err := f.p.Vote(ctx, carol, small.Approval.ID, "reject", "no", nil); err != nil {
		t.Errorf("a rejection needs no step-up: %v", err)
	}
}
