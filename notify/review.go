package notify

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// ReviewChannel is a channel that also brings reviews after the fact to
// their reviewers (reviews.md). A review is not decided in the channel: it
// shows what was reviewed and sends the reviewer to the console or to
// `rein review ID --ok|--concern`.
type ReviewChannel interface {
	AnnounceReview(ctx context.Context, r *rein.Review, targets []string) error
	// UpdateReview shows the verdict where the review was announced.
	UpdateReview(ctx context.Context, r *rein.Review) error
	DigestReviews(ctx context.Context, open []*rein.Review, targets []string) error
}

// Reviews is the part of the store that lists reviews.
type Reviews interface {
	Reviews(ctx context.Context, tenant string, f rein.ReviewFilter) ([]*rein.Review, error)
}

// Reviewer reports whether key may mark rv: one of the review's reviewers'
// selectors names it, it can read reviews, and it is not the agent whose
// actions are reviewed. Admins may mark any review, but only the people the
// review names are written to. The pipeline decides the verdict itself;
// this only chooses whom to notify.
func Reviewer(rv *rein.Review, key *rein.Key) bool {
	if !key.Sees(rv.Tenant) || !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) {
		return false
	}
	if approval.AgentIdentity(rv.Agent) == key.Name {
		return false
	}
	v := approval.VoterOf(key)
	return slices.ContainsFunc(rv.Reviewers, func(s string) bool { return approval.Matches(s, v) })
}

// ReviewPage is the console page a review notification links to: the
// review's own page, with what was allowed, the session's timeline and the
// verdict controls.
func ReviewPage(base string, rv *rein.Review) string {
	return strings.TrimRight(base, "/") + "/reviews/" + url.PathEscape(rv.ID)
}

// ReviewSubject says in a few words what a review is about.
func ReviewSubject(rv *rein.Review) string {
	if rv.Kind == "session" {
		return "session " + Visible(rv.Session) + " of " + Visible(rv.Agent)
	}
	return Visible(rv.Agent) + " ran " + Visible(rv.Tool)
}

// OpenReviews returns the reviews still open.
func OpenReviews(list []*rein.Review) []*rein.Review {
	var out []*rein.Review
	for _, r := range list {
		if r.Status == rein.ReviewOpen {
			out = append(out, r)
		}
	}
	return out
}
