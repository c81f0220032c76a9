package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/events"
)

// Reviews after the fact (reviews.md): allowed checks that a rule samples
// or always queues, results that failed or looked wrong, and sessions that
// end tainted or with many denials become review items; a reviewer marks
// each ok or concern, and a concern can lock the agent or the session in the
// same step and carry a proposal for a tighter policy.

// sampled reports whether check id falls in a rule's sample: a hash of the
// id, so that every replica (and a later audit) agrees which checks were
// drawn.
func sampled(id string, share float64) bool {
	if share >= 1 {
		return true
	}
	sum := sha256.Sum256([]byte(id))
	return float64(binary.BigEndian.Uint64(sum[:8]))/float64(^uint64(0)) < share
}

// checkReview is the review an allowed check queues when a matching rule
// asks for one and the check falls in its sample, with its audit entry:
// both are stored with the check, in the same transaction, so queuing adds
// no write of its own to the check path and never gets lost on its own.
func (p *Pipeline) checkReview(c *check, rec *rein.CheckRecord) (*rein.Review, *rein.Entry) {
	if c.result == nil || len(c.result.Reviews) == 0 || !rec.Decision.Allows() {
		return nil, nil
	}
	var why, reviewers []string
	rule := ""
	for _, r := range c.result.Reviews {
		if !sampled(rec.ID, r.Sample) {
			continue
		}
		if rule == "" {
			rule = r.Rule
		}
		if r.Sample >= 1 {
			why = append(why, fmt.Sprintf("rule %s: every allowed check", r.Rule))
		} else {
			why = append(why, fmt.Sprintf("rule %s: sampled (%.4g%% of allowed checks)", r.Rule, r.Sample*100))
		}
		for _, s := range r.Reviewers {
			if !slices.Contains(reviewers, s) {
				reviewers = append(reviewers, s)
			}
		}
	}
	if len(why) == 0 {
		return nil, nil
	}
	risk := rec.Risk
	if risk == nil {
		risk = []string{}
	}
	r := &rein.Review{ID: rein.NewID("rev"), Status: rein.ReviewOpen, CreatedAt: rec.CreatedAt, Kind: "check", Tenant: rec.Tenant,
		CheckID: rec.ID, Session: rec.Check.Session, Agent: rec.Check.Agent, Tool: rec.Check.Tool, Args: rec.Args, Risk: risk,
		Rule: rule, Why: why, Reviewers: reviewers}
	return r, reviewEntry(r)
}

// reviewEntry is the review.created audit entry of r.
func reviewEntry(r *rein.Review) *rein.Entry {
	return &rein.Entry{TS: r.CreatedAt, Tenant: r.Tenant, Kind: rein.KindReviewCreated, Actor: "rein", Subject: r.ID,
		Data: map[string]any{"kind": r.Kind, "check_id": r.CheckID, "session": r.Session, "agent": r.Agent, "why": r.Why, "reviewers": r.Reviewers}}
}

// queueResultReview queues a review of a check whose result failed or was
// flagged, when the policy's reviews: ask for it.
func (p *Pipeline) queueResultReview(ctx context.Context, rec *rein.CheckRecord, res *rein.CheckResult, anomalies []string) {
	triggers := p.Policies.For(rec.Tenant).Reviews()
	var why []string
	if triggers.FailedResults && res.Status == "failed" {
		why = append(why, "result failed: "+res.Summary)
	}
	if triggers.Anomalies {
		for _, a := range anomalies {
			why = append(why, "anomaly: "+a)
		}
	}
	if len(why) == 0 {
		return
	}
	r := *res
	p.createReview(ctx, &rein.Review{Kind: "check", Tenant: rec.Tenant, CheckID: rec.ID, Session: rec.Check.Session,
		Agent: rec.Check.Agent, Tool: rec.Check.Tool, Args: rec.Args, Risk: rec.Risk, Rule: rec.Rule, Why: why,
		Reviewers: triggers.Reviewers, Result: &r})
}

// queueSessionReview queues a review of a whole session that ended tainted
// or with many denials, when the policy's reviews: ask for it.
func (p *Pipeline) queueSessionReview(ctx context.Context, s *rein.Session) {
	triggers := p.Policies.For(s.Tenant).Reviews()
	var why []string
	if triggers.TaintedSessions && s.Tainted {
		why = append(why, "session ended tainted")
	}
	if triggers.SessionDenials > 0 && s.Denials >= int64(triggers.SessionDenials) {
		why = append(why, fmt.Sprintf("session ended with %d denials", s.Denials))
	}
	if len(why) == 0 {
		return
	}
	p.createReview(ctx, &rein.Review{Kind: "session", Tenant: s.Tenant, Session: s.ID, Agent: s.Agent, Risk: []string{},
		Why: why, Reviewers: triggers.Reviewers})
}

// createReview stores a review (audited) and announces it. It follows the
// recording of what it reviews: a store failure here is logged, the answer
// already given stands.
func (p *Pipeline) createReview(ctx context.Context, r *rein.Review) {
	r.ID, r.Status, r.CreatedAt = rein.NewID("rev"), rein.ReviewOpen, p.now()
	if r.Risk == nil {
		r.Risk = []string{}
	}
	if err := p.Store.CreateReview(context.WithoutCancel(ctx), r, []*rein.Entry{reviewEntry(r)}); err != nil {
		p.Log.Error("a review after the fact could not be queued", "err", err, "check", r.CheckID, "session", r.Session)
		return
	}
	p.publish(events.ReviewCreated, r.Tenant, r)
}

// reviewFor loads a review the key may see: its tenant's, for a reviewer
// (a key the review names, an approver, admin or auditor).
func (p *Pipeline) reviewFor(ctx context.Context, key *rein.Key, id string) (*rein.Review, error) {
	r, err := p.Store.Review(ctx, id)
	if errors.Is(err, rein.ErrNotFound) || err == nil && (!key.Sees(r.Tenant) || !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)) {
		return nil, rein.Errorf(rein.ECodeNotFound, "review %s not found", id)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read review %s: %v", id, err)
	}
	return r, nil
}

// Review returns one review.
func (p *Pipeline) Review(ctx context.Context, key *rein.Key, id string) (*rein.Review, error) {
	return p.reviewFor(ctx, key, id)
}

// Reviews lists a tenant's reviews (open first by default) for approvers,
// admins and auditors.
func (p *Pipeline) Reviews(ctx context.Context, key *rein.Key, tenant string, f rein.ReviewFilter) ([]*rein.Review, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; reviews are for approvers, admins and auditors", key.Name, key.Roles)
	}
	list, err := p.Store.Reviews(ctx, tenant, f)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot list reviews: %v", err)
	}
	return list, nil
}

// ReviewVerdict is a reviewer's decision on a review.
type ReviewVerdict struct {
	Verdict  string `json:"verdict"`  // ok or concern
	Message  string `json:"message"`  // why
	Lock     string `json:"lock"`     // with a concern: "agent" or "session" to lock it now
	Proposal string `json:"proposal"` // with a concern: the tighter policy proposed, as text
}

// DecideReview records a reviewer's verdict: a key the review names (its
// reviewers' selectors) or an admin; never the agent's own identity. A
// concern may lock the agent or the session in the same step (the lock is
// created first, then the verdict names it) and carry a proposal.
func (p *Pipeline) DecideReview(ctx context.Context, key *rein.Key, id string, v ReviewVerdict) (*rein.Review, error) {
	cur, err := p.reviewFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	voter := approval.VoterOf(key)
	named := slices.ContainsFunc(cur.Reviewers, func(s string) bool { return approval.Matches(s, voter) })
	if !key.Has(rein.RoleAdmin) && !named {
		return nil, rein.Errorf(rein.ECodeForbidden, "review %s is for %v; key %q is not one of them", id, cur.Reviewers, key.Name)
	}
	if approval.AgentIdentity(cur.Agent) == key.Name {
		return nil, rein.Errorf(rein.ECodeForbidden, "the agent %q cannot review its own actions", cur.Agent)
	}
	if v.Verdict != rein.ReviewConcern && (v.Lock != "" || v.Proposal != "") {
		return nil, rein.Errorf(rein.ECodeBadRequest, `"lock" and "proposal" go with a concern`)
	}
	lockID := ""
	if v.Lock != "" {
		target := rein.LockTarget{}
		switch v.Lock {
		case "agent":
			target.Agent = approval.AgentIdentity(cur.Agent)
		case "session":
			if cur.Session == "" {
				return nil, rein.Errorf(rein.ECodeBadRequest, "review %s has no session to lock; lock the agent", id)
			}
			target.Session = cur.Session
		default:
			return nil, rein.Errorf(rein.ECodeBadRequest, `"lock" is "agent" or "session"`)
		}
		if !key.Has(rein.RoleAdmin) {
			return nil, rein.Errorf(rein.ECodeForbidden, "locking needs the admin role; mark the concern and ask an admin to lock")
		}
		l, err := p.CreateLock(ctx, key, &LockRequest{Target: target, Reason: "review " + id + ": " + v.Message, Tenant: cur.Tenant})
		if err != nil {
			return nil, err
		}
		lockID = l.ID
	}
	now := p.now()
	r, err := p.Store.ChangeReview(ctx, id, func(r *rein.Review) ([]*rein.Entry, error) {
		if err := r.Decide(v.Verdict, v.Message, key.Name, now); err != nil {
			return nil, err
		}
		r.LockID, r.Proposal = lockID, v.Proposal
		return []*rein.Entry{{TS: now, Tenant: r.Tenant, Kind: rein.KindReviewDecided, Actor: key.Name, Subject: r.ID,
			Data: map[string]any{"verdict": v.Verdict, "message": v.Message, "lock_id": lockID, "proposal": v.Proposal,
				"check_id": r.CheckID, "session": r.Session}}}, nil
	})
	if err != nil {
		var re *rein.Error
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, rein.Errorf(rein.ECodeUnavailable, "the verdict could not be recorded: %v; retry", err)
	}
	p.publish(events.ReviewUpdated, r.Tenant, r)
	return r, nil
}

// ReviewStats is, per rule, how many of its allowed checks were queued for
// review, how many are still open, and how many drew a concern: which allow
// rules are too loose.
type ReviewStats struct {
	Rule     string  `json:"rule"`
	Reviews  int     `json:"reviews"`
	Open     int     `json:"open"`
	OK       int     `json:"ok"`
	Concerns int     `json:"concerns"`
	Share    float64 `json:"concern_share"` // concerns / decided
}

// ReviewStatsFor counts a tenant's reviews of checks per rule (sessions
// under "(sessions)").
func (p *Pipeline) ReviewStatsFor(ctx context.Context, key *rein.Key, tenant string) ([]ReviewStats, error) {
	by := map[string]*ReviewStats{}
	cursor := ""
	for {
		page, err := p.Reviews(ctx, key, tenant, rein.ReviewFilter{Limit: 500, Before: cursor})
		if err != nil {
			return nil, err
		}
		for _, r := range page {
			rule := r.Rule
			if r.Kind == "session" {
				rule = "(sessions)"
			}
			s := by[rule]
			if s == nil {
				s = &ReviewStats{Rule: rule}
				by[rule] = s
			}
			s.Reviews++
			switch r.Status {
			case rein.ReviewOpen:
				s.Open++
			case rein.ReviewOK:
				s.OK++
			case rein.ReviewConcern:
				s.Concerns++
			}
		}
		if len(page) == 0 {
			break
		}
		cursor = page[len(page)-1].ID
	}
	out := make([]ReviewStats, 0, len(by))
	for _, s := range by {
		if d := s.OK + s.Concerns; d > 0 {
			s.Share = float64(s.Concerns) / float64(d)
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b ReviewStats) int {
		if a.Concerns != b.Concerns {
			return b.Concerns - a.Concerns
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return out, nil
}
