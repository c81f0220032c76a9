package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
)

func init() {
	register(&command{name: "policy", summary: "lint, test, explain and push policies", sub: []*command{
		{name: "lint", summary: "report compile errors, unknown fields, unreachable and shadowed rules; exit 1 on errors",
			args: "FILE... [--strict]", example: "  rein policy lint examples/policy.yaml", run: runPolicyLint},
		{name: "test", summary: "run policy test fixtures; exit 1 if any case fails",
			args: "FILE... [-v]", example: "  rein policy test examples/policy_test.yaml", run: runPolicyTest},
		{name: "explain", summary: "show the facts, tags and per-rule trace for one check; exit 0 when it may run (allow, modify), 1 otherwise (deny, ask, throttle)",
			args:    "FILE --check JSON [--session JSON] [--tenant-policy FILE]",
			example: `  rein policy explain examples/policy.yaml --check '{"tool": "shell.exec", "args": {"command": "rm -rf /"}}'`,
			run:     runPolicyExplain},
		{name: "push", summary: "replace the live policy on the server (PUT /v1/policy)",
			args:    "FILE [--tenant T] [--replay 7d] [--max-newly-blocked N] [--max-newly-allowed N]",
			example: "  REIN_KEY=$(cat rein-data/admin.key) rein policy push examples/policy.yaml\n  rein policy push candidate.yaml --replay 7d   # refuse to push what changes recorded decisions",
			run:     runPolicyPush},
		{name: "replay", summary: "decide recorded checks with a candidate policy and show what would change; exit 1 past the thresholds",
			args:    "FILE [--since 7d] [--concerns] [--tenant T] [--tier global|tenant] [--max-newly-blocked N] [--max-newly-allowed N] [--output json]",
			example: "  rein policy replay --since 7d candidate.yaml\n  rein policy replay --concerns --since 30d tighter.yaml   # would it have stopped what reviewers flagged?\n  rein policy replay --since 2026-11-01T00:00:00Z --tenant acme --tier tenant acme.yaml --max-newly-blocked 10",
			run:     runPolicyReplay},
	}})
}

func compileFile(path string) (*policy.Policy, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return policy.Compile(src)
}

func printProblems(e *env, path string, err error) {
	var ps policy.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Fprintf(e.stderr, "%s: %s\n", path, problemString(p.Line, p.Rule, p.Message))
		}
		return
	}
	fmt.Fprintf(e.stderr, "%s: %v\n", path, err)
}

func runPolicyLint(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein policy lint", subNamed("policy", "lint"))
	strict := fs.Bool("strict", false, "treat warnings (unreachable, shadowed rules) as errors")
	files, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		fmt.Fprintln(e.stderr, "rein policy lint: give at least one FILE")
		return exitUsage
	}
	result := exitOK
	for _, f := range files {
		p, err := compileFile(f)
		if err != nil {
			printProblems(e, f, err)
			result = exitNegative
			continue
		}
		warnings := policy.Lint(p)
		for _, w := range warnings {
			fmt.Fprintf(e.stderr, "%s: warning: %s\n", f, problemString(w.Line, w.Rule, w.Message))
		}
		if len(warnings) > 0 && *strict {
			result = exitNegative
		}
		fmt.Fprintf(e.stdout, "%s: %d rules, %d warnings, version %s\n", f, len(p.Rules), len(warnings), p.Version)
	}
	return result
}

// fixture is a policy test file (policy.md, Policy tests).
type fixture struct {
	Policy       string `yaml:"policy"`
	TenantPolicy string `yaml:"tenant_policy"`
	Tenant       string `yaml:"tenant"`
	// DNS is what names resolve to in these cases (resolve: true tools):
	// policy tests never ask the network, and a name not listed does not
	// resolve.
	DNS   map[string][]string `yaml:"dns"`
	Cases []fixtureCase       `yaml:"cases"`
}

// resolver answers names from the fixture's dns: map, and nothing else.
func (f *fixture) resolver() pipeline.Resolver {
	zone := map[string][]netip.Addr{}
	for name, addrs := range f.DNS {
		name = strings.TrimSuffix(strings.ToLower(name), ".")
		for _, a := range addrs {
			zone[name] = append(zone[name], netip.MustParseAddr(a)) // checked by loadFixture
		}
	}
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if addrs := zone[strings.TrimSuffix(strings.ToLower(host), ".")]; len(addrs) > 0 {
			return addrs, nil
		}
		return nil, fmt.Errorf("%s is not listed under the fixture's dns", host)
	}
}

type fixtureCase struct {
	Name    string         `yaml:"name"`
	Check   fixtureCheck   `yaml:"check"`
	Session map[string]any `yaml:"session"`
	Expect  fixtureExpect  `yaml:"expect"`
}

type fixtureCheck struct {
	Tool    string            `yaml:"tool"`
	Args    map[string]any    `yaml:"args"`
	Agent   string            `yaml:"agent"`
	Session string            `yaml:"session"`
	Intent  string            `yaml:"intent"`
	Labels  map[string]string `yaml:"labels"`
	Cost    *float64          `yaml:"cost"`
}

type fixtureExpect struct {
	Decision string         `yaml:"decision"`
	Rule     *string        `yaml:"rule"`
	Reason   string         `yaml:"reason"` // substring
	Risk     []string       `yaml:"risk"`   // tags that must be present
	Args     map[string]any `yaml:"args"`
}

func loadFixture(path string) (*fixture, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f fixture
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Policy == "" {
		return nil, fmt.Errorf("%s: missing `policy: PATH` (relative to the fixture file)", path)
	}
	for name, addrs := range f.DNS {
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s: dns: %s has no address; list one or more, e.g. %s: [93.184.215.14]", path, name, name)
		}
		for _, a := range addrs {
			if _, err := netip.ParseAddr(a); err != nil {
				return nil, fmt.Errorf("%s: dns: %s: %q is not an IP address; write e.g. 93.184.215.14 or 2606:2800::1", path, name, a)
			}
		}
	}
	return &f, nil
}

func relativeTo(fixture, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(fixture), path)
}

func runPolicyTest(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein policy test", subNamed("policy", "test"))
	verbose := fs.Bool("v", false, "print every case, not only failures")
	files, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		fmt.Fprintln(e.stderr, "rein policy test: give at least one fixture FILE")
		return exitUsage
	}
	passed, failed := 0, 0
	for _, path := range files {
		f, err := loadFixture(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "rein policy test: %v\n", err)
			return exitUsage
		}
		global, err := compileFile(relativeTo(path, f.Policy))
		if err != nil {
			printProblems(e, relativeTo(path, f.Policy), err)
			return exitNegative
		}
		var tenantTier *policy.Policy
		if f.TenantPolicy != "" {
			if tenantTier, err = compileFile(relativeTo(path, f.TenantPolicy)); err != nil {
				printProblems(e, relativeTo(path, f.TenantPolicy), err)
				return exitNegative
			}
		}
		set := policy.NewSet(global, tenantTier)
		pipeline.UseResolver(f.resolver())
		tenant := f.Tenant
		if tenant == "" {
			tenant = "default"
		}
		for i, c := range f.Cases {
			name := c.Name
			if name == "" {
				name = fmt.Sprintf("case %d", i+1)
			}
			problems := runCase(set, tenant, c)
			if len(problems) == 0 {
				passed++
				if *verbose {
					fmt.Fprintf(e.stdout, "ok    %s: %s\n", path, name)
				}
				continue
			}
			failed++
			fmt.Fprintf(e.stdout, "FAIL  %s: %s\n", path, name)
			for _, p := range problems {
				fmt.Fprintf(e.stdout, "      %s\n", p)
			}
		}
	}
	fmt.Fprintf(e.stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return exitNegative
	}
	return exitOK
}

func runCase(set *policy.Set, tenant string, c fixtureCase) []string {
	args, err := json.Marshal(orEmpty(c.Check.Args))
	if err != nil {
		return []string{"args: " + err.Error()}
	}
	req := &rein.CheckRequest{Tool: c.Check.Tool, Args: args, Agent: c.Check.Agent, Session: c.Check.Session,
		Intent: c.Check.Intent, Labels: c.Check.Labels, Cost: c.Check.Cost}
	if req.Agent == "" {
		req.Agent = "agent"
	}
	sim, err := pipeline.Simulate(set, tenant, req, normaliseSession(c.Session), time.Now())
	if err != nil {
		return []string{"check: " + err.Error()}
	}
	var problems []string
	x := c.Expect
	if x.Decision != "" && string(sim.Decision) != x.Decision {
		problems = append(problems, fmt.Sprintf("decision: got %s (rule %q: %s), want %s", sim.Decision, sim.Rule, sim.Reason, x.Decision))
	}
	if x.Rule != nil && sim.Rule != *x.Rule {
		problems = append(problems, fmt.Sprintf("rule: got %q, want %q", sim.Rule, *x.Rule))
	}
	if x.Reason != "" && !strings.Contains(sim.Reason, x.Reason) {
		problems = append(problems, fmt.Sprintf("reason: got %q, want it to contain %q", sim.Reason, x.Reason))
	}
	for _, tag := range x.Risk {
		if !slices.Contains(sim.Risk, tag) {
			problems = append(problems, fmt.Sprintf("risk: %v lacks %q", sim.Risk, tag))
		}
	}
	if x.Args != nil {
		want, _ := rein.Canonical(x.Args)
		if !bytes.Equal(want, sim.Args) {
			problems = append(problems, fmt.Sprintf("args: got %s, want %s", sim.Args, want))
		}
	}
	return problems
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// normaliseSession gives YAML session values the types checks carry (int64, float64).
func normaliseSession(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch n := v.(type) {
		case int:
			out[k] = int64(n)
		default:
			out[k] = v
		}
	}
	if c, ok := out["cost"].(int64); ok {
		out["cost"] = float64(c)
	}
	return out
}

func runPolicyExplain(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein policy explain", subNamed("policy", "explain"))
	checkJSON := fs.String("check", "", "the check, shaped like a POST /v1/check body")
	sessionJSON := fs.String("session", "", `session state, e.g. {"tainted": true, "calls": 12}`)
	tenantFile := fs.String("tenant-policy", "", "a tenant tier to evaluate together with FILE")
	tenant := fs.String("tenant", "default", "tenant the check belongs to")
	output := fs.String("output", "text", "text or json")
	files, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(files) != 1 || *checkJSON == "" {
		fmt.Fprintln(e.stderr, "rein policy explain: give one policy FILE and --check JSON")
		return exitUsage
	}
	global, err := compileFile(files[0])
	if err != nil {
		printProblems(e, files[0], err)
		return exitNegative
	}
	var tier *policy.Policy
	if *tenantFile != "" {
		if tier, err = compileFile(*tenantFile); err != nil {
			printProblems(e, *tenantFile, err)
			return exitNegative
		}
	}
	req, err := rein.DecodeCheck([]byte(*checkJSON))
	if err != nil {
		fmt.Fprintf(e.stderr, "rein policy explain: --check: %s\n", rein.ErrorMessage(err))
		return exitUsage
	}
	if req.Agent == "" {
		req.Agent = "agent"
	}
	var session map[string]any
	if *sessionJSON != "" {
		if err := json.Unmarshal([]byte(*sessionJSON), &session); err != nil {
			fmt.Fprintf(e.stderr, "rein policy explain: --session: %v\n", err)
			return exitUsage
		}
		if v, ok := session["calls"].(float64); ok {
			session["calls"] = int64(v)
		}
	}
	sim, err := pipeline.Simulate(policy.NewSet(global, tier), *tenant, req, session, time.Now())
	if err != nil {
		fmt.Fprintf(e.stderr, "rein policy explain: %s\n", rein.ErrorMessage(err))
		return exitUsage
	}
	if *output == "json" {
		printJSON(e, sim)
	} else {
		printSimulation(e, sim)
	}
	return exitFor(sim.Decision)
}

func printSimulation(e *env, sim *pipeline.Simulation) {
	fmt.Fprintf(e.stdout, "decision: %s\n", decisionLine(sim.Decision, sim.Rule, sim.Reason))
	fmt.Fprintf(e.stdout, "risk:     %s\n", strings.Join(sim.Risk, ", "))
	printFacts(e, sim.Facts)
	fmt.Fprintf(e.stdout, "args:     %s\n", sim.Args)
	if sim.Approval != nil {
		fmt.Fprintf(e.stdout, "approval: %s, quorum %d, ttl %ds\n", strings.Join(sim.Approval.Approvers, " + "), sim.Approval.Quorum, sim.Approval.TTLSeconds)
	}
	fmt.Fprintln(e.stdout, "\ntrace:")
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tTIER\tMODE\tMATCHED\tDECISION\tERROR")
	for _, r := range sim.Trace {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%v\t%s\t%s\n", r.Rule, r.Tier, r.Mode, r.Matched, r.Decision, r.Error)
	}
	tw.Flush()
}

// printFacts prints what rein derived from the arguments, one line per
// command, URL, path, SQL statement and secret; nothing when it found nothing.
func printFacts(e *env, facts map[string]any) {
	var lines []string
	list := func(v any) []map[string]any {
		var out []map[string]any
		if l, ok := v.([]any); ok {
			for _, x := range l {
				if m, ok := x.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
		return out
	}
	if sh, ok := facts["shell"].(map[string]any); ok {
		for _, c := range list(sh["commands"]) {
			line := fmt.Sprint(c["name"])
			for _, a := range c["args"].([]any) {
				line += " " + shellWord(fmt.Sprint(a))
			}
			for _, r := range list(c["redirects"]) {
				line += fmt.Sprintf(" %v%v", r["op"], r["target"])
			}
			lines = append(lines, "command  "+line)
		}
	}
	for _, u := range list(facts["urls"]) {
		line := fmt.Sprintf("url      %v  host %v", u["url"], u["host"])
		if ip, _ := u["ip"].(string); ip != "" {
			line += "  ip " + ip
		}
		if u["private"] == true {
			line += "  private"
		}
		lines = append(lines, line)
	}
	for _, p := range list(facts["paths"]) {
		line := fmt.Sprintf("path     %v -> %v", p["path"], p["clean"])
		if p["sensitive"] == true {
			line += "  sensitive"
		}
		if p["outside_workspace"] == true {
			line += "  outside workspace"
		}
		lines = append(lines, line)
	}
	if sq, ok := facts["sql"].(map[string]any); ok {
		for _, st := range list(sq["statements"]) {
			var tables []string
			for _, t := range st["tables"].([]any) {
				tables = append(tables, fmt.Sprint(t))
			}
			lines = append(lines, fmt.Sprintf("sql      %v %s  where: %v", st["verb"], strings.Join(tables, ", "), st["has_where"]))
		}
	}
	for _, sec := range list(facts["secrets"]) {
		lines = append(lines, fmt.Sprintf("secret   args.%v (%v)", sec["arg"], sec["kind"]))
	}
	if len(lines) == 0 {
		fmt.Fprintln(e.stdout, "facts:    none")
		return
	}
	fmt.Fprintln(e.stdout, "facts:")
	for _, l := range lines {
		fmt.Fprintln(e.stdout, "  "+l)
	}
}

// shellWord quotes an argument for display when it holds spaces or quotes.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func runPolicyPush(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein policy push", subNamed("policy", "push"))
	newClient := clientFlags(e, fs)
	r := addReplayFlags(fs, "")
	tenant := r.tenant
	files, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(files) != 1 {
		fmt.Fprintln(e.stderr, "rein policy push: give one policy FILE")
		return exitUsage
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "rein policy push: %v\n", err)
		return exitUsage
	}
	if _, err := policy.Compile(src); err != nil {
		printProblems(e, files[0], err)
		return exitNegative
	}
	c := newClient()
	if *r.since != "" { // replay first; push only within the thresholds
		if *r.tier == "" && *tenant != "" {
			*r.tier = "tenant"
		}
		if ok, code := r.run(ctx, e, c, src, "text"); !ok {
			fmt.Fprintln(e.stderr, "rein policy push: not pushed")
			return code
		}
	}
	v, err := c.PushPolicy(ctx, *tenant, src)
	if err != nil {
		return fail(e, "rein policy push", err)
	}
	fmt.Fprintf(e.stdout, "Active: %s policy %s (loaded %s)\n", v.Tier, v.Version, v.LoadedAt)
	return exitOK
}

// replayFlags are the thresholds both replay and push --replay take.
type replayFlags struct {
	since, tenant, tier    *string
	maxBlocked, maxAllowed *int
	concerns               bool // only the checks reviewers marked a concern
}

func addReplayFlags(fs *flag.FlagSet, sinceDefault string) replayFlags {
	return replayFlags{
		since:      fs.String("replay", sinceDefault, "replay the recorded checks since this long ago (24h, 7d) or this RFC 3339 time"),
		tenant:     fs.String("tenant", "", "the tenant whose checks are replayed (keys of tenant * only; default: your own)"),
		tier:       fs.String("tier", "", "which tier the candidate replaces: global (default for keys of tenant *) or tenant"),
		maxBlocked: fs.Int("max-newly-blocked", 0, "exit 1 when more checks than this would no longer be allowed"),
		maxAllowed: fs.Int("max-newly-allowed", 0, "exit 1 when more checks than this would newly be allowed"),
	}
}

// replay runs a replay and prints it; ok is false past a threshold.
func (r replayFlags) run(ctx context.Context, e *env, c *client.Client, src []byte, output string) (bool, int) {
	replay, what := c.Replay, "the recorded checks"
	if r.concerns {
		replay, what = c.ReplayConcerns, "the checks reviewers marked a concern"
	}
	fmt.Fprintf(e.stderr, "replaying %s since %s ...\n", what, *r.since)
	out, err := replay(ctx, src, *r.since, *r.tenant, *r.tier)
	if err != nil {
		return false, fail(e, "rein policy replay", err)
	}
	if output == "json" {
		printJSON(e, out)
	} else {
		fmt.Fprintf(e.stdout, "%d checks replayed in %d ms (tenant %s, since %s): %d change\n", out.Checks, out.TookMS, out.Tenant,
			out.Since.Local().Format(time.RFC3339), out.Changed)
		fmt.Fprintf(e.stdout, "  newly blocked %d, newly allowed %d, newly denied %d, newly asked %d\n",
			out.NewlyBlocked, out.NewlyAllowed, out.NewlyDenied, out.NewlyAsked)
		for _, k := range sortedCounts(out.Transitions) {
			fmt.Fprintf(e.stdout, "  %-16s %d\n", k, out.Transitions[k])
		}
		if len(out.ByRule) > 0 {
			fmt.Fprintln(e.stdout, "  by the candidate's deciding rule:")
			for _, k := range sortedCounts(out.ByRule) {
				fmt.Fprintf(e.stdout, "    %-24s %d\n", k, out.ByRule[k])
			}
		}
		for _, x := range out.Examples {
			fmt.Fprintf(e.stdout, "  %s %s %s: %s [%s] -> %s [%s]\n", x.CheckID, x.Agent, x.Tool, x.Before, x.BeforeRule, x.After, x.AfterRule)
		}
		fmt.Fprintln(e.stdout, "  (session counters are not replayed: rules on session.* see a fresh session)")
	}
	if out.NewlyBlocked > *r.maxBlocked || out.NewlyAllowed > *r.maxAllowed {
		fmt.Fprintf(e.stderr, "rein policy replay: %d newly blocked (at most %d), %d newly allowed (at most %d)\n",
			out.NewlyBlocked, *r.maxBlocked, out.NewlyAllowed, *r.maxAllowed)
		return false, exitNegative
	}
	return true, exitOK
}

func sortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func runPolicyReplay(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein policy replay", subNamed("policy", "replay"))
	newClient := clientFlags(e, fs)
	r := addReplayFlags(fs, "7d")
	fs.Lookup("replay").Usage = "unused; use --since"
	since := fs.String("since", "7d", "replay the recorded checks since this long ago (24h, 7d) or this RFC 3339 time")
	output := fs.String("output", "text", "text or json")
	concerns := fs.Bool("concerns", false, "replay only the checks reviewers marked a concern (and the sessions of session reviews marked one): would the candidate have stopped them?")
	files, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	r.concerns = *concerns
	if len(files) != 1 {
		fmt.Fprintln(e.stderr, "rein policy replay: give one candidate policy FILE")
		return exitUsage
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "rein policy replay: %v\n", err)
		return exitUsage
	}
	if _, err := policy.Compile(src); err != nil {
		printProblems(e, files[0], err)
		return exitNegative
	}
	r.since = since
	_, code = r.run(ctx, e, newClient(), src, *output)
	return code
}
