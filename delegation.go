package rein

import (
	"context"
	"time"
)

// Delegation lets one approver's eligibility be used by another identity for
// a window (out of office): the delegate votes on the delegator's behalf,
// counted as the delegator (approvals.md). Delegations do not chain: a
// delegate cannot pass on what was delegated to them.
type Delegation struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	From      string     `json:"from"` // the delegator's identity (key name)
	To        string     `json:"to"`   // the delegate's identity (key name)
	StartsAt  time.Time  `json:"starts_at"`
	Until     time.Time  `json:"until"`
	Reason    string     `json:"reason"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	RevokedBy string     `json:"revoked_by,omitempty"`
}

// Active reports whether the delegation applies at now.
func (d *Delegation) Active(now time.Time) bool {
	return d.RevokedAt == nil && !now.Before(d.StartsAt) && now.Before(d.Until)
}

// DelegationStore keeps delegations.
type DelegationStore interface {
	// CreateDelegation stores a delegation with its audit entries.
	CreateDelegation(ctx context.Context, d *Delegation, entries []*Entry) error
	// Delegations lists a tenant's delegations (tenant *: every tenant's),
	// revoked and expired ones included, newest first.
	Delegations(ctx context.Context, tenant string) ([]*Delegation, error)
	// RevokeDelegation ends a delegation (ErrNotFound, or a conflict when it
	// was revoked already) and appends e.
	RevokeDelegation(ctx context.Context, id, by string, at time.Time, e *Entry) (*Delegation, error)
}
