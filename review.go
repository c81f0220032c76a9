package rein

import (
	"context"
	"encoding/json"
	"time"
)

// Review statuses and verdicts.
const (
	ReviewOpen    = "open"
	ReviewOK      = "ok"
	ReviewConcern = "concern"
)

// Review is a request for people to look at what already happened: an
// allowed check (sampled, or every one of a rule), a check whose result
// failed or looked wrong, or a whole session (reviews.md). It is durable,
// tenant-scoped and audited; a reviewer marks it ok or concern.
type Review struct {
	ID        string          `json:"id"`
	Tenant    string          `json:"tenant"`
	Status    string          `json:"status"` // open, ok, concern
	Kind      string          `json:"kind"`   // check or session
	CheckID   string          `json:"check_id,omitempty"`
	Session   string          `json:"session,omitempty"`
	Agent     string          `json:"agent"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Risk      []string        `json:"risk"`
	Rule      string          `json:"rule,omitempty"`
	Why       []string        `json:"why"`       // what queued it: "rule deploy-log (every allowed check)", "result failed", ...
	Reviewers []string        `json:"reviewers"` // selectors, as approvers
	Result    *CheckResult    `json:"result,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	// The verdict, once given.
	Message   string     `json:"message,omitempty"`
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	LockID    string     `json:"lock_id,omitempty"`  // a lock made with a concern
	Proposal  string     `json:"proposal,omitempty"` // a tighter policy proposed with a concern
}

// Decide records a verdict on an open review.
func (r *Review) Decide(verdict, message, by string, at time.Time) error {
	if r.Status != ReviewOpen {
		return Errorf(ECodeConflict, "review %s was already marked %s by %s", r.ID, r.Status, r.DecidedBy)
	}
	if verdict != ReviewOK && verdict != ReviewConcern {
		return Errorf(ECodeBadRequest, `"verdict" is "ok" or "concern"`)
	}
	r.Status, r.Message, r.DecidedBy, r.DecidedAt = verdict, message, by, &at
	return nil
}

// ReviewFilter selects reviews for a list; zero fields do not filter.
type ReviewFilter struct {
	Status string
	Agent  string
	Limit  int
	Before string // cursor: the id of the last item of the previous page
}

// ReviewChange changes a review in place and returns the audit entries of
// the change (none: nothing is written).
type ReviewChange func(r *Review) ([]*Entry, error)

// ReviewStore keeps reviews after the fact; RecordCheck (CheckStore) may
// create one with its check.
type ReviewStore interface {
	// CreateReview stores a new review with its audit entries.
	CreateReview(ctx context.Context, r *Review, entries []*Entry) error
	// Review returns one review (ErrNotFound).
	Review(ctx context.Context, id string) (*Review, error)
	// Reviews lists a tenant's reviews (tenant * : every tenant's), newest first.
	Reviews(ctx context.Context, tenant string, f ReviewFilter) ([]*Review, error)
	// ChangeReview applies change to a review and appends its entries, in one
	// transaction.
	ChangeReview(ctx context.Context, id string, change ReviewChange) (*Review, error)
}
