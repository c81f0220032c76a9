// Package pipeline is rein's one decision path. Every entry point (HTTP, MCP,
// hooks, ACS, SDKs) turns its input into a check and calls Pipeline.Check,
// which runs the stages below in order and records the answer before it is
// returned. Any error on the way becomes a deny that names its cause.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/limit"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/risk"
)

// Pipeline decides checks.
type Pipeline struct {
	Store    Store
	Policies *policy.Active
	// BaseURL is the server's external address, used in approval links.
	BaseURL string
	Log     *slog.Logger
	// Now is the clock; tests may set it.
	Now func() time.Time
	// Events, when set, receives every decision and every change of an
	// approval, question or lock.
	Events *events.Bus
	// AuditArgs chooses, per tool glob, how arguments are kept in audit
	// entries (ArgsRedactSecrets when no rule matches).
	AuditArgs []ArgsRule
	// Observe, when set, is told about every recorded decision (metrics).
	Observe func(rec *rein.CheckRecord, took time.Duration)
	// Resolved, when set, is told about every approval that a vote or the
	// clock resolved: approved, rejected or expired (metrics).
	Resolved func(a *rein.Approval)
	// Replicas, when set, tells the other servers sharing the store about
	// changes made here (several replicas on one PostgreSQL).
	Replicas Replicas
	// SharedLimits, when set, holds the rate-limit buckets for every
	// replica; otherwise they are in this process's memory.
	SharedLimits SharedLimits

	limiter     limit.Limiter                // token buckets of the limit rules
	changes     hub                          // wakes the waiters of approvals that change
	activeLocks atomic.Pointer[[]*rein.Lock] // nil until loaded
	secrets     secretVault                  // agents' own arguments of approvals kept redacted
}

// Check runs one check through every stage: identity -> locks -> facts ->
// session -> limits -> policy -> approval -> record. It returns the recorded
// answer, or an *rein.Error for requests that are not decisions (bad input,
// wrong identity, a reused request_id) and for a store that cannot record.
func (p *Pipeline) Check(ctx context.Context, key *rein.Key, req *rein.CheckRequest) (*rein.CheckRecord, error) {
	return p.decide(ctx, key, req, "")
}

// decide is Check; with grant set, the check may use that approval's grant
// and no other, and never asks anew (the wait path: the agent waited for
// exactly that approval).
func (p *Pipeline) decide(ctx context.Context, key *rein.Key, req *rein.CheckRequest, grant string) (*rein.CheckRecord, error) {
	start := time.Now()
	c, err := p.identity(key, req)
	if err != nil {
		return nil, err
	}
	c.grant = grant
	if rec, err := p.replay(ctx, c); rec != nil || err != nil {
		if err == nil {
			rec, err = p.answered(rec, c.input.Args)
		}
		rec, err = p.replayed(ctx, c, rec, err)
		if err == nil && rec.Decision == rein.Ask && rec.Approval != nil && req.WaitMS > 0 && grant == "" {
			// A retry that waits again waits on the same approval, and
			// its decision is found by the request_id from then on.
			return p.waitAndDecide(ctx, key, req, rec)
		}
		return rec, err
	}
	p.locks(ctx, c)
	p.facts(c)
	p.session(ctx, c)
	p.limits(ctx, c)
	p.policy(c)
	p.approval(ctx, c)
	rec, err := p.record(ctx, c)
	if errors.Is(err, rein.ErrApprovalPending) || errors.Is(err, errGrantGone) {
		// A concurrent check of the same action created the pending approval
		// first, or used the grant first: look again and record once more.
		c.outArgs = c.input.Args
		p.policy(c) // the policy's answer again, before the approval stage changed it
		p.approval(ctx, c)
		rec, err = p.record(ctx, c)
		if errors.Is(err, rein.ErrApprovalPending) || errors.Is(err, errGrantGone) {
			// Still changing: fail closed, and record the deny like any
			// decision, without the approval it could not settle on.
			c.approval, c.created, c.use = nil, false, nil
			c.fail("approvals for this action were changing concurrently, so the action is denied; check again")
			rec, err = p.record(ctx, c)
		}
	}
	if err != nil || !rec.Decision.Allows() {
		c.reservation.Refund() // only allowed actions spend tokens
	}
	if err == nil && p.Observe != nil {
		p.Observe(rec, time.Since(start))
	}
	if err == nil && rec.Decision == rein.Ask && rec.Approval != nil && req.WaitMS > 0 && grant == "" {
		return p.waitAndDecide(ctx, key, req, rec)
	}
	return rec, err
}

// waitAndDecide holds a check with wait_ms until its approval leaves pending
// or the wait ends, then answers as a re-submission would: approved -> allow
// (consuming the grant), rejected -> deny. An approval that timed out, was
// cancelled or invalidated answers deny with that cause, recorded like any
// decision; a wait that ends first answers the ask.
func (p *Pipeline) waitAndDecide(ctx context.Context, key *rein.Key, req *rein.CheckRequest, asked *rein.CheckRecord) (*rein.CheckRecord, error) {
	a, err := p.await(ctx, asked.Approval.ID, time.Now().Add(time.Duration(req.WaitMS)*time.Millisecond))
	if err != nil || a.Status == rein.StatusPending {
		return asked, nil
	}
	again := *req
	// The decision after the wait is a check of its own, found through the
	// ask's request_id (a retry, a reported result): it answers once.
	again.WaitMS, again.RequestID = 0, waitedID(req.RequestID)
	current, keyErr := p.currentKey(ctx, key)
	switch {
	case keyErr != nil:
	case a.Status == rein.StatusApproved:
		return p.decide(ctx, current, &again, a.ID)
	case a.Status == rein.StatusRejected, a.Status == rein.StatusConsumed:
		return p.Check(ctx, current, &again)
	}
	c, err := p.identity(key, &again)
	if err != nil {
		return nil, err
	}
	p.facts(c)
	c.decision, c.approval = rein.Deny, a
	switch {
	case keyErr != nil:
		c.reason = keyErr.Error()
	case a.Status == rein.StatusExpired:
		c.reason = fmt.Sprintf("approval %s timed out: no decision before %s", a.ID, a.ExpiresAt.UTC().Format(time.RFC3339))
	default:
		c.reason = fmt.Sprintf("approval %s was %s", a.ID, a.Status)
	}
	return p.record(ctx, c)
}

// check is the state of one check as it passes the stages.
type check struct {
	key        *rein.Key
	tenant     string
	input      rein.CheckInput
	args       map[string]any
	actionHash string
	at         time.Time

	set         *policy.Set
	assessment  risk.Assessment
	sessionVal  map[string]any
	sandboxVal  map[string]any // the session's containment; nil: not contained
	eval        *policy.Evaluation
	verdicts    map[*policy.Rule]policy.LimitVerdict
	reservation *reservation // tokens taken; refunded unless the action is allowed
	result      *policy.Result

	// The answer so far. done means a stage has settled it (a lock, an error).
	done       bool
	decision   rein.Decision
	reason     string
	rule       string
	outArgs    json.RawMessage
	retryAfter time.Duration
	approval   *rein.Approval
	created    bool              // approval is new and must be stored
	use        *rein.ApprovalUse // the grant this allow consumes
	id         string            // the check's id, once recorded
	grant      string            // when set: use this approval's grant only, never ask anew
}

// fail settles the check as a deny that names its cause (fail closed).
func (c *check) fail(format string, args ...any) {
	c.done, c.decision, c.reason, c.rule = true, rein.Deny, fmt.Sprintf(format, args...), ""
}

// identity: who is acting, in which tenant, on exactly which action.
func (p *Pipeline) identity(key *rein.Key, req *rein.CheckRequest) (*check, error) {
	if !key.Has(rein.RoleAgent, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; checks need the agent role", key.Name, key.Roles)
	}
	// Every entry point's request meets the same rules (names without hidden
	// characters, sizes), not only those that come through POST /v1/check.
	if err := req.Validate(); err != nil {
		return nil, err
	}
	agent, err := rein.AgentFor(key.Name, req.Agent)
	if err != nil {
		return nil, err
	}
	args, err := rein.ParseArgs(req.Args)
	if err != nil {
		return nil, err
	}
	canon, err := rein.Canonical(req.Args)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeBadRequest, `"args" cannot be canonicalised: %v`, err)
	}
	hash, err := rein.ActionHash(key.Tenant, agent, req.Session, req.Tool, canon)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeBadRequest, "cannot hash the action: %v", err)
	}
	c := &check{key: key, tenant: key.Tenant, args: args, actionHash: hash, at: p.now()}
	c.input = rein.CheckInput{Tool: req.Tool, Args: canon, Session: req.Session, Agent: agent, Intent: req.Intent,
		Labels: req.Labels, RequestID: req.RequestID, Batch: req.Batch}
	if req.Cost != nil {
		c.input.Cost = *req.Cost
	}
	if c.input.Labels == nil {
		c.input.Labels = map[string]string{}
	}
	c.outArgs = canon
	c.set = p.Policies.For(c.tenant)
	return c, nil
}

// replay answers a retried request_id with the stored answer; the same id
// for another action is a conflict, never a second decision.
func (p *Pipeline) replay(ctx context.Context, c *check) (*rein.CheckRecord, error) {
	if c.input.RequestID == "" {
		return nil, nil
	}
	rec, err := p.byRequestID(ctx, c.key.ID, c.input.RequestID)
	switch {
	case errors.Is(err, rein.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot look up request_id %q: the store is unavailable; retry later", c.input.RequestID)
	case rec.ActionHash != c.actionHash:
		return nil, rein.Errorf(rein.ECodeConflict, "request_id %q was already used for a different action; use a new request_id for a new check", c.input.RequestID)
	}
	return rec, nil
}

// replayed answers a retry with its stored answer, except that a kill
// switch or an ended session wins over an allow given before it: the retry
// is then a recorded deny that names both (it cannot reuse the request_id).
func (p *Pipeline) replayed(ctx context.Context, c *check, rec *rein.CheckRecord, err error) (*rein.CheckRecord, error) {
	if err != nil || !rec.Decision.Allows() {
		return rec, err
	}
	p.locks(ctx, c)
	p.session(ctx, c)
	if !c.done {
		return rec, nil
	}
	c.reason = fmt.Sprintf("request_id %q was answered %s at %s, but since then: %s", c.input.RequestID, rec.Decision,
		rec.CreatedAt.UTC().Format(time.RFC3339), c.reason)
	c.input.RequestID = ""
	p.facts(c)
	return p.record(ctx, c)
}

// locks: a matching kill switch denies the check before policy runs (and
// so before an approval's grant could be used).
func (p *Pipeline) locks(ctx context.Context, c *check) {
	l, err := p.lockFor(ctx, c.tenant, c.input.Agent, c.input.Session, c.input.Tool, c.at)
	switch {
	case err != nil:
		c.fail("locks could not be read, so every check is denied: %v", err)
	case l != nil:
		c.done, c.decision, c.reason, c.rule = true, rein.Deny, lockReason(l), ""
	}
}

// facts: rein's own reading of the arguments (risk.md). Client labels are
// kept apart and can never remove or override a derived tag.
func (p *Pipeline) facts(c *check) {
	p.guard(c, "facts", func() {
		c.assessment = risk.Assess(c.input.Tool, c.args, risk.Env{Tools: c.set.Tools(), Workspace: c.set.Workspace(), Lookup: LookupHost})
	})
	if c.assessment.Facts == nil { // Assess failed and the check is denied: no facts
		c.assessment = risk.Assessment{Tags: []string{}, Facts: risk.EmptyFacts()}
	}
}

// session: the session's history as policy sees it (calls, cost, tainted,
// repeats, denials), as the checks recorded before this one left it.
func (p *Pipeline) session(ctx context.Context, c *check) {
	c.sessionVal = SessionDefaults(c.input.Session)
	if c.done || c.input.Session == "" {
		return
	}
	var s *rein.Session
	var err error
	if c.set.ReadsSession() {
		var repeats int64
		s, repeats, err = p.Store.SessionState(ctx, c.tenant, c.input.Session, c.actionHash)
		c.sessionVal["repeats"] = repeats
	} else { // no rule reads the session: only whether it ended matters
		s, err = p.Store.SessionEnded(ctx, c.tenant, c.input.Session)
	}
	if err != nil {
		c.fail("session %q could not be read: %v", c.input.Session, err)
		return
	}
	if s != nil && s.EndedAt != nil {
		c.fail("session %q was ended by %s at %s; start a new session", c.input.Session, s.EndedBy, s.EndedAt.UTC().Format(time.RFC3339))
		return
	}
	if s != nil {
		c.sessionVal["calls"], c.sessionVal["cost"], c.sessionVal["tainted"], c.sessionVal["denials"] = s.Calls, s.Cost, s.Tainted, s.Denials
		// Only the key that contains the session checks inside it: another
		// key of the tenant naming the session is not contained.
		if sb := s.Sandbox; sb != nil && c.key != nil && sb.KeyID == c.key.ID {
			c.sandboxVal = sandboxVar(sb)
		}
	}
}

// limits: a token is reserved in the bucket of every matched limit rule,
// all or none; a rule whose bucket is empty is exceeded, and the policy
// stage answers throttle. The reservation is refunded unless the final
// decision allows the action (Check does that once the answer is recorded).
func (p *Pipeline) limits(ctx context.Context, c *check) {
	if c.done {
		return
	}
	p.guard(c, "limits", func() { c.eval = c.set.Evaluate(p.policyInput(c)) })
	c.verdicts = nil
	if c.done {
		return
	}
	matched := c.eval.Limits()
	if len(matched) == 0 {
		return
	}
	rates := make([]limit.Rate, len(matched))
	for i, m := range matched {
		key := []string{m.Tier, m.Rule.ID, strconv.Itoa(m.Rule.Limit.Rate), m.Rule.Limit.Per.String()}
		for _, by := range m.Rule.Limit.By {
			switch by {
			case "agent":
				// The authenticated identity (the key's name in its tenant),
				// never the sub-agent name the caller chose: a limit cannot be
				// sidestepped by calling as bot/n0, bot/n1, ...
				key = append(key, "agent="+c.tenant+"/"+approval.AgentIdentity(c.input.Agent))
			case "session":
				key = append(key, "session="+c.input.Session)
			case "tenant":
				key = append(key, "tenant="+c.tenant)
			case "tool":
				key = append(key, "tool="+c.input.Tool)
			}
		}
		rates[i] = limit.Rate{Key: strings.Join(key, "\x00"), Rate: m.Rule.Limit.Rate, Per: m.Rule.Limit.Per}
	}
	res, verdicts, err := p.reserve(ctx, rates, c.at)
	if err != nil {
		c.fail("rate limits could not be read: %v", err)
		return
	}
	c.reservation = res
	c.verdicts = make(map[*policy.Rule]policy.LimitVerdict, len(matched))
	for i, m := range matched {
		c.verdicts[m.Rule] = policy.LimitVerdict{Exceeded: verdicts[i].Exceeded, RetryAfter: verdicts[i].RetryAfter}
	}
}

// policy: the most restrictive answer of the matching rules.
func (p *Pipeline) policy(c *check) {
	if c.done {
		return
	}
	var res *policy.Result
	p.guard(c, "policy", func() { res = c.eval.Decide(c.verdicts) })
	if c.done {
		return
	}
	c.result = res
	c.decision, c.reason, c.rule, c.retryAfter = res.Decision, res.Reason, res.Rule, res.RetryAfter
	if res.Modified {
		out, err := rein.Canonical(res.Args)
		if err != nil {
			c.fail("modified arguments cannot be encoded: %v", err)
			return
		}
		c.outArgs = out
		p.guard(c, "policy", func() { p.modified(c, res.Args) })
	}
}

// modified decides the arguments a modify rule produced as a check of them
// would be decided (settle); a refusal makes the check a deny naming it.
func (p *Pipeline) modified(c *check, args map[string]any) {
	in := *p.policyInput(c)
	if why := settle(c.set, &in, args, c.rule, c.outArgs, c.verdicts); why != "" {
		c.fail("%s", why)
	}
}

// settle decides the arguments out (args, canonical) that the modify rule
// rule produced from the check in, as a check of them would be decided:
// facts derived again, every tier's rules again. They may run unless a rule
// denies, asks for, throttles or modifies them differently; then settle
// says why not, so that a modify rule (a tenant's, say) never turns an
// action into one that policy denies or asks for. Check and Simulate both
// use it.
func settle(set *policy.Set, in *policy.Input, args map[string]any, rule string, out json.RawMessage, verdicts map[*policy.Rule]policy.LimitVerdict) string {
	a := risk.Assess(in.Tool, args, risk.Env{Tools: set.Tools(), Workspace: set.Workspace(), Lookup: LookupHost})
	in.Args, in.Risk, in.Facts = args, a.Tags, a.Facts
	again := set.Evaluate(in).Decide(verdicts)
	switch {
	case again.Decision == rein.Allow, again.Rule == "" && again.Decision == rein.Deny:
		// allowed, or matched by no rule: the modify rule that produced them
		// is what allows them (a default deny does not undo a modify)
		return ""
	case again.Decision == rein.Modify:
		if o, err := rein.Canonical(again.Args); err == nil && string(o) == string(out) {
			return ""
		}
		return fmt.Sprintf("the arguments modified by rule %q would be modified again by rule %q; rein runs only arguments policy settles on", rule, again.Rule)
	default:
		return fmt.Sprintf("the arguments modified by rule %q would be %s by rule %q (%s), so the action is denied", rule, again.Decision, again.Rule, again.Reason)
	}
}

// approval: an ask is bound to its action hash (api.md, re-submission). A
// pending approval for the same action is reused rather than duplicated; an
// approved one yields one allow, with the approved (possibly edited)
// arguments, and its grant is consumed in the same transaction that records
// this check; a rejection stands for that action. An approval that expired,
// was cancelled, invalidated or already used leaves the action to be asked
// anew.
func (p *Pipeline) approval(ctx context.Context, c *check) {
	if c.done || c.decision != rein.Ask {
		return
	}
	c.approval, c.created, c.use = nil, false, nil
	prev, err := p.Store.LatestApproval(ctx, c.tenant, c.actionHash)
	switch {
	case errors.Is(err, rein.ErrNotFound):
	case err != nil:
		c.fail("cannot look up approvals for this action: %v", err)
		return
	}
	if c.grant != "" && (prev == nil || prev.ID != c.grant || prev.Status != rein.StatusApproved ||
		prev.GrantExpiresAt == nil || !c.at.Before(*prev.GrantExpiresAt)) {
		c.decision, c.reason = rein.Deny, fmt.Sprintf("approval %s's grant was already used or has expired", c.grant)
		return
	}
	switch {
	case prev == nil:
	case prev.Status == rein.StatusPending && c.at.Before(prev.ExpiresAt):
		c.approval = prev
		return
	case prev.Status == rein.StatusRejected:
		// The rejecting approver's message reaches the agent, as it does
		// through the approval's wait endpoint.
		c.decision, c.reason, c.approval = rein.Deny, "rejected"+lastMessage(prev, approval.Reject), prev
		return
	case prev.Status == rein.StatusApproved && prev.GrantExpiresAt != nil && c.at.Before(*prev.GrantExpiresAt):
		run, refused := p.stillGranted(c, prev)
		if refused == "" {
			c.decision, c.reason, c.approval, c.outArgs = rein.Allow, "approved: "+prev.ID, prev, run
			if len(prev.ApprovedArgs) > 0 {
				c.reason = "approved with edited arguments: " + prev.ID
			}
			if prev.Grant != "" && prev.Grant != rein.GrantOnce {
				c.reason += fmt.Sprintf(" (grant %s, use %d, until %s)", prev.Grant, prev.Uses+1, prev.GrantExpiresAt.UTC().Format(time.RFC3339))
			}
			c.use = &rein.ApprovalUse{ID: prev.ID, Change: p.consume(c)}
			return
		}
		if c.grant != "" {
			c.decision, c.reason, c.approval = rein.Deny, refused, prev
			return
		}
		// The grant would not be granted now: the action is asked anew,
		// under the policy in force.
		c.reason = refused + "; " + c.reason
	}
	if c.grant != "" {
		c.decision, c.reason = rein.Deny, fmt.Sprintf("approval %s's grant was already used or has expired", c.grant)
		return
	}
	a := c.result.Approval
	c.approval = &rein.Approval{
		ID: rein.NewID("apr"), Tenant: c.tenant, Status: rein.StatusPending, ActionHash: c.actionHash,
		Agent: c.input.Agent, AgentKeyID: c.key.ID, Session: c.input.Session, Tool: c.input.Tool, Args: c.outArgs, Intent: c.input.Intent,
		Risk: c.assessment.Tags, Rule: c.rule, Reason: c.reason, Approvers: a.Approvers, ApproverSets: c.result.ApproverSets,
		Quorum: a.Quorum, RejectQuorum: a.RejectQuorum, GrantTTL: a.GrantTTL, Grants: a.Grants, Batch: c.input.Batch,
		Escalations: a.Escalate, StepUp: a.StepUp, Asks: c.result.Asks, Votes: []rein.Vote{},
		CreatedAt: c.at, ExpiresAt: c.at.Add(a.TTL), Revision: 1,
	}
	c.created = true
}

// stillGranted decides whether approval a's grant may be used by check c:
// only if it would still be granted now. The policy in force has already
// asked for the original action (a deny or a lock would have ended the check
// before); an approver's edit is decided again by the same policy, and a deny
// of it wins; and the votes must still meet what policy asks for now, for the
// original and the edited action alike. It returns the arguments to run, or
// why the grant is not used.
func (p *Pipeline) stillGranted(c *check, a *rein.Approval) (run json.RawMessage, refused string) {
	sets, quorum := needs(c.result)
	run = c.outArgs
	if len(a.ApprovedArgs) > 0 {
		edited, err := p.reveal(c.input.Tool, a.ApprovedArgs, c.input.Args)
		if err != nil {
			return nil, fmt.Sprintf("approval %s's edited arguments cannot be run: %v, so the grant is not used", a.ID, err)
		}
		sim, err := simulate(c.set, c.tenant, &rein.CheckRequest{Tool: c.input.Tool, Args: edited, Agent: c.input.Agent,
			Session: c.input.Session, Intent: c.input.Intent, Labels: c.input.Labels, Cost: &c.input.Cost}, c.sessionVal, c.sandboxVal, c.at)
		switch {
		case err != nil:
			return nil, fmt.Sprintf("approval %s's edited arguments cannot be decided again (%v), so the grant is not used", a.ID, err)
		case sim.Decision == rein.Deny:
			return nil, fmt.Sprintf("policy now denies the edited action of approval %s (rule %q: %s), so its grant is not used", a.ID, sim.Rule, sim.Reason)
		case sim.Approval != nil:
			more, q := simNeeds(sim.Approval)
			sets, quorum = append(sets, more...), max(quorum, q)
		}
		run = sim.Args
	}
	if !approval.Meets(a, sets, quorum) {
		return nil, fmt.Sprintf("approval %s no longer meets the approvals policy asks for now (%s, quorum %d), so its grant is not used; ask again",
			a.ID, describeSets(sets), max(quorum, 1))
	}
	return run, ""
}

// needs are the approver sets and quorum a policy result asks for.
func needs(res *policy.Result) ([][]string, int) {
	if res == nil || res.Approval == nil {
		return nil, 0
	}
	if len(res.ApproverSets) > 0 {
		return res.ApproverSets, res.Approval.Quorum
	}
	return [][]string{res.Approval.Approvers}, res.Approval.Quorum
}

func simNeeds(n *ApprovalNeeds) ([][]string, int) {
	if len(n.Approvers) == 0 && len(n.ApproverSets) == 0 {
		return nil, 0
	}
	if len(n.ApproverSets) > 0 {
		return n.ApproverSets, n.Quorum
	}
	return [][]string{n.Approvers}, n.Quorum
}

func describeSets(sets [][]string) string {
	parts := make([]string, len(sets))
	for i, s := range sets {
		parts[i] = strings.Join(s, " or ")
	}
	return strings.Join(parts, "; and ")
}

// currentKey reads key again after a long wait: a key revoked (or gone)
// meanwhile uses no grant.
func (p *Pipeline) currentKey(ctx context.Context, key *rein.Key) (*rein.Key, error) {
	k, err := p.Store.KeyByID(ctx, key.ID)
	switch {
	case errors.Is(err, rein.ErrNotFound) || err == nil && k.RevokedAt != nil:
		return nil, fmt.Errorf("key %q was revoked while it waited, so the approval's grant is not used", key.Name)
	case err != nil:
		return nil, fmt.Errorf("key %q could not be read again after the wait (%v), so the approval's grant is not used", key.Name, err)
	}
	return k, nil
}

// consume uses the grant for check c, inside the transaction that records c.
func (p *Pipeline) consume(c *check) rein.ApprovalChange {
	return func(a *rein.Approval) ([]*rein.Entry, error) {
		tr, err := approval.Consume(a, c.at)
		if err != nil {
			return nil, errGrantGone
		}
		return []*rein.Entry{transitionEntry(a, tr, c.input.Agent, c.at, map[string]any{"check_id": c.id, "grant": a.Grant, "uses": a.Uses})}, nil
	}
}

// errGrantGone: between looking and recording, another check used the grant
// or it expired.
var errGrantGone = errors.New("the approval's grant was used or expired meanwhile")

// record makes the answer durable, with its audit entries, before it is returned.
func (p *Pipeline) record(ctx context.Context, c *check) (*rein.CheckRecord, error) {
	id := rein.NewID("chk")
	c.id = id
	rec := &rein.CheckRecord{
		CheckResponse: rein.CheckResponse{
			ID: id, Decision: c.decision, Reason: c.reason, Rule: c.rule, Risk: c.assessment.Tags,
			ActionHash: c.actionHash, Args: c.outArgs,
		},
		Tenant: c.tenant, CreatedAt: c.at, Check: c.input, Facts: c.assessment.Facts, Shadow: []rein.ShadowMatch{}, KeyID: c.key.ID,
		Taints: c.assessment.TaintsSession,
	}
	if c.set != nil {
		rec.PolicyVersion = c.set.Version
	}
	if c.result != nil && c.result.Shadow != nil {
		rec.Shadow = c.result.Shadow
	}
	if c.decision == rein.Throttle {
		ms := c.retryAfter.Milliseconds()
		rec.RetryAfterMS = &ms
	}
	entries := []*rein.Entry{{TS: c.at, Tenant: c.tenant, Kind: rein.KindCheck, Actor: c.input.Agent, Subject: id,
		PolicyVersion: rec.PolicyVersion, Data: p.checkEntryData(rec, c)}}
	var created *rein.Approval
	if c.approval != nil {
		rec.Approval = c.approval.Ref(p.BaseURL)
		if c.use != nil && (c.approval.Grant == "" || c.approval.Grant == rein.GrantOnce) {
			rec.Approval.Status = rein.StatusConsumed // by this check, in the same transaction
		}
		if c.created {
			c.approval.CheckID = id
			created = c.approval
			entries = append(entries, &rein.Entry{TS: c.at, Tenant: c.tenant, Kind: rein.KindApprovalCreated,
				Actor: c.input.Agent, Subject: c.approval.ID, PolicyVersion: rec.PolicyVersion, Data: map[string]any{
					"check_id": id, "action_hash": c.actionHash, "rule": c.rule, "approvers": c.approval.Approvers,
					"quorum": c.approval.Quorum, "expires_at": c.approval.ExpiresAt.UTC().Format(time.RFC3339Nano),
				}})
		}
	}
	if review, e := p.checkReview(c, rec); review != nil {
		review.Args = p.concealed(review.Tool, review.Args)
		rec.Review, entries = review, append(entries, e)
	}
	if created != nil {
		p.keepSecrets(created)
	}
	stored, err := p.Store.RecordCheck(ctx, p.kept(rec), created, c.use, entries)
	switch {
	case errors.Is(err, errGrantGone):
		return nil, err
	case errors.Is(err, rein.ErrDuplicateRequest) && stored.ActionHash == c.actionHash:
		c.reservation.Refund()                  // the answer that stands spent its own tokens
		return p.answered(stored, c.input.Args) // a concurrent retry recorded first: its answer stands
	case errors.Is(err, rein.ErrDuplicateRequest):
		return nil, rein.Errorf(rein.ECodeConflict, "request_id %q was already used for a different action; use a new request_id for a new check", c.input.RequestID)
	case errors.Is(err, rein.ErrApprovalPending):
		return nil, err
	case err != nil:
		p.Log.Error("recording a check failed; answering unavailable", "err", err, "tool", c.input.Tool, "tenant", c.tenant)
		return nil, rein.Errorf(rein.ECodeUnavailable, "the decision could not be recorded, so the action is denied: %v; retry later", err)
	}
	p.publish(events.Decision, stored.Tenant, decisionEventOf(stored))
	if stored.Review != nil {
		p.publish(events.ReviewCreated, stored.Tenant, stored.Review)
	}
	// The agent is answered with the arguments it must run, as decided;
	// only what is kept has its secrets redacted.
	answer := *stored
	answer.Check.Args, answer.Args = rec.Check.Args, rec.Args
	switch {
	case created != nil:
		p.publish(events.ApprovalCreated, created.Tenant, created)
	case c.use != nil:
		if a, err := p.Store.Approval(ctx, c.use.ID); err == nil {
			p.publish(events.ApprovalUpdated, a.Tenant, a) // consumed by this check
			if a.Status == rein.StatusConsumed {
				p.secrets.forget(a.ID) // its grant is used: its arguments are not needed again
			}
		}
		p.wake(c.use.ID)
	}
	return &answer, nil
}

func (p *Pipeline) checkEntryData(rec *rein.CheckRecord, c *check) map[string]any {
	args, _ := p.auditArgs(c, c.input.Args)
	d := make(map[string]any, len(args)+20) // every key below, without growing
	for k, v := range args {
		d[k] = v
	}
	d["tool"], d["session"], d["agent"] = c.input.Tool, c.input.Session, c.input.Agent
	d["intent"], d["labels"], d["cost"] = c.input.Intent, c.input.Labels, rein.Decimal(c.input.Cost)
	d["request_id"], d["key_id"] = c.input.RequestID, c.key.ID
	d["decision"], d["reason"], d["rule"], d["risk"] = rec.Decision, rec.Reason, rec.Rule, rec.Risk
	d["action_hash"], d["shadow"] = rec.ActionHash, rec.Shadow
	if string(rec.Args) != string(c.input.Args) {
		res, _ := p.auditArgs(c, rec.Args)
		for k, v := range res {
			d["result_"+k] = v
		}
	}
	if c.approval != nil {
		d["approval_id"] = c.approval.ID
	}
	if rec.RetryAfterMS != nil {
		d["retry_after_ms"] = *rec.RetryAfterMS
	}
	return d
}

// guard runs a stage's work and turns a panic into a deny that names the stage.
func (p *Pipeline) guard(c *check, stage string, work func()) {
	defer func() {
		if r := recover(); r != nil {
			p.Log.Error("decision stage panicked; denying", "stage", stage, "panic", r, "tool", c.input.Tool)
			c.fail("%s stage failed: internal error (%v)", stage, r)
		}
	}()
	work()
}

func (p *Pipeline) policyInput(c *check) *policy.Input {
	return &policy.Input{
		Tool: c.input.Tool, Args: c.args, Agent: c.input.Agent, Tenant: c.tenant, Intent: c.input.Intent,
		Labels: c.input.Labels, Risk: c.assessment.Tags, Facts: c.assessment.Facts, Session: c.sessionVal,
		Sandbox: c.sandboxVal, Cost: c.input.Cost, Now: c.at,
	}
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
