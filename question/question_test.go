package question

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

var (
	alice = approval.Voter{KeyID: "key_alice", Name: "alice", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"support"}}
	bob   = approval.Voter{KeyID: "key_bob", Name: "bob", Roles: []rein.Role{rein.RoleApprover}}
	carol = approval.Voter{KeyID: "key_carol", Name: "carol", Roles: []rein.Role{rein.RoleAdmin}}
	asker = approval.Voter{KeyID: "key_agent", Name: "builder", Roles: []rein.Role{rein.RoleAgent, rein.RoleApprover}, Groups: []string{"support"}}
)

const form = `{"type":"object","properties":{
	"account":{"type":"string","enum":["checking","savings"]},
	"amount":{"type":"number","minimum":0,"maximum":500},
	"count":{"type":"integer"},
	"notify":{"type":"boolean"},
	"email":{"type":"string","format":"email"},
	"day":{"type":"string","format":"date"},
	"code":{"type":"string","pattern":"^[A-Z]{3}$","minLength":3,"maxLength":3}},
	"required":["account","amount"]}`

func newQuestion(t *testing.T, choices []string, schema string, ask ...string) *rein.Question {
	t.Helper()
	q := &rein.Question{ID: "qst_1", Status: rein.StatusPending, AgentKeyID: "key_agent", Text: " Which one? ",
		Choices: choices, Ask: ask, CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}
	if schema != "" {
		q.Schema = json.RawMessage(schema)
	}
	if err := Prepare(q); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return q
}

func TestPrepare(t *testing.T) {
	q := newQuestion(t, nil, "")
	if q.Text != "Which one?" || strings.Join(q.Ask, ",") != "role:approver,role:admin" {
		t.Errorf("prepared = %q asked of %v; want trimmed text, default selectors", q.Text, q.Ask)
	}
	bad := []struct {
		name    string
		q       rein.Question
		wantMsg string
	}{
		{"no text", rein.Question{Text: "  "}, `"text" is required`},
		{"long text", rein.Question{Text: strings.Repeat("x", MaxText+1)}, "longer than"},
		{"choices and schema", rein.Question{Text: "q", Choices: []string{"a"}, Schema: json.RawMessage(form)}, "not both"},
		{"duplicate choice", rein.Question{Text: "q", Choices: []string{"a", "a"}}, "listed twice"},
		{"empty choice", rein.Question{Text: "q", Choices: []string{"a", " "}}, "choice 2"},
		{"too many choices", rein.Question{Text: "q", Choices: make([]string, MaxChoices+1)}, "at most"},
		{"bad selector", rein.Question{Text: "q", Ask: []string{"oncall"}}, "group:<name>"},
		{"client selector", rein.Question{Text: "q", Ask: []string{"client"}}, "group:<name>"},
		{"schema not object", rein.Question{Text: "q", Schema: json.RawMessage(`[1]`)}, "JSON Schema object"},
		{"schema type", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"string","properties":{"a":{"type":"string"}}}`)}, `"object"`},
		{"nested", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object"}}}`)}, "forms are flat"},
		{"array field", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array"}}}`)}, "forms are flat"},
		{"unknown keyword", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[]}`)}, `"oneOf" is not supported`},
		{"unknown field keyword", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","minItems":1}}}`)}, "minItems"},
		{"open form", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`)}, "closed"},
		{"required unknown", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`)}, `"b"`},
		{"no properties", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}, "empty"},
		{"bad pattern", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"(?<=x)"}}}`)}, "pattern"},
		{"bad format", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`)}, "format"},
		{"enum on number", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","enum":["1"]}}}`)}, "string fields"},
		{"min above max", rein.Question{Text: "q", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","minimum":5,"maximum":1}}}`)}, "above"},
	}
	for _, c := range bad {
		err := Prepare(&c.q)
		if !errors.Is(err, ErrBadQuestion) || !strings.Contains(err.Error(), c.wantMsg) {
			t.Errorf("%s: Prepare = %v; want ErrBadQuestion mentioning %q", c.name, err, c.wantMsg)
		}
	}
}

func TestFit(t *testing.T) {
	text := newQuestion(t, nil, "")
	choice := newQuestion(t, []string{"card", "store credit"}, "")
	forms := newQuestion(t, nil, form)
	cases := []struct {
		q      *rein.Question
		answer string
		ok     bool
		msg    string
	}{
		{text, `"anything at all"`, true, ""},
		{text, `""`, false, "empty"},
		{text, `"   "`, false, "empty"},
		{text, `42`, false, "text"},
		{text, `{"a":1}`, false, "text"},
		{choice, `"store credit"`, true, ""},
		{choice, `"Store Credit"`, false, "not one of the choices"},
		{choice, `"cash"`, false, "not one of the choices"},
		{choice, `["card"]`, false, "one of the choices"},
		{forms, `{"account":"savings","amount":12.5}`, true, ""},
		{forms, `{"account":"savings","amount":0,"count":3,"notify":false,"email":"a@example.com","day":"2026-12-01","code":"ABC"}`, true, ""},
		{forms, `{"amount":12}`, false, `"account" is required`},
		{forms, `{"account":"savings"}`, false, `"amount" is required`},
		{forms, `{"account":"cash","amount":1}`, false, "must be one of"},
		{forms, `{"account":"savings","amount":501}`, false, "at most 500"},
		{forms, `{"account":"savings","amount":-1}`, false, "at least 0"},
		{forms, `{"account":"savings","amount":"5"}`, false, "must be a number"},
		{forms, `{"account":"savings","amount":1,"count":1.5}`, false, "whole number"},
		{forms, `{"account":"savings","amount":1,"notify":"yes"}`, false, "true or false"},
		{forms, `{"account":"savings","amount":1,"email":"not-an-address"}`, false, "valid email"},
		{forms, `{"account":"savings","amount":1,"email":"Eve <eve@example.com>"}`, false, "valid email"},
		{forms, `{"account":"savings","amount":1,"day":"tomorrow"}`, false, "valid date"},
		{forms, `{"account":"savings","amount":1,"code":"abc"}`, false, "pattern"},
		{forms, `{"account":"savings","amount":1,"extra":"x"}`, false, `no field "extra"`},
		{forms, `"savings"`, false, "JSON object"},
		{forms, `null`, false, "JSON object"},
		{text, `"` + strings.Repeat("x", MaxAnswer) + `"`, false, "larger than"},
	}
	for _, c := range cases {
		got, err := Fit(c.q, json.RawMessage(c.answer))
		if c.ok {
			if err != nil {
				t.Errorf("Fit(%s) = %v; want ok", c.answer, err)
			} else if !json.Valid(got) {
				t.Errorf("Fit(%s) returned invalid JSON %s", c.answer, got)
			}
			continue
		}
		if !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Fit(%.60s) = %v; want ErrBadAnswer mentioning %q", c.answer, err, c.msg)
		}
	}
}

func TestAnswer(t *testing.T) {
	cases := []struct {
		name   string
		ask    []string
		v      approval.Voter
		at     time.Time
		answer string
		err    error
	}{
		{"approver answers", nil, alice, t0.Add(time.Minute), `"card"`, nil},
		{"admin answers by default", nil, carol, t0.Add(time.Minute), `"card"`, nil},
		{"asker never answers", nil, asker, t0.Add(time.Minute), `"card"`, ErrSelfAnswer},
		{"group selector", []string{"group:support"}, alice, t0.Add(time.Minute), `"card"`, nil},
		{"outside the group", []string{"group:support"}, bob, t0.Add(time.Minute), `"card"`, ErrNotAsked},
		{"user selector", []string{"user:bob"}, bob, t0.Add(time.Minute), `"card"`, nil},
		{"at expiry", nil, alice, t0.Add(10 * time.Minute), `"card"`, ErrNotPending},
		{"bad answer", nil, alice, t0.Add(time.Minute), `"cash"`, ErrBadAnswer},
	}
	for _, c := range cases {
		q := newQuestion(t, []string{"card", "store credit"}, "", c.ask...)
		tr, err := Answer(q, c.v, json.RawMessage(c.answer), c.at)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v; want %v", c.name, err, c.err)
			continue
		}
		if c.err != nil {
			if q.Status != rein.StatusPending || q.Answer != nil {
				t.Errorf("%s: a refused answer changed the question: %s %s", c.name, q.Status, q.Answer)
			}
			continue
		}
		if q.Status != rein.StatusAnswered || string(q.Answer) != c.answer || q.AnsweredBy != c.v.Name ||
			q.AnsweredByKey != c.v.KeyID || q.ResolvedAt == nil || tr.To != rein.StatusAnswered || tr.Cause != CauseAnswered {
			t.Errorf("%s: question after answer = %+v, transition %+v", c.name, q, tr)
		}
		// Terminal: a second answer, an expiry or a cancellation changes nothing.
		if _, err := Answer(q, bob, json.RawMessage(`"store credit"`), c.at); !errors.Is(err, ErrNotPending) {
			t.Errorf("%s: second answer err = %v; want ErrNotPending", c.name, err)
		}
		if Expire(q, t0.Add(time.Hour)).Changed() || Cancel(q, c.at).Changed() || string(q.Answer) != c.answer {
			t.Errorf("%s: an answered question changed", c.name)
		}
	}
}

func TestExpireAndCancel(t *testing.T) {
	q := newQuestion(t, nil, "")
	if Expire(q, t0.Add(10*time.Minute-time.Nanosecond)).Changed() {
		t.Fatal("expired before expires_at")
	}
	tr := Expire(q, t0.Add(10*time.Minute))
	if !tr.Changed() || q.Status != rein.StatusExpired || tr.Cause != CauseTimeout {
		t.Fatalf("Expire at expires_at = %+v, status %s", tr, q.Status)
	}
	if Cancel(q, t0.Add(11*time.Minute)).Changed() || q.Status != rein.StatusExpired {
		t.Fatal("an expired question was cancelled")
	}
	q = newQuestion(t, nil, "")
	if tr := Cancel(q, t0.Add(time.Minute)); !tr.Changed() || q.Status != rein.StatusCancelled || tr.Cause != CauseCancelled {
		t.Fatalf("Cancel = %+v, status %s", tr, q.Status)
	}
	if Expire(q, t0.Add(time.Hour)).Changed() || q.Status != rein.StatusCancelled {
		t.Fatal("a cancelled question expired")
	}
}

// TestFormKeepsFieldOrder: a form's fields are shown in the order the
// agent wrote them, so the schema is kept as sent (only compacted).
func TestFormKeepsFieldOrder(t *testing.T) {
	q := &rein.Question{Text: "Ship it?", Schema: json.RawMessage(`{"type": "object",
		"properties": {"zone": {"type": "string"}, "amount": {"type": "number"}, "approved": {"type": "boolean"}}}`)}
	if err := Prepare(q); err != nil {
		t.Fatal(err)
	}
	s := string(q.Schema)
	if !(strings.Index(s, `"zone"`) < strings.Index(s, `"amount"`) && strings.Index(s, `"amount"`) < strings.Index(s, `"approved"`)) || strings.Contains(s, "\n") {
		t.Fatalf("the stored schema: %s", s)
	}
}
