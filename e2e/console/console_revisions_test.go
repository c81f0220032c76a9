package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

const revisionPolicy = `version: 1
default: allow
approval: {approvers: ["group:oncall"], quorum: 1, ttl: 15m, grant_ttl: 10m}
rules:
  - id: payments-need-two-from-finance
    when: 'tool == "pay"'
    decision: ask
    reason: "a payment needs two approvals from finance"
    approval: {approvers: ["group:finance"], quorum: 2}
`

// TestConsoleRevisions: a vote from the console counts only for the version
// of the action its voter was shown. A payment needs two approvals from
// finance; carol has its approval page and her inbox open when dave edits
// the payee to acct-mallory. The page and an inbox that have not heard of
// the edit yet send carol's approve for the agent's request, and rein
// refuses it: the approval stays pending and they show the edited payee,
// what changed first, and say so. The live inbox shows the edit as soon as
// it is made. On a phone, an open editor leaves no approve of the version
// shown in the action bar. Carol's approve of the edited version on screen
// counts, and the agent runs what she saw. In a turn of two payments, one
// edited after the inbox showed the turn, approving all votes on nothing;
// shown again, it names each payment in the version shown.
func TestConsoleRevisions(t *testing.T) {
	t.Parallel() // mostly waiting on a browser, Node.js and a server of its own
	e := harness.NewConsoleEnvPolicy(t, revisionPolicy)
	for _, name := range []string{"carol", "dave"} {
		code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/keys", e.Keys["admin"], []byte(fmt.Sprintf(
			`{"name":%q,"tenant":"acme","roles":["approver"],"groups":["finance"]}`, name)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", name, code, body)
		}
		var created struct{ Key string }
		json.Unmarshal(body, &created)
		e.Keys[name] = created.Key
	}
	var agent *harness.AgentRun
	var id string
	steps := map[string]harness.StepFunc{
		// ask: the agent asks to pay acct-a and waits.
		"ask": func(string) string {
			agent = e.StartAgent("check", "pay", "--args", `{"amount":50,"to":"acct-a"}`, "--session", "pay-1",
				"--intent", "pay the supplier", "--wait", "120s", "--output", "json")
			var err error
			if id, err = e.PendingFor("pay", "pay-1"); err != nil {
				return "FAIL: " + err.Error()
			}
			return id
		},
		// turn: the agent asks for two payments in one turn; answers their ids.
		"turn": func(string) string {
			for _, args := range []string{`{"amount":70,"to":"acct-b"}`, `{"amount":80,"to":"acct-c"}`} {
				e.StartAgent("check", "pay", "--args", args, "--session", "pay-2", "--batch", "turn-1",
					"--intent", "pay two suppliers", "--wait", "120s", "--output", "json")
			}
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				var list []struct{ ID, Tool string }
				harness.GetJSON(t, e.S.URL+"/v1/approvals?status=pending&session=pay-2", e.Keys["fin"], &list)
				if len(list) == 2 {
					return list[0].ID + " " + list[1].ID
				}
				time.Sleep(50 * time.Millisecond)
			}
			return "FAIL: the turn's two approvals did not appear"
		},
		// edit ID: dave edits the payee of approval ID (by default the first
		// payment) through the API, from the version he saw.
		"edit": func(arg string) string {
			target := id
			if arg != "" {
				target = arg
			}
			var a struct{ Args map[string]any }
			harness.GetJSON(t, e.S.URL+"/v1/approvals/"+target, e.Keys["dave"], &a)
			a.Args["to"] = "acct-mallory"
			code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/approvals/"+target+"/votes", e.Keys["dave"],
				[]byte(`{"vote":"edit","args":`+harness.MustJSON(a.Args)+`,"revision":1,"message":"the new account"}`), "application/json")
			var edited struct{ Revision int }
			if code != 200 || json.Unmarshal(body, &edited) != nil || edited.Revision != 2 {
				return fmt.Sprintf("FAIL: dave's edit: want 200 and revision 2, got %d %s", code, body)
			}
			return "2"
		},
		// state ID: the approval (by default the first payment) as the API
		// has it, in short.
		"state": func(arg string) string {
			if arg != "" {
				return approvalState(t, e, arg)
			}
			return approvalState(t, e, id)
		},
		// agent: what the waiting agent received.
		"agent": func(string) string {
			res, err := agent.Wait(20 * time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			ans, err := harness.CheckAnswerJSON(res)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			return fmt.Sprintf("%s %v", ans.Decision, ans.Args["to"])
		},
	}
	e.RunBrowser("revisions.mjs", steps)

	// Whatever the script saw: no approve of the agent's request counted,
	// and the approval resolved with the edit carol approved.
	if got, want := approvalState(t, e, id), "consumed 2 dave:edit@2,carol:approve@2"; got != want {
		t.Errorf("the approval at the end: got %s, want %s", got, want)
	}
}

// approvalState says where an approval stands: its status, its revision and
// each vote as by:vote@revision.
func approvalState(t *testing.T, e *harness.ConsoleEnv, id string) string {
	var a struct {
		Status   string
		Revision int
		Votes    []struct {
			By, Vote string
			Revision int
		}
	}
	harness.GetJSON(t, e.S.URL+"/v1/approvals/"+id, e.Keys["fin"], &a)
	votes := make([]string, len(a.Votes))
	for i, v := range a.Votes {
		votes[i] = fmt.Sprintf("%s:%s@%d", v.By, v.Vote, v.Revision)
	}
	return fmt.Sprintf("%s %d %s", a.Status, a.Revision, strings.Join(votes, ","))
}
