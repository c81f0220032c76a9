package decisions

import (
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// decisionPolicy asks for destructive scripts, deploys, and transfers; a
// transfer is asked for by two rules (finance with a quorum of two, and a
// review rule with no reason), so its approval has two approver sets.
const decisionPolicy = `version: 1
default: allow
approval: {approvers: ["group:oncall"], quorum: 1, ttl: 15m, grant_ttl: 10m}
rules:
  - id: destructive-shell
    when: 'tool == "shell.exec" && "shell.destructive" in risk'
    decision: ask
    reason: "destructive shell commands need an on-call approval"
  - id: deploys-need-on-call
    when: 'tool == "deploy"'
    decision: ask
  - id: quick-restarts
    when: 'tool == "service.restart"'
    decision: ask
    reason: "restarts are approved within seconds or not at all"
    approval: {ttl: 4s}
  - id: transfers-need-finance
    when: 'tool == "payments.transfer"'
    decision: ask
    reason: "money leaves the company"
    approval: {approvers: ["group:finance"], quorum: 2}
  - id: transfer-review
    when: 'tool == "payments.transfer"'
    decision: ask
`

// decisionScript is a maintenance script whose dangerous lines come after
// harmless ones: all of it must show.
const decisionScript = "set -euo pipefail\ncd /srv/app\necho \"rotating releases\"\nls -la releases\n" +
	"rm -rf /srv/app/releases/old\npsql -c 'VACUUM FULL orders'\nsystemctl restart app\n"

// TestConsoleDecisions: what an approver needs to decide at night on a
// phone. The whole script shows with rein's findings marked and needs a
// press-and-hold (a single key does not approve it); a transfer asked for
// by two rules shows its progress per approver set and tells each voter
// what their vote counts for and what is still missing; no page scrolls
// sideways at 320-430 px and tap targets are at least 44 px; offline and
// ended sessions say that the vote was not recorded and keep typed text;
// badges follow the approval's lifecycle; every page passes axe-core in
// both themes and both viewports; shortcuts can be turned off; new
// approvals are announced.
func TestConsoleDecisions(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	e := harness.NewConsoleEnvPolicy(t, decisionPolicy)
	agents := map[string]*harness.AgentRun{}
	scenarios := map[string]struct {
		tool, session, args, intent string
	}{
		"script":   {"shell.exec", "night-1", harness.MustJSON(map[string]string{"command": decisionScript}), "rotate old releases"},
		"transfer": {"payments.transfer", "night-2", `{"amount":12000,"currency":"EUR","to":"DE89 3704 0044 0532 0130 00","payee":"Acme Supplies GmbH"}`, "pay the supplier"},
		"deploy":   {"deploy", "night-3", `{"service":"billing","version":"2.5.0","env":"prod"}`, "ship the fix"},
		"deploy2":  {"deploy", "night-3", `{"service":"search","version":"9.1.0","env":"prod"}`, "ship search"},
		"deploy3":  {"deploy", "night-4", `{"service":"docs","version":"1.0.0","env":"prod"}`, "ship docs"},
		"restart":  {"service.restart", "night-5", `{"service":"billing"}`, "restart billing"},
		"deploy4":  {"deploy", "night-6", `{"service":"auth","version":"3.2.0","env":"prod"}`, "ship auth"},
		"deploy5":  {"deploy", "night-7", `{"service":"mail","version":"1.4.0","env":"prod"}`, "ship mail"},
		"deploy6":  {"deploy", "night-12", `{"service":"blog","version":"0.9.0","env":"prod"}`, "ship the blog"},
		"deploy7":  {"deploy", "night-13", `{"service":"wiki","version":"5.5.0","env":"prod"}`, "ship the wiki"},
		// one agent turn: two checks with the same batch
		"turn-deploy":    {"deploy", "night-9", `{"service":"api","version":"4.0.0","env":"prod"}`, "ship the api"},
		"turn-shell":     {"shell.exec", "night-9", `{"command":"rm -rf /srv/app/tmp"}`, "clear the api's temporary files"},
		"turn2-a":        {"deploy", "night-10", `{"service":"queue","version":"2.0.0","env":"prod"}`, "ship the queue"},
		"turn2-b":        {"shell.exec", "night-10", `{"command":"rm -rf /srv/queue/spool"}`, "empty the queue's spool"},
		"turn3-deploy":   {"deploy", "night-11", `{"service":"web","version":"7.1.0","env":"prod"}`, "ship the web app"},
		"turn3-shell":    {"shell.exec", "night-11", `{"command":"rm -rf /srv/web/cache"}`, "clear the web cache"},
		"turn3-transfer": {"payments.transfer", "night-11", `{"amount":900,"currency":"EUR","to":"FR76 3000 6000 0112 3456 7890 189","payee":"CDN SAS"}`, "pay the CDN"},
	}
	batchOf := map[string]string{"turn-deploy": "turn-9", "turn-shell": "turn-9", "turn2-a": "turn-10", "turn2-b": "turn-10",
		"turn3-deploy": "turn-11", "turn3-shell": "turn-11", "turn3-transfer": "turn-11"}
	var question *harness.AgentRun
	steps := map[string]harness.StepFunc{
		"ask": func(name string) string {
			sc, ok := scenarios[name]
			if !ok {
				return "FAIL: no scenario " + name
			}
			args := []string{"check", sc.tool, "--args", sc.args, "--session", sc.session, "--intent", sc.intent, "--wait", "120s", "--output", "json"}
			if b := batchOf[name]; b != "" {
				args = append(args, "--batch", b)
			}
			agents[name] = e.StartAgent(args...)
			id, err := e.PendingFor(sc.tool, sc.session)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			return id
		},
		"agent": func(name string) string {
			a := agents[name]
			if a == nil {
				return "FAIL: no agent " + name
			}
			res, err := a.Wait(20 * time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			ans, err := harness.CheckAnswerJSON(res)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			return string(ans.Decision)
		},
		"status": func(id string) string {
			var a struct {
				Status string
				Votes  []any
			}
			harness.GetJSON(t, e.S.URL+"/v1/approvals/"+id, e.Keys["alice"], &a)
			return fmt.Sprintf("%s %d", a.Status, len(a.Votes))
		},
		"question": func(string) string {
			question = e.StartAgent("ask", "Which window suits the restart?", "--choices", "now,at 06:00",
				"--session", "night-1", "--wait", "120s", "--output", "json")
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				var list []struct{ ID string }
				harness.GetJSON(t, e.S.URL+"/v1/questions?status=pending", e.Keys["alice"], &list)
				if len(list) == 1 {
					return list[0].ID
				}
				time.Sleep(50 * time.Millisecond)
			}
			return "FAIL: the question did not appear"
		},
	}
	e.RunBrowser("decisions.mjs", steps)
	_ = question
}
