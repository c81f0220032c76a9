package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/policy"
)

// proposalReplay is how far back a proposal's candidate is replayed.
const proposalReplay = 7 * 24 * time.Hour

// Propose turns an approved action into a proposed policy change
// (approvals.md, "Always allow" becomes policy): the rules that ask for it
// today keep asking for everything else, and a new rule allows exactly that
// action for that agent. The change is checked (it compiles, and the action
// is then allowed), replayed on the last 7 days of the tenant's checks and
// stored as an open proposal for an admin of the tier to accept or reject.
// Nothing changes until then. Approvers and admins propose; never the
// agent's own identity.
func (p *Pipeline) Propose(ctx context.Context, key *rein.Key, approvalID, message string) (*rein.Proposal, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; proposing needs the approver or admin role", key.Name, key.Roles)
	}
	a, err := p.Approval(ctx, key, approvalID)
	if err != nil {
		return nil, err
	}
	agent := approval.AgentIdentity(a.Agent)
	if agent == key.Name {
		return nil, rein.Errorf(rein.ECodeForbidden, "the agent %q cannot propose to allow its own actions", agent)
	}
	if a.Status != rein.StatusApproved && a.Status != rein.StatusConsumed {
		return nil, rein.Errorf(rein.ECodeConflict, "approval %s is %s; only an action people approved can be proposed for always", a.ID, a.Status)
	}
	args := a.Args
	if len(a.ApprovedArgs) > 0 {
		args = a.ApprovedArgs // what people approved, after an edit
	}
	set := p.Policies.For(a.Tenant)
	if set == nil {
		return nil, rein.Errorf(rein.ECodeConflict, "no policy is loaded for tenant %q", a.Tenant)
	}
	req := &rein.CheckRequest{Tool: a.Tool, Args: args, Agent: a.Agent}
	now := p.now()
	sim, err := Simulate(set, a.Tenant, req, nil, now)
	if err != nil {
		return nil, err
	}
	var asking []string
	tiers := map[string]bool{}
	for _, row := range sim.Trace {
		if !row.Matched || row.Mode == "shadow" {
			continue
		}
		switch row.Decision {
		case rein.Deny:
			return nil, rein.Errorf(rein.ECodeConflict, "rule %s (%s tier) denies this action now; a proposal cannot allow what policy denies", row.Rule, row.Tier)
		case rein.Ask:
			asking = append(asking, row.Rule)
			tiers[row.Tier] = true
		}
	}
	if len(asking) == 0 {
		return nil, rein.Errorf(rein.ECodeConflict, "no rule asks for this action now (the policy in force answers %s); there is nothing to propose", sim.Decision)
	}
	if len(tiers) > 1 {
		return nil, rein.Errorf(rein.ECodeConflict, "rules of both tiers ask for this action (%v); change them by hand", asking)
	}
	tier, tierKey := policy.TierTenant, a.Tenant
	if tiers[policy.TierGlobal] {
		tier, tierKey = policy.TierGlobal, ""
	}
	current := p.Policies.Tier(tierKey)
	if current == nil {
		return nil, rein.Errorf(rein.ECodeConflict, "the %s tier has no policy to change", tier)
	}
	sum := sha256.Sum256([]byte(agent + "\x00" + a.Tool + "\x00" + string(args)))
	ruleID := "always-" + hex.EncodeToString(sum[:4])
	parsed, err := rein.ParseArgs(args)
	if err != nil {
		return nil, err
	}
	src, err := policy.ProposeAllow(current.Source, asking, policy.Exact{Tenant: a.Tenant, Agent: agent, Tool: a.Tool, Args: parsed}, ruleID,
		fmt.Sprintf("always allow, proposed by %s from approval %s", key.Name, a.ID))
	if err != nil {
		return nil, rein.Errorf(rein.ECodeConflict, "the change cannot be written: %v", err)
	}
	candidate, err := policy.Compile(src)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeConflict, "the proposed policy does not compile: %v", err)
	}
	next := policy.NewSet(candidate, p.Policies.Tier(a.Tenant))
	if tierKey != "" {
		next = policy.NewSet(p.Policies.Tier(""), candidate)
	}
	after, err := Simulate(next, a.Tenant, req, nil, now)
	if err != nil {
		return nil, err
	}
	if after.Decision != rein.Allow {
		return nil, rein.Errorf(rein.ECodeConflict, "with the change the action would still be %s (rule %q: %s); change the policy by hand", after.Decision, after.Rule, after.Reason)
	}
	replay, err := p.Replay(ctx, a.Tenant, tierKey, candidate, now.Add(-proposalReplay), nil)
	if err != nil {
		return nil, err
	}
	prop := &rein.Proposal{ID: rein.NewID("prp"), Tenant: a.Tenant, Status: rein.ProposalOpen, Tier: tier, Approval: a.ID,
		Agent: agent, Tool: a.Tool, Args: args, Narrowed: asking, Rule: ruleID, Message: message, BaseVersion: current.Version,
		Candidate: string(src), Diff: policy.LineDiff(string(current.Source), string(src)), Replay: replay, ProposedBy: key.Name, CreatedAt: now}
	e := &rein.Entry{TS: now, Tenant: a.Tenant, Kind: rein.KindProposalCreated, Actor: key.Name, Subject: prop.ID, PolicyVersion: set.Version,
		Data: map[string]any{"approval": a.ID, "tier": tier, "agent": agent, "tool": a.Tool, "args": json.RawMessage(args), "narrowed": asking,
			"rule": ruleID, "base_version": current.Version, "candidate_version": candidate.Version, "message": message,
			"replay": map[string]any{"checks": replay.Checks, "newly_allowed": replay.NewlyAllowed, "newly_blocked": replay.NewlyBlocked}}}
	if err := p.Store.CreateProposal(ctx, prop, []*rein.Entry{e}); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the proposal could not be stored: %v", err)
	}
	p.Log.Info("policy proposal", "proposal", prop.ID, "approval", a.ID, "tier", tier, "by", key.Name)
	return shown(key, prop), nil
}

// shown is the proposal as key may see it: the whole candidate of the
// global tier is for admins and auditors (who may read the global policy);
// an approver sees the change itself, in the diff.
func shown(key *rein.Key, prop *rein.Proposal) *rein.Proposal {
	if prop.Tier != policy.TierGlobal || key.Has(rein.RoleAdmin, rein.RoleAuditor) {
		return prop
	}
	c := *prop
	c.Candidate = ""
	return &c
}

// proposalFor loads a proposal the key may see: its tenant's, for
// approvers, admins and auditors.
func (p *Pipeline) proposalFor(ctx context.Context, key *rein.Key, id string) (*rein.Proposal, error) {
	prop, err := p.Store.Proposal(ctx, id)
	if errors.Is(err, rein.ErrNotFound) || err == nil && (!key.Sees(prop.Tenant) || !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)) {
		return nil, rein.Errorf(rein.ECodeNotFound, "proposal %s not found", id)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read proposal %s: %v", id, err)
	}
	return prop, nil
}

// Proposal returns one proposal.
func (p *Pipeline) Proposal(ctx context.Context, key *rein.Key, id string) (*rein.Proposal, error) {
	prop, err := p.proposalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	return shown(key, prop), nil
}

// Proposals lists a tenant's proposals for approvers, admins and auditors.
func (p *Pipeline) Proposals(ctx context.Context, key *rein.Key, tenant string, f rein.ListFilter) ([]*rein.Proposal, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; proposals are for approvers, admins and auditors", key.Name, key.Roles)
	}
	list, err := p.Store.Proposals(ctx, tenant, f)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot list proposals: %v", err)
	}
	for i, prop := range list {
		list[i] = shown(key, prop)
	}
	return list, nil
}

// Activate makes a policy tier live ("" the global tier), as a push does:
// compiled, stored, audited. The server's policy admin provides it.
type Activate func(ctx context.Context, tier string, src []byte, by string) (*rein.PolicyDoc, error)

// DecideProposal accepts or rejects an open proposal. Only an admin of the
// tier decides (the global tier: an admin of every tenant), never the one
// who proposed it. Accepting pushes the candidate, but only onto the tier
// version it was made against: a tier that changed since is a conflict
// (propose again from the approval).
func (p *Pipeline) DecideProposal(ctx context.Context, key *rein.Key, id string, accept bool, message string, activate Activate) (*rein.Proposal, error) {
	cur, err := p.proposalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if !key.Has(rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; an admin decides a proposal", key.Name, key.Roles)
	}
	if cur.Tier == policy.TierGlobal && key.Tenant != rein.AllTenants {
		return nil, rein.Errorf(rein.ECodeForbidden, "proposal %s changes the global tier; an admin of tenant * decides it", id)
	}
	if cur.ProposedBy == key.Name {
		return nil, rein.Errorf(rein.ECodeForbidden, "%q proposed %s and cannot also decide it", key.Name, id)
	}
	if cur.Agent == key.Name {
		return nil, rein.Errorf(rein.ECodeForbidden, "the agent %q cannot decide a proposal about its own actions", key.Name)
	}
	if cur.Status != rein.ProposalOpen {
		return nil, rein.Errorf(rein.ECodeConflict, "proposal %s was already %s by %s", id, cur.Status, cur.DecidedBy)
	}
	now := p.now()
	version := ""
	if accept {
		tierKey := ""
		if cur.Tier == policy.TierTenant {
			tierKey = cur.Tenant
		}
		if live := p.Policies.Tier(tierKey); live == nil || live.Version != cur.BaseVersion {
			return nil, rein.Errorf(rein.ECodeConflict, "the %s tier changed since proposal %s was made against %s; propose again from approval %s",
				cur.Tier, id, cur.BaseVersion, cur.Approval)
		}
		doc, err := activate(ctx, tierKey, []byte(cur.Candidate), key.Name)
		if err != nil {
			return nil, err
		}
		version = doc.Version
	}
	return p.Store.ChangeProposal(ctx, id, func(x *rein.Proposal) ([]*rein.Entry, error) {
		if x.Status != rein.ProposalOpen {
			return nil, rein.Errorf(rein.ECodeConflict, "proposal %s was already %s by %s", id, x.Status, x.DecidedBy)
		}
		x.Status, x.DecidedBy, x.DecidedAt, x.DecisionMessage, x.Version = rein.ProposalRejected, key.Name, &now, message, version
		if accept {
			x.Status = rein.ProposalAccepted
		}
		return []*rein.Entry{{TS: now, Tenant: x.Tenant, Kind: rein.KindProposalDecided, Actor: key.Name, Subject: x.ID,
			Data: map[string]any{"status": x.Status, "message": message, "tier": x.Tier, "version": version, "approval": x.Approval}}}, nil
	})
}

// Suggestions are actions people keep approving: the same action of the
// same agent approved at least min times since since, never rejected —
// candidates for a proposal, never applied by themselves. The newest
// approvals are read (at most 5,000 of each status).
func (p *Pipeline) Suggestions(ctx context.Context, key *rein.Key, tenant string, min int, since time.Time) ([]rein.Suggestion, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; suggestions are for approvers, admins and auditors", key.Name, key.Roles)
	}
	if min < 2 {
		min = 2
	}
	type group struct {
		s        rein.Suggestion
		rejected bool
	}
	groups := map[string]*group{}
	for _, status := range []string{rein.StatusConsumed, rein.StatusApproved, rein.StatusRejected} {
		f := rein.ApprovalFilter{Status: status, Limit: 500}
		for page := 0; page < 10; page++ {
			list, err := p.Store.Approvals(ctx, tenant, f)
			if err != nil {
				return nil, rein.Errorf(rein.ECodeUnavailable, "cannot list approvals: %v", err)
			}
			for _, a := range list {
				if a.CreatedAt.Before(since) {
					continue
				}
				args := a.Args
				if len(a.ApprovedArgs) > 0 {
					args = a.ApprovedArgs
				}
				agent := approval.AgentIdentity(a.Agent)
				k := a.Tenant + "\x00" + agent + "\x00" + a.Tool + "\x00" + string(args)
				g := groups[k]
				if g == nil {
					g = &group{s: rein.Suggestion{Tenant: a.Tenant, Agent: agent, Tool: a.Tool, Args: args}}
					groups[k] = g
				}
				if status == rein.StatusRejected {
					g.rejected = true
					continue
				}
				g.s.Approvals++
				if a.CreatedAt.After(g.s.LatestAt) {
					g.s.Latest, g.s.LatestAt = a.ID, a.CreatedAt
				}
			}
			if len(list) < f.Limit {
				break
			}
			f.Before = list[len(list)-1].ID
		}
	}
	out := []rein.Suggestion{}
	for _, g := range groups {
		if !g.rejected && g.s.Approvals >= min {
			out = append(out, g.s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Approvals != out[j].Approvals {
			return out[i].Approvals > out[j].Approvals
		}
		return out[i].Latest > out[j].Latest
	})
	return out, nil
}
