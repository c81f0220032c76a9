package rein

import (
	"context"
	"time"
)

// PolicyDoc is one tier of policy as stored: the global policy, or one tenant's.
type PolicyDoc struct {
	Tenant   string    `json:"tenant"` // "" for the global tier
	Version  string    `json:"version"`
	Source   string    `json:"source"`
	LoadedAt time.Time `json:"loaded_at"`
	LoadedBy string    `json:"loaded_by"`
	Origin   string    `json:"origin"` // "file:<path>" or "api"
}

// PolicyStore keeps the policy tiers as activated.
type PolicyStore interface {
	SavePolicy(ctx context.Context, doc *PolicyDoc, e *Entry) error
	Policies(ctx context.Context) ([]*PolicyDoc, error)
}
