package pipeline

import (
	"context"
	"encoding/json"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/risk"
)

// Simulation is what a check would get, with a row per rule. It has no side
// effects: no approval, no counters, no audit entry.
type Simulation struct {
	Decision      rein.Decision      `json:"decision"`
	Reason        string             `json:"reason"`
	Rule          string             `json:"rule"`
	PolicyVersion string             `json:"policy_version"`
	Risk          []string           `json:"risk"`
	Facts         map[string]any     `json:"facts"`
	Args          json.RawMessage    `json:"args"`
	Approval      *ApprovalNeeds     `json:"approval"`
	Shadow        []rein.ShadowMatch `json:"shadow"`
	Trace         []policy.TraceRow  `json:"trace"`
	// Limits are the limit rules that matched: each would take a token
	// when the check is allowed (and answer throttle when its bucket is
	// empty, which depends on traffic the simulator does not see).
	Limits []SimulatedLimit `json:"limits"`
	// Lock is the active lock that would stop the check before policy runs
	// (the answer is then deny); PolicyDecision is what policy alone says.
	Lock           *rein.Lock    `json:"lock,omitempty"`
	PolicyDecision rein.Decision `json:"policy_decision"`
}

// SimulatedLimit is a limit rule that matched a simulated check.
type SimulatedLimit struct {
	Rule       string   `json:"rule"`
	Tier       string   `json:"tier"`
	Rate       int      `json:"rate"`
	PerSeconds int64    `json:"per_seconds"`
	By         []string `json:"by"`
}

// ApprovalNeeds is what an ask would require.
type ApprovalNeeds struct {
	Approvers    []string   `json:"approvers"`
	ApproverSets [][]string `json:"approver_sets"`
	Quorum       int        `json:"quorum"`
	RejectQuorum int        `json:"reject_quorum"`
	TTLSeconds   int64      `json:"ttl_seconds"`
	GrantSeconds int64      `json:"grant_ttl_seconds"`
	StepUp       bool       `json:"step_up,omitempty"`
	// Asks are the rules that ask, each with its reason and approvers.
	Asks []rein.AskingRule `json:"asks"`
}

// SessionDefaults is the session state of a fresh session.
func SessionDefaults(id string) map[string]any {
	return map[string]any{"id": id, "calls": int64(0), "cost": 0.0, "tainted": false, "repeats": int64(0), "denials": int64(0)}
}

// Simulate decides req under set as if it came from agent in tenant, with
// the given session state laid over a fresh session's. It runs the same
// facts and policy stages as Check, and nothing else.
func Simulate(set *policy.Set, tenant string, req *rein.CheckRequest, session map[string]any, now time.Time) (*Simulation, error) {
	return simulate(set, tenant, req, session, nil, now)
}

// simulate is Simulate inside a session's containment (sandbox as policy
// sees it; nil: not contained): an approver's edit in a contained session
// is decided as a check of that session would be.
func simulate(set *policy.Set, tenant string, req *rein.CheckRequest, session, sandbox map[string]any, now time.Time) (*Simulation, error) {
	args, err := rein.ParseArgs(req.Args)
	if err != nil {
		return nil, err
	}
	canon, err := rein.Canonical(req.Args)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeBadRequest, `"args" cannot be canonicalised: %v`, err)
	}
	sess := SessionDefaults(req.Session)
	for k, v := range session {
		sess[k] = v
	}
	assessment := risk.Assess(req.Tool, args, risk.Env{Tools: set.Tools(), Workspace: set.Workspace(), Lookup: LookupHost})
	in := &policy.Input{Tool: req.Tool, Args: args, Agent: req.Agent, Tenant: tenant, Intent: req.Intent,
		Labels: req.Labels, Risk: assessment.Tags, Facts: assessment.Facts, Session: sess, Sandbox: sandbox, Now: now}
	if req.Cost != nil {
		in.Cost = *req.Cost
	}
	ev := set.Evaluate(in)
	ev.Trace = true
	res := ev.Decide(nil)
	sim := &Simulation{Decision: res.Decision, Reason: res.Reason, Rule: res.Rule, Risk: assessment.Tags,
		Facts: assessment.Facts, Args: canon, Shadow: res.Shadow, Trace: res.Trace}
	if sim.Shadow == nil {
		sim.Shadow = []rein.ShadowMatch{}
	}
	if sim.Trace == nil {
		sim.Trace = []policy.TraceRow{}
	}
	sim.Limits = []SimulatedLimit{}
	for _, m := range res.Limits {
		by := m.Rule.Limit.By
		if by == nil {
			by = []string{}
		}
		sim.Limits = append(sim.Limits, SimulatedLimit{Rule: m.Rule.ID, Tier: m.Tier, Rate: m.Rule.Limit.Rate,
			PerSeconds: int64(m.Rule.Limit.Per / time.Second), By: by})
	}
	if set != nil {
		sim.PolicyVersion = set.Version
	}
	if res.Modified {
		if sim.Args, err = rein.Canonical(res.Args); err != nil {
			return nil, err
		}
		again := *in
		if why := settle(set, &again, res.Args, res.Rule, sim.Args, nil); why != "" {
			sim.Decision, sim.Reason, sim.Rule, sim.Args = rein.Deny, why, "", canon
		}
	}
	sim.PolicyDecision = sim.Decision
	if a := res.Approval; a != nil {
		sim.Approval = &ApprovalNeeds{Approvers: a.Approvers, ApproverSets: res.ApproverSets, Quorum: a.Quorum,
			RejectQuorum: a.RejectQuorum, TTLSeconds: int64(a.TTL / time.Second), GrantSeconds: int64(a.GrantTTL / time.Second), StepUp: a.StepUp,
			Asks: res.Asks}
	}
	return sim, nil
}

// SimulateLocks lays the active locks over a simulation: a lock that would
// stop req makes the answer deny, as in a check, before policy runs.
func (p *Pipeline) SimulateLocks(ctx context.Context, sim *Simulation, tenant string, req *rein.CheckRequest) error {
	agent := req.Agent
	if agent == "" {
		return nil
	}
	l, err := p.lockFor(ctx, tenant, agent, req.Session, req.Tool, p.now())
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "locks could not be read: %v", err)
	}
	if l != nil {
		sim.Lock = l
		sim.Decision, sim.Reason, sim.Rule, sim.Approval = rein.Deny, lockReason(l), "", nil
	}
	return nil
}
