package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

const workflowsPolicy = `version: 1
default: deny
approval: {approvers: ["group:oncall"], quorum: 1, ttl: 15m}
rules:
  - {id: deploy, when: 'tool == "deploy"', decision: ask, approval: {approvers: ["group:oncall"], grants: [once, session, 2s]}}
  - {id: pay, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"]}}
  - id: restart
    when: 'tool == "restart"'
    decision: ask
    approval: {approvers: ["group:leads"], escalate: [{after: 2s, approvers: ["group:oncall"]}]}
`

// TestApprovalWorkflowsE2E runs the approval workflows against the real
// binary through the CLI, with the attacks on each: a session grant used
// from another session, a window grant used after its window, a grant used
// after the policy denies, a batch holding an action the approver may not
// approve, escalation before its time, a delegation to the requester and a
// delegation chain.
func TestApprovalWorkflowsE2E(t *testing.T) {
	e := harness.NewApprovalEnvWith(t, t.TempDir(), workflowsPolicy)
	cli := func(who string, args ...string) harness.Result {
		t.Helper()
		return harness.Rein(t, e.S.ClientEnv(e.Keys[who]), args...)
	}
	asked := func(tool, session, args string) string {
		t.Helper()
		a := e.Check("builder", tool, session, args)
		if a.Decision != "ask" || a.Approval == nil {
			t.Fatalf("%s %s in %s: %+v", tool, args, session, a)
		}
		return a.Approval.ID
	}
	decision := func(tool, session, args string) string {
		t.Helper()
		return e.Check("builder", tool, session, args).Decision
	}

	t.Run("session grant", func(t *testing.T) {
		id := asked("deploy", "s1", `{"env":"staging"}`)
		if r := cli("alice", "approve", id, "--grant", "session"); r.Code != 0 {
			t.Fatalf("rein approve --grant session: %s", r)
		}
		for i := range 3 {
			if d := decision("deploy", "s1", `{"env":"staging"}`); d != "allow" {
				t.Fatalf("use %d in the session: %s", i+1, d)
			}
		}
		if d := decision("deploy", "s2", `{"env":"staging"}`); d != "ask" {
			t.Fatalf("the session grant used from another session: %s", d)
		}
		if r := cli("alice", "approve", asked("deploy", "s1", `{"env":"x"}`), "--grant", "1h"); r.Code == 0 {
			t.Fatalf("a grant the rule does not permit: %s", r)
		}
	})

	t.Run("window grant", func(t *testing.T) {
		id := asked("deploy", "s3", `{"env":"qa"}`)
		if r := cli("alice", "approve", id, "--grant", "2s"); r.Code != 0 {
			t.Fatalf("rein approve --grant 2s: %s", r)
		}
		if d := decision("deploy", "s3", `{"env":"qa"}`); d != "allow" {
			t.Fatalf("within the window: %s", d)
		}
		if d := decision("deploy", "s3", `{"env":"qa"}`); d != "allow" {
			t.Fatalf("a second use within the window: %s", d)
		}
		time.Sleep(2500 * time.Millisecond)
		if d := decision("deploy", "s3", `{"env":"qa"}`); d != "ask" {
			t.Fatalf("the window grant after its window: %s", d)
		}
	})

	t.Run("batch with an action the approver may not approve", func(t *testing.T) {
		var ids []string
		for _, c := range []struct{ tool, args string }{{"pay", `{"amount":5}`}, {"deploy", `{"env":"batch"}`}} {
			code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["builder"],
				[]byte(`{"tool":"`+c.tool+`","session":"s5","batch":"turn-7","args":`+c.args+`}`), "application/json")
			var a harness.Answer
			if code != 200 || json.Unmarshal(body, &a) != nil || a.Approval == nil {
				t.Fatalf("check in the batch: %d %s", code, body)
			}
			ids = append(ids, a.Approval.ID)
		}
		if r := cli("carol", "approve", "--batch", "turn-7"); r.Code == 0 || !strings.Contains(r.Stderr, "no vote of the batch was recorded") {
			t.Fatalf("finance approving a batch with a deploy: %s", r)
		}
		for _, id := range ids {
			var a struct{ Votes []any }
			harness.GetJSON(t, e.S.URL+"/v1/approvals/"+id, e.Keys["alice"], &a)
			if len(a.Votes) != 0 {
				t.Fatalf("a refused batch recorded votes on %s: %v", id, a.Votes)
			}
		}
		if r := cli("bob", "approve", "--batch", "turn-7", "--message", "both fine"); r.Code != 0 {
			t.Fatalf("an approver eligible for the whole batch: %s", r)
		}
		if d := decision("pay", "s5", `{"amount":5}`); d != "allow" {
			t.Fatalf("after the batch vote: %s", d)
		}
	})

	t.Run("escalation", func(t *testing.T) {
		id := asked("restart", "s6", `{"svc":"api"}`)
		if code, body := e.Vote("alice", id, "approve", ""); code != 403 {
			t.Fatalf("on-call before the escalation: %d %v", code, body)
		}
		time.Sleep(2200 * time.Millisecond)
		if code, body := e.Vote("alice", id, "approve", ""); code != 200 || body["status"] != "approved" {
			t.Fatalf("on-call after the escalation: %d %v", code, body)
		}
	})

	t.Run("delegation", func(t *testing.T) {
		if r := cli("alice", "delegate", "--to", "builder", "--for", "1h"); r.Code == 0 {
			t.Fatalf("a delegation to the requester: %s", r)
		}
		if r := cli("alice", "delegate", "--to", "alice", "--for", "1h"); r.Code == 0 {
			t.Fatalf("a delegation to oneself: %s", r)
		}
		// carol (finance) -> alice (on-call) -> dave: dave gets alice's own
		// eligibility only, never carol's through alice.
		code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/keys", e.S.AdminKey(), []byte(`{"name":"dave","tenant":"acme","roles":["approver"],"groups":["ops"]}`), "application/json")
		var created struct{ Key string }
		if code != 201 || json.Unmarshal(body, &created) != nil {
			t.Fatalf("create dave: %d %s", code, body)
		}
		e.Keys["dave"] = created.Key
		if r := cli("carol", "delegate", "--to", "alice", "--for", "1h", "--reason", "holiday"); r.Code != 0 {
			t.Fatalf("carol delegates to alice: %s", r)
		}
		if r := cli("alice", "delegate", "--to", "dave", "--for", "1h"); r.Code != 0 {
			t.Fatalf("alice delegates to dave: %s", r)
		}
		id := asked("pay", "s7", `{"amount":7}`)
		if code, body := e.Vote("dave", id, "approve", ""); code != 403 {
			t.Fatalf("a delegation chain: %d %v", code, body)
		}
		code, voted := e.Vote("alice", id, "approve", "")
		if code != 200 || voted["status"] != "approved" {
			t.Fatalf("alice for carol: %d %v", code, voted)
		}
		votes, _ := voted["votes"].([]any)
		if len(votes) != 1 || votes[0].(map[string]any)["on_behalf_of"] != "carol" {
			t.Fatalf("the delegate's vote: %v", votes)
		}
	})

	// Last: a grant used after the policy denies the action.
	t.Run("grant after the policy denies", func(t *testing.T) {
		id := asked("deploy", "s8", `{"env":"dev"}`)
		if r := cli("alice", "approve", id, "--grant", "session"); r.Code != 0 {
			t.Fatalf("approve: %s", r)
		}
		if d := decision("deploy", "s8", `{"env":"dev"}`); d != "allow" {
			t.Fatalf("before the policy change: %s", d)
		}
		stricter := workflowsPolicy + "  - {id: no-dev, when: 'tool == \"deploy\" && args.env == \"dev\"', decision: deny}\n"
		if code, body := harness.HTTPDo(t, "PUT", e.S.URL+"/v1/policy", e.S.AdminKey(), []byte(stricter), "application/yaml"); code != 200 {
			t.Fatalf("push: %d %s", code, body)
		}
		if a := e.Check("builder", "deploy", "s8", `{"env":"dev"}`); a.Decision != "deny" {
			t.Fatalf("a session grant after the policy denies: %+v", a)
		}
	})
}
