package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func errorMessage(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		s, _ := e["message"].(string)
		return s
	}
	return ""
}

// TestQuestions puts questions to people over the API of the real server:
// who may answer, which answers fit, what waiting, expiry and cancellation
// do, and the attacks that must fail.
func TestQuestions(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())

	t.Run("bad questions are refused with a reason", func(t *testing.T) {
		for _, c := range []struct{ body, want string }{
			{`{"session":"s"}`, `"text" is required`},
			{`{"text":"q","color":"red"}`, "color"},
			{`{"text":"q","choices":["a"],"schema":{"type":"object","properties":{"a":{"type":"string"}}}}`, "not both"},
			{`{"text":"q","ttl_ms":10}`, "ttl_ms"},
			{`{"text":"q","schema":{"type":"object","properties":{"a":{"type":"object"}}}}`, "flat"},
			{`{"text":"q","ask":["everyone"]}`, "group:<name>"},
		} {
			code, m := e.Ask("builder", c.body)
			if code != http.StatusBadRequest || !strings.Contains(errorMessage(m), c.want) {
				t.Errorf("ask %s: %d %v; want 400 mentioning %q", c.body, code, m, c.want)
			}
		}
		if code, _ := e.Ask("alice", `{"text":"q"}`); code != http.StatusForbidden {
			t.Errorf("an approver key asked a question: %d; want 403", code)
		}
	})

	t.Run("text answer reaches the waiting agent", func(t *testing.T) {
		id := e.MustAsk("builder", `{"session":"q1","text":"Anything to add to the release notes?"}`)
		got := make(chan map[string]any, 1)
		go func() {
			_, m := e.WaitQuestion("builder", id, 20000)
			got <- m
		}()
		time.Sleep(200 * time.Millisecond)
		select {
		case m := <-got:
			t.Fatalf("the wait returned before any answer: %v", m)
		default:
		}
		if code, m := e.AnswerQuestion("alice", id, `"mention the new flag"`); code != 200 || m["status"] != "answered" {
			t.Fatalf("answer: %d %v", code, m)
		}
		select {
		case m := <-got:
			if m["status"] != "answered" || m["answer"] != "mention the new flag" || m["answered_by"] != "alice" {
				t.Fatalf("the waiter got %v", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter was not woken by the answer")
		}
		if code, _ := e.AnswerQuestion("bob", id, `"something else"`); code != http.StatusConflict {
			t.Errorf("a second answer: %d; want 409", code)
		}
		if _, m := e.Question("alice", id); m["answer"] != "mention the new flag" {
			t.Errorf("the answer changed: %v", m)
		}
	})

	t.Run("choices: only a listed choice is an answer", func(t *testing.T) {
		id := e.MustAsk("builder", `{"text":"Which account?","choices":["checking","savings"]}`)
		for _, bad := range []string{`"cash"`, `"Savings"`, `["savings"]`, `1`, `""`} {
			code, m := e.AnswerQuestion("alice", id, bad)
			if code != http.StatusBadRequest || !strings.Contains(errorMessage(m), "choices") {
				t.Errorf("answer %s: %d %v; want 400 naming the choices", bad, code, m)
			}
		}
		if _, m := e.Question("alice", id); m["status"] != "pending" {
			t.Fatalf("refused answers changed the question: %v", m)
		}
		if code, m := e.AnswerQuestion("alice", id, `"savings"`); code != 200 || m["answer"] != "savings" {
			t.Fatalf("a listed choice: %d %v", code, m)
		}
	})

	t.Run("forms: answers are checked against the schema", func(t *testing.T) {
		id := e.MustAsk("builder", `{"text":"Refund details?","schema":{"type":"object","properties":{
			"amount":{"type":"number","minimum":0,"maximum":500},"reason":{"type":"string","minLength":3},
			"notify":{"type":"boolean"}},"required":["amount","reason"]}}`)
		for _, c := range []struct{ answer, want string }{
			{`{"amount":20}`, `"reason" is required`},
			{`{"amount":900,"reason":"damaged"}`, "at most 500"},
			{`{"amount":"20","reason":"damaged"}`, "number"},
			{`{"amount":20,"reason":"damaged","extra":1}`, `no field "extra"`},
			{`"20"`, "object"},
		} {
			code, m := e.AnswerQuestion("alice", id, c.answer)
			if code != http.StatusBadRequest || !strings.Contains(errorMessage(m), c.want) {
				t.Errorf("answer %s: %d %v; want 400 mentioning %q", c.answer, code, m, c.want)
			}
		}
		code, m := e.AnswerQuestion("alice", id, `{"reason":"damaged","notify":true,"amount":20}`)
		ans, _ := m["answer"].(map[string]any)
		if code != 200 || ans["amount"] != 20.0 || ans["reason"] != "damaged" || ans["notify"] != true {
			t.Fatalf("a fitting form answer: %d %v", code, m)
		}
	})

	t.Run("the asking key never answers", func(t *testing.T) {
		id := e.MustAsk("selfish", `{"text":"May I?"}`)
		if code, m := e.AnswerQuestion("selfish", id, `"yes"`); code != http.StatusForbidden {
			t.Fatalf("self-answer: %d %v; want 403", code, m)
		}
	})

	t.Run("only the named people answer", func(t *testing.T) {
		id := e.MustAsk("builder", `{"text":"Approve the budget line?","ask":["group:finance"]}`)
		if code, m := e.AnswerQuestion("alice", id, `"yes"`); code != http.StatusForbidden || !strings.Contains(errorMessage(m), "group:finance") {
			t.Fatalf("an approver outside group:finance: %d %v; want 403", code, m)
		}
		if code, _ := e.AnswerQuestion("carol", id, `"yes"`); code != 200 {
			t.Fatalf("carol (finance): %d", code)
		}
	})

	t.Run("another tenant sees nothing", func(t *testing.T) {
		id := e.MustAsk("builder", `{"session":"private","text":"Secret plans?"}`)
		if code, _ := e.Question("eve", id); code != http.StatusNotFound {
			t.Errorf("eve reads another tenant's question: %d; want 404", code)
		}
		if code, _ := e.AnswerQuestion("eve", id, `"x"`); code != http.StatusNotFound {
			t.Errorf("eve answers another tenant's question: %d; want 404", code)
		}
		_, raw := harness.HTTPDo(t, "GET", e.S.URL+"/v1/questions?status=all", e.Keys["eve"], nil, "")
		if strings.Contains(string(raw), id) {
			t.Errorf("eve's list holds another tenant's question: %s", raw)
		}
		_, raw = harness.HTTPDo(t, "GET", e.S.URL+"/v1/questions?status=pending&session=private", e.Keys["alice"], nil, "")
		if !strings.Contains(string(raw), id) {
			t.Errorf("alice's list lacks her tenant's pending question: %s", raw)
		}
		if code, _ := e.Question("builder2", id); code != http.StatusNotFound {
			t.Errorf("another agent of the tenant reads the question: %d; want 404", code)
		}
	})

	t.Run("concurrent answers: exactly one wins", func(t *testing.T) {
		id := e.MustAsk("builder", `{"text":"Pick one","choices":["a","b","c"]}`)
		var wg sync.WaitGroup
		codes := make(chan int, 30)
		for i := range 30 {
			who := []string{"alice", "bob", "carol"}[i%3]
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, _ := e.AnswerQuestion(who, id, fmt.Sprintf("%q", []string{"a", "b", "c"}[i%3]))
				codes <- code
			}()
		}
		wg.Wait()
		close(codes)
		won := 0
		for c := range codes {
			switch c {
			case 200:
				won++
			case http.StatusConflict:
			default:
				t.Errorf("a concurrent answer got %d", c)
			}
		}
		if won != 1 {
			t.Fatalf("%d answers won; want exactly 1", won)
		}
	})

	t.Run("expiry answers the waiter and closes the question", func(t *testing.T) {
		id := e.MustAsk("builder", `{"text":"Quick?","ttl_ms":1000}`)
		start := time.Now()
		code, m := e.WaitQuestion("builder", id, 20000)
		if code != 200 || m["status"] != "expired" || m["answer"] != nil {
			t.Fatalf("wait past the ttl: %d %v", code, m)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the waiter learned of the expiry after %s", took)
		}
		if code, _ := e.AnswerQuestion("alice", id, `"late"`); code != http.StatusConflict {
			t.Errorf("an answer after expiry: %d; want 409", code)
		}
	})

	t.Run("cancel: asker or admin only, and it ends the wait", func(t *testing.T) {
		id := e.MustAsk("builder", `{"text":"Never mind?"}`)
		if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/questions/"+id+"/cancel", e.Keys["alice"], nil, ""); code != http.StatusForbidden {
			t.Errorf("an approver cancelled: %d; want 403", code)
		}
		if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/questions/"+id+"/cancel", e.Keys["builder2"], nil, ""); code != http.StatusForbidden {
			t.Errorf("another agent cancelled: %d; want 403", code)
		}
		got := make(chan map[string]any, 1)
		go func() {
			_, m := e.WaitQuestion("builder", id, 20000)
			got <- m
		}()
		time.Sleep(200 * time.Millisecond)
		if code, raw := harness.HTTPDo(t, "POST", e.S.URL+"/v1/questions/"+id+"/cancel", e.Keys["builder"], nil, ""); code != 200 || !strings.Contains(string(raw), `"cancelled"`) {
			t.Fatalf("the asker cancels: %d %s", code, raw)
		}
		select {
		case m := <-got:
			if m["status"] != "cancelled" {
				t.Fatalf("the waiter got %v", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the cancellation did not end the wait")
		}
		if code, _ := e.AnswerQuestion("alice", id, `"yes"`); code != http.StatusConflict {
			t.Errorf("an answer after cancel: %d; want 409", code)
		}
	})
}

// TestAskAnswerCLI: `rein ask` blocks until `rein answer` in another
// terminal answers, and prints the answer for the script that asked.
func TestAskAnswerCLI(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	alice := e.S.ClientEnv(e.Keys["alice"])
	pendingID := func(session string) string {
		var id string
		harness.Eventually(t, 10*time.Second, "the question appears", func() string {
			r := harness.Rein(t, alice, "questions", "--output", "json")
			var list []struct{ ID, Session string }
			json.Unmarshal([]byte(r.Stdout), &list)
			for _, q := range list {
				if q.Session == session {
					id = q.ID
					return ""
				}
			}
			return "no pending question for session " + session + ": " + r.Stdout
		})
		return id
	}

	done := make(chan harness.Result, 1)
	go func() {
		done <- harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "ask", "Which account?", "--choices", "checking,savings", "--session", "cli")
	}()
	id := pendingID("cli")
	if r := harness.Rein(t, alice, "questions"); r.Code != 0 || !strings.Contains(r.Stdout, "Which account? [checking | savings]") {
		t.Errorf("rein questions: %s", r)
	}
	select {
	case r := <-done:
		t.Fatalf("rein ask returned before any answer: %s", r)
	case <-time.After(300 * time.Millisecond):
	}
	if r := harness.Rein(t, alice, "answer", id, "cash"); r.Code != 2 || !strings.Contains(r.Stderr, "not one of the choices") {
		t.Errorf("rein answer with a wrong choice: %s", r)
	}
	if r := harness.Rein(t, alice, "answer", id, "savings"); r.Code != 0 || !strings.Contains(r.Stdout, "answered") {
		t.Fatalf("rein answer: %s", r)
	}
	select {
	case r := <-done:
		if r.Code != 0 || r.Stdout != "savings\n" {
			t.Fatalf("rein ask after the answer: %s", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rein ask did not return after the answer")
	}

	// A form answered field by field.
	go func() {
		done <- harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "ask", "When?", "--session", "form", "--schema",
			`{"type":"object","properties":{"day":{"type":"string","format":"date"},"hours":{"type":"integer"},"notify":{"type":"boolean"}},"required":["day"]}`)
	}()
	id = pendingID("form")
	if r := harness.Rein(t, alice, "answer", id, "day=2026-12-01", "hours=3", "notify=true"); r.Code != 0 {
		t.Fatalf("rein answer FIELD=VALUE: %s", r)
	}
	select {
	case r := <-done:
		var got map[string]any
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &got) != nil || got["day"] != "2026-12-01" || got["hours"] != 3.0 || got["notify"] != true {
			t.Fatalf("rein ask (form) after the answer: %s", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rein ask (form) did not return after the answer")
	}

	// Nobody answers: exit 1, and it says so.
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "ask", "Anyone?", "--ttl", "1s"); r.Code != 1 || !strings.Contains(r.Stderr, "expired") {
		t.Fatalf("rein ask nobody answers: %s", r)
	}
	// --wait 0 prints the id and returns at once.
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "ask", "Later?", "--wait", "0"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "qst_") {
		t.Fatalf("rein ask --wait 0: %s", r)
	}
}

// TestQuestionsSurviveRestart: a pending question outlives a SIGKILL, its
// waiter resumes on the restarted server, and one that ran out of time
// while the server was down is expired when it comes back.
func TestQuestionsSurviveRestart(t *testing.T) {
	data := t.TempDir()
	e := harness.NewApprovalEnv(t, data)
	open := e.MustAsk("builder", `{"text":"Still there?","choices":["yes","no"]}`)
	short := e.MustAsk("builder", `{"text":"Quick one","ttl_ms":1000}`)
	e.S.Kill()
	time.Sleep(1100 * time.Millisecond)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, harness.ApprovalsPolicy)
	e.S = harness.StartServer(t, data, nil, "--policy", pol)

	got := make(chan map[string]any, 1)
	go func() {
		_, m := e.WaitQuestion("builder", open, 20000)
		got <- m
	}()
	time.Sleep(200 * time.Millisecond)
	if code, m := e.AnswerQuestion("alice", open, `"yes"`); code != 200 {
		t.Fatalf("answer after restart: %d %v", code, m)
	}
	select {
	case m := <-got:
		if m["status"] != "answered" || m["answer"] != "yes" {
			t.Fatalf("the waiter after restart got %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not resume")
	}
	harness.Eventually(t, 5*time.Second, "the short question expires", func() string {
		_, m := harness.HTTPDo(t, "GET", e.S.URL+"/v1/questions?status=expired", e.Keys["alice"], nil, "")
		if !strings.Contains(string(m), short) {
			return "not listed as expired: " + string(m)
		}
		return ""
	})
}
