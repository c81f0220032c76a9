// Package policy parses, compiles and evaluates rein policies (policy.md):
// strict YAML, CEL conditions compiled once per version, and the
// most-restrictive combination of matching rules across the global and tenant
// tiers. It is a pure package: a check's inputs in, a decision and a trace out.
package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/risk"
)

// Defaults of api.md for approvals when the policy says nothing.
const (
	DefaultTTL      = 15 * time.Minute
	DefaultGrantTTL = 10 * time.Minute
	// DefaultCostLimit bounds the CEL work of one rule's condition for one check.
	DefaultCostLimit = 1_000_000
)

// Policy is one compiled tier: the global policy or one tenant's.
type Policy struct {
	Version   string // "sha256:" + hex of Source
	Source    []byte
	Default   rein.Decision
	Approval  Approval
	Tools     []risk.ToolSpec
	Workspace string
	Rules     []*Rule
	// Reviews says which sessions and results are queued for review after
	// the fact (reviews.md); zero: none.
	Reviews SessionReviews
	// Profiles are the containment profiles rein run may apply, by name
	// (containment.md); nil when the policy names none.
	Profiles map[string]rein.Profile
}

// SessionReviews are the triggers of reviews after the fact that do not
// belong to one rule.
type SessionReviews struct {
	TaintedSessions bool     // a session that ends tainted
	SessionDenials  int      // a session that ends with at least this many denials (0: off)
	FailedResults   bool     // a check whose result is reported failed
	Anomalies       bool     // a result flagged as an anomaly (on unless reviews: says otherwise)
	Reviewers       []string // default role:approver
}

// Rule is one compiled rule.
type Rule struct {
	ID       string
	Line     int
	Decision rein.Decision // "" for limit rules
	Reason   string
	Shadow   bool
	Approval Approval // ask rules: the policy defaults overlaid with the rule's own
	Limit    *Limit
	Modify   *ModifySpec
	// Review, on allow and modify rules, queues a review of the allowed
	// check after the fact (reviews.md).
	Review     *Review
	when       cel.Program
	reasonExpr cel.Program
	// tool, when set, is a cheap necessary condition on the tool name taken
	// from the condition's top-level conjuncts; rules it rejects are not
	// evaluated (the full condition could only be false).
	tool    *toolCond
	whenAST *cel.Ast
	// readsSession: a CEL expression of the rule names the session
	// variable (ReadsSession).
	readsSession bool
}

// Review asks people to look at an allowed check after the fact: every one
// (Sample 1) or a deterministic sample, by reviewers named like approvers.
type Review struct {
	Sample    float64
	Reviewers []string
}

// Approval is what an `ask` needs to be approved.
type Approval struct {
	Approvers    []string
	Quorum       int
	RejectQuorum int
	TTL          time.Duration
	GrantTTL     time.Duration
	// Grants are the grant scopes approvers may choose (approvals.md):
	// "once" (the default), "session", or a window such as "1h".
	Grants []string
	// Escalate adds approvers as the approval waits.
	Escalate []rein.Escalation
	// StepUp makes approving votes count only when confirmed with a passkey.
	StepUp bool
}

// Limit is a rate limit rule: Rate calls per Per, counted per the By keys.
type Limit struct {
	Rate int
	Per  time.Duration
	By   []string
}

// ModifySpec changes arguments: paths removed, then paths set.
type ModifySpec struct {
	Remove []string
	Set    map[string]any
}

// Problem is one thing wrong with a policy file.
type Problem struct {
	Rule    string `json:"rule,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Rule != "" {
		fmt.Fprintf(&b, "rule %s: ", p.Rule)
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is the error of a policy that does not compile: every problem found.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "; ")
}

// VersionOf returns the version of policy bytes: "sha256:" + hex SHA-256.
func VersionOf(src []byte) string {
	sum := sha256.Sum256(src)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The YAML schema. Unknown fields are errors.
type fileYAML struct {
	Version   int                    `yaml:"version"`
	Default   string                 `yaml:"default"`
	Approval  *approvalYAML          `yaml:"approval"`
	Tools     map[string]toolYAML    `yaml:"tools"`
	Workspace string                 `yaml:"workspace"`
	Rules     []ruleYAML             `yaml:"rules"`
	Profiles  map[string]profileYAML `yaml:"profiles"`
	Reviews   *struct {
		TaintedSessions *bool    `yaml:"tainted_sessions"`
		SessionDenials  int      `yaml:"session_denials"`
		FailedResults   *bool    `yaml:"failed_results"`
		Anomalies       *bool    `yaml:"anomalies"`
		Reviewers       []string `yaml:"reviewers"`
	} `yaml:"reviews"`
}

type approvalYAML struct {
	Approvers    []string `yaml:"approvers"`
	Quorum       int      `yaml:"quorum"`
	RejectQuorum int      `yaml:"reject_quorum"`
	TTL          string   `yaml:"ttl"`
	GrantTTL     string   `yaml:"grant_ttl"`
	Grants       []string `yaml:"grants"`
	StepUp       *bool    `yaml:"step_up"`
	Escalate     []struct {
		After     string   `yaml:"after"`
		Approvers []string `yaml:"approvers"`
	} `yaml:"escalate"`
}

type toolYAML struct {
	Shell         []string `yaml:"shell"`
	URL           []string `yaml:"url"`
	Path          []string `yaml:"path"`
	SQL           []string `yaml:"sql"`
	TaintsSession bool     `yaml:"taints_session"`
	Resolve       bool     `yaml:"resolve"`
}

type ruleYAML struct {
	ID          string        `yaml:"id"`
	Description string        `yaml:"description"`
	When        string        `yaml:"when"`
	Decision    string        `yaml:"decision"`
	Reason      string        `yaml:"reason"`
	ReasonExpr  string        `yaml:"reason_expr"`
	Mode        string        `yaml:"mode"`
	Approval    *approvalYAML `yaml:"approval"`
	Limit       *limitYAML    `yaml:"limit"`
	Modify      *modifyYAML   `yaml:"modify"`
	Review      any           `yaml:"review"` // true, or {sample: 0.05, reviewers: [...]}
}

type limitYAML struct {
	Rate int      `yaml:"rate"`
	Per  string   `yaml:"per"`
	By   []string `yaml:"by"`
}

type modifyYAML struct {
	Remove []string       `yaml:"remove"`
	Set    map[string]any `yaml:"set"`
}

// knownFields names each schema type's fields for "unknown field" messages.
var knownFields = map[string][2]string{
	"policy.fileYAML":     {"the policy", "version, default, approval, tools, workspace, rules, reviews, profiles"},
	"policy.profileYAML":  {"a profile", "description, read, env, limits"},
	"policy.approvalYAML": {"approval", "approvers, quorum, reject_quorum, ttl, grant_ttl, grants, escalate"},
	"policy.toolYAML":     {"a tools entry", "shell, url, path, sql, taints_session, resolve"},
	"policy.ruleYAML":     {"a rule", "id, description, when, decision, reason, reason_expr, mode, approval, limit, modify, review"},
	"policy.limitYAML":    {"limit", "rate, per, by"},
	"policy.modifyYAML":   {"modify", "remove, set"},
}

// The patterns are compiled on first use, not at every start of rein (a
// bounded repetition compiles to one instruction per repeat).
var (
	unknownFieldRE = lazyRE(`^line (\d+): field (\S+) not found in type (\S+)$`)
	yamlLineRE     = lazyRE(`^(?:yaml: )?line (\d+): (.*)$`)
	ruleIDRE       = lazyRE(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	selectorRE     = lazyRE(`^(client|(group|user|role):[A-Za-z0-9._@/-]{1,128})$`)
)

// lazyRE is the regular expression expr, compiled on the first call.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// MaxSourceBytes bounds a policy file.
const MaxSourceBytes = 4 << 20

// Compile parses and compiles a policy. On any problem it returns Problems
// listing all of them (with line numbers), and no policy.
func Compile(src []byte) (*Policy, error) {
	if len(src) > MaxSourceBytes {
		return nil, Problems{{Message: fmt.Sprintf("the policy is %d bytes; the limit is %d", len(src), MaxSourceBytes)}}
	}
	var f fileYAML
	var ps Problems
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) { // no document at all: empty, blank or only comments
			return nil, Problems{{Line: 1, Message: "the policy is empty: write one YAML document that starts with `version: 1` and lists its rules (see examples/policy.yaml)"}}
		}
		// Type errors (unknown fields, wrong types) leave the rest decoded:
		// keep compiling, so that one answer lists every problem.
		if _, partial := err.(*yaml.TypeError); !partial {
			return nil, yamlProblems(err)
		}
		ps = yamlProblems(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, append(ps, Problem{Line: extra.Line, Message: "the file holds more than one YAML document; put the whole policy in one"})
	}
	lines := ruleLines(src)

	p := &Policy{Version: VersionOf(src), Source: append([]byte(nil), src...)}
	if f.Workspace != "" {
		if !strings.HasPrefix(f.Workspace, "/") {
			ps = append(ps, Problem{Message: fmt.Sprintf("workspace %q: use an absolute path such as /srv/app", f.Workspace)})
		}
		p.Workspace = path.Clean(f.Workspace)
	}
	switch f.Version {
	case 1:
	case 0:
		ps = append(ps, Problem{Line: 1, Message: "missing `version: 1` at the top of the policy"})
	default:
		ps = append(ps, Problem{Message: fmt.Sprintf("version %d is not supported; this rein reads version 1", f.Version)})
	}
	switch f.Default {
	case "", "deny":
		p.Default = rein.Deny
	case "allow":
		p.Default = rein.Allow
	default:
		ps = append(ps, Problem{Message: fmt.Sprintf("default %q: use deny or allow", f.Default)})
	}
	p.Reviews = SessionReviews{Anomalies: true, Reviewers: []string{"role:approver"}}
	if r := f.Reviews; r != nil {
		if r.TaintedSessions != nil {
			p.Reviews.TaintedSessions = *r.TaintedSessions
		}
		if r.FailedResults != nil {
			p.Reviews.FailedResults = *r.FailedResults
		}
		if r.Anomalies != nil {
			p.Reviews.Anomalies = *r.Anomalies
		}
		if r.SessionDenials < 0 {
			ps = append(ps, Problem{Message: "reviews session_denials must be 0 (off) or more"})
		}
		p.Reviews.SessionDenials = r.SessionDenials
		if len(r.Reviewers) > 0 {
			p.Reviews.Reviewers = r.Reviewers
			for _, s := range r.Reviewers {
				if !selectorRE().MatchString(s) || s == "client" {
					ps = append(ps, Problem{Message: fmt.Sprintf("reviews reviewer %q: use group:<name>, user:<key name> or role:<role>", s)})
				}
			}
		}
	}
	base := Approval{Approvers: []string{"role:approver"}, Quorum: 1, RejectQuorum: 1, TTL: DefaultTTL, GrantTTL: DefaultGrantTTL,
		Grants: []string{rein.GrantOnce}}
	p.Approval, ps = overlayApproval(base, f.Approval, "", 0, ps)

	patterns := make([]string, 0, len(f.Tools))
	for pat := range f.Tools {
		patterns = append(patterns, pat)
	}
	sort.Strings(patterns)
	for _, pat := range patterns {
		t := f.Tools[pat]
		p.Tools = append(p.Tools, risk.ToolSpec{Pattern: pat, Shell: t.Shell, URL: t.URL, Path: t.Path, SQL: t.SQL,
			TaintsSession: t.TaintsSession, Resolve: t.Resolve})
	}

	var pps Problems
	p.Profiles, pps = compileProfiles(src, f.Profiles)
	ps = append(ps, pps...)

	seen := map[string]int{}
	for i, ry := range f.Rules {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		r, rps := compileRule(ry, line, p.Approval)
		ps = append(ps, rps...)
		if ry.ID != "" {
			if first, dup := seen[ry.ID]; dup {
				ps = append(ps, Problem{Rule: ry.ID, Line: line, Message: fmt.Sprintf("duplicate rule id (first used on line %d)", first)})
			}
			seen[ry.ID] = line
		}
		if r != nil {
			p.Rules = append(p.Rules, r)
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return p, nil
}

func compileRule(ry ruleYAML, line int, defaults Approval) (*Rule, Problems) {
	var ps Problems
	id := ry.ID
	bad := func(format string, args ...any) {
		ps = append(ps, Problem{Rule: id, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case id == "":
		bad("missing id: give every rule a unique id, e.g. `id: shell-destructive`")
	case !ruleIDRE().MatchString(id):
		bad("id %q: use letters, digits, '.', '_', ':' and '-' (at most 128)", id)
	}
	r := &Rule{ID: id, Line: line, Reason: ry.Reason}
	if ry.Review != nil {
		rv, err := compileReview(ry.Review)
		if err != nil {
			bad("review: %v", err)
		}
		r.Review = rv
		if d := rein.Decision(ry.Decision); err == nil && rv != nil && d != rein.Allow && d != rein.Modify {
			bad("review is for rules that allow (or modify): a denied or asked action needs no review after the fact")
		}
	}
	switch ry.Mode {
	case "", "enforce":
	case "shadow":
		r.Shadow = true
	default:
		bad("mode %q: use enforce (the default) or shadow", ry.Mode)
	}
	switch d := rein.Decision(ry.Decision); d {
	case rein.Allow, rein.Deny, rein.Ask, rein.Modify:
		r.Decision = d
		if ry.Limit != nil {
			bad("a rule has either a decision or a limit; a limit rule's decision is throttle when the rate is exceeded")
		}
	case rein.Throttle:
		bad("decision throttle comes from a limit: write `limit: {rate: N, per: 1h, by: [agent]}` instead")
	case "":
		if ry.Limit == nil {
			bad("missing decision: use allow, deny, ask or modify (or a limit)")
		}
	default:
		bad("decision %q: use allow, deny, ask or modify", ry.Decision)
	}
	if ry.Approval != nil && r.Decision != rein.Ask {
		bad("approval settings only apply to decision ask")
	}
	if r.Decision == rein.Ask {
		r.Approval, ps = overlayApproval(defaults, ry.Approval, id, line, ps)
	}
	if (ry.Modify != nil) != (r.Decision == rein.Modify) {
		bad("decision modify and a modify block go together: `decision: modify` with `modify: {remove: [...], set: {...}}`")
	}
	if ry.Modify != nil {
		if len(ry.Modify.Remove) == 0 && len(ry.Modify.Set) == 0 {
			bad("modify changes nothing: give remove or set")
		}
		for _, path := range append(append([]string(nil), ry.Modify.Remove...), keys(ry.Modify.Set)...) {
			if err := checkArgPath(path); err != nil {
				bad("modify path %q: %v", path, err)
			}
		}
		set := map[string]any{}
		for k, v := range ry.Modify.Set {
			if n, ok := inexactNumber(v); ok {
				bad("modify set %q: the number %s is beyond ±2^53 and would not be sent exactly; write it as a string", k, n)
			}
			set[k] = normaliseYAML(v)
		}
		r.Modify = &ModifySpec{Remove: ry.Modify.Remove, Set: set}
	}
	if ry.Limit != nil {
		l := &Limit{Rate: ry.Limit.Rate, By: ry.Limit.By}
		if l.Rate <= 0 {
			bad("limit rate must be a positive number of calls")
		}
		per, err := ParseDuration(ry.Limit.Per)
		if err != nil || per <= 0 {
			bad("limit per %q: use a duration such as 1m, 1h or 1d", ry.Limit.Per)
		}
		l.Per = per
		if len(l.By) == 0 {
			l.By = []string{"agent"}
		}
		for _, b := range l.By {
			switch b {
			case "agent", "session", "tenant", "tool":
			default:
				bad("limit by %q: use agent, session, tenant or tool", b)
			}
		}
		r.Limit = l
	}
	if ry.When == "" {
		bad("missing when: write a CEL condition, e.g. `when: 'tool == \"shell.exec\"'` (use 'true' for every check)")
	} else {
		prg, tc, a, err := compileWhen(ry.When)
		if err != nil {
			bad("when: %v", err)
		}
		r.when, r.tool, r.whenAST = prg, tc, a
	}
	if ry.ReasonExpr != "" {
		if ry.Reason != "" {
			bad("give reason or reason_expr, not both")
		}
		prg, err := compileReason(ry.ReasonExpr)
		if err != nil {
			bad("reason_expr: %v", err)
		}
		r.reasonExpr = prg
	}
	r.readsSession = mentionsSession(ry.When) || mentionsSession(ry.ReasonExpr)
	if len(ps) > 0 {
		return nil, ps
	}
	return r, nil
}

// mentionsSession reports whether a CEL expression may read the session
// variable. CEL names a variable only by its identifier, written out, so
// an expression without the word cannot read it; one with it (a string,
// facts.session) is counted too, which only costs the check a read.
func mentionsSession(expr string) bool {
	return strings.Contains(expr, "session") || strings.Contains(expr, "sandbox") // the sandbox is the session's
}

// overlayApproval applies an approval block over defaults and validates the result.
func overlayApproval(a Approval, y *approvalYAML, rule string, line int, ps Problems) (Approval, Problems) {
	bad := func(format string, args ...any) {
		ps = append(ps, Problem{Rule: rule, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if y == nil {
		return a, ps
	}
	if y.Approvers != nil {
		a.Approvers = y.Approvers
		if len(a.Approvers) == 0 {
			bad("approval approvers is empty: name who may approve, e.g. [\"group:oncall\"]")
		}
	}
	for _, s := range a.Approvers {
		if !selectorRE().MatchString(s) {
			bad("approver %q: use group:<name>, user:<key name>, role:<role> or client", s)
		}
		if r, ok := strings.CutPrefix(s, "role:"); ok && !validRole(r) {
			bad("approver %q: roles are admin, approver, agent and auditor", s)
		}
	}
	if y.Quorum != 0 {
		a.Quorum = y.Quorum
	}
	if y.StepUp != nil {
		a.StepUp = *y.StepUp
	}
	if a.StepUp && slices.Contains(a.Approvers, "client") {
		bad(`approval step_up: the MCP client's user ("client") has no passkey in rein and could never approve; name people as approvers`)
	}
	if y.RejectQuorum != 0 {
		a.RejectQuorum = y.RejectQuorum
	}
	if a.Quorum < 1 || a.RejectQuorum < 1 {
		bad("approval quorum and reject_quorum must be at least 1")
	}
	for _, d := range []struct {
		name string
		in   string
		out  *time.Duration
	}{{"ttl", y.TTL, &a.TTL}, {"grant_ttl", y.GrantTTL, &a.GrantTTL}} {
		if d.in == "" {
			continue
		}
		v, err := ParseDuration(d.in)
		if err != nil || v <= 0 {
			bad("approval %s %q: use a duration such as 15m, 1h or 1d", d.name, d.in)
			continue
		}
		*d.out = v
	}
	if y.Escalate != nil {
		a.Escalate = nil
		for _, e := range y.Escalate {
			after, err := ParseDuration(e.After)
			if err != nil || after <= 0 {
				bad("approval escalate after %q: use a duration such as 10m", e.After)
				continue
			}
			if len(e.Approvers) == 0 {
				bad("approval escalate after %s: name the approvers it adds", e.After)
			}
			for _, s := range e.Approvers {
				if !selectorRE().MatchString(s) || s == "client" {
					bad("escalate approver %q: use group:<name>, user:<key name> or role:<role>", s)
				}
			}
			a.Escalate = append(a.Escalate, rein.Escalation{After: after, Approvers: e.Approvers})
		}
		slices.SortFunc(a.Escalate, func(x, y rein.Escalation) int { return int(x.After - y.After) })
	}
	if y.Grants != nil {
		a.Grants = nil
		for _, g := range y.Grants {
			if _, err := rein.ParseGrant(g); err != nil {
				bad("approval grants: %v", err)
				continue
			}
			a.Grants = append(a.Grants, g)
		}
		if len(a.Grants) == 0 {
			a.Grants = []string{rein.GrantOnce}
		}
	}
	return a, ps
}

func validRole(r string) bool {
	for _, x := range rein.AllRoles {
		if string(x) == r {
			return true
		}
	}
	return false
}

// ParseDuration reads Go durations plus a "d" (24h) unit: 90s, 15m, 1h30m, 7d.
func ParseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// yamlProblems turns yaml.v3 errors into Problems with line numbers and the
// list of fields that would have been accepted.
func yamlProblems(err error) Problems {
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var ps Problems
	for _, m := range msgs {
		if g := unknownFieldRE().FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			where, known := "the policy", ""
			if k, ok := knownFields[g[3]]; ok {
				where, known = k[0], "; known fields: "+k[1]
			}
			ps = append(ps, Problem{Line: n, Message: fmt.Sprintf("unknown field %q in %s%s", g[2], where, known)})
			continue
		}
		if g := yamlLineRE().FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			ps = append(ps, Problem{Line: n, Message: strings.ReplaceAll(g[2], "policy.", "")})
			continue
		}
		ps = append(ps, Problem{Message: strings.TrimPrefix(m, "yaml: ")})
	}
	return ps
}

// ruleLines returns the line of each item of the top-level rules list.
func ruleLines(src []byte) []int {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "rules" && root.Content[i+1].Kind == yaml.SequenceNode {
			var out []int
			for _, item := range root.Content[i+1].Content {
				out = append(out, item.Line)
			}
			return out
		}
	}
	return nil
}

// normaliseYAML turns YAML-decoded values into the shapes JSON decoding gives
// (map[string]any, []any, int64, float64), so set values compare and encode
// like arguments do.
func normaliseYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normaliseYAML(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normaliseYAML(x)
		}
		return out
	case int:
		return int64(t)
	case uint64:
		return float64(t)
	}
	return v
}

// inexactNumber finds an integer in a YAML value that canonical JSON (whose
// numbers are IEEE doubles) could not carry exactly.
func inexactNumber(v any) (string, bool) {
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			if n, ok := inexactNumber(x); ok {
				return n, true
			}
		}
	case []any:
		for _, x := range t {
			if n, ok := inexactNumber(x); ok {
				return n, true
			}
		}
	case int:
		if t > rein.MaxSafeInteger || t < -rein.MaxSafeInteger {
			return strconv.Itoa(t), true
		}
	case uint64:
		return strconv.FormatUint(t, 10), true // yaml.v3 gives uint64 only above int64
	}
	return "", false
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// compileReview reads a rule's review: true (every allowed check, reviewers
// role:approver), false, or {sample: 0..1, reviewers: [selectors]}.
func compileReview(v any) (*Review, error) {
	switch x := v.(type) {
	case bool:
		if !x {
			return nil, nil
		}
		return &Review{Sample: 1, Reviewers: []string{"role:approver"}}, nil
	case map[string]any:
		r := &Review{Sample: 1, Reviewers: []string{"role:approver"}}
		for k, val := range x {
			switch k {
			case "sample":
				f, ok := val.(float64)
				if i, isInt := val.(int); isInt {
					f, ok = float64(i), true
				}
				if !ok || f <= 0 || f > 1 {
					return nil, fmt.Errorf("sample %v: use a share between 0 and 1, e.g. 0.05", val)
				}
				r.Sample = f
			case "reviewers":
				list, ok := val.([]any)
				if !ok || len(list) == 0 {
					return nil, fmt.Errorf("reviewers: a list of selectors, e.g. [\"group:security\"]")
				}
				r.Reviewers = nil
				for _, s := range list {
					str, _ := s.(string)
					if !selectorRE().MatchString(str) || str == "client" {
						return nil, fmt.Errorf("reviewer %v: use group:<name>, user:<key name> or role:<role>", s)
					}
					r.Reviewers = append(r.Reviewers, str)
				}
			default:
				return nil, fmt.Errorf("unknown field %q: use sample and reviewers", k)
			}
		}
		return r, nil
	}
	return nil, fmt.Errorf("use true, or {sample: 0.05, reviewers: [\"group:security\"]}")
}
