package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// The console's browser tests: rein serve runs for real, Debian's Chromium
// (headless, driven by playwright-core from the scripts in e2e/browser/)
// plays the people, and the rein CLI plays the agents.
//
// Screenshots go to a temporary directory, or to docs/img/ when
// REIN_UPDATE_SCREENSHOTS=1.

// TestConsoleApprovals: an agent's `rein check --wait` blocks; an approver
// signs in, sees the approval arrive live, and approves, edits or rejects
// it; the agent receives allow, allow with the edited arguments, or deny
// with the message. A question is answered by choice. Wrong keys and agent
// keys cannot sign in, signed-out visitors are sent to sign-in, a request
// without the CSRF token changes nothing, and an approver of another
// tenant sees none of it.
func TestConsoleApprovals(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	e := harness.NewConsoleEnv(t)
	agents := map[string]*harness.AgentRun{}
	var question *harness.AgentRun
	scenarios := map[string]struct {
		tool, session, args, intent string
	}{
		"approve": {"deploy", "run-42", `{"service":"billing","version":"2.4.1","env":"prod"}`, "ship the billing fix"},
		"edit":    {"shell.exec", "run-42", `{"command":"rm -rf /srv/app/cache /srv/app/data"}`, "free disk space"},
		"reject":  {"payments.refund", "run-43", `{"order":"A-1009","amount_eur":4800,"reason":"customer asked"}`, "refund the order"},
		"hold":    {"deploy", "run-42", `{"service":"search","version":"9.0.0","env":"prod"}`, "upgrade search"},
	}
	steps := map[string]harness.StepFunc{
		// ask NAME: the agent asks and waits; answers the approval id once
		// it is pending and the agent is still blocked.
		"ask": func(name string) string {
			sc, ok := scenarios[name]
			if !ok {
				return "FAIL: no scenario " + name
			}
			agents[name] = e.StartAgent("check", sc.tool, "--args", sc.args, "--session", sc.session, "--intent", sc.intent,
				"--wait", "90s", "--output", "json")
			id, err := e.PendingFor(sc.tool, sc.session)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			if res, err := agents[name].Wait(300 * time.Millisecond); err == nil {
				return fmt.Sprintf("FAIL: rein check --wait returned before anyone voted: %s", res)
			}
			return id
		},
		// agent NAME: what the waiting agent received, checked here.
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
			switch name {
			case "approve":
				if ans.Decision != "allow" || res.Code != 0 || ans.Args["version"] != "2.4.1" {
					return fmt.Sprintf("FAIL: want allow with the asked args, exit 0; got %s", res)
				}
			case "edit":
				if ans.Decision != "allow" || ans.Args["command"] != "rm -rf /srv/app/cache" {
					return fmt.Sprintf("FAIL: want allow with the edited command; got %s", res)
				}
			case "reject":
				if ans.Decision != "deny" || res.Code != 1 || !strings.Contains(ans.Reason, "over the refund limit") {
					return fmt.Sprintf("FAIL: want deny carrying the approver's message, exit 1; got %s", res)
				}
			}
			return ans.Decision + ": " + ans.Reason
		},
		"question": func(string) string {
			question = e.StartAgent("ask", "Which rollout strategy for billing 2.4.1?", "--choices", "canary,blue-green,all at once",
				"--session", "run-42", "--wait", "90s", "--output", "json")
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
		"question-answer": func(string) string {
			res, err := question.Wait(20 * time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			var q struct {
				Status     string
				Answer     any
				AnsweredBy string `json:"answered_by"`
			}
			if err := json.Unmarshal([]byte(res.Stdout), &q); err != nil || q.Status != "answered" || q.Answer != "blue-green" || q.AnsweredBy != "alice" {
				return fmt.Sprintf("FAIL: want the question answered blue-green by alice; got %s", res)
			}
			return "answered"
		},
		"question-form": func(string) string {
			schema := `{"type":"object","properties":{"day":{"type":"string","title":"Deploy day"},"region":{"type":"string","enum":["us-east","eu-west"]},` +
				`"replicas":{"type":"integer"},"notify":{"type":"boolean"}},"required":["day","region"]}`
			question = e.StartAgent("ask", "When and where should billing 2.4.1 go out?", "--schema", schema,
				"--session", "run-42", "--wait", "90s", "--output", "json")
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
		"question-form-answer": func(string) string {
			res, err := question.Wait(20 * time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			var q struct {
				Status string
				Answer map[string]any
			}
			want := map[string]any{"day": "2026-12-01", "region": "eu-west", "replicas": 3.0, "notify": true}
			if err := json.Unmarshal([]byte(res.Stdout), &q); err != nil || q.Status != "answered" || fmt.Sprint(q.Answer) != fmt.Sprint(want) {
				return fmt.Sprintf("FAIL: want the answer %v; got %s", want, res)
			}
			return "answered"
		},
		// status ID: the approval's status as the API has it.
		"status": func(id string) string {
			var a struct {
				Status string
				Votes  []any
			}
			harness.GetJSON(t, e.S.URL+"/v1/approvals/"+id, e.Keys["alice"], &a)
			return fmt.Sprintf("%s %d", a.Status, len(a.Votes))
		},
	}
	e.RunBrowser("approvals.mjs", steps)
	if a := agents["hold"]; a != nil {
		// The held approval was never voted on: the agent is still waiting.
		if res, err := a.Wait(100 * time.Millisecond); err == nil {
			t.Errorf("the held agent returned although nobody voted: %s", res)
		}
	}
}

// TestConsolePages: activity with filters, a session's timeline stopped
// and resumed from the console, an audit entry's inclusion proof checked in
// the page, a policy simulation, and keys and locks administered.
func TestConsolePages(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	e := harness.NewConsoleEnv(t)
	env := e.S.ClientEnv(e.Keys["builder"])
	check := func(tool, args string) harness.CheckAnswer {
		a, r := harness.CheckJSON(t, env, tool, args, "--session", "run-7", "--intent", "tidy the release")
		if a.ID == "" {
			t.Fatalf("rein check %s: %s", tool, r)
		}
		return a
	}
	steps := map[string]harness.StepFunc{
		"checks": func(string) string {
			ids := map[string]string{}
			read := check("fs.read", `{"path":"config.yaml"}`)
			if read.Decision != "allow" {
				return "FAIL: fs.read: " + read.Decision
			}
			ids["read"] = read.ID
			code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/checks/"+read.ID+"/result", e.Keys["builder"],
				[]byte(`{"status":"succeeded","summary":"read 2 files"}`), "application/json")
			if code != 204 {
				return fmt.Sprintf("FAIL: report a result: %d %s", code, body)
			}
			deny := check("shell.exec", `{"command":"rm -rf /etc/nginx"}`)
			if deny.Decision != "deny" {
				return "FAIL: rm -rf /etc: " + deny.Decision
			}
			ids["deny"] = deny.ID
			ask := check("deploy", `{"service":"docs","env":"prod"}`)
			if ask.Decision != "ask" || ask.Approval == nil {
				return "FAIL: deploy: " + ask.Decision
			}
			ids["ask"] = ask.ID
			code, body = harness.HTTPDo(t, "POST", e.S.URL+"/v1/approvals/"+ask.Approval.ID+"/votes", e.Keys["alice"],
				[]byte(`{"vote":"approve","message":"docs are safe"}`), "application/json")
			if code != 200 {
				return fmt.Sprintf("FAIL: vote: %d %s", code, body)
			}
			allowed := check("deploy", `{"service":"docs","env":"prod"}`)
			if allowed.Decision != "allow" {
				return "FAIL: deploy after approval: " + allowed.Decision
			}
			ids["allowed"] = allowed.ID
			b, _ := json.Marshal(ids)
			return string(b)
		},
		// verify-bundle PATH: the tar the audit page made, unpacked and
		// verified with rein audit verify; then tampered with, it must fail.
		"verify-bundle": func(path string) string {
			dir, err := harness.UntarBundle(path, t.TempDir())
			if err != nil {
				return "FAIL: " + err.Error()
			}
			var keys struct{ Keys []struct{ Verifier string } }
			harness.GetJSON(t, e.S.URL+"/v1/audit/keys", e.Keys["admin"], &keys)
			args := []string{"audit", "verify", dir}
			for _, k := range keys.Keys {
				args = append(args, "--key", k.Verifier)
			}
			r := harness.Rein(t, nil, args...)
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, "OK") {
				return "FAIL: rein audit verify of the page's bundle: " + r.String()
			}
			entries := filepath.Join(dir, "entries.ndjson")
			b, err := os.ReadFile(entries)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			for i, l := range lines {
				if strings.Contains(l, `"leaf_hash"`) != (i < 2 || !strings.Contains(l, `"kind"`)) {
					return fmt.Sprintf("FAIL: entry %d of the bundle: %s", i, l)
				}
			}
			full := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"kind"`) })
			lines[full] = strings.Replace(lines[full], `"kind"`, `"kind" `, 1)
			harness.WriteFile(t, entries, strings.Join(lines, "\n")+"\n")
			if bad := harness.Rein(t, nil, args...); bad.Code != 1 {
				return "FAIL: rein audit verify of a tampered bundle: " + bad.String()
			}
			return strings.TrimSpace(strings.SplitN(r.Stdout, "\n", 2)[0])
		},
		"check-in-session": func(string) string {
			a, r := harness.CheckJSON(t, env, "fs.read", `{"path":"notes.txt"}`, "--session", "run-7")
			if a.Decision == "" {
				return "FAIL: " + r.String()
			}
			return a.Decision + ": " + a.Reason
		},
	}
	e.RunBrowser("pages.mjs", steps)
}

// TestConsoleSessionAcrossReplicas: a console session started on one
// replica works on another (they share the audit signing key, from which
// the console secret is derived), CSRF included, and ends on both when the
// key is revoked.
func TestConsoleSessionAcrossReplicas(t *testing.T) {
	c := harness.NewPGCluster(t, harness.ApprovalsPolicy)
	a, b := c.Start(), c.Start()
	builder := c.Key(a, "builder", "acme", `"agent"`, ``)
	alice := c.Key(a, "alice", "acme", `"approver"`, `"oncall"`)

	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.PostForm(a.URL+"/sign-in", url.Values{"key": {alice}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var cookie string
	for _, ck := range res.Cookies() {
		if ck.Name == "rein_session" {
			cookie = ck.Value
		}
	}
	if res.StatusCode != 303 || cookie == "" {
		t.Fatalf("sign-in on A: %d, cookie %q", res.StatusCode, cookie)
	}
	call := func(method, u, csrf, body string) (int, []byte) {
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		req.Header.Set("Cookie", "rein_session="+cookie)
		req.Header.Set("Content-Type", "application/json")
		if csrf != "" {
			req.Header.Set("X-Rein-CSRF", csrf)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	code, body := call("GET", b.URL+"/me", "", "")
	var me struct{ Name, CSRF string }
	if json.Unmarshal(body, &me); code != 200 || me.Name != "alice" || me.CSRF == "" {
		t.Fatalf("GET /me on B with A's session: %d %s", code, body)
	}
	var ask harness.Answer
	harness.PostJSON(t, a.URL+"/v1/check", builder, `{"tool":"deploy","args":{"n":1}}`, &ask)
	if ask.Approval == nil {
		t.Fatalf("deploy: %+v", ask)
	}
	votes := b.URL + "/v1/approvals/" + ask.Approval.ID + "/votes"
	if code, body := call("POST", votes, "", `{"vote":"approve"}`); code != 403 {
		t.Fatalf("vote on B without the CSRF token: %d %s", code, body)
	}
	if code, body := call("POST", votes, me.CSRF, `{"vote":"approve"}`); code != 200 || !strings.Contains(string(body), `"status":"approved"`) {
		t.Fatalf("vote on B with A's session and token: %d %s", code, body)
	}
	var keys struct {
		Keys []struct{ ID, Name string }
	}
	harness.GetJSON(t, a.URL+"/v1/keys?tenant=acme", c.Admin, &keys)
	for _, k := range keys.Keys {
		if k.Name == "alice" {
			if code, body := harness.HTTPDo(t, "DELETE", a.URL+"/v1/keys/"+k.ID, c.Admin, nil, ""); code != 204 {
				t.Fatalf("revoke alice: %d %s", code, body)
			}
		}
	}
	for _, s := range []*harness.Server{a, b} {
		if code, _ := call("GET", s.URL+"/v1/approvals", "", ""); code != 401 {
			t.Errorf("%s: the revoked key's session answers %d, want 401", s.URL, code)
		}
	}
}
