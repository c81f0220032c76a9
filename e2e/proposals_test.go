package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestProposalsE2E: "always allow" from an approved deploy, through the CLI
// against the real binary: an agent cannot propose for itself, an approver
// proposes, only an admin of the tier accepts; afterwards exactly that action
// of that agent runs without asking, everything else still asks or is
// denied, and the log holds the proposal, the decision and the push.
func TestProposalsE2E(t *testing.T) {
	e := newApprovalEnv(t, t.TempDir())
	approve := func(env string) string {
		t.Helper()
		ask := e.check("builder", "deploy", "s1", `{"env":"`+env+`"}`)
		if ask.Decision != "ask" || ask.Approval == nil {
			t.Fatalf("deploy %s: %+v", env, ask)
		}
		mustVote(t, e, "alice", ask.Approval.ID, "approve", "")
		if run := e.check("builder", "deploy", "s1", `{"env":"`+env+`"}`); run.Decision != "allow" {
			t.Fatalf("the approved deploy %s: %+v", env, run)
		}
		return ask.Approval.ID
	}
	id := approve("staging")

	if r := rein(t, e.s.clientEnv(e.keys["builder"]), "propose", id); r.code == 0 || !strings.Contains(r.stderr, "forbidden") {
		t.Fatalf("an agent proposed for itself: %s", r)
	}
	r := rein(t, e.s.clientEnv(e.keys["alice"]), "propose", id, "--message", "staging deploys are routine")
	if r.code != 0 || !strings.Contains(r.stdout, "+  - id: always-") || !strings.Contains(r.stdout, "narrows deploy") {
		t.Fatalf("rein propose: %s", r)
	}
	r = rein(t, e.s.clientEnv(e.keys["alice"]), "proposals", "--status", "open", "--output", "json")
	var open []struct{ ID, Rule string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &open) != nil || len(open) != 1 {
		t.Fatalf("rein proposals: %s", r)
	}
	prop := open[0]
	if ask := e.check("builder", "deploy", "s1", `{"env":"staging"}`); ask.Decision != "ask" {
		t.Fatalf("a proposal changed the policy before anyone accepted it: %+v", ask)
	}
	if r := rein(t, e.s.clientEnv(e.keys["alice"]), "proposal", prop.ID, "--accept"); r.code == 0 {
		t.Fatalf("an approver accepted a proposal: %s", r)
	}
	if r := rein(t, e.s.clientEnv(e.keys["eve"]), "proposal", prop.ID); r.code == 0 {
		t.Fatalf("another tenant's approver read the proposal: %s", r)
	}
	r = rein(t, e.s.clientEnv(e.s.adminKey()), "proposal", prop.ID, "--accept", "--message", "fine for builder")
	if r.code != 0 || !strings.Contains(r.stdout, "accepted by") {
		t.Fatalf("rein proposal --accept: %s", r)
	}

	// Exactly that action of that agent, no more.
	if run := e.check("builder", "deploy", "s2", `{"env":"staging"}`); run.Decision != "allow" {
		t.Fatalf("the accepted action: %+v", run)
	}
	for _, c := range []struct{ who, args, want string }{
		{"builder2", `{"env":"staging"}`, "ask"},
		{"builder", `{"env":"staging","force":true}`, "ask"},
		{"builder", `{"env":"staging2"}`, "ask"},
		{"builder", `{"env":"prod"}`, "deny"},
	} {
		if got := e.check(c.who, "deploy", "s2", c.args); got.Decision != c.want {
			t.Fatalf("%s deploy %s after the proposal: %s, want %s", c.who, c.args, got.Decision, c.want)
		}
	}
	kinds := map[string]int{}
	for _, line := range allEntries(t, e.s, e.s.adminKey()) {
		var entry struct {
			Kind string
			Data map[string]any
		}
		json.Unmarshal(line, &entry)
		kinds[entry.Kind]++
		if entry.Kind == "policy.updated" && entry.Data["origin"] == "proposal:"+prop.ID {
			kinds["pushed by the proposal"]++
		}
	}
	if kinds["proposal.created"] != 1 || kinds["proposal.decided"] != 1 || kinds["pushed by the proposal"] != 1 {
		t.Fatalf("audit log: %v", kinds)
	}

	// Suggestions: the same deploy approved twice, never rejected.
	approve("qa")
	approve("qa")
	r = rein(t, e.s.clientEnv(e.keys["alice"]), "suggest", "--min", "2")
	if r.code != 0 || !strings.Contains(r.stdout, `2 approvals  builder  deploy {"env":"qa"}`) || !strings.Contains(r.stdout, "rein propose apr_") {
		t.Fatalf("rein suggest: %s", r)
	}
}
