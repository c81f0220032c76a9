package http_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"

	reinhttp "github.com/reinhq/rein/http"
)

// freeFormFields are the fields whose content belongs to the caller, the
// policy or the tool; strict checking of undeclared fields stops at them.
var freeFormFields = []string{"args", "approved_args", "facts", "labels", "answer", "schema", "data", "payload",
	"policy_data", "parameter_overrides", "updatedInput", "options", "credential",
	"transitions", "by_rule"} // maps of counts: their values are still checked by the schema, the names are free

// strictValidator checks answers against the document: the status must be
// listed for the operation, the body must match its schema, and a field
// the schema does not declare is a mismatch too.
func strictValidator(t testing.TB) validator.Validator {
	t.Helper()
	doc, err := libopenapi.NewDocument(reinhttp.OpenAPIYAML())
	if err != nil {
		t.Fatal(err)
	}
	ignore := []string{"$.headers.*"}
	for _, f := range freeFormFields {
		ignore = append(ignore, "$.body**."+f+".**", "$.body**."+f+"[**")
	}
	ndjson := content.DecoderFunc(func(in *content.DecodeInput) (any, error) {
		out := []any{}
		sc := bufio.NewScanner(in.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				return nil, fmt.Errorf("line %d: %v", len(out)+1, err)
			}
			out = append(out, v)
		}
		return out, sc.Err()
	})
	v, errs := validator.NewValidator(doc, config.WithStrictMode(), config.WithStrictIgnorePaths(ignore...),
		config.WithFormatAssertions(), config.WithBodyDecoder("application/x-ndjson", ndjson))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// tourStep is one request of the tour: the operation it calls (as the
// document names it), the concrete path, the key and the body.
type tourStep struct {
	op   string // "METHOD /template"
	path string
	key  string
	body any
	want int
}

// TestOpenAPIAnswersMatchTheDocument calls every documented operation of an
// in-process server, with answers that succeed and answers that fail, and
// checks each answer against the document. An operation the tour does not
// reach fails the test, so a new endpoint brings its own step.
func TestOpenAPIAnswersMatchTheDocument(t *testing.T) {
	e := newEnv(t, globalPolicy)
	v := strictValidator(t)
	doc, err := libopenapi.NewDocument(reinhttp.OpenAPIYAML())
	if err != nil {
		t.Fatal(err)
	}
	lax, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	covered := map[string]bool{}
	ids := map[string]string{}

	run := func(s tourStep) *apiResp {
		t.Helper()
		path := s.path
		for k, id := range ids {
			path = strings.ReplaceAll(path, "{"+k+"}", id)
		}
		r := e.do(strings.Fields(s.op)[0], path, s.key, s.body)
		if s.want != 0 && r.Status != s.want {
			t.Fatalf("%s %s: %d %s, want %d", s.op, path, r.Status, r.Body, s.want)
		}
		req, err := http.NewRequest(strings.Fields(s.op)[0], e.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := &http.Response{StatusCode: r.Status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)), Request: req}
		check := v
		if s.op == "GET /v1/openapi.json" {
			check = lax // its body is free-form: the document itself
		}
		if ok, errs := check.ValidateHttpResponse(req, res); !ok {
			var b strings.Builder
			for _, x := range errs {
				fmt.Fprintf(&b, "\n  %s: %s", x.Message, x.Reason)
				for _, f := range x.SchemaValidationErrors {
					fmt.Fprintf(&b, "\n    at %s: %s", f.FieldPath, f.Reason)
				}
			}
			t.Errorf("%s %s answered %d %.400s; it does not match openapi.yaml:%s", s.op, path, r.Status, r.Body, b.String())
		}
		covered[s.op] = true
		return r
	}
	id := func(r *apiResp, field string) string {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatalf("not an object: %s", r.Body)
		}
		if field == "approval.id" {
			m, _ = m["approval"].(map[string]any)
			field = "id"
		}
		s, _ := m[field].(string)
		if s == "" {
			t.Fatalf("no %s in %s", field, r.Body)
		}
		return s
	}

	// Operations and errors every client meets.
	run(tourStep{op: "GET /healthz", path: "/healthz", want: 200})
	run(tourStep{op: "GET /readyz", path: "/readyz", want: 200})
	run(tourStep{op: "GET /metrics", path: "/metrics", want: 200})
	run(tourStep{op: "GET /v1/openapi.json", path: "/v1/openapi.json", want: 200})
	run(tourStep{op: "POST /v1/check", path: "/v1/check", body: map[string]any{"tool": "fs.read"}, want: 401})
	run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-auditor", body: map[string]any{"tool": "fs.read"}, want: 403})
	run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-agent", body: map[string]any{"tool": "fs.read", "nope": 1}, want: 400})

	// Checks, results and sessions.
	allowed := run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-agent", want: 200,
		body: map[string]any{"tool": "fs.read", "args": map[string]any{"path": "README.md"}, "session": "s1",
			"labels": map[string]string{"team": "docs"}, "cost": 0.5, "request_id": "r1", "intent": "read the docs"}})
	ids["check"] = id(allowed, "id")
	run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-agent", body: map[string]any{"tool": "danger", "session": "s1"}, want: 200})
	asked := run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-agent", body: map[string]any{"tool": "deploy", "args": map[string]any{"env": "prod"}, "session": "s1"}, want: 200})
	ids["approval"] = id(asked, "approval.id")
	run(tourStep{op: "GET /v1/checks", path: "/v1/checks?limit=1&session=s1", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/checks", path: "/v1/checks?decision=maybe", key: "acme-approver", want: 400})
	run(tourStep{op: "GET /v1/checks/{id}", path: "/v1/checks/{check}", key: "acme-agent", want: 200})
	run(tourStep{op: "GET /v1/checks/{id}", path: "/v1/checks/chk_nope", key: "acme-agent", want: 404})
	run(tourStep{op: "POST /v1/checks/{id}/result", path: "/v1/checks/{check}/result", key: "acme-agent", want: 204,
		body: map[string]any{"status": "succeeded", "summary": "read it", "cost": 0.25, "args": map[string]any{"path": "README.md"}}})
	run(tourStep{op: "GET /v1/checks/{id}", path: "/v1/checks/{check}", key: "acme-auditor", want: 200})
	run(tourStep{op: "POST /v1/checks/{id}/result", path: "/v1/checks/{check}/result", key: "acme-agent", body: map[string]any{"status": "failed"}, want: 409})
	run(tourStep{op: "GET /v1/sessions/{id}", path: "/v1/sessions/s1", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/sessions/{id}/checks", path: "/v1/sessions/s1/checks", key: "acme-auditor", want: 200})

	// Approvals.
	run(tourStep{op: "GET /v1/approvals", path: "/v1/approvals?status=pending", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/approvals/{id}", path: "/v1/approvals/{approval}", key: "acme-agent", want: 200})
	run(tourStep{op: "POST /v1/approvals/{id}/votes", path: "/v1/approvals/{approval}/votes", key: "acme-approver", want: 200,
		body: map[string]any{"vote": "edit", "message": "staging first", "args": map[string]any{"env": "staging"}}})
	run(tourStep{op: "POST /v1/approvals/{id}/votes", path: "/v1/approvals/{approval}/votes", key: "acme-approver", body: map[string]any{"vote": "approve", "revision": 2}, want: 409})
	run(tourStep{op: "POST /v1/approvals/{id}/votes", path: "/v1/approvals/{approval}/votes", key: "acme-approver", body: map[string]any{"vote": "approve", "revision": 1}, want: 409})
	run(tourStep{op: "POST /v1/approvals/{id}/votes", path: "/v1/approvals/{approval}/votes", key: "acme-approver", body: map[string]any{"vote": "approve"}, want: 400})
	run(tourStep{op: "POST /v1/approvals/{id}/client-vote", path: "/v1/approvals/{approval}/client-vote", key: "acme-agent2", body: map[string]any{"vote": "approve"}})
	run(tourStep{op: "GET /v1/approvals/{id}/wait", path: "/v1/approvals/{approval}/wait?timeout_ms=0", key: "acme-agent", want: 200})
	run(tourStep{op: "POST /v1/approvals/{id}/cancel", path: "/v1/approvals/{approval}/cancel", key: "acme-agent", want: 200})
	run(tourStep{op: "GET /v1/approvals/{id}/wait", path: "/v1/approvals/{approval}/wait?timeout_ms=0", key: "acme-agent", want: 200})

	// Questions.
	q := run(tourStep{op: "POST /v1/questions", path: "/v1/questions", key: "acme-agent", want: 201,
		body: map[string]any{"text": "Which region?", "choices": []string{"eu", "us"}, "session": "s1", "ttl_ms": 60000}})
	ids["question"] = id(q, "id")
	form := run(tourStep{op: "POST /v1/questions", path: "/v1/questions", key: "acme-agent", want: 201,
		body: map[string]any{"text": "Budget?", "schema": map[string]any{"type": "object",
			"properties": map[string]any{"amount": map[string]any{"type": "number", "minimum": 0}}, "required": []string{"amount"}}}})
	ids["form"] = id(form, "id")
	run(tourStep{op: "GET /v1/questions", path: "/v1/questions?status=pending", key: "acme-auditor", want: 200})
	run(tourStep{op: "GET /v1/questions/{id}", path: "/v1/questions/{question}", key: "acme-agent", want: 200})
	run(tourStep{op: "POST /v1/questions/{id}/answer", path: "/v1/questions/{question}/answer", key: "acme-approver", body: map[string]any{"answer": "mars"}, want: 400})
	run(tourStep{op: "POST /v1/questions/{id}/answer", path: "/v1/questions/{question}/answer", key: "acme-approver", body: map[string]any{"answer": "eu"}, want: 200})
	run(tourStep{op: "POST /v1/questions/{id}/answer", path: "/v1/questions/{form}/answer", key: "acme-approver", body: map[string]any{"answer": map[string]any{"amount": 12}}, want: 200})
	run(tourStep{op: "GET /v1/questions/{id}/wait", path: "/v1/questions/{question}/wait?timeout_ms=0", key: "acme-agent", want: 200})
	run(tourStep{op: "POST /v1/questions/{id}/cancel", path: "/v1/questions/{question}/cancel", key: "acme-agent", want: 409})

	// Events and webhooks (the stream itself is read by the events tests).
	run(tourStep{op: "GET /v1/events", path: "/v1/events?types=nope", key: "acme-approver", want: 400})
	run(tourStep{op: "GET /v1/webhooks/deliveries", path: "/v1/webhooks/deliveries", key: "root", want: 200})
	run(tourStep{op: "GET /v1/webhooks/deliveries", path: "/v1/webhooks/deliveries", key: "acme-admin", want: 403})

	// Locks.
	l := run(tourStep{op: "POST /v1/locks", path: "/v1/locks", key: "acme-admin", want: 201,
		body: map[string]any{"target": map[string]any{"agent": "acme-agent2", "tool": "deploy*"}, "reason": "incident 42",
			"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}})
	ids["lock"] = id(l, "id")
	locked := run(tourStep{op: "POST /v1/policy/simulate", path: "/v1/policy/simulate", key: "acme-auditor", want: 200,
		body: map[string]any{"check": map[string]any{"tool": "deploy", "agent": "acme-agent2", "args": map[string]any{"env": "prod"}}}})
	var sim struct {
		Decision       string
		PolicyDecision string `json:"policy_decision"`
		Lock           *struct{ ID string }
	}
	if json.Unmarshal(locked.Body, &sim) != nil || sim.Decision != "deny" || sim.Lock == nil || sim.Lock.ID != ids["lock"] || sim.PolicyDecision != "ask" {
		t.Fatalf("the simulator under a lock: %s", locked.Body)
	}
	run(tourStep{op: "GET /v1/locks", path: "/v1/locks", key: "acme-approver", want: 200})
	run(tourStep{op: "DELETE /v1/locks/{id}", path: "/v1/locks/{lock}", key: "acme-admin", want: 200})
	run(tourStep{op: "DELETE /v1/locks/{id}", path: "/v1/locks/{lock}", key: "acme-admin", want: 404})
	run(tourStep{op: "POST /v1/sessions/{id}/end", path: "/v1/sessions/s1/end", key: "acme-agent", want: 200})
	run(tourStep{op: "POST /v1/sessions/{id}/end", path: "/v1/sessions/s1/end", key: "acme-agent", want: 409})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-agent", want: 201,
		body: map[string]any{"event": "started", "profile": "coding", "workspace": "/srv/app", "command": []string{"make", "test"}, "features": "landlock"}})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-agent", want: 409,
		body: map[string]any{"event": "started", "profile": "coding", "workspace": "/srv/app", "command": []string{"make"}}})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/s1/sandbox", key: "acme-agent", want: 409,
		body: map[string]any{"event": "started", "profile": "coding", "workspace": "/srv/app", "command": []string{"make"}}})
	run(tourStep{op: "GET /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-agent", want: 200})
	run(tourStep{op: "GET /v1/sessions/{id}/sandbox", path: "/v1/sessions/s1/sandbox", key: "acme-agent", want: 404})
	run(tourStep{op: "POST /v1/locks", path: "/v1/locks", key: "acme-admin", want: 201,
		body: map[string]any{"target": map[string]any{"session": "box-1"}, "reason": "stop the run"}})
	stopped := run(tourStep{op: "GET /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-approver", want: 200})
	var stop struct {
		Stop *struct{ ID string } `json:"stop"`
	}
	if json.Unmarshal(stopped.Body, &stop) != nil || stop.Stop == nil {
		t.Fatalf("the contained session under a lock has no stop: %s", stopped.Body)
	}
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-agent", want: 204,
		body: map[string]any{"event": "ended", "exit_status": 137, "duration_ms": 1200, "quarantined": []string{}, "stopped_by": stop.Stop.ID}})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-agent", want: 409,
		body: map[string]any{"event": "ended", "exit_status": 0, "duration_ms": 1200, "quarantined": []string{}}})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-agent", want: 400,
		body: map[string]any{"event": "paused"}})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-2/sandbox", key: "acme-agent", want: 400,
		body: map[string]any{"event": "started", "profile": "everything", "workspace": "/srv/app", "command": []string{"make"}}})
	run(tourStep{op: "POST /v1/sessions/{id}/sandbox", path: "/v1/sessions/box-1/sandbox", key: "acme-approver", want: 403,
		body: map[string]any{"event": "ended"}})

	// The audit log (this server signs no checkpoints: 503 where one is needed).
	run(tourStep{op: "GET /v1/audit/checkpoint", path: "/v1/audit/checkpoint", key: "acme-auditor"})
	run(tourStep{op: "GET /v1/audit/checkpoints", path: "/v1/audit/checkpoints", key: "acme-auditor", want: 200})
	run(tourStep{op: "GET /v1/audit/entries", path: "/v1/audit/entries?start=0&limit=100", key: "acme-auditor", want: 200})
	run(tourStep{op: "GET /v1/audit/entries", path: "/v1/audit/entries?limit=0", key: "acme-auditor", want: 400})
	run(tourStep{op: "GET /v1/audit/proof/inclusion", path: "/v1/audit/proof/inclusion?index=0", key: "acme-auditor"})
	run(tourStep{op: "GET /v1/audit/proof/consistency", path: "/v1/audit/proof/consistency?old=1", key: "acme-auditor"})
	run(tourStep{op: "GET /v1/audit/keys", path: "/v1/audit/keys", key: "acme-auditor", want: 200})
	run(tourStep{op: "POST /v1/audit/rotate-key", path: "/v1/audit/rotate-key", key: "acme-admin", want: 403})
	run(tourStep{op: "POST /v1/audit/rotate-key", path: "/v1/audit/rotate-key", key: "root", want: 409})

	// Policy.
	run(tourStep{op: "GET /v1/policy", path: "/v1/policy", key: "acme-admin", want: 404})
	run(tourStep{op: "GET /v1/policy", path: "/v1/policy?tier=global", key: "acme-auditor", want: 200})
	run(tourStep{op: "PUT /v1/policy", path: "/v1/policy", key: "acme-admin", body: yamlBody("version: 1\nrules:\n  - {id: x, when: 'tool ==', decision: deny}\n"), want: 400})
	run(tourStep{op: "PUT /v1/policy", path: "/v1/policy", key: "acme-admin", body: yamlBody("version: 1\nprofiles:\n  coding: {read: [/etc]}\n"), want: 400})
	run(tourStep{op: "PUT /v1/policy", path: "/v1/policy", key: "acme-admin", body: yamlBody(acmePolicy), want: 200})
	run(tourStep{op: "GET /v1/policy", path: "/v1/policy", key: "acme-auditor", want: 200})
	run(tourStep{op: "POST /v1/policy/simulate", path: "/v1/policy/simulate", key: "acme-auditor", want: 200,
		body: map[string]any{"check": map[string]any{"tool": "deploy", "args": map[string]any{"env": "prod"}}, "session": map[string]any{"calls": 3}}})
	run(tourStep{op: "POST /v1/policy/simulate", path: "/v1/policy/simulate", key: "acme-auditor", want: 200,
		body: map[string]any{"check": map[string]any{"tool": "fs.read", "args": map[string]any{"path": "secret"}}}})

	// Keys.
	k := run(tourStep{op: "POST /v1/keys", path: "/v1/keys", key: "acme-admin", want: 201,
		body: map[string]any{"name": "ci-bot", "roles": []string{"agent"}, "groups": []string{"ci"}}})
	ids["key"] = id(k, "id")
	run(tourStep{op: "POST /v1/keys", path: "/v1/keys", key: "acme-admin", body: map[string]any{"name": "x/y", "roles": []string{"agent"}}, want: 400})
	run(tourStep{op: "GET /v1/keys", path: "/v1/keys", key: "acme-admin", want: 200})
	run(tourStep{op: "DELETE /v1/keys/{id}", path: "/v1/keys/{key}", key: "acme-admin", want: 204})
	run(tourStep{op: "DELETE /v1/keys/{id}", path: "/v1/keys/{key}", key: "acme-admin", want: 204})

	// Approval workflows, delegations, reviews, replay and receipts.
	run(tourStep{op: "GET /v1/request-ids/{request_id}", path: "/v1/request-ids/r1", key: "acme-agent", want: 200})
	run(tourStep{op: "GET /v1/request-ids/{request_id}", path: "/v1/request-ids/nope", key: "acme-agent", want: 404})
	run(tourStep{op: "GET /v1/checks/{id}/receipt", path: "/v1/checks/{check}/receipt", key: "acme-agent"})
	run(tourStep{op: "GET /v1/audit/receipts/{index}", path: "/v1/audit/receipts/0", key: "acme-auditor"})
	run(tourStep{op: "POST /v1/approvals/{id}/revoke", path: "/v1/approvals/{approval}/revoke", key: "acme-admin", body: map[string]any{"message": "done"}, want: 409})
	run(tourStep{op: "POST /v1/batches/{batch}/votes", path: "/v1/batches/turn-1/votes", key: "acme-approver", body: map[string]any{"vote": "approve"}, want: 404})
	run(tourStep{op: "POST /v1/batches/{batch}/votes", path: "/v1/batches/turn-1/votes", key: "acme-approver", body: map[string]any{"vote": "approve", "approvals": []string{"apr_x"}}, want: 404})
	run(tourStep{op: "POST /v1/batches/{batch}/votes", path: "/v1/batches/turn-1/votes", key: "acme-approver", body: map[string]any{"vote": "approve", "approvals": []string{}}, want: 400})
	d := run(tourStep{op: "POST /v1/delegations", path: "/v1/delegations", key: "acme-approver", want: 201,
		body: map[string]any{"to": "acme-auditor", "until": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "reason": "away"}})
	ids["delegation"] = id(d, "id")
	run(tourStep{op: "POST /v1/delegations", path: "/v1/delegations", key: "acme-approver", body: map[string]any{"to": "acme-agent", "until": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, want: 403})
	run(tourStep{op: "GET /v1/delegations", path: "/v1/delegations", key: "acme-auditor", want: 200})
	run(tourStep{op: "DELETE /v1/delegations/{id}", path: "/v1/delegations/{delegation}", key: "acme-approver", want: 200})
	run(tourStep{op: "DELETE /v1/delegations/{id}", path: "/v1/delegations/{delegation}", key: "acme-approver", want: 409})
	run(tourStep{op: "GET /v1/reviews", path: "/v1/reviews?status=open", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/reviews", path: "/v1/reviews?status=maybe", key: "acme-approver", want: 400})
	run(tourStep{op: "GET /v1/reviews", path: "/v1/reviews?status=concern", key: "acme-approver", want: 200}) // an empty list without a limit
	run(tourStep{op: "GET /v1/proposals", path: "/v1/proposals?status=rejected", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/reviews/stats", path: "/v1/reviews/stats", key: "acme-auditor", want: 200})
	run(tourStep{op: "GET /v1/reviews/{id}", path: "/v1/reviews/rev_nope", key: "acme-auditor", want: 404})
	run(tourStep{op: "POST /v1/reviews/{id}/verdict", path: "/v1/reviews/rev_nope/verdict", key: "acme-approver", body: map[string]any{"verdict": "ok"}, want: 404})
	run(tourStep{op: "POST /v1/policy/replay", path: "/v1/policy/replay", key: "acme-auditor", want: 200,
		body: map[string]any{"policy": acmePolicy, "since": "1h", "tier": "tenant"}})
	run(tourStep{op: "POST /v1/policy/replay", path: "/v1/policy/replay", key: "acme-auditor", want: 400,
		body: map[string]any{"policy": "version: 1\nrules: [", "since": "1h", "tier": "tenant"}})

	// "Always allow" as a proposal: a deploy approved by two on-call people.
	e.addKey("acme-approver2", "acme", rein.RoleApprover)
	dep := run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-agent", want: 200, body: map[string]any{"tool": "deploy", "args": map[string]any{"env": "docs"}}})
	ids["deploy"] = id(dep, "approval.id")
	run(tourStep{op: "POST /v1/approvals/{id}/propose", path: "/v1/approvals/{deploy}/propose", key: "acme-approver", body: map[string]any{}, want: 409})
	for _, k := range []string{"acme-approver", "acme-approver2"} {
		run(tourStep{op: "POST /v1/approvals/{id}/votes", path: "/v1/approvals/{deploy}/votes", key: k, body: map[string]any{"vote": "approve"}, want: 200})
	}
	prop := run(tourStep{op: "POST /v1/approvals/{id}/propose", path: "/v1/approvals/{deploy}/propose", key: "acme-approver", want: 201,
		body: map[string]any{"message": "docs deploys are routine"}})
	ids["proposal"] = id(prop, "id")
	run(tourStep{op: "GET /v1/proposals", path: "/v1/proposals?status=open", key: "acme-auditor", want: 200})
	run(tourStep{op: "GET /v1/proposals", path: "/v1/proposals?status=maybe", key: "acme-auditor", want: 400})
	run(tourStep{op: "GET /v1/proposals/suggestions", path: "/v1/proposals/suggestions?min=2&since=1h", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/proposals/suggestions", path: "/v1/proposals/suggestions?min=1", key: "acme-approver", want: 400})
	run(tourStep{op: "GET /v1/proposals/{id}", path: "/v1/proposals/{proposal}", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/proposals/{id}", path: "/v1/proposals/prp_nope", key: "acme-approver", want: 404})
	run(tourStep{op: "POST /v1/proposals/{id}/decision", path: "/v1/proposals/{proposal}/decision", key: "acme-admin", body: map[string]any{"decision": "accept"}, want: 403})
	run(tourStep{op: "POST /v1/proposals/{id}/decision", path: "/v1/proposals/{proposal}/decision", key: "root", body: map[string]any{"decision": "maybe"}, want: 400})
	run(tourStep{op: "POST /v1/proposals/{id}/decision", path: "/v1/proposals/{proposal}/decision", key: "root", body: map[string]any{"decision": "accept", "message": "ok"}, want: 200})
	run(tourStep{op: "POST /v1/proposals/{id}/decision", path: "/v1/proposals/{proposal}/decision", key: "root", body: map[string]any{"decision": "reject"}, want: 409})
	run(tourStep{op: "POST /v1/check", path: "/v1/check", key: "acme-agent", want: 200, body: map[string]any{"tool": "deploy", "args": map[string]any{"env": "docs"}}})

	// OpenID AuthZEN and its access request profile.
	run(tourStep{op: "GET /.well-known/authzen-configuration", path: "/.well-known/authzen-configuration", want: 200})
	eval := map[string]any{"subject": map[string]any{"type": "user", "id": "alice"}, "action": map[string]any{"name": "fs.read"},
		"resource": map[string]any{"type": "file", "id": "README.md"}}
	run(tourStep{op: "POST /access/v1/evaluation", path: "/access/v1/evaluation", key: "acme-agent", body: eval, want: 200})
	run(tourStep{op: "POST /access/v1/evaluation", path: "/access/v1/evaluation", key: "acme-agent", body: map[string]any{"subject": map[string]any{"type": "user"}}, want: 400})
	run(tourStep{op: "POST /access/v1/evaluations", path: "/access/v1/evaluations", key: "acme-agent", want: 200,
		body: map[string]any{"subject": eval["subject"], "action": eval["action"], "evaluations": []any{map[string]any{"resource": eval["resource"]}}}})
	run(tourStep{op: "POST /access/v1/requests", path: "/access/v1/requests", key: "acme-agent", want: 400,
		body: map[string]any{"subject": eval["subject"], "action": eval["action"], "resource": eval["resource"], "denial": map[string]any{"evaluation_id": "chk_nope"}}})
	run(tourStep{op: "GET /access/v1/requests/{id}", path: "/access/v1/requests/apr_nope", key: "acme-agent", want: 404})
	run(tourStep{op: "POST /access/v1/requests/{id}/cancel", path: "/access/v1/requests/{approval}/cancel", key: "acme-agent", want: 409})
	run(tourStep{op: "DELETE /access/v1/requests/{id}/cancel", path: "/access/v1/requests/{approval}/cancel", key: "acme-agent", want: 409})

	// Integrations.
	run(tourStep{op: "POST /v1/hooks/claude-code", path: "/v1/hooks/claude-code", key: "acme-agent", want: 200,
		body: map[string]any{"hook_event_name": "PreToolUse", "session_id": "s2", "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}})
	run(tourStep{op: "POST /v1/hooks/claude-code", path: "/v1/hooks/claude-code", want: 200, body: map[string]any{}})
	run(tourStep{op: "POST /acs", path: "/acs", key: "acme-agent", want: 200,
		body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "system/ping", "params": map[string]any{
			"acs_version": "0.1.0", "request_id": "0b9d7a52-0c43-4e3f-9f5e-6f1b2f0c8a11", "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
			"metadata": map[string]any{"agent_id": "acme-agent", "session_id": "s3"}}}})
	run(tourStep{op: "POST /acs", path: "/acs", want: 401, body: map[string]any{}})

	// Passkeys (this server's base URL is an IP address, which WebAuthn
	// does not accept: ceremonies answer 409; the browser tests run them).
	run(tourStep{op: "GET /v1/passkeys", path: "/v1/passkeys", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/passkeys", path: "/v1/passkeys", key: "acme-auditor", want: 403})
	run(tourStep{op: "POST /v1/passkeys/registration", path: "/v1/passkeys/registration", key: "acme-approver", want: 409})
	run(tourStep{op: "POST /v1/passkeys/registration", path: "/v1/passkeys/registration", key: "acme-approver", body: map[string]any{"nope": 1}, want: 400})
	run(tourStep{op: "POST /v1/passkeys/confirmation", path: "/v1/passkeys/confirmation", key: "acme-approver", want: 409})
	run(tourStep{op: "POST /v1/passkeys", path: "/v1/passkeys", key: "acme-approver", body: map[string]any{"ceremony": "x", "credential": map[string]any{}, "label": 5}, want: 400})
	run(tourStep{op: "POST /v1/passkeys", path: "/v1/passkeys", key: "acme-approver", body: map[string]any{"ceremony": "x", "credential": map[string]any{"id": "y"}}, want: 409})
	run(tourStep{op: "DELETE /v1/passkeys/{id}", path: "/v1/passkeys/pk_nope", key: "acme-approver", want: 404})
	// Web Push: a device subscribes, gets a test message, unsubscribes.
	run(tourStep{op: "GET /v1/push", path: "/v1/push", key: "acme-approver", want: 200})
	run(tourStep{op: "GET /v1/push", path: "/v1/push", key: "acme-auditor", want: 403})
	sub := newTestDevice(t, e.push.URL+"/push/tour")
	ids["push"] = id(run(tourStep{op: "POST /v1/push/subscriptions", path: "/v1/push/subscriptions", key: "acme-approver", body: sub, want: 201}), "id")
	sub["endpoint"] = "https://evil.example/push/x"
	run(tourStep{op: "POST /v1/push/subscriptions", path: "/v1/push/subscriptions", key: "acme-approver", body: sub, want: 400})
	run(tourStep{op: "POST /v1/push/test", path: "/v1/push/test", key: "acme-approver", want: 200})
	run(tourStep{op: "DELETE /v1/push/subscriptions/{id}", path: "/v1/push/subscriptions/{push}", key: "acme-approver", want: 204})
	run(tourStep{op: "DELETE /v1/push/subscriptions/{id}", path: "/v1/push/subscriptions/{push}", key: "acme-approver", want: 404})

	run(tourStep{op: "POST /v1/approvals/{id}/step-up", path: "/v1/approvals/{approval}/step-up", key: "acme-approver", want: 409})
	run(tourStep{op: "POST /v1/approvals/{id}/votes", path: "/v1/approvals/{approval}/votes", key: "acme-approver", want: 409,
		body: map[string]any{"vote": "approve", "step_up": map[string]any{"ceremony": "x", "credential": map[string]any{"id": "y"}}}})

	var missing []string
	for op := range documentedOps(t, reinhttp.OpenAPIYAML()) {
		if !covered[op] {
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	for _, op := range missing {
		t.Errorf("%s: the tour never calls it; add a step so that its answers are checked against the document", op)
	}
}
