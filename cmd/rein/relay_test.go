package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/client"
)

// TestRelayRefusesWithoutForwarding: what the relay refuses, it refuses
// itself: nothing reaches rein (whose answers the run's key would earn).
// What it forwards is tested end to end (e2e/contained).
func TestRelayRefusesWithoutForwarding(t *testing.T) {
	var reached atomic.Int64
	rein := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "not for the relay", http.StatusTeapot)
	}))
	defer rein.Close()
	h := &hookRelay{c: client.New(rein.URL, "rein_run_key"), session: "run-1"}
	for _, c := range []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"POST", "/v1/approvals/apr_1/votes", `{"vote":"approve"}`, 403, "forwards only the checks"},
		{"GET", "/v1/approvals", ``, 403, "forwards only the checks"},
		{"GET", "/v1/approvals/apr_1/x", ``, 403, "forwards only the checks"},
		{"POST", "/v1/keys", `{}`, 403, "forwards only the checks"},
		{"PUT", "/v1/policy", `x`, 403, "forwards only the checks"},
		{"GET", "/v1/audit/entries", ``, 403, "forwards only the checks"},
		{"POST", "/v1/sessions/run-1/end", `{}`, 403, "forwards only the checks"},
		{"POST", "/v1/sessions/run-1/sandbox", `{"event":"ended"}`, 403, "forwards only the checks"},
		{"POST", "/v1/hooks/claude-code", `{}`, 403, "forwards only the checks"},
		{"GET", "/v1/check", ``, 403, "forwards only the checks"},
		{"POST", "/v1/check", `{"tool":"net.connect","args":{"host":"evil.example","port":443}}`, 403, "egress proxy"},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"labels":{"trusted":"yes"}}`, 400, "only tool, args"},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"agent":"trusted-bot"}`, 400, "only tool, args"},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"intent":"x"}`, 400, "only tool, args"},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"batch":"b1"}`, 400, "only tool, args"},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"cost":1}`, 400, "only tool, args"},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"sandbox":{"contained":true}}`, 400, ""},
		{"POST", "/v1/check", `{"tool":"Bash","args":{},"request_id":"` + strings.Repeat("x", 256) + `"}`, 400, "request_id"},
		{"POST", "/v1/check", strings.Repeat(" ", relayBodyLimit+1), 413, "at most"},
		{"POST", "/v1/checks/chk_1/result", `{"status":"succeeded","address":"10.0.0.1"}`, 400, ""},
		{"POST", "/v1/checks/chk_1/result", `{"status":"succeeded","cost":5}`, 400, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(c.method, c.path, strings.NewReader(c.body)))
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%s %s %.60s: %d %s, want %d saying %q", c.method, c.path, c.body, w.Code, w.Body, c.status, c.says)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the relay forwarded %d refused requests to rein", n)
	}
}
