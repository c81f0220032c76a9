package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// approvalServer is a rein stand-in holding one approval of pay {amount: 50,
// to: acct-a}: it answers GET and list, and takes votes as rein does (an
// approve or edit naming another revision is stale_revision with the
// current approval; a reject always counts).
type approvalServer struct {
	mu    sync.Mutex
	a     rein.Approval
	votes []map[string]any
	// beforeVote runs when a vote arrives, before it is judged: another
	// approver's edit landing between the GET and the vote.
	beforeVote func(a *rein.Approval)
}

func newApprovalServer() *approvalServer {
	return &approvalServer{a: rein.Approval{ID: "apr_pay", Status: rein.StatusPending, Tool: "pay", Agent: "bot", Session: "s1",
		Rule: "pay-two", Reason: "payments need two", Approvers: []string{"group:finance"}, Quorum: 2, Revision: 1,
		Args: json.RawMessage(`{"amount":50,"to":"acct-a"}`), ExpiresAt: time.Now().Add(time.Hour)}}
}

func edit(a *rein.Approval, by, to string) {
	a.ApprovedArgs = json.RawMessage(`{"amount":50,"to":"` + to + `"}`)
	a.Revision++
	a.Changes = rein.ArgChanges(a.Args, a.ApprovedArgs)
	a.Votes = append(a.Votes, rein.Vote{By: by, Vote: "edit", Args: a.ApprovedArgs, Revision: a.Revision})
}

func (s *approvalServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/approvals":
		json.NewEncoder(w).Encode([]rein.Approval{s.a})
	case r.Method == "GET" && r.URL.Path == "/v1/approvals/apr_pay":
		json.NewEncoder(w).Encode(s.a)
	case r.Method == "POST" && r.URL.Path == "/v1/approvals/apr_pay/votes":
		var v map[string]any
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &v)
		s.votes = append(s.votes, v)
		if s.beforeVote != nil {
			s.beforeVote(&s.a)
			s.beforeVote = nil
		}
		rev, _ := v["revision"].(float64)
		if v["vote"] != "reject" && int(rev) != s.a.Revision {
			w.WriteHeader(http.StatusConflict)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": "stale_revision", "message": "the action was edited since this version was shown", "details": s.a}})
			return
		}
		s.a.Votes = append(s.a.Votes, rein.Vote{By: "carol", Vote: v["vote"].(string), Revision: int(rev)})
		json.NewEncoder(w).Encode(s.a)
	default:
		http.NotFound(w, r)
	}
}

func TestVoteShowsAndBindsRevision(t *testing.T) {
	for _, c := range []struct {
		name        string
		args        []string
		setup       func(s *approvalServer) // before the command runs
		terminal    bool
		stdin       string
		code        int
		sentRev     []float64 // the revision of each vote sent
		stdout      []string
		stderr      []string
		notInOutput []string
	}{
		{name: "approve the agent's request", args: []string{"approve", "apr_pay"}, code: 0, sentRev: []float64{1},
			stdout: []string{"revision 1", `{"amount":50,"to":"acct-a"}`, "apr_pay: pending (1 of 2 approvals), revision 1"}, notInOutput: []string{"edited:"}},
		{name: "approve an edited action shows the edit first", args: []string{"approve", "apr_pay"}, code: 0, sentRev: []float64{2},
			setup:  func(s *approvalServer) { edit(&s.a, "dave", "acct-mallory") },
			stdout: []string{"revision 2", `edited:   by dave; changed from the agent's request:`, `to: "acct-a" → "acct-mallory"`, `{"amount":50,"to":"acct-mallory"}`}},
		{name: "edited between the look and the vote", args: []string{"approve", "apr_pay"}, code: 1, sentRev: []float64{1},
			setup:  func(s *approvalServer) { s.beforeVote = func(a *rein.Approval) { edit(a, "dave", "acct-mallory") } },
			stdout: []string{`{"amount":50,"to":"acct-a"}`},
			stderr: []string{"revision 1 is no longer the current one, and nothing was voted", `to: "acct-a" → "acct-mallory"`, "rein approve apr_pay --revision 2"}},
		{name: "--revision pins a stale one", args: []string{"approve", "apr_pay", "--revision", "1"}, code: 1, sentRev: []float64{1},
			setup:  func(s *approvalServer) { edit(&s.a, "dave", "acct-mallory") },
			stdout: []string{"You named revision 1; the current one is 2"}, stderr: []string{"nothing was voted"}},
		{name: "a stale reject counts", args: []string{"reject", "apr_pay", "--revision", "1"}, code: 0, sentRev: []float64{1},
			setup: func(s *approvalServer) { edit(&s.a, "dave", "acct-mallory") }},
		{name: "edit names the revision it edits", args: []string{"edit", "apr_pay", "--args", `{"amount":50,"to":"acct-b"}`}, code: 0, sentRev: []float64{1},
			stdout: []string{`edit to: {"amount":50,"to":"acct-b"}`}},
		{name: "edit needs --args", args: []string{"edit", "apr_pay"}, code: 2},
		{name: "terminal: no is no vote", args: []string{"approve", "apr_pay"}, terminal: true, stdin: "n\n", code: 1,
			stderr: []string{"Approve revision 1 of apr_pay as shown above? [y/N]", "nothing was voted"}},
		{name: "terminal: yes votes", args: []string{"approve", "apr_pay"}, terminal: true, stdin: "y\n", code: 0, sentRev: []float64{1}},
		{name: "terminal: --yes does not ask", args: []string{"approve", "apr_pay", "--yes"}, terminal: true, code: 0, sentRev: []float64{1},
			notInOutput: []string{"[y/N]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newApprovalServer()
			if c.setup != nil {
				c.setup(s)
			}
			srv := httptest.NewServer(s)
			defer srv.Close()
			defer func(f func(*env) bool) { interactive = f }(interactive)
			interactive = func(*env) bool { return c.terminal }
			var out, errb bytes.Buffer
			e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(c.stdin), getenv: func(k string) string {
				return map[string]string{"REIN_SERVER": srv.URL, "REIN_KEY": "k"}[k]
			}}
			code := run(context.Background(), e, c.args)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out.String(), errb.String())
			}
			var sent []float64
			for _, v := range s.votes {
				r, _ := v["revision"].(float64)
				sent = append(sent, r)
			}
			if !equalFloats(sent, c.sentRev) {
				t.Errorf("votes sent with revisions %v, want %v", sent, c.sentRev)
			}
			for _, w := range c.stdout {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range c.stderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb.String())
				}
			}
			for _, w := range c.notInOutput {
				if strings.Contains(out.String()+errb.String(), w) {
					t.Errorf("output has %q:\n%s%s", w, out.String(), errb.String())
				}
			}
		})
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestApprovalsListShowsVersion: the list shows each approval's revision
// and its arguments as they will run, an edited one's changes first.
func TestApprovalsListShowsVersion(t *testing.T) {
	s := newApprovalServer()
	edit(&s.a, "dave", "acct-mallory")
	srv := httptest.NewServer(s)
	defer srv.Close()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(k string) string {
		return map[string]string{"REIN_SERVER": srv.URL, "REIN_KEY": "k"}[k]
	}}
	if code := run(context.Background(), e, []string{"approvals"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	edited := strings.Index(got, `to: "acct-a" → "acct-mallory"`)
	args := strings.Index(got, `args:     {"amount":50,"to":"acct-mallory"}`)
	if !strings.Contains(got, "revision 2") || edited < 0 || args < edited {
		t.Errorf("the list does not show revision 2, its change, then its arguments:\n%s", got)
	}
	if strings.Contains(got, `"to":"acct-a"}`) {
		t.Errorf("the list shows the agent's request as the arguments:\n%s", got)
	}
}
