package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

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
