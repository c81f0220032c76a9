package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/events"
)

// Locks: the kill switch. Active locks are held in memory, loaded from the
// store at the first check and after every change, so that the check path
// does not read them from disk; a lock takes effect for every check that
// starts after it is stored.

// lockFor returns the first active lock that stops the action, or nil.
// Before the locks are loaded it loads them; if that fails the check is
// denied (fail closed).
func (p *Pipeline) lockFor(ctx context.Context, tenant, agent, session, tool string, now time.Time) (*rein.Lock, error) {
	list := p.activeLocks.Load()
	if list == nil {
		if err := p.LoadLocks(ctx); err != nil {
			return nil, err
		}
		list = p.activeLocks.Load()
	}
	for _, l := range *list {
		if l.Matches(tenant, agent, session, tool, now) {
			return l, nil
		}
	}
	return nil, nil
}

// LoadLocks reads the active locks from the store.
func (p *Pipeline) LoadLocks(ctx context.Context) error {
	list, err := p.Store.Locks(ctx)
	if err != nil {
		return fmt.Errorf("read locks: %w", err)
	}
	p.activeLocks.Store(&list)
	return nil
}

func lockReason(l *rein.Lock) string {
	return fmt.Sprintf("locked: %s (lock %s on %s)", l.Reason, l.ID, l.Target.Describe())
}

// LockRequest is the body of POST /v1/locks.
type LockRequest struct {
	Target    rein.LockTarget `json:"target"`
	Reason    string          `json:"reason"`
	ExpiresAt *time.Time      `json:"expires_at"`
	Tenant    string          `json:"tenant"` // for admins of tenant "*": a tenant, or "*" for all
}

// CreateLock stores a lock, then invalidates the pending approvals and
// unused grants it matches.
func (p *Pipeline) CreateLock(ctx context.Context, key *rein.Key, req *LockRequest) (*rein.Lock, error) {
	tenant := key.Tenant
	switch {
	case req.Tenant == "" || req.Tenant == key.Tenant:
	case key.Tenant != rein.AllTenants:
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q belongs to tenant %q and cannot lock tenant %q", key.Name, key.Tenant, req.Tenant)
	case req.Tenant != rein.AllTenants && !rein.ValidTenant(req.Tenant):
		return nil, rein.Errorf(rein.ECodeBadRequest, "tenant %q: use a tenant name, or * for every tenant", req.Tenant)
	default:
		tenant = req.Tenant
	}
	req.Reason = strings.TrimSpace(req.Reason)
	if req.Reason == "" {
		return nil, rein.Errorf(rein.ECodeBadRequest, `"reason" is required: say why, e.g. "incident 42: runaway spending"`)
	}
	now := p.now()
	if req.ExpiresAt != nil && !req.ExpiresAt.After(now) {
		return nil, rein.Errorf(rein.ECodeBadRequest, `"expires_at" is in the past; give a later time, or null for a lock until it is removed`)
	}
	l := &rein.Lock{ID: rein.NewID("lck"), Tenant: tenant, Target: req.Target, Reason: req.Reason, CreatedBy: key.Name,
		CreatedAt: now, ExpiresAt: req.ExpiresAt}
	data := map[string]any{"target": l.Target, "reason": l.Reason, "expires_at": nil}
	if l.ExpiresAt != nil {
		data["expires_at"] = l.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	e := &rein.Entry{TS: now, Tenant: tenant, Kind: rein.KindLockCreated, Actor: key.Name, Subject: l.ID, Data: data}
	if err := p.Store.CreateLock(ctx, l, []*rein.Entry{e}); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the lock could not be stored: %v; retry", err)
	}
	if err := p.LoadLocks(ctx); err != nil {
		p.activeLocks.Store(nil) // the next check loads them again, or is denied
	}
	if p.Replicas != nil {
		p.Replicas.LocksChanged()
	}
	p.publish(events.LockUpdated, l.Tenant, l)
	if _, err := p.invalidateLocked(ctx, l); err != nil {
		p.Log.Error("invalidating approvals under a new lock failed; their grants stay blocked by the lock", "lock", l.ID, "err", err)
	}
	return l, nil
}

// invalidateLocked invalidates the pending approvals and unused grants the
// lock matches.
func (p *Pipeline) invalidateLocked(ctx context.Context, l *rein.Lock) (int, error) {
	n := 0
	for _, status := range []string{rein.StatusPending, rein.StatusApproved} {
		before := ""
		for {
			page, err := p.Store.Approvals(ctx, l.Tenant, rein.ApprovalFilter{Status: status, Limit: 200, Before: before})
			if err != nil {
				return n, err
			}
			for _, a := range page {
				if !l.Matches(a.Tenant, a.Agent, a.Session, a.Tool, p.now()) {
					continue
				}
				now := p.now()
				_, err := p.changeApproval(ctx, a.ID, func(x *rein.Approval) ([]*rein.Entry, error) {
					t := approval.Withdraw(x, rein.StatusInvalidated, approval.CauseLocked, now)
					if !t.Changed() {
						return nil, nil
					}
					return []*rein.Entry{transitionEntry(x, t, "rein", now, map[string]any{"lock": l.ID, "reason": l.Reason})}, nil
				})
				if err != nil {
					return n, err
				}
				n++
			}
			if len(page) < 200 {
				break
			}
			before = page[len(page)-1].ID
		}
	}
	return n, nil
}

// Locks lists the locks not removed that the key may see.
func (p *Pipeline) Locks(ctx context.Context, key *rein.Key) ([]*rein.Lock, error) {
	list, err := p.Store.Locks(ctx)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read locks: %v", err)
	}
	out := []*rein.Lock{}
	for _, l := range list {
		if key.Sees(l.Tenant) || l.Tenant == rein.AllTenants {
			out = append(out, l)
		}
	}
	return out, nil
}

// RemoveLock lifts a lock. A lock of another tenant is not found; a lock on
// every tenant ("*") is lifted only by an admin of tenant "*".
func (p *Pipeline) RemoveLock(ctx context.Context, key *rein.Key, id string) (*rein.Lock, error) {
	l, err := p.Store.Lock(ctx, id)
	if errors.Is(err, rein.ErrNotFound) || (err == nil && !key.Sees(l.Tenant) && l.Tenant != rein.AllTenants) {
		return nil, rein.Errorf(rein.ECodeNotFound, "lock %s not found", id)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read lock %s: %v", id, err)
	}
	if l.Tenant == rein.AllTenants && key.Tenant != rein.AllTenants {
		return nil, rein.Errorf(rein.ECodeForbidden, "lock %s stops every tenant; only an admin of tenant * can lift it", id)
	}
	now := p.now()
	e := &rein.Entry{TS: now, Tenant: l.Tenant, Kind: rein.KindLockRemoved, Actor: key.Name, Subject: l.ID,
		Data: map[string]any{"target": l.Target, "reason": l.Reason}}
	removed, err := p.Store.RemoveLock(ctx, id, key.Name, now, e)
	if errors.Is(err, rein.ErrNotFound) {
		return nil, rein.Errorf(rein.ECodeNotFound, "lock %s is already removed", id)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the lock could not be removed: %v; retry", err)
	}
	if err := p.LoadLocks(ctx); err != nil {
		p.activeLocks.Store(nil)
	}
	if p.Replicas != nil {
		p.Replicas.LocksChanged()
	}
	p.publish(events.LockUpdated, removed.Tenant, removed)
	return removed, nil
}
