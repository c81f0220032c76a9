package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// TestAStaleApproveNeverCompletesAQuorum is the insider's edit race: two
// finance approvals are needed for a payment; dave edits the payee; carol
// approves the version she was shown. Her vote is refused as stale with
// the current approval as the error's details, nothing is recorded, and the
// payment stays pending until someone approves the edited version. Every
// vote's audit entry names the revision it was cast on.
func TestAStaleApproveNeverCompletesAQuorum(t *testing.T) {
	f := grantsFixture(t)
	ctx := context.Background()
	carol, dave, erin := stored(t, f, approver("carol", "finance")), stored(t, f, approver("dave", "finance")), stored(t, f, approver("erin", "finance"))
	ask := f.check(t, "pay", `{"amount":250,"to":"acct-a"}`)
	id := ask.Approval.ID
	shown, _ := f.p.Approval(ctx, carol, id) // what carol has in front of her
	if shown.Revision != 1 || shown.ArgsHash != rein.ArgsHash(json.RawMessage(`{"amount":250,"to":"acct-a"}`)) {
		t.Fatalf("a new approval: revision %d hash %s", shown.Revision, shown.ArgsHash)
	}

	edited, err := f.p.Cast(ctx, dave, id, approval.Ballot{Kind: approval.Edit, Args: json.RawMessage(`{"amount":250,"to":"acct-mallory"}`), Revision: 1})
	if err != nil || edited.Revision != 2 || len(edited.Changes) != 1 || string(edited.Changes[0].To) != `"acct-mallory"` {
		t.Fatalf("dave's edit: %v %+v", err, edited)
	}

	_, err = f.p.Cast(ctx, carol, id, approval.Ballot{Kind: approval.Approve, Revision: shown.Revision})
	var e *rein.Error
	if !errors.As(err, &e) || e.Code != rein.ECodeStaleRevision {
		t.Fatalf("carol's approve of revision 1: %v", err)
	}
	if cur, ok := e.Details.(*rein.Approval); !ok || cur.Revision != 2 || string(cur.ApprovedArgs) != `{"amount":250,"to":"acct-mallory"}` {
		t.Fatalf("the stale vote's details: %#v", e.Details)
	}
	if _, err := f.p.Cast(ctx, carol, id, approval.Ballot{Kind: approval.Approve}); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("an approve naming no revision after an edit: %v", err)
	}
	if _, err := f.p.Vote(ctx, carol, id, approval.Approve, "", nil); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("Vote (no revision) after an edit: %v", err)
	}
	a, _ := f.p.Approval(ctx, carol, id)
	if a.Status != rein.StatusPending || len(a.Votes) != 1 {
		t.Fatalf("after refused votes: %s with %d votes", a.Status, len(a.Votes))
	}

	// erin approves what she was shown: the edited version.
	a, err = f.p.Cast(ctx, erin, id, approval.Ballot{Kind: approval.Approve, Revision: 2})
	if err != nil || a.Status != rein.StatusApproved || a.Votes[1].Revision != 2 {
		t.Fatalf("erin's approve of revision 2: %v %+v", err, a)
	}
	revs := map[string]float64{}
	for i := int64(0); ; i++ {
		es, err := f.store.Entries(ctx, i, 100)
		if err != nil || len(es) == 0 {
			break
		}
		for _, en := range es {
			var m struct {
				Kind  string
				Actor string
				Data  map[string]any
			}
			json.Unmarshal(en.Bytes, &m)
			if m.Kind == rein.KindApprovalVote {
				revs[m.Actor], _ = m.Data["revision"].(float64)
			}
		}
		i += int64(len(es)) - 1
	}
	if revs["dave"] != 2 || revs["erin"] != 2 || len(revs) != 2 {
		t.Fatalf("the votes' audit entries: revisions %v", revs)
	}
}

// TestAStaleRejectCounts: refusing is safe whatever the voter saw.
func TestAStaleRejectCounts(t *testing.T) {
	f := grantsFixture(t)
	ctx := context.Background()
	carol, dave := stored(t, f, approver("carol", "finance")), stored(t, f, approver("dave", "finance"))
	ask := f.check(t, "pay", `{"amount":250,"to":"acct-a"}`)
	if _, err := f.p.Cast(ctx, dave, ask.Approval.ID, approval.Ballot{Kind: approval.Edit, Args: json.RawMessage(`{"amount":250,"to":"acct-b"}`), Revision: 1}); err != nil {
		t.Fatal(err)
	}
	a, err := f.p.Cast(ctx, carol, ask.Approval.ID, approval.Ballot{Kind: approval.Reject, Revision: 1})
	if err != nil || a.Status != rein.StatusRejected {
		t.Fatalf("a stale reject: %v %s", err, a.Status)
	}
}

// TestABatchVoteNamesEditedRevisions: a batch approve covers an edited
// approval only when the voter's list names its current revision; else
// nothing of the batch is recorded.
func TestABatchVoteNamesEditedRevisions(t *testing.T) {
	f := grantsFixture(t)
	ctx := context.Background()
	fin1, fin2 := stored(t, f, approver("fin1", "finance")), stored(t, f, approver("fin2", "finance"))
	var ids []string
	for _, args := range []string{`{"amount":300,"to":"a"}`, `{"amount":400,"to":"b"}`} { // two approvals each
		rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(args), Session: "s1", Batch: "turn-9"})
		if err != nil || rec.Approval == nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Approval.ID)
	}
	if _, err := f.p.Cast(ctx, fin2, ids[1], approval.Ballot{Kind: approval.Edit, Args: json.RawMessage(`{"amount":400,"to":"mallory"}`), Revision: 1}); err != nil {
		t.Fatal(err)
	}
	for _, seen := range [][]string{nil, {ids[0], ids[1]}, {ids[0], ids[1] + "@1"}} {
		if _, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-9", approval.Approve, "", "", seen); rein.ErrorCode(err) != rein.ECodeConflict {
			t.Fatalf("a batch approve seeing %v, with %s edited: %v", seen, ids[1], err)
		}
	}
	if _, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-9", approval.Approve, "", "", []string{ids[0], ids[1] + "@x"}); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("a malformed seen revision: %v", err)
	}
	for _, id := range ids {
		if a, _ := f.p.Approval(ctx, fin1, id); len(a.Votes) != map[string]int{ids[0]: 0, ids[1]: 1}[id] {
			t.Fatalf("refused batch votes recorded something on %s: %+v", id, a.Votes)
		}
	}
	list, err := f.p.VoteBatch(ctx, fin1, "acme", "turn-9", approval.Approve, "", "", []string{ids[0], ids[1] + "@2"})
	if err != nil || len(list) != 2 || list[0].Status != rein.StatusPending || list[1].Status != rein.StatusApproved {
		t.Fatalf("the batch approve naming revision 2: %v %+v", err, list)
	}
}
