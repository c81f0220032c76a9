package pipeline

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/risk"
)

// maxReplayExamples bounds the changes a replay lists.
const maxReplayExamples = 50

// Replay decides the tenant's recorded checks since since with the policy
// in force and with candidate in place of tier ("" the global tier, else
// the tenant's own tier), and reports what changes. It reads only: nothing
// is recorded, no approval created, no token spent. progress, when set, is
// told how many checks were replayed so far.
func (p *Pipeline) Replay(ctx context.Context, tenant, tier string, candidate *policy.Policy, since time.Time, progress func(int)) (*rein.Replay, error) {
	r := p.newReplay(tenant, tier, candidate, since)
	cursor := ""
	for {
		page, err := p.Store.Checks(ctx, tenant, rein.CheckFilter{Since: since, Limit: 500, Before: cursor})
		if err != nil {
			return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read recorded checks: %v", err)
		}
		for _, rec := range page {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r.add(rec)
		}
		if progress != nil {
			progress(r.out.Checks)
		}
		if len(page) == 0 {
			break
		}
		cursor = page[len(page)-1].ID
	}
	return r.done(), nil
}

// ReplayConcerns is Replay over the actions people marked as a concern
// since since (reviews.md): the checks of check reviews, and every check of
// the sessions of session reviews. It shows whether a candidate would have
// stopped what reviewers did not like.
func (p *Pipeline) ReplayConcerns(ctx context.Context, tenant, tier string, candidate *policy.Policy, since time.Time, progress func(int)) (*rein.Replay, error) {
	r := p.newReplay(tenant, tier, candidate, since)
	r.out.Input = rein.ReplayConcerns
	seen := map[string]bool{}
	add := func(rec *rein.CheckRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !seen[rec.ID] && !rec.CreatedAt.Before(since) {
			seen[rec.ID] = true
			r.add(rec)
		}
		return nil
	}
	f := rein.ReviewFilter{Status: rein.ReviewConcern, Limit: 500}
	for {
		reviews, err := p.Store.Reviews(ctx, tenant, f)
		if err != nil {
			return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read reviews: %v", err)
		}
		for _, rv := range reviews {
			if rv.Tenant != tenant {
				continue
			}
			if rv.CheckID != "" {
				rec, err := p.Store.CheckByID(ctx, rv.CheckID)
				if errors.Is(err, rein.ErrNotFound) {
					continue // the check is no longer stored
				}
				if err != nil {
					return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read check %s: %v", rv.CheckID, err)
				}
				if err := add(rec); err != nil {
					return nil, err
				}
				continue
			}
			cursor := ""
			for rv.Session != "" {
				page, err := p.Store.Checks(ctx, tenant, rein.CheckFilter{Session: rv.Session, Since: since, Limit: 500, Before: cursor})
				if err != nil {
					return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read the checks of session %q: %v", rv.Session, err)
				}
				for _, rec := range page {
					if err := add(rec); err != nil {
						return nil, err
					}
				}
				if len(page) < 500 {
					break
				}
				cursor = page[len(page)-1].ID
			}
		}
		if progress != nil {
			progress(r.out.Checks)
		}
		if len(reviews) < f.Limit {
			break
		}
		f.Before = reviews[len(reviews)-1].ID
	}
	return r.done(), nil
}

// replay is one replay under way: both policy sets and the tally so far.
type replay struct {
	current, next *policy.Set
	sameFacts     bool
	start         time.Time
	out           *rein.Replay
}

func (p *Pipeline) newReplay(tenant, tier string, candidate *policy.Policy, since time.Time) *replay {
	current := p.Policies.For(tenant)
	var next *policy.Set
	if tier == "" {
		next = policy.NewSet(candidate, p.Policies.Tier(tenant))
	} else {
		next = policy.NewSet(p.Policies.Tier(""), candidate)
	}
	return &replay{current: current, next: next, start: time.Now(),
		sameFacts: current != nil && next != nil && reflect.DeepEqual(current.Tools(), next.Tools()) && current.Workspace() == next.Workspace(),
		out:       &rein.Replay{Tenant: tenant, Since: since, Input: rein.ReplayAll, Transitions: map[string]int{}, ByRule: map[string]int{}, SessionsFresh: true}}
}

// add decides one recorded check under both sets and counts the change.
func (r *replay) add(rec *rein.CheckRecord) {
	out := r.out
	out.Checks++
	before, after := replayOne(r.current, r.next, r.sameFacts, rec)
	if before.Decision == after.Decision {
		return
	}
	out.Changed++
	out.Transitions[string(before.Decision)+"->"+string(after.Decision)]++
	rule := after.Rule
	if rule == "" {
		rule = "(default)"
	}
	out.ByRule[rule]++
	if !before.Decision.Allows() && after.Decision.Allows() {
		out.NewlyAllowed++
	}
	if before.Decision.Allows() && !after.Decision.Allows() {
		out.NewlyBlocked++
	}
	if before.Decision != rein.Deny && after.Decision == rein.Deny {
		out.NewlyDenied++
	}
	if before.Decision != rein.Ask && after.Decision == rein.Ask {
		out.NewlyAsked++
	}
	if len(out.Examples) < maxReplayExamples {
		out.Examples = append(out.Examples, rein.ReplayChange{CheckID: rec.ID, Tool: rec.Check.Tool, Agent: rec.Check.Agent,
			Before: before.Decision, BeforeRule: before.Rule, After: after.Decision, AfterRule: after.Rule, Reason: after.Reason})
	}
}

func (r *replay) done() *rein.Replay {
	sort.Slice(r.out.Examples, func(i, j int) bool { return r.out.Examples[i].CheckID > r.out.Examples[j].CheckID })
	r.out.TookMS = time.Since(r.start).Milliseconds()
	return r.out
}

// replayOne decides one recorded check under both sets: facts derived once
// when both sets read arguments the same way.
func replayOne(current, next *policy.Set, sameFacts bool, rec *rein.CheckRecord) (*policy.Result, *policy.Result) {
	args, err := rein.ParseArgs(rec.Check.Args)
	if err != nil {
		denied := &policy.Result{Decision: rein.Deny, Reason: "the recorded arguments cannot be read"}
		return denied, denied
	}
	decide := func(set *policy.Set, a risk.Assessment) *policy.Result {
		in := &policy.Input{Tool: rec.Check.Tool, Args: args, Agent: rec.Check.Agent, Tenant: rec.Tenant, Intent: rec.Check.Intent,
			Labels: rec.Check.Labels, Risk: a.Tags, Facts: a.Facts, Session: SessionDefaults(rec.Check.Session),
			Cost: rec.Check.Cost, Now: rec.CreatedAt}
		return set.Evaluate(in).Decide(nil)
	}
	assess := func(set *policy.Set) risk.Assessment {
		return risk.Assess(rec.Check.Tool, args, risk.Env{Tools: set.Tools(), Workspace: set.Workspace()})
	}
	a := assess(current)
	before := decide(current, a)
	if !sameFacts {
		a = assess(next)
	}
	return before, decide(next, a)
}
