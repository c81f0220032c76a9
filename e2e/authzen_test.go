package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// todoPolicy implements the AuthZEN Todo interop scenario as a rein policy:
// viewers read, editors also create and change or delete their own todos,
// evil geniuses change anyone's, admins delete anyone's. The directory (the
// scenario's PIP) is a map in the policy; an unknown subject is an error in
// the rule, and so a deny.
const todoPolicy = `version: 1
default: deny
rules:
  - id: read
    when: 'tool in ["can_read_user", "can_read_todos"]'
    decision: allow
  - id: create
    when: >
      tool == "can_create_todo" &&
      {"CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs": true,
       "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs": true,
       "CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs": true}[args.subject.id] == true
    decision: allow
  - id: change-own
    when: >
      tool in ["can_update_todo", "can_delete_todo"] &&
      {"CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs": "rick@the-citadel.com",
       "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs": "morty@the-citadel.com",
       "CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs": "summer@the-smiths.com"}[args.subject.id] == args.resource.properties.ownerID
    decision: allow
  - id: evil-genius-updates
    when: 'tool == "can_update_todo" && args.subject.id == "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"'
    decision: allow
  - id: admin-deletes
    when: 'tool == "can_delete_todo" && args.subject.id == "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"'
    decision: allow
  # Not part of the interop scenario: publishing asks a person (ARAP).
  - id: publish
    when: 'tool == "can_publish_todo"'
    decision: ask
    approval: {approvers: ["group:oncall"], grant_ttl: 10m}
  - id: never-publish-secrets
    when: 'tool == "can_publish_todo" && has(args.resource.properties) && has(args.resource.properties.secret) && args.resource.properties.secret'
    decision: deny
`

func authzenPost(t *testing.T, url, key, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-ID", "req-42")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, res.Header
}

// TestAuthZENInterop runs the AuthZEN working group's Todo interop decisions
// (every evaluation and batch of decisions-authorization-api-1_0-02.json)
// against rein's PDP endpoints.
func TestAuthZENInterop(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, todoPolicy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	agent := harness.AgentKey(t, s, s.AdminKey(), "todo-backend", "todo")

	raw, err := os.ReadFile(filepath.Join("testdata", "authzen", "decisions-authorization-api-1_0-02.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases struct {
		Evaluation []struct {
			Request  json.RawMessage
			Expected bool
		}
		Evaluations []struct {
			Request  json.RawMessage
			Expected []struct{ Decision bool }
		}
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	passed := 0
	for i, c := range cases.Evaluation {
		code, out, h := authzenPost(t, s.URL+"/access/v1/evaluation", agent, string(c.Request))
		if code != 200 || out["decision"] != c.Expected || h.Get("X-Request-ID") != "req-42" {
			t.Errorf("evaluation %d %s: %d %v, want decision %v", i, c.Request, code, out, c.Expected)
			continue
		}
		passed++
	}
	for i, c := range cases.Evaluations {
		code, out, _ := authzenPost(t, s.URL+"/access/v1/evaluations", agent, string(c.Request))
		got, _ := out["evaluations"].([]any)
		ok := code == 200 && len(got) == len(c.Expected)
		for j := 0; ok && j < len(got); j++ {
			ok = got[j].(map[string]any)["decision"] == c.Expected[j].Decision
		}
		if !ok {
			t.Errorf("evaluations %d: %d %v, want %v", i, code, out, c.Expected)
			continue
		}
		passed++
	}
	t.Logf("AuthZEN Todo interop: %d of %d passed", passed, len(cases.Evaluation)+len(cases.Evaluations))

	// Batch semantics: deny_on_first_deny stops at the first false.
	code, out, _ := authzenPost(t, s.URL+"/access/v1/evaluations", agent, `{
		"subject": {"type": "user", "id": "CiRmZDQ2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"},
		"resource": {"type": "todo", "id": "todo-1"},
		"evaluations": [{"action": {"name": "can_read_todos"}}, {"action": {"name": "can_create_todo"}}, {"action": {"name": "can_read_user"}}],
		"options": {"evaluations_semantic": "deny_on_first_deny"}}`)
	if got, _ := out["evaluations"].([]any); code != 200 || len(got) != 2 {
		t.Errorf("deny_on_first_deny: %d %v", code, out)
	}
	// Errors: the transport binding's statuses; every decision is audited as a check.
	if code, _, _ := authzenPost(t, s.URL+"/access/v1/evaluation", agent, `{"subject": {"type": "user"}}`); code != 400 {
		t.Errorf("a request without required fields: %d", code)
	}
	if code, _, _ := authzenPost(t, s.URL+"/access/v1/evaluation", "", `{}`); code != 401 {
		t.Errorf("no key: %d", code)
	}
	var meta map[string]any
	harness.GetJSON(t, s.URL+"/.well-known/authzen-configuration", "", &meta)
	// The metadata names rein's address as people reach it: on a loopback
	// address without base_url, localhost (serve's default base URL).
	base := strings.Replace(s.URL, "http://127.0.0.1:", "http://localhost:", 1)
	if meta["access_evaluation_endpoint"] != base+"/access/v1/evaluation" || meta["access_request_endpoint"] != base+"/access/v1/requests" {
		t.Errorf("metadata: %v", meta)
	}
	var checks []map[string]any
	harness.GetJSON(t, s.URL+"/v1/checks?tool=can_update_todo&limit=100", s.AdminKey(), &checks)
	if len(checks) < 10 {
		t.Errorf("AuthZEN evaluations must be recorded as checks; found %d for can_update_todo", len(checks))
	}
}

// TestAuthZENAccessRequest walks the Access Request and Approval Profile:
// an ask is a requestable denial bound to the evaluation; the access request
// returns rein's approval as a task; once approved, the re-evaluation with
// the approval is permitted exactly once and only for the same action; a
// swapped approval reference is ignored.
func TestAuthZENAccessRequest(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, todoPolicy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	agent := e.Keys["builder"]
	eval := func(extra string) string {
		return `{"subject": {"type": "user", "id": "morty"}, "action": {"name": "can_publish_todo"},
			"resource": {"type": "todo", "id": "t-1"}` + extra + `}`
	}

	code, denied, _ := authzenPost(t, e.S.URL+"/access/v1/evaluation", agent, eval(""))
	ctx, _ := denied["context"].(map[string]any)
	ar, _ := ctx["access_request"].(map[string]any)
	if code != 200 || denied["decision"] != false || ctx["reason"] != "approval_required" || ar == nil || ar["expires_at"] == nil || ctx["evaluation_id"] == nil {
		t.Fatalf("requestable denial: %d %v", code, denied)
	}
	evaluationID := ctx["evaluation_id"].(string)

	// The submission must describe the denied action.
	code, prob, _ := authzenPost(t, e.S.URL+"/access/v1/requests", agent, `{"subject": {"type": "user", "id": "rick"},
		"action": {"name": "can_publish_todo"}, "resource": {"type": "todo", "id": "t-1"}, "denial": {"evaluation_id": "`+evaluationID+`"}}`)
	if code != 400 || prob["type"] != "urn:openid:authzen:access-request:error:invalid_denial_binding" {
		t.Fatalf("a submission for another subject: %d %v", code, prob)
	}
	code, sub, h := authzenPost(t, e.S.URL+"/access/v1/requests", agent, eval(`, "denial": {"evaluation_id": "`+evaluationID+`"}`))
	task, _ := sub["task"].(map[string]any)
	if code != 202 || task["status"] != "pending" || h.Get("Location") != task["status_endpoint"] {
		t.Fatalf("access request: %d %v", code, sub)
	}
	id := task["id"].(string)

	// Evaluated again while nobody has decided: retry later, not expired.
	code, waiting, _ := authzenPost(t, e.S.URL+"/access/v1/evaluation", agent, eval(`, "context": {"approval": {"id": "`+id+`"}}`))
	wctx, _ := waiting["context"].(map[string]any)
	if code != 200 || waiting["decision"] != false || wctx["reason"] != "approval_pending" || wctx["next_action"] != "retry" || wctx["retry_after"] == nil {
		t.Fatalf("a re-evaluation while the approval is pending: %d %v", code, waiting)
	}

	// Approve, then the task carries the approval to re-evaluate with.
	harness.MustVote(t, e, "alice", id, "approve", "")
	var status map[string]any
	harness.GetJSON(t, task["status_endpoint"].(string), agent, &status)
	result, _ := status["result"].(map[string]any)
	approvalRef, _ := result["approval"].(map[string]any)
	if status["task"].(map[string]any)["status"] != "approved" || result["mode"] != "reevaluate" || approvalRef["approved_until"] == nil {
		t.Fatalf("approved task: %v", status)
	}
	ref, _ := json.Marshal(approvalRef)

	// A swapped reference (for another resource) is ignored, not honoured.
	code, other, _ := authzenPost(t, e.S.URL+"/access/v1/evaluation", agent, `{"subject": {"type": "user", "id": "morty"},
		"action": {"name": "can_publish_todo"}, "resource": {"type": "todo", "id": "t-2"}, "context": {"approval": `+string(ref)+`}}`)
	if other["decision"] != false || other["context"].(map[string]any)["approval_ignored"] == nil {
		t.Fatalf("a swapped approval reference: %d %v", code, other)
	}
	// The re-evaluation with the approval is permitted, once.
	code, permitted, _ := authzenPost(t, e.S.URL+"/access/v1/evaluation", agent, eval(`, "context": {"approval": `+string(ref)+`}`))
	if code != 200 || permitted["decision"] != true {
		t.Fatalf("re-evaluation with the approval: %d %v", code, permitted)
	}
	code, again, _ := authzenPost(t, e.S.URL+"/access/v1/evaluation", agent, eval(`, "context": {"approval": `+string(ref)+`}`))
	actx, _ := again["context"].(map[string]any)
	if again["decision"] != false || actx["reason"] != "approval_expired" || actx["next_action"] != "request" || actx["access_request"] == nil {
		t.Fatalf("the approval reused: %d %v", code, again)
	}
	harness.GetJSON(t, task["status_endpoint"].(string), agent, &status)
	if st := status["task"].(map[string]any)["status"]; st != "expired" {
		t.Errorf("a used approval's task: %v", st)
	}

	// Cancel a pending one; cancelling again is a conflict.
	_, denied2, _ := authzenPost(t, e.S.URL+"/access/v1/evaluation", agent, eval(`, "context": {"try": 2}`))
	id2 := denied2["context"].(map[string]any)["rein"].(map[string]any)["approval_id"].(string)
	if code, c, _ := authzenPost(t, e.S.URL+"/access/v1/requests/"+id2+"/cancel", agent, `{}`); code != 200 || c["task"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", code, c)
	}
	if code, c, _ := authzenPost(t, e.S.URL+"/access/v1/requests/"+id2+"/cancel", agent, `{}`); code != 409 || c["type"] != "urn:openid:authzen:access-request:error:invalid_task_state" {
		t.Fatalf("cancel twice: %d %v", code, c)
	}
	// Another agent's task is unknown to it.
	if code, c, _ := authzenPost(t, e.S.URL+"/access/v1/requests/"+id2+"/cancel", e.Keys["builder2"], `{}`); code != 404 {
		t.Fatalf("another agent cancels: %d %v", code, c)
	}
}
