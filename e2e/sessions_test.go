package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestSessionsWithSamplePolicy runs the sample policy's session rules
// against the real server: taint, budget, doom loop, results and the
// session endpoints.
func TestSessionsWithSamplePolicy(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", filepath.Join(harness.ModuleRoot, "examples", "policy.yaml"))
	check := func(session, tool, args string, cost float64) harness.Answer {
		t.Helper()
		code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["builder"],
			[]byte(fmt.Sprintf(`{"tool":%q,"session":%q,"args":%s,"cost":%v}`, tool, session, args, cost)), "application/json")
		if code != 200 {
			t.Fatalf("check: %d %s", code, body)
		}
		var a harness.Answer
		json.Unmarshal(body, &a)
		return a
	}
	post := `{"url":"https://api.github.com/repos/acme/app/issues","body":"status"}`

	t.Run("taint: after a web fetch, egress asks; in a fresh session it does not", func(t *testing.T) {
		if a := check("t1", "http.post", post, 0); a.Decision != "allow" {
			t.Fatalf("egress before any fetch: %+v", a)
		}
		if a := check("t1", "web.fetch", `{"url":"https://example.com/page"}`, 0); a.Decision != "allow" {
			t.Fatalf("web fetch: %+v", a)
		}
		if a := check("t1", "http.post", post, 0); a.Decision != "ask" {
			t.Fatalf("egress after the fetch: %+v", a)
		}
		if a := check("t2", "http.post", post, 0); a.Decision != "allow" {
			t.Fatalf("egress in a fresh session: %+v", a)
		}
	})

	t.Run("budget: the check that would cross it is denied", func(t *testing.T) {
		for i := range 2 {
			if a := check("b1", "payments.transfer", fmt.Sprintf(`{"amount":40,"to":"acme","n":%d}`, i), 20); a.Decision != "allow" {
				t.Fatalf("payment %d within the budget: %+v", i, a)
			}
		}
		if a := check("b1", "payments.transfer", `{"amount":40,"to":"acme","n":3}`, 20); a.Decision != "deny" {
			t.Fatalf("the payment crossing the budget: %+v", a)
		}
		var s struct {
			Calls, Denials, Checks int
			Cost                   float64
		}
		harness.GetJSON(t, e.S.URL+"/v1/sessions/b1", e.Keys["alice"], &s)
		if s.Calls != 2 || s.Denials != 1 || s.Checks != 3 || s.Cost != 40 {
			t.Fatalf("session b1: %+v", s)
		}
		var list []struct{ ID, Decision string }
		harness.GetJSON(t, e.S.URL+"/v1/sessions/b1/checks", e.Keys["alice"], &list)
		if len(list) != 3 || list[0].Decision != "deny" {
			t.Fatalf("session b1 checks, newest first: %+v", list)
		}
		if code, _ := harness.HTTPDo(t, "GET", e.S.URL+"/v1/sessions/b1", e.Keys["eve"], nil, ""); code != http.StatusNotFound {
			t.Errorf("another tenant reads the session: %d", code)
		}
	})

	t.Run("doom loop: the fourth identical action asks", func(t *testing.T) {
		for i := range 3 {
			if a := check("d1", "fs.read", `{"path":"/srv/agent/README.md"}`, 0); a.Decision != "allow" {
				t.Fatalf("read %d: %+v", i, a)
			}
		}
		if a := check("d1", "fs.read", `{"path":"/srv/agent/README.md"}`, 0); a.Decision != "ask" || a.Approval == nil {
			t.Fatalf("the fourth identical read: %+v", a)
		}
		if a := check("d1", "fs.read", `{"path":"/srv/agent/other.md"}`, 0); a.Decision != "allow" {
			t.Fatalf("a different read in the same session: %+v", a)
		}
	})

	t.Run("results: a reported cost corrects the budget; a result for a denied check is an anomaly", func(t *testing.T) {
		big := check("r1", "payments.transfer", `{"amount":40,"to":"acme"}`, 45)
		if big.Decision != "allow" {
			t.Fatalf("payment: %+v", big)
		}
		if a := check("r1", "payments.transfer", `{"amount":40,"to":"acme","n":2}`, 10); a.Decision != "deny" {
			t.Fatalf("before the result, 45 + 10 crosses the budget: %+v", a)
		}
		result := func(id, body string) int {
			code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/checks/"+id+"/result", e.Keys["builder"], []byte(body), "application/json")
			return code
		}
		if code := result(big.ID, `{"status":"succeeded","summary":"paid","cost":5}`); code != http.StatusNoContent {
			t.Fatalf("result: %d", code)
		}
		if code := result(big.ID, `{"status":"succeeded","cost":1}`); code != http.StatusConflict {
			t.Errorf("a second result: %d, want 409", code)
		}
		if a := check("r1", "payments.transfer", `{"amount":40,"to":"acme","n":3}`, 10); a.Decision != "allow" {
			t.Fatalf("after the result brought the cost to 5, 5 + 10 is within the budget: %+v", a)
		}
		denied := check("r1", "crypto.mine", `{}`, 0)
		if code := result(denied.ID, `{"status":"succeeded"}`); code != http.StatusConflict {
			t.Fatalf("a result for a denied check: %d, want 409", code)
		}
		if code := result(big.ID, `{"status":"maybe"}`); code != http.StatusBadRequest {
			t.Errorf("a bad status: %d, want 400", code)
		}
		if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/checks/"+big.ID+"/result", e.Keys["builder2"], []byte(`{"status":"failed"}`), "application/json"); code != http.StatusNotFound {
			t.Errorf("another agent reports the result: %d, want 404", code)
		}
		anomalies := 0
		for _, l := range harness.AllEntries(t, e.S, e.S.AdminKey()) {
			var x struct {
				Kind, Subject string
				Data          struct{ Anomaly string }
			}
			json.Unmarshal(l, &x)
			if x.Kind == "check.result" && x.Subject == denied.ID && x.Data.Anomaly != "" {
				anomalies++
			}
		}
		if anomalies != 1 {
			t.Errorf("%d anomaly entries for the denied check's result", anomalies)
		}
	})
}
