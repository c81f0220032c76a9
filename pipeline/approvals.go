package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	if t.To == rein.StatusApproved && t.Cause != approval.CauseUsed && a.GrantExpiresAt != nil {
		data["grant"] = a.Grant
		// The grant's window is part of the record: a later allow outside it
		// is visible from the log alone.
		data["grant_expires_at"] = a.GrantExpiresAt.UTC().Format(time.RFC3339Nano)
		if len(a.ApprovedArgs) > 0 {
			data["approved_args_hash"] = rein.ArgsHash(a.ApprovedArgs)
		} else {
			data["approved_args_hash"] = rein.ArgsHash(a.Args)
		}
	}
	for k, v := range extra {
		data[k] = v
	}
	kind := rein.KindApprovalResolved
	if t.To == rein.StatusConsumed || t.Cause == approval.CauseUsed {
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
	return p.VoteGrant(ctx, key, id, kind, message, args, "")
}

// VoteGrant is Vote with the grant scope an approving voter chooses
// ("once", "session" or a window such as "1h"; "" is once), within what the
// approval's rules permit.
func (p *Pipeline) VoteGrant(ctx context.Context, key *rein.Key, id, kind, message string, args json.RawMessage, grant string) (*rein.Approval, error) {
	return p.Cast(ctx, key, id, approval.Ballot{Kind: kind, Message: message, Args: args, Grant: grant})
}

// Cast casts key's ballot on approval id. The ballot names the revision of
// the action its voter was shown: an approve or edit of any other revision
// is refused (ECodeStaleRevision, with the current approval as the error's
// details); a reject always counts.
func (p *Pipeline) Cast(ctx context.Context, key *rein.Key, id string, b approval.Ballot) (*rein.Approval, error) {
	return p.voteAs(ctx, key, id, b, false)
}

// VoteSteppedUp is VoteGrant for a vote the voter has just confirmed with a
// passkey: it counts on approvals that need step-up. Only the caller that
// verified the passkey assertion for this key and approval may call it.
func (p *Pipeline) VoteSteppedUp(ctx context.Context, key *rein.Key, id string, b approval.Ballot) (*rein.Approval, error) {
	return p.voteAs(ctx, key, id, b, true)
}

func (p *Pipeline) voteAs(ctx context.Context, key *rein.Key, id string, b approval.Ballot, steppedUp bool) (*rein.Approval, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; voting needs the approver or admin role", key.Name, key.Roles)
	}
	cur, err := p.approvalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if err := approval.Current(cur, b.Kind, b.Revision); err != nil {
		return nil, p.voteError(ctx, id, err) // before policy is asked about an edit of a stale version
	}
	var need *ApprovalNeeds
	if b.Kind == approval.Edit {
		if b.Args, need, err = p.checkEdit(ctx, cur, b.Args); err != nil {
			return nil, err
		}
	}
	voter := approval.VoterOf(key)
	if err := approval.CanVote(cur, voter, p.now()); errors.Is(err, approval.ErrNotApprover) {
		if v, ok := p.delegatedVoter(ctx, key, cur, p.now()); ok {
			voter = v // on behalf of a delegator
		}
	}
	voter.SteppedUp = steppedUp
	return p.vote(ctx, id, voter, key.Name, b, need)
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
	// The client's user answers the form the gateway drew from the approval
	// as it was when asked: a later edit makes that answer stale.
	return p.vote(ctx, id, approval.ClientVoter(key), "client", approval.Ballot{Kind: kind, Message: message, Revision: 1}, nil)
}

// vote records one vote and, when it decides the approval, the transition.
// An edit's vote carries what policy asks for the edited action (need):
// those approvals are added to the approval's before the vote counts, so an
// edit never escapes what policy requires for what will run.
func (p *Pipeline) vote(ctx context.Context, id string, voter approval.Voter, actor string, b approval.Ballot, need *ApprovalNeeds) (*rein.Approval, error) {
	kind, message, args, grant := b.Kind, b.Message, b.Args, b.Grant
	now := p.now()
	a, err := p.changeApproval(ctx, id, func(a *rein.Approval) ([]*rein.Entry, error) {
		if need != nil {
			if err := approval.CanVote(a, voter, now); err != nil {
				return nil, err
			}
			sets, quorum := simNeeds(need)
			approval.Require(a, sets, quorum)
			a.StepUp = a.StepUp || need.StepUp // the edited action's rules may ask for step-up
			for _, r := range need.Asks {
				if !slices.ContainsFunc(a.Asks, func(x rein.AskingRule) bool { return x.Rule == r.Rule && x.Tier == r.Tier }) {
					a.Asks = append(a.Asks, r)
				}
			}
		}
		t, err := approval.Cast(a, voter, b, now)
		if err != nil {
			return nil, err
		}
		data := map[string]any{"vote": kind, "message": message, "by_key": voter.KeyID, "revision": a.Votes[len(a.Votes)-1].Revision}
		if grant != "" {
			data["grant"] = grant
		}
		if voter.OnBehalfOf != "" {
			data["on_behalf_of"] = voter.OnBehalfOf
		}
		if voter.SteppedUp {
			data["step_up"] = "passkey"
		}
		if kind == approval.Edit {
			data["args"], data["args_hash"] = args, a.ArgsHash
			data["approver_sets"], data["quorum"] = a.ApproverSets, a.Quorum
		}
		entries := []*rein.Entry{{TS: now, Tenant: a.Tenant, Kind: rein.KindApprovalVote, Actor: actor, Subject: a.ID, Data: data}}
		if t.Changed() {
			entries = append(entries, transitionEntry(a, t, actor, now, nil))
		}
		return entries, nil
	})
	if err != nil {
		return nil, p.voteError(ctx, id, err)
	}
	if p.Resolved != nil && (a.Status == rein.StatusApproved || a.Status == rein.StatusRejected) {
		p.Resolved(a)
	}
	return a, nil
}

// voteError is the error a refused vote answers with. A stale revision
// carries the approval as it is now, so that the surface can show the
// voter the current version.
func (p *Pipeline) voteError(ctx context.Context, id string, err error) error {
	switch {
	case errors.Is(err, approval.ErrStaleRevision):
		e := rein.Errorf(rein.ECodeStaleRevision, "%v; review the current version and vote on it", err)
		if cur, rerr := p.Store.Approval(ctx, id); rerr == nil {
			e.Details = cur
		}
		return e
	case errors.Is(err, approval.ErrNoRevision):
		return rein.Errorf(rein.ECodeBadRequest, `%v: send "revision" (or If-Match) with the revision shown, currently %d`, err, p.currentRevision(ctx, id))
	case errors.Is(err, approval.ErrNotPending), errors.Is(err, approval.ErrVoted):
		return rein.Errorf(rein.ECodeConflict, "%v", err)
	case errors.Is(err, approval.ErrSelfVote), errors.Is(err, approval.ErrNotApprover):
		return rein.Errorf(rein.ECodeForbidden, "%v", err)
	case errors.Is(err, approval.ErrStepUp):
		return rein.Errorf(rein.ECodeForbidden, "%v; confirm it in the console at %s/approvals/%s", err, strings.TrimRight(p.BaseURL, "/"), id)
	case errors.Is(err, approval.ErrBadVote):
		return rein.Errorf(rein.ECodeBadRequest, "%v", err)
	}
	var e *rein.Error
	if errors.As(err, &e) {
		return e
	}
	return rein.Errorf(rein.ECodeUnavailable, "the vote could not be recorded: %v; retry", err)
}

func (p *Pipeline) currentRevision(ctx context.Context, id string) int {
	if a, err := p.Store.Approval(ctx, id); err == nil {
		return a.Revision
	}
	return 0
}

// containmentOf is the sandbox variable policy saw in the check behind
// approval a: its session's containment, when the key that asked contains
// it; nil otherwise (or when the session cannot be read: then policy sees
// no containment, which never opens more).
func (p *Pipeline) containmentOf(ctx context.Context, a *rein.Approval) map[string]any {
	if a.Session == "" {
		return nil
	}
	s, _, err := p.Store.SessionState(ctx, a.Tenant, a.Session, "")
	if err != nil || s == nil || s.Sandbox == nil || s.Sandbox.KeyID != a.AgentKeyID {
		return nil
	}
	return sandboxVar(s.Sandbox)
}

// checkEdit decides the edited action as a new check of the same agent,
// session and tool would be decided: a deny refuses the edit (409); a modify
// rule's change is applied to it; an ask returns what it needs (need), which
// the vote adds to the approval's requirements. It returns the arguments the
// approval will grant.
func (p *Pipeline) checkEdit(ctx context.Context, a *rein.Approval, args json.RawMessage) (json.RawMessage, *ApprovalNeeds, error) {
	if len(args) == 0 || args[0] != '{' {
		return nil, nil, rein.Errorf(rein.ECodeBadRequest, `an "edit" vote needs "args": the edited arguments as a JSON object`)
	}
	canon, err := rein.Canonical(args)
	if err != nil {
		return nil, nil, rein.Errorf(rein.ECodeBadRequest, `"args" cannot be canonicalised: %v`, err)
	}
	// An edit is kept like the agent's arguments: a secret an approver
	// typed is redacted, and can then not be run (only the agent's own
	// secrets are put back, where they were).
	canon = p.concealed(a.Tool, canon)
	req := &rein.CheckRequest{Tool: a.Tool, Args: canon, Agent: a.Agent, Session: a.Session, Intent: a.Intent}
	if orig, err := p.Store.CheckByID(ctx, a.CheckID); err == nil {
		req.Labels = orig.Check.Labels
		if orig.Check.Cost != 0 {
			cost := orig.Check.Cost
			req.Cost = &cost
		}
	}
	sim, err := simulate(p.Policies.For(a.Tenant), a.Tenant, req, nil, p.containmentOf(ctx, a), p.now())
	if err != nil {
		return nil, nil, err
	}
	if sim.Decision == rein.Deny {
		return nil, nil, rein.Errorf(rein.ECodeConflict, "policy would deny the edited action (rule %q: %s); edit it into something policy allows or asks for", sim.Rule, sim.Reason)
	}
	need := sim.Approval
	if need == nil {
		need = &ApprovalNeeds{} // allowed as edited: the original's approvals still apply
	}
	return sim.Args, need, nil
}

// Revoke ends an approved grant before its window closes (a session or
// window grant, or a once grant not yet used): an admin, or an approver
// the approval names. The approval becomes invalidated (cause revoked).
func (p *Pipeline) Revoke(ctx context.Context, key *rein.Key, id, message string) (*rein.Approval, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; revoking a grant needs the approver or admin role", key.Name, key.Roles)
	}
	cur, err := p.approvalFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if !key.Has(rein.RoleAdmin) && !approval.Names(cur, approval.VoterOf(key)) {
		return nil, rein.Errorf(rein.ECodeForbidden, "only an admin or an approver of approval %s can revoke its grant", id)
	}
	now := p.now()
	a, err := p.changeApproval(ctx, id, func(a *rein.Approval) ([]*rein.Entry, error) {
		if a.Status != rein.StatusApproved {
			return nil, approval.ErrNoGrant
		}
		t := approval.Withdraw(a, rein.StatusInvalidated, approval.CauseRevoked, now)
		return []*rein.Entry{transitionEntry(a, t, key.Name, now, map[string]any{"message": message, "uses": a.Uses})}, nil
	})
	if errors.Is(err, approval.ErrNoGrant) {
		return nil, rein.Errorf(rein.ECodeConflict, "approval %s is %s: it has no grant to revoke", id, cur.Status)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the revocation could not be recorded: %v; retry", err)
	}
	return a, nil
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
	// CheckID is the check recorded when the wait used the grant (allow) or
	// refused to (deny): a later result refers to it.
	CheckID string `json:"-"`
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
	if w.CheckID != "" {
		m["use_check_id"], _ = json.Marshal(w.CheckID)
	}
	return json.Marshal(m)
}

// Wait long-polls an approval for the agent key that asked (or an admin)
// until it leaves pending or timeout passes. When it is approved, the grant
// is used here as a re-submission would use it, through the decision
// pipeline (key, locks, policy in force, the grant's window; useGrant): at
// most one waiter, or re-submitted check, ever gets the allow, and the
// allowing check is recorded. mayUse is false for a request that did not
// authenticate with a key (a console session): it sees the outcome and
// changes nothing.
func (p *Pipeline) Wait(ctx context.Context, key *rein.Key, id string, timeout time.Duration, mayUse bool) (*WaitResult, error) {
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
	return p.outcome(ctx, key, a, mayUse)
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
func (p *Pipeline) outcome(ctx context.Context, key *rein.Key, a *rein.Approval, mayUse bool) (*WaitResult, error) {
	switch a.Status {
	case rein.StatusApproved:
		if !mayUse {
			return &WaitResult{Approval: a, Decision: rein.Deny, Reason: "approved; the grant is used only by the agent's own key " +
				"(an Authorization header), not by a console session, so nothing was consumed"}, nil
		}
		if _, ok := p.requestArgs(a); !ok {
			return &WaitResult{Approval: a, Decision: rein.Deny, Reason: "approved, and the grant is kept: the action's arguments hold " +
				"secrets that rein keeps only in the memory of the server that was asked (restarted since, or another replica), " +
				"so send the same check again to run it"}, nil
		}
		rec, err := p.useGrant(ctx, key, a)
		if err != nil {
			return nil, err
		}
		latest, lerr := p.Store.Approval(ctx, a.ID)
		if lerr != nil {
			latest = a
		}
		w := &WaitResult{Approval: latest, Decision: rec.Decision, Reason: rec.Reason, CheckID: rec.ID}
		if rec.Decision.Allows() {
			w.Decision, w.RunArgs = rein.Allow, rec.Args
		} else if rec.Decision != rein.Deny {
			w.Decision = rein.Deny // the waiter's answer is run or not: a throttle or ask here does not run
		}
		return w, nil
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

// useGrant uses approval a's grant for key the way a re-submission of the
// same action would: the key read again (a key revoked during the wait uses
// nothing), then the whole decision pipeline on the original check's input,
// restricted to this grant. Locks, the policy in force (a deny now wins, an
// edit is decided again) and the grant's window are all applied, and the
// allowing check is recorded with the consumption in one transaction.
func (p *Pipeline) useGrant(ctx context.Context, key *rein.Key, a *rein.Approval) (*rein.CheckRecord, error) {
	args, _ := p.requestArgs(a) // outcome made sure they are known
	req := &rein.CheckRequest{Tool: a.Tool, Args: args, Agent: a.Agent, Session: a.Session, Intent: a.Intent}
	if orig, err := p.Store.CheckByID(ctx, a.CheckID); err == nil {
		req.Labels, req.Intent = orig.Check.Labels, orig.Check.Intent
		if orig.Check.Cost != 0 {
			cost := orig.Check.Cost
			req.Cost = &cost
		}
	}
	current, err := p.currentKey(ctx, key)
	if err == nil && (current.Tenant != a.Tenant || approval.AgentIdentity(a.Agent) != current.Name) {
		err = fmt.Errorf("only the agent that asked (%s) can use the grant of approval %s; key %q saw the outcome and used nothing", a.Agent, a.ID, key.Name)
	}
	if err != nil {
		return p.refuseGrant(ctx, key, req, a, err.Error())
	}
	return p.decide(ctx, current, req, a.ID)
}

// refuseGrant records a wait that did not use the grant as a deny of the
// action, naming why.
func (p *Pipeline) refuseGrant(ctx context.Context, key *rein.Key, req *rein.CheckRequest, a *rein.Approval, reason string) (*rein.CheckRecord, error) {
	asker := *key
	asker.Name, asker.Tenant = approval.AgentIdentity(a.Agent), a.Tenant
	c, err := p.identity(&asker, req)
	if err != nil {
		return nil, err
	}
	c.key = key
	p.facts(c)
	c.decision, c.reason, c.approval = rein.Deny, reason, a
	return p.record(ctx, c)
}

// expire moves one approval whose time ran out to expired.
func (p *Pipeline) expire(ctx context.Context, id string) error {
	now := p.now()
	timedOut := false
	a, err := p.changeApproval(ctx, id, func(a *rein.Approval) ([]*rein.Entry, error) {
		t := approval.Expire(a, now)
		if !t.Changed() {
			return nil, nil
		}
		timedOut = t.Cause == approval.CauseTimeout
		return []*rein.Entry{transitionEntry(a, t, "rein", now, nil)}, nil
	})
	if err == nil && timedOut && p.Resolved != nil {
		p.Resolved(a)
	}
	return err
}

// Sweep expires every approval and question whose time ran out. The server
// runs it every second; waiters and readers also expire what they find late.
func (p *Pipeline) Sweep(ctx context.Context) error {
	p.secrets.sweep(p.now())
	ids, err := p.Store.DueApprovals(ctx, p.now())
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := p.expire(ctx, id); err != nil {
			return err
		}
	}
	if err := p.escalate(ctx); err != nil {
		return err
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

// Recheck runs the action of every pending approval, and of every approved
// one whose grant is unused, through the current policy and invalidates
// those it now denies. The server calls it after each policy change; a grant
// is also decided again when it is used, so a replica that has not rechecked
// yet still never allows what the policy in force denies.
func (p *Pipeline) Recheck(ctx context.Context) (int, error) {
	n := 0
	for _, status := range []string{rein.StatusPending, rein.StatusApproved} {
		m, err := p.recheck(ctx, status)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (p *Pipeline) recheck(ctx context.Context, status string) (int, error) {
	n := 0
	before := ""
	for {
		page, err := p.Store.Approvals(ctx, "*", rein.ApprovalFilter{Status: status, Limit: 200, Before: before})
		if err != nil {
			return n, err
		}
		for _, a := range page {
			sandbox := p.containmentOf(ctx, a)
			sim, err := simulate(p.Policies.For(a.Tenant), a.Tenant, &rein.CheckRequest{Tool: a.Tool, Args: a.Args,
				Agent: a.Agent, Session: a.Session, Intent: a.Intent}, nil, sandbox, p.now())
			if err == nil && sim.Decision != rein.Deny && len(a.ApprovedArgs) > 0 { // the edited action too
				sim, err = simulate(p.Policies.For(a.Tenant), a.Tenant, &rein.CheckRequest{Tool: a.Tool, Args: a.ApprovedArgs,
					Agent: a.Agent, Session: a.Session, Intent: a.Intent}, nil, sandbox, p.now())
			}
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

// escalate announces the escalations that came due: an approval.escalated
// entry naming the approvers added, and an approval.updated event that
// notifications (webhooks, Slack) deliver. Eligibility itself follows the
// clock (approval.setsAt); this only records and tells.
func (p *Pipeline) escalate(ctx context.Context) error {
	const escalateBatch = 1000 // per sweep; the rest at the next
	now := p.now()
	due, err := p.Store.DueEscalations(ctx, now, escalateBatch)
	if err != nil {
		return err
	}
	for _, id := range due {
		_, err := p.changeApproval(ctx, id, func(x *rein.Approval) ([]*rein.Entry, error) {
			due := approval.Escalation(x, now)
			if x.Status != rein.StatusPending || due <= x.Escalated {
				return nil, nil
			}
			var added []string
			for _, e := range x.Escalations[x.Escalated:due] {
				added = append(added, e.Approvers...)
			}
			x.Escalated = due
			return []*rein.Entry{{TS: now, Tenant: x.Tenant, Kind: rein.KindApprovalEscalated, Actor: "rein", Subject: x.ID,
				Data: map[string]any{"added_approvers": added, "stage": due, "action_hash": x.ActionHash}}}, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
