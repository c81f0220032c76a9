package http_test

import (
	"net/http"
	"testing"
)

// TestQuestionAudit: every question transition is in the audit log, with
// the answer and who gave it; reads write nothing.
func TestQuestionAudit(t *testing.T) {
	e := newEnv(t, globalPolicy)
	before := e.entryCount()
	r := e.do("POST", "/v1/questions", "acme-agent", map[string]any{"session": "s1", "text": "Which account?",
		"choices": []string{"checking", "savings"}, "ask": []string{"group:oncall"}, "ttl_ms": 60000})
	wantStatus(t, r, http.StatusCreated)
	q := r.object(t)
	id := str(q, "id")
	if loc := r.Header.Get("Location"); loc != "/v1/questions/"+id {
		t.Errorf("Location = %q", loc)
	}
	wantFields(t, "question", q, "id", "tenant", "status", "agent", "agent_key_id", "session", "text", "choices", "schema",
		"ask", "answer", "answered_by", "answered_by_key", "created_at", "expires_at", "resolved_at")
	created := e.entry(int64(before))
	if created["kind"] != "question.created" || created["subject"] != id || created["tenant"] != "acme" || created["actor"] != "acme-agent" {
		t.Fatalf("question.created entry = %v", created)
	}
	if d := created["data"].(map[string]any); d["text"] != "Which account?" || d["session"] != "s1" {
		t.Errorf("question.created data = %v", d)
	}

	wantStatus(t, e.do("GET", "/v1/questions/"+id, "acme-approver", nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/questions?status=pending", "acme-approver", nil), http.StatusOK)
	wantError(t, e.do("POST", "/v1/questions/"+id+"/answer", "acme-approver", map[string]any{"answer": "cash"}), http.StatusBadRequest, "bad_request")
	if n := e.entryCount(); n != before+1 {
		t.Fatalf("reads and a refused answer wrote %d entries", n-before-1)
	}

	r = e.do("POST", "/v1/questions/"+id+"/answer", "acme-approver", map[string]any{"answer": "savings"})
	wantStatus(t, r, http.StatusOK)
	answered := e.entry(int64(before + 1))
	d := answered["data"].(map[string]any)
	if answered["kind"] != "question.answered" || answered["subject"] != id || answered["actor"] != "acme-approver" ||
		d["answer"] != "savings" || d["by_key"] != e.key("acme-approver").ID || d["status"] != "answered" {
		t.Fatalf("question.answered entry = %v", answered)
	}

	r = e.do("POST", "/v1/questions", "acme-agent", map[string]any{"text": "Never mind?"})
	other := str(r.object(t), "id")
	wantStatus(t, e.do("POST", "/v1/questions/"+other+"/cancel", "acme-agent", nil), http.StatusOK)
	resolved := e.entry(int64(before + 3))
	if d := resolved["data"].(map[string]any); resolved["kind"] != "question.resolved" || d["status"] != "cancelled" || d["cause"] != "cancelled" {
		t.Fatalf("question.resolved entry = %v", resolved)
	}
	wantError(t, e.do("POST", "/v1/questions/"+other+"/cancel", "acme-agent", nil), http.StatusConflict, "conflict")
	wantError(t, e.do("GET", "/v1/questions?status=open", "acme-approver", nil), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", "/v1/questions/"+id+"/answer", "acme-approver", map[string]any{}), http.StatusBadRequest, "bad_request")

	// Expiry is a resolution with cause timeout, never an answer.
	r = e.do("POST", "/v1/questions", "acme-agent", map[string]any{"text": "Quick?", "ttl_ms": 1000})
	quick := str(r.object(t), "id")
	n := e.entryCount()
	r = e.do("GET", "/v1/questions/"+quick+"/wait?timeout_ms=5000", "acme-agent", nil)
	if got := r.object(t); str(got, "status") != "expired" || got["answer"] != nil {
		t.Fatalf("wait past the ttl = %v", got)
	}
	expired := e.entry(int64(n))
	if d := expired["data"].(map[string]any); expired["kind"] != "question.resolved" || expired["subject"] != quick ||
		d["status"] != "expired" || d["cause"] != "timeout" || expired["actor"] != "rein" {
		t.Fatalf("expiry entry = %v", expired)
	}
}
