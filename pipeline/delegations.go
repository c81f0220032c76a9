package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// MaxDelegation bounds how long a delegation may last.
const MaxDelegation = 30 * 24 * time.Hour

// DelegationRequest is the body of POST /v1/delegations.
type DelegationRequest struct {
	From     string     `json:"from"` // the delegator; default the key itself (admins may name another)
	To       string     `json:"to"`
	StartsAt *time.Time `json:"starts_at"`
	Until    time.Time  `json:"until"`
	Reason   string     `json:"reason"`
}

// Delegate lets identity To vote with From's eligibility until Until: an
// approver delegates their own eligibility, an admin anyone's in its tenant.
// Never to an agent identity (the requesters), never to oneself; audited.
func (p *Pipeline) Delegate(ctx context.Context, key *rein.Key, req *DelegationRequest) (*rein.Delegation, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; delegating needs the approver or admin role", key.Name, key.Roles)
	}
	if key.Tenant == rein.AllTenants {
		return nil, rein.Errorf(rein.ECodeBadRequest, "delegations belong to one tenant; use a key of that tenant")
	}
	from := req.From
	if from == "" {
		from = key.Name
	}
	if from != key.Name && !key.Has(rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "an approver delegates only their own eligibility")
	}
	now := p.now()
	start := now
	if req.StartsAt != nil {
		start = *req.StartsAt
	}
	switch {
	case req.To == "" || req.To == from:
		return nil, rein.Errorf(rein.ECodeBadRequest, `"to" names another identity (a key name of the tenant)`)
	case !req.Until.After(start) || req.Until.Sub(start) > MaxDelegation:
		return nil, rein.Errorf(rein.ECodeBadRequest, `"until" must be after the start and at most 30 days later`)
	}
	keys, err := p.Store.Keys(ctx, key.Tenant)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read keys: %v", err)
	}
	found := false
	for _, k := range keys {
		if k.RevokedAt != nil || k.Name != req.To {
			continue
		}
		found = true
		if k.Has(rein.RoleAgent) {
			return nil, rein.Errorf(rein.ECodeForbidden, "%q is an agent identity: approvals are never delegated to a requester", req.To)
		}
	}
	if !found {
		return nil, rein.Errorf(rein.ECodeNotFound, "no active key named %q in tenant %q", req.To, key.Tenant)
	}
	d := &rein.Delegation{ID: rein.NewID("dlg"), Tenant: key.Tenant, From: from, To: req.To, StartsAt: start, Until: req.Until,
		Reason: req.Reason, CreatedBy: key.Name, CreatedAt: now}
	e := &rein.Entry{TS: now, Tenant: d.Tenant, Kind: rein.KindDelegationCreated, Actor: key.Name, Subject: d.ID,
		Data: map[string]any{"from": d.From, "to": d.To, "starts_at": start.UTC().Format(time.RFC3339), "until": d.Until.UTC().Format(time.RFC3339), "reason": d.Reason}}
	if err := p.Store.CreateDelegation(ctx, d, []*rein.Entry{e}); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the delegation could not be stored: %v", err)
	}
	return d, nil
}

// Delegations lists the tenant's delegations.
func (p *Pipeline) Delegations(ctx context.Context, key *rein.Key, tenant string) ([]*rein.Delegation, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q may not list delegations", key.Name)
	}
	return p.Store.Delegations(ctx, tenant)
}

// RevokeDelegation ends a delegation: its delegator, its creator or an admin.
func (p *Pipeline) RevokeDelegation(ctx context.Context, key *rein.Key, id string) (*rein.Delegation, error) {
	list, err := p.Store.Delegations(ctx, key.Tenant)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read delegations: %v", err)
	}
	var d *rein.Delegation
	for _, x := range list {
		if x.ID == id {
			d = x
		}
	}
	if d == nil || !key.Has(rein.RoleAdmin) && key.Name != d.From && key.Name != d.CreatedBy {
		return nil, rein.Errorf(rein.ECodeNotFound, "delegation %s not found", id)
	}
	now := p.now()
	out, err := p.Store.RevokeDelegation(ctx, id, key.Name, now, &rein.Entry{TS: now, Tenant: d.Tenant, Kind: rein.KindDelegationRevoked,
		Actor: key.Name, Subject: id, Data: map[string]any{"from": d.From, "to": d.To}})
	if err != nil && !errors.As(err, new(*rein.Error)) {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the revocation could not be stored: %v", err)
	}
	return out, err
}

// delegatedVoter finds, for a key that cannot vote on a by itself, an
// active delegation to it from an identity that can, and returns the voter
// acting on that delegator's behalf. Only the delegator's own eligibility
// counts (delegations do not chain). A delegate of the identity that asked
// votes on no one's behalf.
func (p *Pipeline) delegatedVoter(ctx context.Context, key *rein.Key, a *rein.Approval, now time.Time) (approval.Voter, bool) {
	list, err := p.Store.Delegations(ctx, a.Tenant)
	if err != nil {
		return approval.Voter{}, false
	}
	for _, d := range list {
		if d.To == key.Name && d.Tenant == key.Tenant && d.Active(now) && d.From == approval.AgentIdentity(a.Agent) {
			// Separation of duties holds across delegation: the delegate of
			// the identity that asked never votes on its request, on
			// anyone's behalf.
			return approval.Voter{}, false
		}
	}
	var keys []*rein.Key
	for _, d := range list {
		if d.To != key.Name || d.Tenant != key.Tenant || !d.Active(now) {
			continue
		}
		if keys == nil {
			if keys, err = p.Store.Keys(ctx, a.Tenant); err != nil {
				return approval.Voter{}, false
			}
		}
		for _, k := range keys {
			if k.Name != d.From || k.RevokedAt != nil || !k.Has(rein.RoleApprover, rein.RoleAdmin) {
				continue
			}
			v := approval.Voter{KeyID: key.ID, Name: key.Name, Roles: k.Roles, Groups: k.Groups, OnBehalfOf: d.From}
			if approval.CanVote(a, v, now) == nil {
				return v, true
			}
		}
	}
	return approval.Voter{}, false
}
