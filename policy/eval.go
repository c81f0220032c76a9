package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/common/types"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/risk"
)

// Tier names, as reported in traces.
const (
	TierGlobal = "global"
	TierTenant = "tenant"
)

// Set is the policy one tenant's checks are decided by: the global tier and,
// optionally, the tenant's own. Both are evaluated together, so a tenant tier
// can add restrictions but never loosen the global tier.
type Set struct {
	Global  *Policy
	Tenant  *Policy
	Version string
	// sessionFree: no rule of either tier reads the session (set by
	// NewSet; a Set made otherwise is taken to read it).
	sessionFree bool
}

// NewSet combines tiers. Either may be nil; with both nil the set is nil and
// every check is denied ("no policy loaded"). The version of a set with one
// tier is that tier's version; with two it is "sha256:" of both versions.
func NewSet(global, tenant *Policy) *Set {
	var s *Set
	switch {
	case global == nil && tenant == nil:
		return nil
	case tenant == nil:
		s = &Set{Global: global, Version: global.Version}
	case global == nil:
		s = &Set{Tenant: tenant, Version: tenant.Version}
	default:
		sum := sha256.Sum256([]byte(global.Version + "\n" + tenant.Version))
		s = &Set{Global: global, Tenant: tenant, Version: "sha256:" + hex.EncodeToString(sum[:])}
	}
	s.sessionFree = !s.anyRuleReadsSession()
	return s
}

// Tools returns the tool specs of both tiers: a tenant may add classifiers, never remove one.
func (s *Set) Tools() []risk.ToolSpec {
	if s == nil {
		return nil
	}
	var out []risk.ToolSpec
	for _, p := range s.tiers() {
		out = append(out, p.policy.Tools...)
	}
	return out
}

// Workspace is the root agents' paths should stay under. A tenant tier may
// narrow the global workspace, never widen it: the tenant's workspace applies
// when it lies within the global one (or the global tier sets none);
// otherwise the global one stays, so that `workspace: /` in a tenant tier
// cannot turn paths the global tier calls outside into inside.
func (s *Set) Workspace() string {
	if s == nil {
		return ""
	}
	var global, tenant string
	if s.Global != nil {
		global = s.Global.Workspace
	}
	if s.Tenant != nil {
		tenant = s.Tenant.Workspace
	}
	if tenant != "" && (global == "" || Within(tenant, global)) {
		return tenant
	}
	return global
}

// Within reports whether dir is root or lies under it (both cleaned,
// absolute paths, compared by whole path segments).
func Within(dir, root string) bool {
	dir, root = path.Clean(dir), path.Clean(root)
	return dir == root || root == "/" || strings.HasPrefix(dir, root+"/")
}

// TierProblems lists the settings of a tenant tier that the global tier
// overrides because they would loosen it. The tier still compiles and
// applies; these settings are ignored while the global tier stays as it is.
// An API that activates tenant tiers can refuse them with this list.
func TierProblems(global, tenant *Policy) Problems {
	if global == nil || tenant == nil {
		return nil
	}
	var ps Problems
	if tenant.Workspace != "" && global.Workspace != "" && !Within(tenant.Workspace, global.Workspace) {
		ps = append(ps, Problem{Message: fmt.Sprintf("workspace %s is outside the global workspace %s; a tenant tier may only narrow it: use %s or a directory under it",
			tenant.Workspace, global.Workspace, global.Workspace)})
	}
	for _, name := range sortedKeys(tenant.Profiles) {
		if _, ok := global.Profiles[name]; ok {
			ps = append(ps, Problem{Message: fmt.Sprintf("profile %s is defined by the global tier, whose definition applies; give the tenant's profile another name", name)})
		}
	}
	return ps
}

// ReadsSession reports whether a rule of the set reads the session
// variable (its counters, repeats or id). When none does, a check needs
// only to know whether its session has ended. It is worked out once, when
// the set is made.
func (s *Set) ReadsSession() bool { return s == nil || !s.sessionFree }

func (s *Set) anyRuleReadsSession() bool {
	for _, t := range s.tiers() {
		for _, r := range t.policy.Rules {
			if r.readsSession {
				return true
			}
		}
	}
	return false
}

type tier struct {
	name   string
	policy *Policy
}

func (s *Set) tiers() []tier {
	var out []tier
	if s.Global != nil {
		out = append(out, tier{TierGlobal, s.Global})
	}
	if s.Tenant != nil {
		out = append(out, tier{TierTenant, s.Tenant})
	}
	return out
}

// TraceRow is one rule's part in a decision, in file order (global tier first).
type TraceRow struct {
	Rule     string        `json:"rule"`
	Tier     string        `json:"tier"`
	Matched  bool          `json:"matched"`
	Decision rein.Decision `json:"decision"`
	Mode     string        `json:"mode"`
	Error    string        `json:"error"`
}

// LimitMatch is a limit rule whose condition matched the check.
type LimitMatch struct {
	Rule *Rule
	Tier string
}

// LimitVerdict is what the rate limiter says about one matched limit rule.
type LimitVerdict struct {
	Exceeded   bool
	RetryAfter time.Duration
}

// Result is the policy's answer to one check.
type Result struct {
	Decision rein.Decision
	Reason   string
	Rule     string // the deciding rule; "" for the default and for "no policy loaded"
	Tier     string
	// Args are the arguments to execute with: the request's, changed by the
	// matching modify rules when the decision is modify or ask.
	Args     map[string]any
	Modified bool
	// Approval holds the combined requirements of all matching ask rules;
	// Asks names each of them, with its reason and approvers.
	Approval     *Approval
	Asks         []rein.AskingRule
	ApproverSets [][]string
	RetryAfter   time.Duration
	// Reviews are the reviews after the fact that matched allow rules ask
	// for; they are queued only when the final decision allows.
	Reviews []ReviewRequest
	// Limits are the enforced limit rules that matched: a token is spent on
	// each when the final decision allows the action.
	Limits []LimitMatch
	Shadow []rein.ShadowMatch
	Trace  []TraceRow
}

// outcome is one rule's evaluation.
type outcome struct {
	rule    *Rule
	tier    string
	matched bool
	err     error
}

// Evaluation is one check being decided: conditions are evaluated once each,
// the limit rules first (the rate limiter needs them), then the others.
type Evaluation struct {
	set    *Set
	in     *Input
	act    *activation
	limits []outcome
	// Trace asks Decide for a row per rule (simulate, explain); the check
	// path leaves it off and keeps the rows it needs for shadow rules only.
	Trace bool
}

// Evaluate starts deciding a check. A nil set (no policy loaded) is allowed.
func (s *Set) Evaluate(in *Input) *Evaluation {
	ev := &Evaluation{set: s, in: in}
	if s == nil {
		return ev
	}
	ev.act = newActivation(in)
	for _, t := range s.tiers() {
		for _, r := range t.policy.Rules {
			if r.Limit != nil {
				ev.limits = append(ev.limits, ev.eval(r, t.name))
			}
		}
	}
	return ev
}

// Limits returns the enforced limit rules whose conditions matched.
func (ev *Evaluation) Limits() []LimitMatch {
	var out []LimitMatch
	for _, o := range ev.limits {
		if o.matched && o.err == nil && !o.rule.Shadow {
			out = append(out, LimitMatch{Rule: o.rule, Tier: o.tier})
		}
	}
	return out
}

func (ev *Evaluation) eval(r *Rule, tierName string) outcome {
	o := outcome{rule: r, tier: tierName}
	if r.tool != nil && !r.tool.match(ev.in.Tool) {
		return o
	}
	out, _, err := r.when.Eval(ev.act)
	switch {
	case err != nil:
		o.err = err
	case out == types.True:
		o.matched = true
	case out == types.False:
	default:
		o.err = fmt.Errorf("condition gave %v (%s), not true or false", out, out.Type().TypeName())
	}
	return o
}

// Decide combines the matching rules into one decision (policy.md, How rules
// combine). verdicts says which matched limit rules are over their rate.
func (ev *Evaluation) Decide(verdicts map[*Rule]LimitVerdict) *Result {
	in := ev.in
	res := &Result{Args: in.Args}
	if ev.set == nil {
		res.Decision, res.Reason = rein.Deny, "no policy loaded"
		return res
	}
	res.Limits = ev.Limits()

	var best outcome
	found := false
	bestDecision := rein.Allow
	var asks, modifies []outcome
	if ev.Trace {
		n := 0
		for _, t := range ev.set.tiers() {
			n += len(t.policy.Rules)
		}
		res.Trace = make([]TraceRow, 0, n)
	}
	li := 0
	for _, t := range ev.set.tiers() {
		for _, r := range t.policy.Rules {
			var o outcome
			if r.Limit != nil {
				o = ev.limits[li]
				li++
			} else {
				o = ev.eval(r, t.name)
			}
			d := r.Decision
			if r.Limit != nil {
				d = ""
				if v, ok := verdicts[r]; ok && v.Exceeded && o.matched {
					d = rein.Throttle
					if v.RetryAfter > res.RetryAfter {
						res.RetryAfter = v.RetryAfter
					}
				}
			}
			if ev.Trace {
				row := TraceRow{Rule: r.ID, Tier: t.name, Matched: o.matched, Decision: d, Mode: "enforce"}
				if r.Shadow {
					row.Mode = "shadow"
				}
				if o.err != nil {
					row.Error = o.err.Error()
					row.Decision = rein.Deny
				}
				res.Trace = append(res.Trace, row)
			}
			if r.Shadow {
				if o.matched || o.err != nil {
					would := r.Decision
					if r.Limit != nil {
						would = rein.Throttle
					}
					m := rein.ShadowMatch{Rule: r.ID, Decision: would}
					if o.err != nil {
						m.Error = o.err.Error()
					}
					res.Shadow = append(res.Shadow, m)
				}
				continue
			}
			if o.err == nil && (!o.matched || d == "") {
				continue
			}
			if o.err == nil && r.Review != nil {
				res.Reviews = append(res.Reviews, ReviewRequest{Rule: r.ID, Sample: r.Review.Sample, Reviewers: r.Review.Reviewers})
			}
			switch {
			case o.err != nil:
				d = rein.Deny
			case d == rein.Ask:
				asks = append(asks, o)
			case d == rein.Modify:
				modifies = append(modifies, o)
			}
			if !found || d.Restrictiveness() > bestDecision.Restrictiveness() {
				best, bestDecision, found = o, d, true
			}
		}
	}

	if !found {
		res.Decision = ev.defaultDecision()
		if res.Decision == rein.Deny {
			res.Reason = "no rule allows " + in.Tool
		} else {
			res.Reason = "no rule matched; the policy default is allow"
		}
		return res
	}
	res.Decision, res.Rule, res.Tier = bestDecision, best.rule.ID, best.tier
	if best.err != nil {
		res.Reason = fmt.Sprintf("policy error in rule %s: %v", best.rule.ID, best.err)
		return res
	}
	res.Reason = ev.reason(best.rule)

	if bestDecision == rein.Modify || bestDecision == rein.Ask {
		if len(modifies) > 0 {
			args, _ := deepCopy(in.Args).(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			for _, m := range modifies {
				if err := m.rule.Modify.apply(args); err != nil {
					res.Decision, res.Rule, res.Tier = rein.Deny, m.rule.ID, m.tier
					res.Reason = fmt.Sprintf("modify rule %s failed: %v", m.rule.ID, err)
					return res
				}
			}
			res.Args, res.Modified = args, true
		}
	}
	if bestDecision == rein.Ask {
		res.Approval, res.ApproverSets = combineApprovals(asks)
		for _, o := range asks {
			res.Asks = append(res.Asks, rein.AskingRule{Rule: o.rule.ID, Tier: o.tier, Reason: ev.reason(o.rule),
				Approvers: o.rule.Approval.Approvers})
		}
	}
	return res
}

func (ev *Evaluation) defaultDecision() rein.Decision {
	d := rein.Allow
	for _, t := range ev.set.tiers() {
		if t.policy.Default.Restrictiveness() > d.Restrictiveness() {
			d = t.policy.Default
		}
	}
	return d
}

func (ev *Evaluation) reason(r *Rule) string {
	if r.reasonExpr != nil {
		out, _, err := r.reasonExpr.Eval(ev.act)
		if err != nil {
			return fmt.Sprintf("rule %s (its reason_expr failed: %v)", r.ID, err)
		}
		if s, ok := out.(types.String); ok {
			return string(s)
		}
	}
	if r.Reason != "" {
		return r.Reason
	}
	return "matched rule " + r.ID
}

// combineApprovals joins the requirements of several ask rules: every rule's
// approver set must be satisfied, with the largest quorum and the shortest TTLs.
func combineApprovals(asks []outcome) (*Approval, [][]string) {
	var c *Approval
	var sets [][]string
	seen := map[string]bool{}
	for _, o := range asks {
		a := o.rule.Approval
		sets = append(sets, a.Approvers)
		if c == nil {
			cp := a
			cp.Approvers = nil
			c = &cp
		}
		for _, s := range a.Approvers {
			if !seen[s] {
				seen[s] = true
				c.Approvers = append(c.Approvers, s)
			}
		}
		c.Grants = commonGrants(c.Grants, a.Grants)
		if c != nil && len(c.Escalate) == 0 {
			c.Escalate = a.Escalate // the first asking rule that escalates says how
		}
		c.Quorum = max(c.Quorum, a.Quorum)
		c.StepUp = c.StepUp || a.StepUp
		c.RejectQuorum = min(c.RejectQuorum, a.RejectQuorum)
		c.TTL = min(c.TTL, a.TTL)
		c.GrantTTL = min(c.GrantTTL, a.GrantTTL)
	}
	return c, sets
}

// commonGrants are the grant scopes every asking rule permits ("once" when
// they share none): approvers choose within what all of them allow.
func commonGrants(a, b []string) []string {
	var out []string
	for _, g := range a {
		if slices.Contains(b, g) {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return []string{rein.GrantOnce}
	}
	return out
}

// ReviewRequest is a matched rule's request for review after the fact.
type ReviewRequest struct {
	Rule      string
	Sample    float64
	Reviewers []string
}

// Reviews are the session and result review triggers of the set: each tier
// can add triggers (any tier that asks for a review gets it), the lower
// session-denials threshold wins, reviewers of both tiers count.
func (s *Set) Reviews() SessionReviews {
	var out SessionReviews
	if s == nil {
		return out
	}
	for i, t := range s.tiers() {
		r := t.policy.Reviews
		if i == 0 {
			out = r
			out.Reviewers = slices.Clone(r.Reviewers)
			continue
		}
		out.TaintedSessions = out.TaintedSessions || r.TaintedSessions
		out.FailedResults = out.FailedResults || r.FailedResults
		out.Anomalies = out.Anomalies || r.Anomalies
		if r.SessionDenials > 0 && (out.SessionDenials == 0 || r.SessionDenials < out.SessionDenials) {
			out.SessionDenials = r.SessionDenials
		}
		for _, x := range r.Reviewers {
			if !slices.Contains(out.Reviewers, x) {
				out.Reviewers = append(out.Reviewers, x)
			}
		}
	}
	return out
}
