package policy

import (
	"sync"
	"sync/atomic"
)

// Active holds the live policy tiers of a deployment and hands out the Set
// for each tenant. Reads are lock-free; a change swaps in a new snapshot, so
// a check in flight keeps the version it started with.
type Active struct {
	mu   sync.Mutex // serialises writers
	snap atomic.Pointer[snapshot]
}

type snapshot struct {
	global  *Policy
	tenants map[string]*Policy
	sets    sync.Map // tenant -> *Set, built on first use
}

func (a *Active) load() *snapshot {
	if s := a.snap.Load(); s != nil {
		return s
	}
	return &snapshot{tenants: map[string]*Policy{}}
}

// For returns the set deciding checks of tenant, or nil if no tier applies.
func (a *Active) For(tenant string) *Set {
	s := a.load()
	if v, ok := s.sets.Load(tenant); ok {
		return v.(*Set)
	}
	set := NewSet(s.global, s.tenants[tenant])
	if set != nil {
		s.sets.Store(tenant, set)
	}
	return set
}

// Tier returns the policy of one tier: tenant "" is the global tier.
func (a *Active) Tier(tenant string) *Policy {
	s := a.load()
	if tenant == "" {
		return s.global
	}
	return s.tenants[tenant]
}

// Tenants lists the tenants that have a tier of their own.
func (a *Active) Tenants() []string {
	s := a.load()
	out := make([]string, 0, len(s.tenants))
	for t := range s.tenants {
		out = append(out, t)
	}
	return out
}

// Set activates p as a tier (tenant "" is the global tier); nil removes a tenant tier.
func (a *Active) Set(tenant string, p *Policy) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.load()
	next := &snapshot{global: old.global, tenants: make(map[string]*Policy, len(old.tenants)+1)}
	for t, tp := range old.tenants {
		next.tenants[t] = tp
	}
	switch {
	case tenant == "":
		next.global = p
	case p == nil:
		delete(next.tenants, tenant)
	default:
		next.tenants[tenant] = p
	}
	a.snap.Store(next)
}
