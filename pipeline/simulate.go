package pipeline

import (
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
}

// ApprovalNeeds is what an ask would require.
type ApprovalNeeds struct {
	Approvers    []string   `json:"approvers"`
	ApproverSets [][]string `json:"approver_sets"`
	Quorum       int        `json:"quorum"`
	RejectQuorum int        `json:"reject_quorum"`
	TTLSeconds   int64      `json:"ttl_seconds"`
	GrantSeconds int64      `json:"grant_ttl_seconds"`
}

// SessionDefaults is the session state of a fresh session.
func SessionDefaults(id string) map[string]any {
	return map[string]any{"id": id, "calls": int64(0), "cost": 0.0, "tainted": false, "repeats": int64(0), "denials": int64(0)}
}

// Simulate decides req under set as if it came from agent in tenant, with
// the given session state laid over a fresh session's. It runs the same
// facts and policy stages as Check, and nothing else.
func Simulate(set *policy.Set, tenant string, req *rein.CheckRequest, session map[string]any, now time.Time) (*Simulation, error) {
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
		Labels: req.Labels, Risk: assessment.Tags, Facts: assessment.Facts, Session: sess, Now: now}
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
	if set != nil {
		sim.PolicyVersion = set.Version
	}
	if res.Modified {
		if sim.Args, err = rein.Canonical(res.Args); err != nil {
			return nil, err
		}
	}
	if a := res.Approval; a != nil {
		sim.Approval = &ApprovalNeeds{Approvers: a.Approvers, ApproverSets: res.ApproverSets, Quorum: a.Quorum,
			RejectQuorum: a.RejectQuorum, TTLSeconds: int64(a.TTL / time.Second), GrantSeconds: int64(a.GrantTTL / time.Second)}
	}
	return sim, nil
}
