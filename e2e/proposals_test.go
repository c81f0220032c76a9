package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestProposalsE2E: "always allow" from an approved deploy, through the CLI
// against the real binary: an agent cannot propose for itself, an approver
// proposes, only an admin of the tier accepts; afterwards exactly that action
// of that agent runs without asking, everything else still asks or is
// denied, and the log holds the proposal, the decision and the push.
func TestProposalsE2E(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	approve := func(env string) string {
		t.Helper()
		ask := e.Check("builder", "deploy", "s1", `{"env":"`+env+`"}`)
		if ask.Decision != "ask" || ask.Approval == nil {
			t.Fatalf("deploy %s: %+v", env, ask)
		}
		harness.MustVote(t, e, "alice", ask.Approval.ID, "approve", "")
		if run := e.Check("builder", "deploy", "s1", `{"env":"`+env+`"}`); run.Decision != "allow" {
			t.Fatalf("the approved deploy %s: %+v", env, run)
		}
		return ask.Approval.ID
	}
	id := approve("staging")

	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "propose", id); r.Code == 0 || !strings.Contains(r.Stderr, "forbidden") {
		t.Fatalf("an agent proposed for itself: %s", r)
	}
	r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "propose", id, "--message", "staging deploys are routine")
	if r.Code != 0 || !strings.Contains(r.Stdout, "+  - id: always-") || !strings.Contains(r.Stdout, "narrows deploy") {
		t.Fatalf("rein propose: %s", r)
	}
	r = harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "proposals", "--status", "open", "--output", "json")
	var open []struct{ ID, Rule string }
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &open) != nil || len(open) != 1 {
		t.Fatalf("rein proposals: %s", r)
	}
	prop := open[0]
	if ask := e.Check("builder", "deploy", "s1", `{"env":"staging"}`); ask.Decision != "ask" {
		t.Fatalf("a proposal changed the policy before anyone accepted it: %+v", ask)
	}
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "proposal", prop.ID, "--accept"); r.Code == 0 {
		t.Fatalf("an approver accepted a proposal: %s", r)
	}
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["eve"]), "proposal", prop.ID); r.Code == 0 {
		t.Fatalf("another tenant's approver read the proposal: %s", r)
	}
	r = harness.Rein(t, e.S.ClientEnv(e.S.AdminKey()), "proposal", prop.ID, "--accept", "--message", "fine for builder")
	if r.Code != 0 || !strings.Contains(r.Stdout, "accepted by") {
		t.Fatalf("rein proposal --accept: %s", r)
	}

	// Exactly that action of that agent, no more.
	if run := e.Check("builder", "deploy", "s2", `{"env":"staging"}`); run.Decision != "allow" {
		t.Fatalf("the accepted action: %+v", run)
	}
	for _, c := range []struct{ who, args, want string }{
		{"builder2", `{"env":"staging"}`, "ask"},
		{"builder", `{"env":"staging","force":true}`, "ask"},
		{"builder", `{"env":"staging2"}`, "ask"},
		{"builder", `{"env":"prod"}`, "deny"},
	} {
		if got := e.Check(c.who, "deploy", "s2", c.args); got.Decision != c.want {
			t.Fatalf("%s deploy %s after the proposal: %s, want %s", c.who, c.args, got.Decision, c.want)
		}
	}
	kinds := map[string]int{}
	for _, line := range harness.AllEntries(t, e.S, e.S.AdminKey()) {
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
	r = harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "suggest", "--min", "2")
	if r.Code != 0 || !strings.Contains(r.Stdout, `2 approvals  builder  deploy {"env":"qa"}`) || !strings.Contains(r.Stdout, "rein propose apr_") {
		t.Fatalf("rein suggest: %s", r)
	}
}
