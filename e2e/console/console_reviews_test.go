package console

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// reviewsConsolePolicy allows deploys and queues a review of every one, and
// allows notes with a review too (their arguments are the agent's text).
const reviewsConsolePolicy = `version: 1
rules:
  - id: deploy-reviewed
    when: 'tool == "deploy"'
    decision: allow
    review: {reviewers: ["group:oncall"]}
  - id: notes-reviewed
    when: 'tool == "notes.add"'
    decision: allow
    review: {reviewers: ["group:oncall"]}
`

// TestConsoleReviews: the Reviews pages against the real binary in
// Chromium: a queued review is listed and opened, hostile arguments are
// text, a concern with a lock denies the agent's next check, per-rule
// counts follow, approvers get no lock control, and another tenant sees
// nothing.
func TestConsoleReviews(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	e := harness.NewConsoleEnvPolicy(t, reviewsConsolePolicy)
	env := e.S.ClientEnv(e.Keys["builder"])
	reviewOf := func(checkID string) (string, error) {
		var list []struct {
			ID      string `json:"id"`
			CheckID string `json:"check_id"`
		}
		harness.GetJSON(t, e.S.URL+"/v1/reviews?status=all", e.Keys["olga"], &list)
		for _, r := range list {
			if r.CheckID == checkID {
				return r.ID, nil
			}
		}
		return "", fmt.Errorf("check %s queued no review (reviews: %v)", checkID, list)
	}
	steps := map[string]harness.StepFunc{
		"allowed": func(string) string {
			d, r := harness.CheckJSON(t, env, "deploy", `{"service":"docs-prod","env":"prod"}`, "--session", "run-r")
			if d.Decision != "allow" {
				return "FAIL: deploy: " + r.String()
			}
			n, r := harness.CheckJSON(t, env, "notes.add", `{"text":"<img src=x onerror=alert(1)><script>window.__pwned=true</script>"}`, "--session", "run-r")
			if n.Decision != "allow" {
				return "FAIL: notes.add: " + r.String()
			}
			rd, err := reviewOf(d.ID)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			rn, err := reviewOf(n.ID)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			b, _ := json.Marshal(map[string]string{"review": rd, "hostile": rn})
			return string(b)
		},
		"agent-check": func(string) string {
			a, r := harness.CheckJSON(t, env, "deploy", `{"service":"docs","env":"staging"}`, "--session", "run-s")
			if a.Decision == "" {
				return "FAIL: " + r.String()
			}
			return a.Decision + ": " + a.Reason
		},
	}
	e.RunBrowser("reviews.mjs", steps)
}
