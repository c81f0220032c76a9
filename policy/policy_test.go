package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func mustCompile(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Compile([]byte(src))
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, src)
	}
	return p
}

func decide(s *Set, in *Input) *Result {
	if in.Now.IsZero() {
		in.Now = time.Unix(1700000000, 0)
	}
	ev := s.Evaluate(in)
	ev.Trace = true
	return ev.Decide(nil)
}

const header = "version: 1\n"

func TestCombination(t *testing.T) {
	rules := map[string]string{
		"allow":  "- {id: r-allow, when: 'true', decision: allow}\n",
		"modify": "- {id: r-modify, when: 'true', decision: modify, modify: {set: {x: 1}}}\n",
		"ask":    "- {id: r-ask, when: 'true', decision: ask}\n",
		"deny":   "- {id: r-deny, when: 'true', decision: deny, reason: no}\n",
		"error":  "- {id: r-error, when: 'args.missing == 1', decision: allow}\n",
	}
	cases := []struct {
		rules    []string
		decision rein.Decision
		rule     string
	}{
		{[]string{"allow"}, rein.Allow, "r-allow"},
		{[]string{"allow", "modify"}, rein.Modify, "r-modify"},
		{[]string{"modify", "allow"}, rein.Modify, "r-modify"},
		{[]string{"allow", "ask", "modify"}, rein.Ask, "r-ask"},
		{[]string{"ask", "deny", "allow"}, rein.Deny, "r-deny"},
		{[]string{"deny", "ask"}, rein.Deny, "r-deny"},
		{[]string{"allow", "error"}, rein.Deny, "r-error"},
		{[]string{"error", "allow", "modify", "ask"}, rein.Deny, "r-error"},
		{[]string{}, rein.Deny, ""},
	}
	for _, c := range cases {
		src := header + "rules:\n"
		if len(c.rules) == 0 {
			src = header + "rules: []\n"
		}
		for _, r := range c.rules {
			src += rules[r]
		}
		res := decide(NewSet(mustCompile(t, src), nil), &Input{Tool: "t"})
		if res.Decision != c.decision || res.Rule != c.rule {
			t.Errorf("rules %v: got %s/%s, want %s/%s (%s)", c.rules, res.Decision, res.Rule, c.decision, c.rule, res.Reason)
		}
		if len(res.Trace) != len(c.rules) {
			t.Errorf("rules %v: %d trace rows", c.rules, len(res.Trace))
		}
	}
}

func TestDefaultAndReasons(t *testing.T) {
	deny := mustCompile(t, header+"rules:\n- {id: a, when: 'tool == \"x\"', decision: allow}\n")
	res := decide(NewSet(deny, nil), &Input{Tool: "payments.transfer"})
	if res.Decision != rein.Deny || res.Reason != "no rule allows payments.transfer" || res.Rule != "" {
		t.Errorf("default deny: %+v", res)
	}
	allow := mustCompile(t, header+"default: allow\nrules:\n- {id: a, when: 'tool == \"x\"', decision: deny}\n")
	if res := decide(NewSet(allow, nil), &Input{Tool: "y"}); res.Decision != rein.Allow {
		t.Errorf("default allow: %+v", res)
	}
	if res := decide(NewSet(allow, nil), &Input{Tool: "x"}); res.Decision != rein.Deny || res.Reason != "matched rule a" {
		t.Errorf("deny rule without reason: %+v", res)
	}
	if res := decide(nil, &Input{Tool: "x"}); res.Decision != rein.Deny || res.Reason != "no policy loaded" {
		t.Errorf("no policy: %+v", res)
	}
	expr := mustCompile(t, header+"rules:\n- {id: big, when: 'true', decision: deny, reason_expr: '\"amount \" + string(args.amount) + \" too big\"'}\n")
	if res := decide(NewSet(expr, nil), &Input{Tool: "x", Args: map[string]any{"amount": int64(5)}}); res.Reason != "amount 5 too big" {
		t.Errorf("reason_expr: %q", res.Reason)
	}
	if res := decide(NewSet(expr, nil), &Input{Tool: "x"}); res.Decision != rein.Deny || !strings.Contains(res.Reason, "reason_expr failed") {
		t.Errorf("failing reason_expr keeps the decision: %+v", res)
	}
}

func TestRuntimeErrorsFailClosed(t *testing.T) {
	p := mustCompile(t, header+`rules:
- id: amount-check
  when: 'tool == "pay" && args.amount < 100'
  decision: allow
- id: wrong-type
  when: 'tool == "typed" && args.n > 1'
  decision: allow
- id: cidr
  when: 'tool == "net" && cidr_contains("10.0.0.0/8", args.ip)'
  decision: allow
- id: dyn
  when: 'tool == "dyn" && args.flag'
  decision: allow
`)
	s := NewSet(p, nil)
	cases := []struct {
		in   Input
		want rein.Decision
		rule string
	}{
		{Input{Tool: "pay", Args: map[string]any{"amount": int64(5)}}, rein.Allow, "amount-check"},
		{Input{Tool: "pay", Args: map[string]any{}}, rein.Deny, "amount-check"},
		{Input{Tool: "typed", Args: map[string]any{"n": "two"}}, rein.Deny, "wrong-type"},
		{Input{Tool: "net", Args: map[string]any{"ip": "10.1.2.3"}}, rein.Allow, "cidr"},
		{Input{Tool: "net", Args: map[string]any{"ip": "::ffff:10.1.2.3"}}, rein.Allow, "cidr"},
		{Input{Tool: "net", Args: map[string]any{"ip": "not-an-ip"}}, rein.Deny, "cidr"},
		{Input{Tool: "dyn", Args: map[string]any{"flag": "yes"}}, rein.Deny, "dyn"},
	}
	for _, c := range cases {
		res := decide(s, &c.in)
		if res.Decision != c.want || res.Rule != c.rule {
			t.Errorf("%v: got %s by %q (%s), want %s by %q", c.in, res.Decision, res.Rule, res.Reason, c.want, c.rule)
		}
		if c.want == rein.Deny && !strings.HasPrefix(res.Reason, "policy error in rule "+c.rule+": ") {
			t.Errorf("%v: reason %q must name the rule", c.in, res.Reason)
		}
	}
}

func TestCostLimit(t *testing.T) {
	p := mustCompile(t, header+"rules:\n- {id: quadratic, when: 'args.xs.all(x, args.xs.all(y, x + y >= 0))', decision: allow}\n")
	small := make([]any, 10)
	big := make([]any, 3000)
	for i := range big {
		big[i] = int64(i)
		if i < len(small) {
			small[i] = int64(i)
		}
	}
	if res := decide(NewSet(p, nil), &Input{Tool: "x", Args: map[string]any{"xs": small}}); res.Decision != rein.Allow {
		t.Fatalf("small input: %+v", res)
	}
	res := decide(NewSet(p, nil), &Input{Tool: "x", Args: map[string]any{"xs": big}})
	if res.Decision != rein.Deny || !strings.Contains(res.Reason, "policy error in rule quadratic") || !strings.Contains(res.Reason, "cost limit") {
		t.Errorf("cost limit: %+v", res)
	}
}

func TestShadow(t *testing.T) {
	p := mustCompile(t, header+`rules:
- {id: allow-all, when: 'true', decision: allow}
- {id: trial, when: 'tool == "deploy"', decision: deny, mode: shadow}
- {id: trial-broken, when: 'args.nope', decision: deny, mode: shadow}
`)
	res := decide(NewSet(p, nil), &Input{Tool: "deploy"})
	if res.Decision != rein.Allow {
		t.Fatalf("shadow rules must not enforce: %+v", res)
	}
	if len(res.Shadow) != 2 || res.Shadow[0].Rule != "trial" || res.Shadow[0].Decision != rein.Deny || res.Shadow[1].Error == "" {
		t.Errorf("shadow matches: %+v", res.Shadow)
	}
	if res.Trace[1].Mode != "shadow" || !res.Trace[1].Matched {
		t.Errorf("trace: %+v", res.Trace)
	}
}

func TestModify(t *testing.T) {
	p := mustCompile(t, header+`rules:
- id: strip-auth
  when: 'tool == "http.post" && has(args.headers) && "Authorization" in args.headers'
  decision: modify
  modify: {remove: ["headers.Authorization"]}
- id: force-timeout
  when: 'tool == "http.post"'
  decision: modify
  modify: {set: {"options.timeout_s": 10, "headers.X-Agent": "rein"}}
- id: allow-http
  when: 'tool.startsWith("http.")'
  decision: allow
- id: bad-set
  when: 'tool == "http.put"'
  decision: modify
  modify: {set: {"body.size": 1}}
`)
	s := NewSet(p, nil)
	args := map[string]any{"url": "https://x", "headers": map[string]any{"Authorization": "Bearer s3cret", "Accept": "*/*"}}
	res := decide(s, &Input{Tool: "http.post", Args: args})
	if res.Decision != rein.Modify || res.Rule != "strip-auth" || !res.Modified {
		t.Fatalf("modify: %+v", res)
	}
	h := res.Args["headers"].(map[string]any)
	if _, ok := h["Authorization"]; ok || h["Accept"] != "*/*" || h["X-Agent"] != "rein" {
		t.Errorf("headers after modify: %v", h)
	}
	if res.Args["options"].(map[string]any)["timeout_s"] != int64(10) {
		t.Errorf("set: %v", res.Args)
	}
	if _, ok := args["headers"].(map[string]any)["Authorization"]; !ok {
		t.Error("modify changed the caller's args in place")
	}
	res = decide(s, &Input{Tool: "http.put", Args: map[string]any{"body": "a string"}})
	if res.Decision != rein.Deny || res.Rule != "bad-set" || !strings.HasPrefix(res.Reason, "modify rule bad-set failed") {
		t.Errorf("a modify that cannot apply must deny: %+v", res)
	}
	if res := decide(s, &Input{Tool: "http.get"}); res.Decision != rein.Allow || res.Modified {
		t.Errorf("allow: %+v", res)
	}
}

func TestAskCombinesApprovals(t *testing.T) {
	p := mustCompile(t, header+`approval: {approvers: ["role:approver"], ttl: 30m, grant_ttl: 5m}
rules:
- id: a
  when: 'true'
  decision: ask
  approval: {approvers: ["group:finance"], quorum: 2, ttl: 1h}
- id: b
  when: 'true'
  decision: ask
  approval: {approvers: ["group:oncall", "group:finance"], ttl: 10m}
`)
	res := decide(NewSet(p, nil), &Input{Tool: "x"})
	if res.Decision != rein.Ask || res.Rule != "a" {
		t.Fatalf("%+v", res)
	}
	a := res.Approval
	if a.Quorum != 2 || a.TTL != 10*time.Minute || a.GrantTTL != 5*time.Minute {
		t.Errorf("combined approval: %+v", a)
	}
	if strings.Join(a.Approvers, ",") != "group:finance,group:oncall" || len(res.ApproverSets) != 2 {
		t.Errorf("approvers: %v sets %v", a.Approvers, res.ApproverSets)
	}
}

func TestTiers(t *testing.T) {
	global := mustCompile(t, header+`rules:
- {id: g-deny-prod, when: 'labels.env == "prod" && tool == "deploy"', decision: deny}
- {id: g-ask-pay, when: 'tool == "pay"', decision: ask}
- {id: g-allow-read, when: 'tool == "read"', decision: allow}
`)
	tenant := mustCompile(t, header+`default: allow
rules:
- {id: t-allow-all, when: 'true', decision: allow}
- {id: t-deny-read-secrets, when: 'tool == "read" && args.path == "/secrets"', decision: deny}
`)
	s := NewSet(global, tenant)
	if s.Version == global.Version || s.Version == tenant.Version || !strings.HasPrefix(s.Version, "sha256:") {
		t.Errorf("set version must cover both tiers: %s", s.Version)
	}
	cases := []struct {
		in   Input
		want rein.Decision
		rule string
	}{
		{Input{Tool: "deploy", Labels: map[string]string{"env": "prod"}}, rein.Deny, "g-deny-prod"},
		{Input{Tool: "pay"}, rein.Ask, "g-ask-pay"},
		{Input{Tool: "read", Args: map[string]any{"path": "/secrets"}}, rein.Deny, "t-deny-read-secrets"},
		{Input{Tool: "read", Args: map[string]any{"path": "/x"}}, rein.Allow, "g-allow-read"},
		{Input{Tool: "other"}, rein.Allow, "t-allow-all"},
	}
	for _, c := range cases {
		c.in.Labels = orLabels(c.in.Labels)
		res := decide(s, &c.in)
		if res.Decision != c.want || res.Rule != c.rule {
			t.Errorf("%s: got %s by %s, want %s by %s (%s)", c.in.Tool, res.Decision, res.Rule, c.want, c.rule, res.Reason)
		}
	}
	// The tenant's default allow cannot loosen the global default deny.
	empty := mustCompile(t, header+"default: allow\nrules: []\n")
	if res := decide(NewSet(global, empty), &Input{Tool: "unknown"}); res.Decision != rein.Deny {
		t.Errorf("tenant default loosened the global default: %+v", res)
	}
	if res := decide(NewSet(nil, empty), &Input{Tool: "unknown"}); res.Decision != rein.Allow {
		t.Errorf("tenant tier alone: %+v", res)
	}
}

func orLabels(l map[string]string) map[string]string {
	if l == nil {
		return map[string]string{"env": "dev"}
	}
	return l
}

func TestLimitVerdicts(t *testing.T) {
	p := mustCompile(t, header+`rules:
- {id: mail, when: 'tool == "email.send"', limit: {rate: 2, per: 1h, by: [agent]}}
- {id: allow-mail, when: 'tool == "email.send"', decision: allow}
- {id: deny-spam, when: 'tool == "email.send" && args.to == "all@corp"', decision: deny}
`)
	s := NewSet(p, nil)
	ev := s.Evaluate(&Input{Tool: "email.send", Args: map[string]any{"to": "a@b"}})
	lm := ev.Limits()
	if len(lm) != 1 || lm[0].Rule.ID != "mail" {
		t.Fatalf("limits: %+v", lm)
	}
	if res := ev.Decide(nil); res.Decision != rein.Allow {
		t.Errorf("within rate: %+v", res)
	}
	res := s.Evaluate(&Input{Tool: "email.send", Args: map[string]any{"to": "a@b"}}).Decide(map[*Rule]LimitVerdict{lm[0].Rule: {Exceeded: true, RetryAfter: time.Minute}})
	if res.Decision != rein.Throttle || res.Rule != "mail" || res.RetryAfter != time.Minute {
		t.Errorf("over rate: %+v", res)
	}
	res = s.Evaluate(&Input{Tool: "email.send", Args: map[string]any{"to": "all@corp"}}).Decide(map[*Rule]LimitVerdict{lm[0].Rule: {Exceeded: true}})
	if res.Decision != rein.Deny {
		t.Errorf("deny beats throttle: %+v", res)
	}
	// A limit rule alone allows nothing.
	only := mustCompile(t, header+"rules:\n- {id: mail, when: 'true', limit: {rate: 2, per: 1h}}\n")
	if res := decide(NewSet(only, nil), &Input{Tool: "email.send"}); res.Decision != rein.Deny {
		t.Errorf("limit rule alone: %+v", res)
	}
}

func TestCompileProblems(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown top-level field", "version: 1\ndefualt: allow\nrules: []\n", []string{`line 2: unknown field "defualt" in the policy; known fields: version`}},
		{"unknown rule field", "version: 1\nrules:\n  - id: a\n    when: 'true'\n    decison: allow\n", []string{`line 5: unknown field "decison" in a rule`}},
		{"missing version", "rules: []\n", []string{"missing `version: 1`"}},
		{"bad cel", "version: 1\nrules:\n  - id: a\n    when: 'tool =='\n    decision: allow\n", []string{"line 3: rule a: when: "}},
		{"non-bool when", "version: 1\nrules:\n  - {id: a, when: 'tool', decision: allow}\n", []string{"rule a: when: must give a bool"}},
		{"unknown variable", "version: 1\nrules:\n  - {id: a, when: 'toool == \"x\"', decision: allow}\n", []string{"undeclared reference to 'toool'"}},
		{"duplicate id", "version: 1\nrules:\n  - {id: a, when: 'true', decision: allow}\n  - {id: a, when: 'true', decision: deny}\n", []string{"line 4: rule a: duplicate rule id (first used on line 3)"}},
		{"throttle decision", "version: 1\nrules:\n  - {id: a, when: 'true', decision: throttle}\n", []string{"decision throttle comes from a limit"}},
		{"bad approver", "version: 1\nrules:\n  - {id: a, when: 'true', decision: ask, approval: {approvers: [oncall]}}\n", []string{`approver "oncall"`}},
		{"approval on allow", "version: 1\nrules:\n  - {id: a, when: 'true', decision: allow, approval: {quorum: 2}}\n", []string{"approval settings only apply to decision ask"}},
		{"bad limit", "version: 1\nrules:\n  - {id: a, when: 'true', limit: {rate: 0, per: soon, by: [ip]}}\n", []string{"rate must be a positive", `per "soon"`, `by "ip"`}},
		{"modify without block", "version: 1\nrules:\n  - {id: a, when: 'true', decision: modify}\n", []string{"decision modify and a modify block go together"}},
		{"several problems at once", "version: 1\nrules:\n  - {id: a, when: 'x', decision: allow}\n  - {when: 'true', decision: maybe}\n", []string{"rule a: when:", "missing id", `decision "maybe"`}},
		{"unknown field and bad CEL together", "version: 1\nrules:\n  - id: a\n    colour: red\n    when: 'true'\n    decision: allow\n  - {id: b, when: 'tool ==', decision: allow}\n", []string{`line 4: unknown field "colour"`, "line 7: rule b: when:"}},
		{"two documents", "version: 1\nrules: []\n---\nversion: 1\n", []string{"more than one YAML document"}},
		{"bad default", "version: 1\ndefault: ask\nrules: []\n", []string{`default "ask"`}},
		{"not yaml", "version: 1\nrules: [\n", []string{"line"}},
		{"empty", "", []string{"line 1: the policy is empty: write one YAML document"}},
		{"blank", "  \n\n", []string{"the policy is empty"}},
		{"only comments", "# a policy, one day\n", []string{"the policy is empty"}},
	}
	for _, c := range cases {
		_, err := Compile([]byte(c.src))
		if err == nil {
			t.Errorf("%s: compiled", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
	}
}

// TestToolMatcherAgreesWithEvaluation checks that the tool-name pre-filter
// never changes a decision: every rule is evaluated with and without it.
func TestToolMatcherAgreesWithEvaluation(t *testing.T) {
	conds := []string{
		`tool == "fs.read"`,
		`"fs.read" == tool && args.path != ""`,
		`tool.startsWith("fs.") && !tool.endsWith(".write")`,
		`glob("http.*", tool) && args.url.startsWith("https://")`,
		`tool in ["a", "b", "fs.read"] || args.x == 1`,
		`(tool == "a" || tool.startsWith("fs.")) && args.missing == 1`,
		`tool == "x" && args.missing == 1`,
		`[1].exists(tool, tool == 1) && tool == "q"`,
		`tool != "fs.read"`,
	}
	tools := []string{"fs.read", "fs.write", "http.get", "a", "b", "x", "q", "", "fs."}
	argsets := []map[string]any{{}, {"path": "p", "url": "https://h", "x": int64(1)}, {"url": "ftp://h"}}
	for _, cond := range conds {
		prg, tc, _, err := compileWhen(cond)
		if err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		for _, tool := range tools {
			for _, args := range argsets {
				act := newActivation(&Input{Tool: tool, Args: args})
				out, _, err := prg.Eval(act)
				full := err == nil && out.Value() == true
				errored := err != nil
				if tc != nil && !tc.match(tool) && (full || errored) {
					t.Errorf("%s with tool %q args %v: pre-filter skipped a rule that evaluates to %v (err %v)", cond, tool, args, out, err)
				}
			}
		}
	}
}

func TestVersionIsContentHash(t *testing.T) {
	a := mustCompile(t, header+"rules: []\n")
	b := mustCompile(t, header+"rules: []\n# comment\n")
	if a.Version == b.Version || a.Version != VersionOf([]byte(header+"rules: []\n")) {
		t.Errorf("versions %s %s", a.Version, b.Version)
	}
}

func TestLint(t *testing.T) {
	p := mustCompile(t, header+`rules:
- {id: never, when: '1 > 2', decision: allow}
- {id: deny-deploy, when: 'tool == "deploy" || tool == "deploy.prod"', decision: deny}
- {id: allow-deploy-prod, when: 'tool == "deploy.prod" && labels.ok == "yes"', decision: allow}
- {id: deny-fs, when: 'glob("fs.*", tool)', decision: deny}
- {id: ask-fs-write, when: 'tool.startsWith("fs.write") && args.size > 10', decision: ask}
- {id: allow-http, when: 'tool.startsWith("http.")', decision: allow}
- {id: deny-some-http, when: 'tool == "http.get" && args.url == "x"', decision: deny}
- {id: trial, when: 'tool == "deploy"', decision: allow, mode: shadow}
`)
	got := map[string]string{}
	for _, w := range Lint(p) {
		got[w.Rule] = w.Message
	}
	for rule, want := range map[string]string{
		"never":             "unreachable",
		"allow-deploy-prod": "shadowed: rule deny-deploy",
		"ask-fs-write":      "shadowed: rule deny-fs",
	} {
		if !strings.Contains(got[rule], want) {
			t.Errorf("rule %s: got %q, want %q", rule, got[rule], want)
		}
	}
	for _, rule := range []string{"allow-http", "deny-deploy", "trial", "deny-some-http"} {
		if msg, ok := got[rule]; ok {
			t.Errorf("rule %s: unexpected warning %q", rule, msg)
		}
	}
}

// A set reads the session when any rule of either tier names it, in its
// condition or its reason.
func TestReadsSession(t *testing.T) {
	compile := func(rules string) *Policy {
		p, err := Compile([]byte("version: 1\nrules:\n" + rules))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := compile(`  - {id: a, when: 'tool == "fs.read"', decision: allow}` + "\n" +
		`  - {id: l, when: 'true', limit: {rate: 5, per: 1m, by: [session]}}` + "\n")
	for _, tc := range []struct {
		name string
		set  *Set
		want bool
	}{
		{"none", NewSet(plain, nil), false},
		{"condition", NewSet(compile(`  - {id: b, when: 'session.calls > 9', decision: deny}`+"\n"), nil), true},
		{"repeats", NewSet(nil, compile(`  - {id: b, when: 'tool == "x" && session["repeats"] > 2', decision: deny}`+"\n")), true},
		{"reason", NewSet(compile(`  - {id: c, when: 'true', decision: allow, reason_expr: 'string(session.cost)'}`+"\n"), nil), true},
		{"global tier", NewSet(compile(`  - {id: b, when: 'session.tainted', decision: deny}`+"\n"), plain), true},
		{"tenant tier", NewSet(plain, compile(`  - {id: b, when: 'session.denials > 1', decision: deny}`+"\n")), true},
		{"no policy", nil, true},
		{"made without NewSet", &Set{Global: plain}, true},
	} {
		if got := tc.set.ReadsSession(); got != tc.want {
			t.Errorf("%s: ReadsSession() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
