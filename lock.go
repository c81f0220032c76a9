package rein

import (
	"context"
	"strings"
	"time"

	"github.com/reinhq/rein/risk"
)

// Lock is a kill switch: while it is active, every check it matches is
// denied before policy runs.
type Lock struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"` // "*": every tenant
	Target    LockTarget `json:"target"`
	Reason    string     `json:"reason"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	RemovedAt *time.Time `json:"removed_at"`
	RemovedBy string     `json:"removed_by,omitempty"`
}

// LockTarget is what a lock stops: every field given must match; none
// given stops the whole tenant.
type LockTarget struct {
	Agent   string `json:"agent,omitempty"`   // the agent and its sub-agents (<agent>/...)
	Session string `json:"session,omitempty"` // one session
	Tool    string `json:"tool,omitempty"`    // a glob as policy reads tool names: '*' matches any run, '/' and '.' included
}

// Active reports whether the lock is in force at now.
func (l *Lock) Active(now time.Time) bool {
	return l.RemovedAt == nil && (l.ExpiresAt == nil || now.Before(*l.ExpiresAt))
}

// Matches reports whether the lock, in force at now, stops an action.
func (l *Lock) Matches(tenant, agent, session, tool string, now time.Time) bool {
	if !l.Active(now) || (l.Tenant != AllTenants && l.Tenant != tenant) {
		return false
	}
	t := l.Target
	if t.Agent != "" && agent != t.Agent && !strings.HasPrefix(agent, t.Agent+"/") {
		return false
	}
	if t.Session != "" && session != t.Session {
		return false
	}
	if t.Tool != "" {
		if !risk.Glob(t.Tool, tool) {
			return false
		}
	}
	return true
}

// Describe names what the lock stops, for reasons and listings.
func (t LockTarget) Describe() string {
	var parts []string
	if t.Agent != "" {
		parts = append(parts, "agent "+t.Agent)
	}
	if t.Session != "" {
		parts = append(parts, "session "+t.Session)
	}
	if t.Tool != "" {
		parts = append(parts, "tool "+t.Tool)
	}
	if len(parts) == 0 {
		return "the whole tenant"
	}
	return strings.Join(parts, ", ")
}

// LockStore keeps locks.
type LockStore interface {
	// CreateLock stores a lock; Locks lists those not removed (any tenant);
	// RemoveLock removes one (ErrNotFound when it is gone already).
	CreateLock(ctx context.Context, l *Lock, entries []*Entry) error
	Lock(ctx context.Context, id string) (*Lock, error)
	Locks(ctx context.Context) ([]*Lock, error)
	RemoveLock(ctx context.Context, id, by string, at time.Time, e *Entry) (*Lock, error)
}
