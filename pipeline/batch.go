package pipeline

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// VoteBatch casts key's vote on every pending approval of one agent turn
// (the checks that carried batch) in tenant, all or nothing: each approval
// keeps its own action and requirements, so the key must be able to vote on
// every one of them, or none is voted (403 naming the first it cannot).
// An edit is never a batch vote: it changes one action.
//
// seen, when given, is the approvals the voter was shown: the agent may add
// to its turn while a person reads it, so unless the batch's pending
// approvals are exactly seen, nothing is voted (409). Each is an approval id,
// or "id@N" for the revision N the voter was shown; an approval that has been
// edited must be named with its current revision, or nothing is voted. A
// vote is only ever about what the voter saw.
func (p *Pipeline) VoteBatch(ctx context.Context, key *rein.Key, tenant, batch, kind, message, grant string, seen []string) ([]*rein.Approval, error) {
	if kind != approval.Approve && kind != approval.Reject {
		return nil, rein.Errorf(rein.ECodeBadRequest, `a batch vote is "approve" or "reject"; edit approvals one by one`)
	}
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; voting needs the approver or admin role", key.Name, key.Roles)
	}
	if !key.Sees(tenant) {
		return nil, rein.Errorf(rein.ECodeNotFound, "batch %q not found", batch)
	}
	if batch == "" {
		return nil, rein.Errorf(rein.ECodeBadRequest, "name the batch: POST /v1/batches/{batch}/votes")
	}
	batchOf, err := p.pendingOfBatch(ctx, tenant, batch)
	if err != nil {
		return nil, err
	}
	if len(batchOf) == 0 {
		return nil, rein.Errorf(rein.ECodeNotFound, "batch %q has no pending approvals", batch)
	}
	revisions := map[string]int{}
	if seen != nil {
		ids := make([]string, len(seen))
		for i, x := range seen {
			id, rev, err := seenRevision(x)
			if err != nil {
				return nil, err
			}
			ids[i], revisions[id] = id, rev
		}
		if err := sameApprovals(batch, batchOf, ids); err != nil {
			return nil, err
		}
	}
	// The batch name comes from the agent, so any agent can claim one. A
	// batch vote is one decision about one agent turn: every approval in it
	// must come from the same tenant, agent, key and session, or an agent
	// could slip its own action into another agent's turn and have it
	// approved in bulk. A mixed batch is voted one by one.
	first := batchOf[0]
	for _, a := range batchOf[1:] {
		if a.Tenant != first.Tenant || a.Agent != first.Agent || a.AgentKeyID != first.AgentKeyID || a.Session != first.Session {
			return nil, rein.Errorf(rein.ECodeConflict,
				"batch %q holds approvals of more than one agent, key, session or tenant (%s and %s); vote on them one by one",
				batch, first.ID, a.ID)
		}
	}
	now, voter := p.now(), approval.VoterOf(key)
	for _, a := range batchOf {
		if err := approval.CanVote(a, voter, now); err != nil {
			return nil, rein.Errorf(rein.ECodeForbidden, "approval %s of batch %q: %v; no vote of the batch was recorded", a.ID, batch, err)
		}
		if grant != "" && !approval.Permits(a, grant) {
			return nil, rein.Errorf(rein.ECodeBadRequest, "approval %s of batch %q does not permit grant %q; no vote of the batch was recorded", a.ID, batch, grant)
		}
		if err := approval.Current(a, kind, revisions[a.ID]); err != nil {
			return nil, rein.Errorf(rein.ECodeConflict, `approval %s of batch %q: %v; no vote of the batch was recorded: list it as "%s@%d" once you have seen that revision`,
				a.ID, batch, err, a.ID, a.Revision)
		}
	}
	out := make([]*rein.Approval, 0, len(batchOf))
	var done []string
	for _, a := range batchOf {
		v, err := p.Cast(ctx, key, a.ID, approval.Ballot{Kind: kind, Message: message, Grant: grant, Revision: revisions[a.ID]})
		if err != nil {
			// Another vote or the clock changed an approval meanwhile.
			return out, rein.Errorf(rein.ECodeConflict, "approval %s of batch %q: %s; recorded before it: %s",
				a.ID, batch, rein.ErrorMessage(err), strings.Join(done, ", "))
		}
		out = append(out, v)
		done = append(done, v.ID)
	}
	p.Log.Info("batch voted", "batch", batch, "vote", kind, "approvals", len(out), "by", key.Name)
	return out, nil
}

// seenRevision reads one entry of a batch vote's seen list: "apr_x" or
// "apr_x@N" (N the revision the voter was shown).
func seenRevision(s string) (string, int, error) {
	id, rev, ok := strings.Cut(s, "@")
	if !ok {
		return s, 0, nil
	}
	n, err := strconv.Atoi(rev)
	if err != nil || n < 1 || id == "" {
		return "", 0, rein.Errorf(rein.ECodeBadRequest, `%q: a seen approval is its id, or "<id>@<revision>" with the revision shown (1 or more)`, s)
	}
	return id, n, nil
}

// sameApprovals refuses a batch vote whose voter saw other approvals than
// the batch now holds pending: one added since, or one decided or expired.
func sameApprovals(batch string, pending []*rein.Approval, seen []string) error {
	want := make(map[string]bool, len(seen))
	for _, id := range seen {
		want[id] = true
	}
	for _, a := range pending {
		if !want[a.ID] {
			return rein.Errorf(rein.ECodeConflict,
				"batch %q now holds approval %s (%s), which the vote did not list; no vote of the batch was recorded: look at the batch again and vote on what it holds",
				batch, a.ID, a.Tool)
		}
		delete(want, a.ID)
	}
	for _, id := range seen {
		if want[id] {
			return rein.Errorf(rein.ECodeConflict,
				"approval %s is not pending in batch %q any more (decided, expired or never of it); no vote of the batch was recorded: look at the batch again",
				id, batch)
		}
	}
	return nil
}

// pendingOfBatch lists every pending approval of batch in tenant, page by
// page, oldest first.
func (p *Pipeline) pendingOfBatch(ctx context.Context, tenant, batch string) ([]*rein.Approval, error) {
	const page = 500
	var out []*rein.Approval
	f := rein.ApprovalFilter{Status: rein.StatusPending, Limit: page}
	for {
		list, err := p.Store.Approvals(ctx, tenant, f)
		if err != nil {
			return nil, rein.Errorf(rein.ECodeUnavailable, "cannot list approvals: %v", err)
		}
		for _, a := range list {
			if a.Batch == batch {
				out = append(out, a)
			}
		}
		if len(list) < page {
			break
		}
		f.Before = list[len(list)-1].ID
	}
	slices.Reverse(out)
	return out, nil
}
