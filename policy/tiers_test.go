package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/risk"
)

// assessAndDecide runs a check through the set as the pipeline does: facts
// from the set's tool specs and workspace, then the rules.
func assessAndDecide(t *testing.T, s *Set, tool string, args map[string]any) *Result {
	t.Helper()
	a := risk.Assess(tool, args, risk.Env{Tools: s.Tools(), Workspace: s.Workspace()})
	return decide(s, &Input{Tool: tool, Args: args, Risk: a.Tags, Facts: a.Facts, Labels: map[string]string{}})
}

const cronGlobal = header + `workspace: /srv/app
tools:
  "fs.write": {path: [path]}
rules:
- {id: writes-inside, when: 'tool == "fs.write" && !("path.outside_workspace" in risk)', decision: allow}
- {id: writes-outside, when: 'tool == "fs.write" && "path.outside_workspace" in risk', decision: ask}
`

// A tenant tier's workspace may narrow the global one, never widen it: the
// global ask on writes outside /srv/app (such as /etc/cron.d) holds whatever
// workspace the tenant sets.
func TestTenantWorkspaceOnlyNarrows(t *testing.T) {
	global := mustCompile(t, cronGlobal)
	cases := []struct {
		name, workspace, path string
		want                  rein.Decision
		effective             string
		ignored               bool // TierProblems names the tenant's workspace
	}{
		{"workspace / cannot widen", "/", "/etc/cron.d/job", rein.Ask, "/srv/app", true},
		{"a sibling cannot replace it", "/etc", "/etc/cron.d/job", rein.Ask, "/srv/app", true},
		{"a prefix that is not a parent", "/srv/application", "/srv/app/x", rein.Allow, "/srv/app", true},
		{"dot-dot is cleaned first", "/srv/app/../..", "/etc/cron.d/job", rein.Ask, "/srv/app", true},
		{"the same workspace", "/srv/app", "/srv/app/a", rein.Allow, "/srv/app", false},
		{"a narrower one applies", "/srv/app/tenant-a", "/srv/app/other/b", rein.Ask, "/srv/app/tenant-a", false},
		{"inside the narrower one", "/srv/app/tenant-a", "/srv/app/tenant-a/b", rein.Allow, "/srv/app/tenant-a", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tenant := mustCompile(t, header+"workspace: "+c.workspace+`
rules:
- {id: tenant-allows-everything, when: 'true', decision: allow}
`)
			s := NewSet(global, tenant)
			if got := s.Workspace(); got != c.effective {
				t.Errorf("effective workspace %q, want %q", got, c.effective)
			}
			res := assessAndDecide(t, s, "fs.write", map[string]any{"path": c.path})
			if res.Decision != c.want {
				t.Errorf("write %s with tenant workspace %s: %s (%s), want %s", c.path, c.workspace, res.Decision, res.Reason, c.want)
			}
			ps := TierProblems(global, tenant)
			if got := len(ps) > 0; got != c.ignored {
				t.Errorf("TierProblems reports a problem: %v, want %v (%v)", got, c.ignored, ps)
			}
			if c.ignored && !strings.Contains(ps.Error(), "outside the global workspace /srv/app") {
				t.Errorf("TierProblems does not say what to fix: %v", ps)
			}
		})
	}
	// Without a global workspace, the tenant's narrows "everywhere".
	open := mustCompile(t, strings.Replace(cronGlobal, "workspace: /srv/app\n", "", 1))
	tenant := mustCompile(t, header+"workspace: /srv/t\nrules: []\n")
	if got := NewSet(open, tenant).Workspace(); got != "/srv/t" {
		t.Errorf("tenant workspace under a global tier without one: %q", got)
	}
	if got := NewSet(global, nil).Workspace(); got != "/srv/app" {
		t.Errorf("global tier alone: %q", got)
	}
}

func TestWorkspaceMustBeAbsolute(t *testing.T) {
	for _, ws := range []string{"srv/app", "./app", "~/app"} {
		_, err := Compile([]byte(header + "workspace: " + ws + "\nrules: []\n"))
		if err == nil || !strings.Contains(err.Error(), "absolute path") {
			t.Errorf("workspace %q: %v, want a problem asking for an absolute path", ws, err)
		}
	}
	p := mustCompile(t, header+"workspace: /srv/app/\nrules: []\n")
	if p.Workspace != "/srv/app" {
		t.Errorf("workspace kept as %q, want it cleaned to /srv/app", p.Workspace)
	}
}

// A tenant's tools map adds classifiers; it cannot take away the global
// tier's (or rein's built-in) ones, whatever the tenant maps the tool to.
func TestTenantToolsOnlyAddClassifiers(t *testing.T) {
	global := mustCompile(t, cronGlobal)
	for _, tools := range []string{
		`"fs.write": {path: []}`,
		`"fs.write": {url: [path]}`,
		`"fs.*": {}`,
		`"*": {shell: [other]}`,
	} {
		tenant := mustCompile(t, header+"tools:\n  "+tools+"\nrules:\n- {id: t-allow, when: 'true', decision: allow}\n")
		s := NewSet(global, tenant)
		a := risk.Assess("fs.write", map[string]any{"path": "/etc/cron.d/job"}, risk.Env{Tools: s.Tools(), Workspace: s.Workspace()})
		if !slices.Contains(a.Tags, "path.outside_workspace") {
			t.Errorf("tenant tools %s removed the global path classifier: tags %v", tools, a.Tags)
		}
		if res := assessAndDecide(t, s, "fs.write", map[string]any{"path": "/etc/cron.d/job"}); res.Decision != rein.Ask {
			t.Errorf("tenant tools %s: %s, want the global ask", tools, res.Decision)
		}
	}
	// The built-in specs hold too: Bash's command is a shell command even
	// when a tenant maps Bash to nothing.
	tenant := mustCompile(t, header+"tools:\n  \"Bash\": {}\nrules: []\n")
	a := risk.Assess("Bash", map[string]any{"command": "rm -rf /"}, risk.Env{Tools: NewSet(global, tenant).Tools()})
	if !slices.Contains(a.Tags, "shell.destructive") {
		t.Errorf("a tenant mapping of Bash removed the built-in shell classifier: %v", a.Tags)
	}
	// A tenant classifier applies on top of the global ones.
	tenant = mustCompile(t, header+"tools:\n  \"fs.write\": {url: [target]}\nrules: []\n")
	a = risk.Assess("fs.write", map[string]any{"path": "/srv/app/a", "target": "http://10.0.0.1/"}, risk.Env{Tools: NewSet(global, tenant).Tools(), Workspace: "/srv/app"})
	if !slices.Contains(a.Tags, "path") || !slices.Contains(a.Tags, "url") {
		t.Errorf("tenant classifier did not add to the global one: %v", a.Tags)
	}
}

// A tenant's approval defaults shape only its own ask rules; when a global
// ask matches, its approvers, quorum and TTLs still bind.
func TestTenantApprovalDefaultsCannotLoosenGlobalAsk(t *testing.T) {
	global := mustCompile(t, header+`approval: {approvers: ["group:security"], quorum: 2, reject_quorum: 1, ttl: 1h, grant_ttl: 5m}
rules:
- {id: g-ask-deploy, when: 'tool == "deploy"', decision: ask}
`)
	tenant := mustCompile(t, header+`approval: {approvers: ["client"], quorum: 1, reject_quorum: 5, ttl: 7d, grant_ttl: 7d}
rules:
- {id: t-ask-deploy, when: 'tool == "deploy"', decision: ask}
- {id: t-allow-deploy, when: 'tool == "deploy"', decision: allow}
`)
	res := decide(NewSet(global, tenant), &Input{Tool: "deploy"})
	if res.Decision != rein.Ask || res.Rule != "g-ask-deploy" {
		t.Fatalf("decision %s by %s, want the global ask", res.Decision, res.Rule)
	}
	a := res.Approval
	if a.Quorum != 2 || a.RejectQuorum != 1 || a.TTL != time.Hour || a.GrantTTL != 5*time.Minute {
		t.Errorf("combined approval %+v: the global quorum 2, reject quorum 1, ttl 1h and grant ttl 5m must hold", a)
	}
	if len(res.ApproverSets) != 2 || !slices.Equal(res.ApproverSets[0], []string{"group:security"}) {
		t.Errorf("approver sets %v: the global set must be required", res.ApproverSets)
	}
	// Where the global tier has no ask, the tenant's own ask uses the
	// tenant's defaults: that only adds a step the global tier did not ask for.
	open := mustCompile(t, header+"default: allow\nrules: []\n")
	own := decide(NewSet(open, tenant), &Input{Tool: "deploy"})
	if own.Decision != rein.Ask || own.Approval.TTL != 7*24*time.Hour || !slices.Equal(own.Approval.Approvers, []string{"client"}) {
		t.Errorf("tenant ask alone: %s %+v", own.Decision, own.Approval)
	}
}

// A tenant's limit has its own bucket: it adds a throttle, it cannot raise
// or share the global one, even under the same rule id.
func TestTenantLimitsAdd(t *testing.T) {
	global := mustCompile(t, header+`rules:
- {id: mail, when: 'tool == "email.send"', limit: {rate: 1, per: 1h}}
- {id: allow-mail, when: 'tool == "email.send"', decision: allow}
`)
	tenant := mustCompile(t, header+`rules:
- {id: mail, when: 'tool == "email.send"', limit: {rate: 1000, per: 1h}}
`)
	ev := NewSet(global, tenant).Evaluate(&Input{Tool: "email.send", Now: time.Unix(1700000000, 0)})
	lm := ev.Limits()
	if len(lm) != 2 || lm[0].Tier != TierGlobal || lm[1].Tier != TierTenant || lm[0].Rule == lm[1].Rule {
		t.Fatalf("limits %+v: want the global and the tenant rule, apart", lm)
	}
	res := ev.Decide(map[*Rule]LimitVerdict{lm[0].Rule: {Exceeded: true, RetryAfter: time.Minute}, lm[1].Rule: {}})
	if res.Decision != rein.Throttle || res.Tier != TierGlobal {
		t.Errorf("decision %s (tier %s), want the global throttle", res.Decision, res.Tier)
	}
}

func TestModifySetNumbersMustBeExact(t *testing.T) {
	for _, n := range []string{"9007199254740993", "-9007199254740993", "18446744073709551615", "[1, {a: 9007199254740993}]"} {
		_, err := Compile([]byte(header + "rules:\n- {id: m, when: 'true', decision: modify, modify: {set: {n: " + n + "}}}\n"))
		if err == nil || !strings.Contains(err.Error(), "write it as a string") {
			t.Errorf("set n: %s: %v, want a problem", n, err)
		}
	}
	mustCompile(t, header+"rules:\n- {id: m, when: 'true', decision: modify, modify: {set: {n: 9007199254740992}}}\n")
}
