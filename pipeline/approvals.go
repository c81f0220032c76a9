package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// The approval lifecycle around the decision path: votes, cancellation,
// waiting, expiry, and re-checks when the policy changes. Every change runs
// the pure state machine (package approval) inside one store transaction,
// records its transitions in the audit log, and wakes whoever waits.

// hub wakes the waiters of an approval when it changes.
type hub struct {
	mu      sync.Mutex
	waiting map[string]chan struct{}
	stopped chan struct{}
}

// watch returns a channel that is closed at the approval's next change.
func (h *hub) watch(id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiting == nil {
		h.waiting = map[string]chan struct{}{}
	}
	ch, ok := h.waiting[id]
	if !ok {
		ch = make(chan struct{})
		h.waiting[id] = ch
	}
	return ch
}

// stop wakes every waiter, now and later: the server is shutting down.
func (h *hub) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped == nil {
		h.stopped = make(chan struct{})
	}
	select {
	case <-h.stopped:
	default:
		close(h.stopped)
	}
}

func (h *hub) done() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped == nil {
		h.stopped = make(chan struct{})
	}
	return h.stopped
}

// StopWaiting ends every wait on approvals and questions (they answer with what they
// know), so that a shutdown does not hang on long-polls.
func (p *Pipeline) StopWaiting() { p.changes.stop() }

func (h *hub) notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.waiting[id]; ok {
		close(ch)
		delete(h.waiting, id)
	}
}

// transitionEntry records one transition: approval.consumed for a used
// grant, approval.resolved (with its cause) for everything else.
func transitionEntry(a *rein.Approval, t approval.Transition, actor string, at time.Time, extra map[string]any) *rein.Entry {
	data := map[string]any{"from": t.From, "status": t.To, "cause": t.Cause, "action_hash": a.ActionHash}
	for k, v := range extra {
		data[k] = v
	}
	kind := rein.KindApprovalResolved
	if t.To == rein.StatusConsumed {
		kind = rein.KindApprovalConsumed
	}
	return &rein.Entry{TS: at, Tenant: a.Tenant, Kind: kind, Actor: actor, Subject: a.ID, Data: data}
}

// approvalFor loads an approval the key may see: its own tenant's, or any
// for a key of tenant "*". Anything else is not found, never forbidden.
// An approval whose time ran out is expired on the way (the sweeper may not
// have reached it yet), so that nobody reads a stale pending.
func (p *Pipeline) approvalFor(ctx context.Context, key *rein.Key, id string) (*rein.Approval, error) {
	a, err := p.Store.Approval(ctx, id)
	if errors.Is(err, rein.ErrNotFound) || (err == nil && !key.Sees(a.Tenant)) {
		return nil, rein.Errorf(rein.ECodeNotFound, "approval %s not found", id)
	}
	if err == nil && approval.Expire(a, p.now()).Changed() {
		if err = p.expire(ctx, id); err == nil {
			a, err = p.Store.Approval(ctx, id)
		}
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read approval %s: %v", id, err)
	}
	return a, nil
}

// askerOrAdmin loads an approval for the agent key that asked for it, or an
// admin of its tenant: the only keys that may cancel it or wait on it.
func (p *Pipeline) askerOrAdmin(ctx context.Context, key *rein.Key, id, what string) (*rein.Approval, error) {
	a, err := p.approvalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if key.ID != a.AgentKeyID && !key.Has(rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "only the agent key that asked, or an admin, can %s approval %s", what, id)
	}
	return a, nil
}

// Approval returns an approval to an approver, admin or auditor of its
// tenant, or to the agent key that asked for it.
func (p *Pipeline) Approval(ctx context.Context, key *rein.Key, id string) (*rein.Approval, error) {
	a, err := p.approvalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) && key.ID != a.AgentKeyID {
		return nil, rein.Errorf(rein.ECodeNotFound, "approval %s not found", id)
	}
	return a, nil
}

// Vote casts key's vote. An edit is checked by policy first: arguments the
// current policy would deny are refused (409), so that an approver cannot
// approve into something the policy forbids.
func (p *Pipeline) Vote(ctx context.Context, key *rein.Key, id, kind, message string, args json.RawMessage) (*rein.Approval, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; voting needs the approver or admin role", key.Name, key.Roles)
	}
	cur, err := p.approvalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if kind == approval.Edit {
		if args, err = p.checkEdit(ctx, cur, args); err != nil {
			return nil, err
		}
	}
	return p.vote(ctx, id, approval.VoterOf(key), key.Name, kind, message, args)
}

// ClientVote records the vote of the MCP client's user, sent by the gateway
// that asked (integrations.md: the client's form accepted is one approve
// vote, declined a reject). It counts only where the rule names "client" as
// an approver; the policy author chose to trust the client's user there.
func (p *Pipeline) ClientVote(ctx context.Context, key *rein.Key, id, kind, message string) (*rein.Approval, error) {
	if kind != approval.Approve && kind != approval.Reject {
		return nil, rein.Errorf(rein.ECodeBadRequest, `a client vote is "approve" or "reject"`)
	}
	cur, err := p.approvalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if cur.AgentKeyID != key.ID { // only the key that asked relays its client user's vote
		return nil, rein.Errorf(rein.ECodeNotFound, "approval %s not found", id)
	}
	if !approval.AsksClient(cur) {
		return nil, rein.Errorf(rein.ECodeForbidden, "approval %s does not name \"client\" among its approvers; the client's user cannot vote on it", id)
	}
	return p.vote(ctx, id, approval.ClientVoter(key), "client", kind, message, nil)
}

// vote records one vote and, when it decides the approval, the transition.
func (p *Pipeline) vote(ctx context.Context, id string, voter approval.Voter, actor, kind, message string, args json.RawMessage) (*rein.Approval, error) {
	now := p.now()
	a, err := p.changeApproval(ctx, id, func(a *rein.Approval) ([]*rein.Entry, error) {
		t, err := approval.Vote(a, voter, kind, message, args, now)
		if err != nil {
			return nil, err
		}
		data := map[string]any{"vote": kind, "message": message, "by_key": voter.KeyID}
		if kind == approval.Edit {
			data["args"] = args
		}
		entries := []*rein.Entry{{TS: now, Tenant: a.Tenant, Kind: rein.KindApprovalVote, Actor: actor, Subject: a.ID, Data: data}}
		if t.Changed() {
			entries = append(entries, transitionEntry(a, t, actor, now, nil))
		}
		return entries, nil
	})
	switch {
	case errors.Is(err, approval.ErrNotPending), errors.Is(err, approval.ErrVoted):
		return nil, rein.Errorf(rein.ECodeConflict, "%v", err)
	case errors.Is(err, approval.ErrSelfVote), errors.Is(err, approval.ErrNotApprover):
		return nil, rein.Errorf(rein.ECodeForbidden, "%v", err)
	case errors.Is(err, approval.ErrBadVote):
		return nil, rein.Errorf(rein.ECodeBadRequest, "%v", err)
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "the vote could not be recorded: %v; retry", err)
	}
	return a, nil
}

// checkEdit canonicalises edited arguments and refuses those the current
// policy would deny for the same agent, session and tool.
func (p *Pipeline) checkEdit(ctx context.Context, a *rein.Approval, args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 || args[0] != '{' {
		return nil, rein.Errorf(rein.ECodeBadRequest, `an "edit" vote needs "args": the edited arguments as a JSON object`)
	}
	canon, err := rein.Canonical(args)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeBadRequest, `"args" cannot be canonicalised: %v`, err)
	}
	set := p.Policies.For(a.Tenant)
	sim, err := Simulate(set, a.Tenant, &rein.CheckRequest{Tool: a.Tool, Args: canon, Agent: a.Agent, Session: a.Session,
		Intent: a.Intent}, nil, p.now())
	if err != nil {
		return nil, err
	}
	if sim.Decision == rein.Deny {
		return nil, rein.Errorf(rein.ECodeConflict, "policy would deny the edited action (rule %q: %s); edit it into something policy allows or asks for", sim.Rule, sim.Reason)
	}
	return canon, nil
}

// Cancel withdraws a pending approval: the agent key that asked, or an admin.
func (p *Pipeline) Cancel(ctx context.Context, key *rein.Key, id string) (*rein.Approval, error) {
	cur, err := p.askerOrAdmin(ctx, key, id, "cancel")
	if err != nil {
		return nil, err
	}
	now := p.now()
	a, err := p.changeApproval(ctx, id, func(a *rein.Approval) ([]*rein.Entry, error) {
		t := approval.Withdraw(a, rein.StatusCancelled, approval.CauseCancelled, now)
		if !t.Changed() {
			return nil, approval.ErrNotPending
		}
		return []*rein.Entry{transitionEntry(a, t, key.Name, now, nil)}, nil
	})
	if errors.Is(err, approval.ErrNotPending) {
		return nil, rein.Errorf(rein.ECodeConflict, "approval %s is %s, not pending", id, cur.Status)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the cancellation could not be recorded: %v; retry", err)
	}
	return a, nil
}

// WaitResult is what a waiting agent learns: the approval, and what it means
// for the action (allow with the arguments to run, deny with why, or ask
// when the wait ended while it was still pending).
type WaitResult struct {
	*rein.Approval
	Decision rein.Decision   `json:"decision"`
	Reason   string          `json:"reason"`
	RunArgs  json.RawMessage `json:"-"`
}

// MarshalJSON puts decision and reason next to the approval's fields, and
// args (the arguments to run) when the decision is allow.
func (w *WaitResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(w.Approval)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["decision"], _ = json.Marshal(w.Decision)
	m["reason"], _ = json.Marshal(w.Reason)
	if w.Decision == rein.Allow {
		m["args"] = w.RunArgs
	}
	return json.Marshal(m)
}

// Wait long-polls an approval for the agent key that asked (or an admin)
// until it leaves pending or timeout passes. When it is approved, the grant
// is consumed here: at most one waiter, or re-submitted check, ever gets the
// allow.
func (p *Pipeline) Wait(ctx context.Context, key *rein.Key, id string, timeout time.Duration) (*WaitResult, error) {
	if _, err := p.askerOrAdmin(ctx, key, id, "wait on"); err != nil {
		return nil, err
	}
	a, err := p.await(ctx, id, time.Now().Add(timeout))
	if err != nil {
		return nil, err
	}
	if a.Status == rein.StatusPending {
		return &WaitResult{Approval: a, Decision: rein.Ask, Reason: "still pending: " + a.Reason}, nil
	}
	return p.outcome(ctx, key, a)
}

// await returns the approval once it has left pending, or as it is at the
// deadline. It expires approvals whose time ran out on the way.
func (p *Pipeline) await(ctx context.Context, id string, deadline time.Time) (*rein.Approval, error) {
	return awaitPending(ctx, p, "approval", id, deadline, p.Store.Approval,
		func(a *rein.Approval) (string, time.Time) { return a.Status, a.ExpiresAt }, p.expire)
}

// awaitPending re-reads an approval or question until it leaves pending or
// the deadline passes, and returns it as it is then. One whose time ran out
// is expired on the way.
func awaitPending[T any](ctx context.Context, p *Pipeline, what, id string, deadline time.Time,
	load func(context.Context, string) (T, error), state func(T) (status string, expires time.Time),
	expire func(context.Context, string) error) (T, error) {
	var zero T
	for {
		woken := p.changes.watch(id)
		x, err := load(ctx, id)
		if err != nil {
			return zero, rein.Errorf(rein.ECodeUnavailable, "cannot read %s %s: %v", what, id, err)
		}
		status, expires := state(x)
		now := p.now()
		if status == rein.StatusPending && !now.Before(expires) {
			if err := expire(ctx, id); err != nil {
				return zero, rein.Errorf(rein.ECodeUnavailable, "cannot expire %s %s: %v", what, id, err)
			}
			continue
		}
		left := time.Until(deadline)
		if status != rein.StatusPending || left <= 0 {
			return x, nil
		}
		if !p.sleep(ctx, woken, min(left, expires.Sub(now)+time.Millisecond, time.Second)) {
			return x, nil
		}
	}
}

// sleep waits for a change (woken), or for d to pass: a waiter wakes at a
// change, at its object's deadline, or at least every second, since changes
// made by another process reach it only by polling. It reports false when
// the waiter should answer now with what it knows: the caller left, or the
// server stops.
func (p *Pipeline) sleep(ctx context.Context, woken <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-p.changes.done():
		return false
	case <-woken:
	case <-timer.C:
	}
	return true
}

// outcome turns a resolved approval into the waiter's answer, consuming the
// grant of an approved one.
func (p *Pipeline) outcome(ctx context.Context, key *rein.Key, a *rein.Approval) (*WaitResult, error) {
	switch a.Status {
	case rein.StatusApproved:
		now := p.now()
		// A lock stops a grant from being used, even one approved before it.
		if l, err := p.lockFor(ctx, a.Tenant, a.Agent, a.Session, a.Tool, now); err != nil || l != nil {
			reason := "locks could not be read, so the grant is not used"
			if l != nil {
				reason = lockReason(l)
			}
			return &WaitResult{Approval: a, Decision: rein.Deny, Reason: reason}, nil
		}
		used, err := p.changeApproval(ctx, a.ID, func(x *rein.Approval) ([]*rein.Entry, error) {
			t, err := approval.Consume(x, now)
			if t.Changed() && t.To == rein.StatusExpired {
				return []*rein.Entry{transitionEntry(x, t, "rein", now, nil)}, nil
			}
			if err != nil {
				return nil, err
			}
			return []*rein.Entry{transitionEntry(x, t, key.Name, now, map[string]any{"via": "wait"})}, nil
		})
		if errors.Is(err, approval.ErrNoGrant) {
			latest, _ := p.Store.Approval(ctx, a.ID)
			if latest == nil {
				latest = a
			}
			return &WaitResult{Approval: latest, Decision: rein.Deny, Reason: "the approval's grant was already used or has expired"}, nil
		}
		if err != nil {
			return nil, rein.Errorf(rein.ECodeUnavailable, "the grant could not be used: %v; retry", err)
		}
		if used.Status != rein.StatusConsumed {
			return &WaitResult{Approval: used, Decision: rein.Deny, Reason: "the approval's grant expired before it was used"}, nil
		}
		run := used.Args
		if len(used.ApprovedArgs) > 0 {
			run = used.ApprovedArgs
		}
		return &WaitResult{Approval: used, Decision: rein.Allow, Reason: "approved: " + used.ID, RunArgs: run}, nil
	case rein.StatusRejected:
		return &WaitResult{Approval: a, Decision: rein.Deny, Reason: "rejected" + lastMessage(a, approval.Reject)}, nil
	case rein.StatusExpired:
		return &WaitResult{Approval: a, Decision: rein.Deny, Reason: fmt.Sprintf("the approval timed out: no decision before %s",
			a.ExpiresAt.UTC().Format(time.RFC3339))}, nil
	case rein.StatusConsumed:
		return &WaitResult{Approval: a, Decision: rein.Deny, Reason: "the approval's grant was already used"}, nil
	default:
		return &WaitResult{Approval: a, Decision: rein.Deny, Reason: "the approval was " + a.Status}, nil
	}
}

func lastMessage(a *rein.Approval, kind string) string {
	for i := len(a.Votes) - 1; i >= 0; i-- {
		if v := a.Votes[i]; v.Vote == kind {
			if v.Message != "" {
				return " by " + v.By + ": " + v.Message
			}
			return " by " + v.By
		}
	}
	return ""
}

// expire moves one approval whose time ran out to expired.
func (p *Pipeline) expire(ctx context.Context, id string) error {
	now := p.now()
	_, err := p.changeApproval(ctx, id, func(a *rein.Approval) ([]*rein.Entry, error) {
		t := approval.Expire(a, now)
		if !t.Changed() {
			return nil, nil
		}
		return []*rein.Entry{transitionEntry(a, t, "rein", now, nil)}, nil
	})
	return err
}

// Sweep expires every approval and question whose time ran out. The server
// runs it every second; waiters and readers also expire what they find late.
func (p *Pipeline) Sweep(ctx context.Context) error {
	ids, err := p.Store.DueApprovals(ctx, p.now())
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := p.expire(ctx, id); err != nil {
			return err
		}
	}
	if ids, err = p.Store.DueQuestions(ctx, p.now()); err != nil {
		return err
	}
	for _, id := range ids {
		if err := p.expireQuestion(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// Recheck runs every pending approval's action through the current policy
// and invalidates those it now denies. The server calls it after each policy
// change.
func (p *Pipeline) Recheck(ctx context.Context) (int, error) {
	n := 0
	before := ""
	for {
		page, err := p.Store.Approvals(ctx, "*", rein.ApprovalFilter{Status: rein.StatusPending, Limit: 200, Before: before})
		if err != nil {
			return n, err
		}
		for _, a := range page {
			sim, err := Simulate(p.Policies.For(a.Tenant), a.Tenant, &rein.CheckRequest{Tool: a.Tool, Args: a.Args,
				Agent: a.Agent, Session: a.Session, Intent: a.Intent}, nil, p.now())
			if err != nil || sim.Decision != rein.Deny {
				continue
			}
			now := p.now()
			_, err = p.changeApproval(ctx, a.ID, func(x *rein.Approval) ([]*rein.Entry, error) {
				t := approval.Withdraw(x, rein.StatusInvalidated, approval.CausePolicyChanged, now)
				if !t.Changed() {
					return nil, nil
				}
				return []*rein.Entry{transitionEntry(x, t, "rein", now, map[string]any{"rule": sim.Rule, "reason": sim.Reason})}, nil
			})
			if err != nil {
				return n, err
			}
			n++
		}
		if len(page) < 200 {
			return n, nil
		}
		before = page[len(page)-1].ID
	}
}
