package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// ApprovalsPolicy is the policy of NewApprovalEnv: deploys ask on-call,
// payments ask two of finance, quick approvals expire in two seconds.
const ApprovalsPolicy = `version: 1
default: deny
approval: {approvers: ["group:oncall"], quorum: 1, ttl: 15m, grant_ttl: 10m}
rules:
  - {id: deploy, when: 'tool == "deploy"', decision: ask, reason: "deploys need on-call"}
  - {id: never-prod, when: 'tool == "deploy" && has(args.env) && args.env == "prod"', decision: deny, reason: "no prod deploys"}
  - id: pay
    when: 'tool == "pay"'
    decision: ask
    approval: {approvers: ["group:finance"], quorum: 2}
  - id: quick
    when: 'tool == "quick"'
    decision: ask
    approval: {ttl: 2s, grant_ttl: 2s}
`

// LocksPolicy is the policy of the locks and webhooks tests: reads and
// transfers are allowed, deploys ask on-call.
const LocksPolicy = `version: 1
default: deny
approval: {approvers: ["group:oncall"], quorum: 1}
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: pay, when: 'tool == "payments.transfer"', decision: allow}
  - {id: deploy, when: 'tool == "deploy"', decision: ask, reason: "deploys need on-call"}
`

// ApprovalEnv is one server with keys for the approval attacks: agents
// builder, builder2 and selfish (also an approver), approvers alice, bob,
// carol of tenant acme and eve of tenant other.
type ApprovalEnv struct {
	T    *testing.T
	S    *Server
	Keys map[string]string // name -> secret
}

// NewApprovalEnv starts a server on data with ApprovalsPolicy and creates
// the keys of ApprovalEnv.
func NewApprovalEnv(t *testing.T, data string) *ApprovalEnv {
	t.Helper()
	return NewApprovalEnvWith(t, data, ApprovalsPolicy)
}

// NewApprovalEnvWith is NewApprovalEnv with another policy.
func NewApprovalEnvWith(t *testing.T, data, policy string) *ApprovalEnv {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	WriteFile(t, pol, policy)
	s := StartServer(t, data, nil, "--policy", pol)
	e := &ApprovalEnv{T: t, S: s, Keys: map[string]string{}}
	admin := s.AdminKey()
	for _, k := range []struct {
		name, tenant, roles, groups string
	}{
		{"builder", "acme", `"agent"`, ``},
		{"builder2", "acme", `"agent"`, ``},
		{"selfish", "acme", `"agent","approver"`, `"oncall"`},
		{"alice", "acme", `"approver"`, `"oncall"`},
		{"bob", "acme", `"approver"`, `"oncall","finance"`},
		{"carol", "acme", `"approver"`, `"finance"`},
		{"eve", "other", `"approver"`, `"oncall"`},
	} {
		code, body := HTTPDo(t, "POST", s.URL+"/v1/keys", admin, []byte(fmt.Sprintf(
			`{"name":%q,"tenant":%q,"roles":[%s],"groups":[%s]}`, k.name, k.tenant, k.roles, k.groups)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", k.name, code, body)
		}
		var created struct{ Key string }
		json.Unmarshal(body, &created)
		e.Keys[k.name] = created.Key
	}
	return e
}

// Answer is the part of an answer of POST /v1/check the tests look at.
type Answer struct {
	ID       string         `json:"id"`
	Decision string         `json:"decision"`
	Reason   string         `json:"reason"`
	Args     map[string]any `json:"args"`
	Approval *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"approval"`
}

// Check asks POST /v1/check as who and requires a 200.
func (e *ApprovalEnv) Check(who, tool, session, args string) Answer {
	e.T.Helper()
	code, body := HTTPDo(e.T, "POST", e.S.URL+"/v1/check", e.Keys[who], []byte(fmt.Sprintf(`{"tool":%q,"session":%q,"args":%s}`, tool, session, args)), "application/json")
	if code != 200 {
		e.T.Fatalf("check %s %s: %d %s", tool, args, code, body)
	}
	var a Answer
	json.Unmarshal(body, &a)
	return a
}

// Vote votes on approval id as who; extra is more JSON members (",...").
func (e *ApprovalEnv) Vote(who, id, vote, extra string) (int, map[string]any) {
	e.T.Helper()
	code, body := HTTPDo(e.T, "POST", e.S.URL+"/v1/approvals/"+id+"/votes", e.Keys[who], []byte(`{"vote":"`+vote+`"`+extra+`}`), "application/json")
	var m map[string]any
	json.Unmarshal(body, &m)
	return code, m
}

// Wait waits on approval id as who for up to ms milliseconds.
func (e *ApprovalEnv) Wait(who, id string, ms int) (int, map[string]any) {
	e.T.Helper()
	code, body := HTTPDo(e.T, "GET", fmt.Sprintf("%s/v1/approvals/%s/wait?timeout_ms=%d", e.S.URL, id, ms), e.Keys[who], nil, "")
	var m map[string]any
	json.Unmarshal(body, &m)
	return code, m
}

// PendingApproval waits for the pending approval of a session and returns its id.
func (e *ApprovalEnv) PendingApproval(t *testing.T, session string) string {
	t.Helper()
	var id string
	Eventually(t, 10*time.Second, "a pending approval in session "+session, func() string {
		var list []struct{ ID string }
		GetJSON(t, e.S.URL+"/v1/approvals?status=pending&session="+session, e.Keys["alice"], &list)
		if len(list) == 0 {
			return "none yet"
		}
		id = list[0].ID
		return ""
	})
	return id
}

// MustVote is e.Vote, which must answer 200.
func MustVote(t *testing.T, e *ApprovalEnv, who, id, vote, extra string) {
	t.Helper()
	if code, body := e.Vote(who, id, vote, extra); code != 200 {
		t.Fatalf("%s votes %s on %s: %d %v", who, vote, id, code, body)
	}
}

// Ask posts a question as who and returns the status and the decoded body.
func (e *ApprovalEnv) Ask(who, body string) (int, map[string]any) {
	e.T.Helper()
	code, raw := HTTPDo(e.T, "POST", e.S.URL+"/v1/questions", e.Keys[who], []byte(body), "application/json")
	var m map[string]any
	json.Unmarshal(raw, &m)
	return code, m
}

// MustAsk posts a question that must be created and returns its id.
func (e *ApprovalEnv) MustAsk(who, body string) string {
	e.T.Helper()
	code, m := e.Ask(who, body)
	if code != http.StatusCreated || m["status"] != "pending" {
		e.T.Fatalf("ask %s: %d %v", body, code, m)
	}
	return m["id"].(string)
}

// AnswerQuestion answers question id as who.
func (e *ApprovalEnv) AnswerQuestion(who, id, answer string) (int, map[string]any) {
	e.T.Helper()
	code, raw := HTTPDo(e.T, "POST", e.S.URL+"/v1/questions/"+id+"/answer", e.Keys[who], []byte(`{"answer":`+answer+`}`), "application/json")
	var m map[string]any
	json.Unmarshal(raw, &m)
	return code, m
}

// Question reads question id as who.
func (e *ApprovalEnv) Question(who, id string) (int, map[string]any) {
	e.T.Helper()
	code, raw := HTTPDo(e.T, "GET", e.S.URL+"/v1/questions/"+id, e.Keys[who], nil, "")
	var m map[string]any
	json.Unmarshal(raw, &m)
	return code, m
}

// WaitQuestion waits on question id as who for up to ms milliseconds.
func (e *ApprovalEnv) WaitQuestion(who, id string, ms int) (int, map[string]any) {
	e.T.Helper()
	code, raw := HTTPDo(e.T, "GET", fmt.Sprintf("%s/v1/questions/%s/wait?timeout_ms=%d", e.S.URL, id, ms), e.Keys[who], nil, "")
	var m map[string]any
	json.Unmarshal(raw, &m)
	return code, m
}
