package rein

import (
	"context"
	"encoding/json"
	"time"
)

// Proposal statuses and decisions.
const (
	ProposalOpen     = "open"
	ProposalAccepted = "accepted"
	ProposalRejected = "rejected"
)

// Proposal is "always allow" made into policy, through review
// (approvals.md): a change to one policy tier, proposed by an approver from
// an approval, that lets that exact action run without asking. It is never
// applied by itself: an admin of the tier accepts it (the change is then
// pushed like any policy, versioned and audited) or rejects it.
type Proposal struct {
	ID       string          `json:"id"`
	Tenant   string          `json:"tenant"`
	Status   string          `json:"status"` // open, accepted, rejected
	Tier     string          `json:"tier"`   // global or tenant: the tier the change is to
	Approval string          `json:"approval"`
	Agent    string          `json:"agent"` // the agent identity the action is allowed for
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	// Narrowed are the rules that ask for the action today; each keeps
	// asking for everything else. Rule is the new rule that allows it.
	Narrowed []string `json:"narrowed"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
	// BaseVersion is the tier's version the change was made against: a
	// proposal is accepted only onto that version. Candidate is the whole
	// tier as it would be; Diff the change, line by line.
	BaseVersion string    `json:"base_version"`
	Candidate   string    `json:"candidate"`
	Diff        string    `json:"diff"`
	Replay      *Replay   `json:"replay"` // the candidate on the tenant's recorded checks of the last 7 days
	ProposedBy  string    `json:"proposed_by"`
	CreatedAt   time.Time `json:"created_at"`
	// The decision, once made.
	DecidedBy       string     `json:"decided_by,omitempty"`
	DecidedAt       *time.Time `json:"decided_at,omitempty"`
	DecisionMessage string     `json:"decision_message,omitempty"`
	Version         string     `json:"version,omitempty"` // the policy version an accepted proposal made
}

// ProposalChange changes a proposal in place and returns the audit entries
// of the change (none: nothing is written).
type ProposalChange func(p *Proposal) ([]*Entry, error)

// Suggestion is an action approvers keep approving: the same action of the
// same agent approved Approvals times with no rejection, a candidate for a
// proposal (never applied by itself).
type Suggestion struct {
	Tenant    string          `json:"tenant"`
	Agent     string          `json:"agent"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Approvals int             `json:"approvals"`
	Latest    string          `json:"latest_approval"` // propose from this one
	LatestAt  time.Time       `json:"latest_at"`
}

// ProposalStore keeps policy proposals.
type ProposalStore interface {
	// CreateProposal stores a new proposal with its audit entries.
	CreateProposal(ctx context.Context, p *Proposal, entries []*Entry) error
	// Proposal returns one proposal (ErrNotFound).
	Proposal(ctx context.Context, id string) (*Proposal, error)
	// Proposals lists a tenant's proposals (tenant *: every tenant's),
	// newest first; f.Status and f.Agent filter.
	Proposals(ctx context.Context, tenant string, f ListFilter) ([]*Proposal, error)
	// ChangeProposal applies change to a proposal and appends its entries,
	// in one transaction.
	ChangeProposal(ctx context.Context, id string, change ProposalChange) (*Proposal, error)
}
