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

// TestApprovalAttacks runs the attacks a careless or hostile agent or
// approver would try, against the real server; each must fail.
func TestApprovalAttacks(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())

	t.Run("no allow without an approval", func(t *testing.T) {
		a := e.Check("builder", "deploy", "s1", `{"svc":"api"}`)
		b := e.Check("builder", "deploy", "s1", `{"svc":"api"}`)
		if a.Decision != "ask" || b.Decision != "ask" || a.Approval == nil || b.Approval == nil || a.Approval.ID != b.Approval.ID {
			t.Fatalf("re-asking must return the same pending approval: %+v / %+v", a, b)
		}
		if code, w := e.Wait("builder", a.Approval.ID, 50); code != 200 || w["decision"] != "ask" {
			t.Fatalf("wait on pending: %d %v", code, w)
		}
	})

	t.Run("a rejection stands", func(t *testing.T) {
		a := e.Check("builder", "deploy", "s2", `{"svc":"api"}`)
		if code, m := e.Vote("alice", a.Approval.ID, "reject", `,"message":"not now"`); code != 200 || m["status"] != "rejected" {
			t.Fatalf("reject: %d %v", code, m)
		}
		if again := e.Check("builder", "deploy", "s2", `{"svc":"api"}`); again.Decision != "deny" {
			t.Fatalf("after a reject, the same action: %+v", again)
		}
		if code, w := e.Wait("builder", a.Approval.ID, 50); code != 200 || w["decision"] != "deny" || !strings.Contains(fmt.Sprint(w["reason"]), "not now") {
			t.Fatalf("wait after reject: %d %v", code, w)
		}
		if code, _ := e.Vote("bob", a.Approval.ID, "approve", ""); code != 409 {
			t.Fatalf("approve after reject: %d, want 409", code)
		}
	})

	t.Run("one approval, one allow, for that exact action only", func(t *testing.T) {
		a := e.Check("builder", "deploy", "s3", `{"svc":"api"}`)
		if code, m := e.Vote("alice", a.Approval.ID, "approve", ""); code != 200 || m["status"] != "approved" {
			t.Fatalf("approve: %d %v", code, m)
		}
		for _, other := range []struct{ tool, session, args string }{
			{"deploy", "s3", `{"svc":"db"}`},
			{"deploy", "s3-other", `{"svc":"api"}`},
			{"pay", "s3", `{"svc":"api"}`},
		} {
			if got := e.Check("builder", other.tool, other.session, other.args); got.Decision == "allow" {
				t.Errorf("%+v got allow from another action's approval", other)
			}
		}
		if got := e.Check("selfish", "deploy", "s3", `{"svc":"api"}`); got.Decision == "allow" {
			t.Error("another agent got allow from builder's approval")
		}
		first := e.Check("builder", "deploy", "s3", `{"svc":"api"}`)
		if first.Decision != "allow" || first.Args["svc"] != "api" || first.Approval == nil || first.Approval.ID != a.Approval.ID {
			t.Fatalf("the approved action: %+v", first)
		}
		second := e.Check("builder", "deploy", "s3", `{"svc":"api"}`)
		if second.Decision != "ask" || second.Approval.ID == a.Approval.ID {
			t.Fatalf("a used approval must not allow again: %+v", second)
		}
		var got map[string]any
		harness.GetJSON(t, e.S.URL+"/v1/approvals/"+a.Approval.ID, e.Keys["alice"], &got)
		if got["status"] != "consumed" || got["consumed_at"] == nil {
			t.Fatalf("approval after use: %v", got)
		}
	})

	t.Run("fifty concurrent takers, exactly one allow", func(t *testing.T) {
		a := e.Check("builder", "deploy", "s4", `{"svc":"api"}`)
		if code, _ := e.Vote("bob", a.Approval.ID, "approve", ""); code != 200 {
			t.Fatal("approve failed")
		}
		var mu sync.Mutex
		allows := 0
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var allowed bool
				if i%2 == 0 {
					code, w := e.Wait("builder", a.Approval.ID, 2000)
					allowed = code == 200 && w["decision"] == "allow"
				} else {
					code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["builder"], []byte(`{"tool":"deploy","session":"s4","args":{"svc":"api"}}`), "application/json")
					var an harness.Answer
					json.Unmarshal(body, &an)
					allowed = code == 200 && an.Decision == "allow"
				}
				if allowed {
					mu.Lock()
					allows++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if allows != 1 {
			t.Fatalf("%d allows from one approval, want exactly 1", allows)
		}
	})

	t.Run("separation of duties and tenancy", func(t *testing.T) {
		own := e.Check("selfish", "deploy", "s5", `{"svc":"api"}`)
		if code, m := e.Vote("selfish", own.Approval.ID, "approve", ""); code != 403 {
			t.Fatalf("self-approval: %d %v, want 403", code, m)
		}
		a := e.Check("builder", "deploy", "s5", `{"svc":"api"}`)
		if code, _ := e.Vote("eve", a.Approval.ID, "approve", ""); code != 404 {
			t.Fatalf("vote from another tenant: %d, want 404", code)
		}
		if code, _ := e.Vote("carol", a.Approval.ID, "approve", ""); code != 403 {
			t.Fatalf("vote without matching the selectors: %d, want 403", code)
		}
		if code, _ := e.Vote("builder", a.Approval.ID, "approve", ""); code != 403 {
			t.Fatalf("vote by an agent key: %d, want 403", code)
		}
		p := e.Check("builder", "pay", "s5", `{"amount":5}`)
		if code, m := e.Vote("bob", p.Approval.ID, "approve", ""); code != 200 || m["status"] != "pending" {
			t.Fatalf("first of two: %d %v", code, m)
		}
		if code, _ := e.Vote("bob", p.Approval.ID, "approve", ""); code != 409 {
			t.Fatalf("voting twice: %d, want 409", code)
		}
		if code, m := e.Vote("carol", p.Approval.ID, "approve", ""); code != 200 || m["status"] != "approved" {
			t.Fatalf("second approver: %d %v", code, m)
		}
	})

	t.Run("edits are checked by policy and kept", func(t *testing.T) {
		a := e.Check("builder", "deploy", "s6", `{"svc":"api","env":"staging"}`)
		if code, m := e.Vote("alice", a.Approval.ID, "edit", `,"args":{"svc":"api","env":"prod"}`); code != 409 {
			t.Fatalf("edit into a denied action: %d %v, want 409", code, m)
		}
		if code, m := e.Vote("alice", a.Approval.ID, "edit", `,"args":{"svc":"api","env":"staging","canary":true}`); code != 200 || m["status"] != "approved" {
			t.Fatalf("edit: %d %v", code, m)
		}
		var got map[string]any
		harness.GetJSON(t, e.S.URL+"/v1/approvals/"+a.Approval.ID, e.Keys["alice"], &got)
		if fmt.Sprint(got["args"]) != "map[env:staging svc:api]" || fmt.Sprint(got["approved_args"]) != "map[canary:true env:staging svc:api]" {
			t.Fatalf("proposed and approved args: %v / %v", got["args"], got["approved_args"])
		}
		run := e.Check("builder", "deploy", "s6", `{"svc":"api","env":"staging"}`)
		if run.Decision != "allow" || run.Args["canary"] != true {
			t.Fatalf("the allow carries the edited args: %+v", run)
		}
	})

	t.Run("time limits", func(t *testing.T) {
		a := e.Check("builder", "quick", "s7", `{}`)
		if code, m := e.Vote("alice", a.Approval.ID, "approve", ""); code != 200 || m["status"] != "approved" {
			t.Fatalf("approve: %d %v", code, m)
		}
		time.Sleep(2100 * time.Millisecond)
		if late := e.Check("builder", "quick", "s7", `{}`); late.Decision == "allow" {
			t.Fatalf("a grant past its TTL allowed: %+v", late)
		}
		b := e.Check("builder", "quick", "s8", `{}`)
		time.Sleep(2100 * time.Millisecond)
		if code, _ := e.Vote("alice", b.Approval.ID, "approve", ""); code != 409 {
			t.Fatalf("vote after expiry: %d, want 409", code)
		}
		var got map[string]any
		harness.GetJSON(t, e.S.URL+"/v1/approvals/"+b.Approval.ID, e.Keys["alice"], &got)
		if got["status"] != "expired" {
			t.Fatalf("status %v, want expired (a timeout, never a rejection)", got["status"])
		}
		// A waiting agent hears that it timed out.
		start := time.Now()
		code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["builder"], []byte(`{"tool":"quick","session":"s9","args":{},"wait_ms":10000}`), "application/json")
		var w harness.Answer
		json.Unmarshal(body, &w)
		if code != 200 || w.Decision != "deny" || !strings.Contains(w.Reason, "timed out") || time.Since(start) > 8*time.Second {
			t.Fatalf("waiting through an expiry: %d %+v after %s", code, w, time.Since(start))
		}
	})

	t.Run("the asking agent can cancel", func(t *testing.T) {
		a := e.Check("builder", "deploy", "s10", `{}`)
		if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/approvals/"+a.Approval.ID+"/cancel", e.Keys["alice"], nil, ""); code != http.StatusForbidden {
			t.Fatalf("an approver cancels: %d, want 403", code)
		}
		if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/approvals/"+a.Approval.ID+"/cancel", e.Keys["builder"], nil, ""); code != 200 {
			t.Fatalf("cancel: %d", code)
		}
		if code, _ := e.Vote("alice", a.Approval.ID, "approve", ""); code != 409 {
			t.Fatalf("vote on a cancelled approval: %d", code)
		}
	})
}

// TestWaitApproveCLI is the README tour: an agent's `rein check --wait`
// blocks until `rein approve` in another terminal releases it with allow.
func TestWaitApproveCLI(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	done := make(chan harness.Result, 1)
	go func() {
		done <- harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "check", "deploy", "--args", `{"svc":"api"}`, "--session", "tour", "--wait", "30s")
	}()
	var id string
	harness.Eventually(t, 10*time.Second, "the approval appears", func() string {
		r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "approvals", "--output", "json")
		var list []struct{ ID, Session string }
		json.Unmarshal([]byte(r.Stdout), &list)
		for _, a := range list {
			if a.Session == "tour" {
				id = a.ID
				return ""
			}
		}
		return "no pending approval for session tour: " + r.Stdout
	})
	select {
	case r := <-done:
		t.Fatalf("rein check --wait returned before any vote: %s", r)
	case <-time.After(300 * time.Millisecond):
	}
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "approve", id, "--message", "ship it"); r.Code != 0 || !strings.Contains(r.Stdout, "approved") {
		t.Fatalf("rein approve: %s", r)
	}
	select {
	case r := <-done:
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "allow") {
			t.Fatalf("rein check --wait after approval: %s", r)
		}
		if !strings.Contains(r.Stderr, "waiting up to 30s for approval "+id) {
			t.Errorf("rein check --wait must say which approval it waits for: %s", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rein check --wait did not return after the approval")
	}

	// An approver's edit: the waiting agent is told the arguments to run.
	go func() {
		done <- harness.Rein(t, e.S.ClientEnv(e.Keys["builder"]), "check", "deploy", "--args", `{"svc":"api"}`, "--session", "tour-2", "--wait", "30s")
	}()
	harness.Eventually(t, 10*time.Second, "the second approval appears", func() string {
		r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "approvals", "--output", "json")
		var list []struct{ ID, Session string }
		json.Unmarshal([]byte(r.Stdout), &list)
		for _, a := range list {
			if a.Session == "tour-2" {
				id = a.ID
				return ""
			}
		}
		return "no pending approval for session tour-2"
	})
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "approve", id, "--args", `{"svc":"web"}`); r.Code != 0 {
		t.Fatalf("rein approve --args: %s", r)
	}
	select {
	case r := <-done:
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "allow") || !strings.Contains(r.Stdout, `args:     {"svc":"web"}`) {
			t.Fatalf("rein check --wait after an edit must print the arguments to run: %s", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rein check --wait did not return after the edit")
	}
}

// TestApprovalsSurviveRestart: a pending approval and an unused grant
// outlive a SIGKILL; the waiter resumes on the restarted server.
func TestApprovalsSurviveRestart(t *testing.T) {
	data := t.TempDir()
	e := harness.NewApprovalEnv(t, data)
	pending := e.Check("builder", "deploy", "r1", `{}`)
	granted := e.Check("builder", "deploy", "r2", `{}`)
	if code, _ := e.Vote("alice", granted.Approval.ID, "approve", ""); code != 200 {
		t.Fatal("approve failed")
	}
	e.S.Kill()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, harness.ApprovalsPolicy)
	e.S = harness.StartServer(t, data, nil, "--policy", pol)
	waited := make(chan map[string]any, 1)
	go func() {
		_, w := e.Wait("builder", pending.Approval.ID, 10000)
		waited <- w
	}()
	time.Sleep(200 * time.Millisecond)
	if code, m := e.Vote("bob", pending.Approval.ID, "approve", ""); code != 200 || m["status"] != "approved" {
		t.Fatalf("vote after restart: %d %v", code, m)
	}
	select {
	case w := <-waited:
		if w["decision"] != "allow" {
			t.Fatalf("the waiter after restart: %v", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not resume")
	}
	if got := e.Check("builder", "deploy", "r2", `{}`); got.Decision != "allow" {
		t.Fatalf("the grant approved before the kill: %+v", got)
	}
}

// TestPolicyChangeInvalidatesPending: pending approvals whose action the new
// policy denies become invalidated.
func TestPolicyChangeInvalidatesPending(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	a := e.Check("builder", "deploy", "p1", `{"svc":"api"}`)
	keep := e.Check("builder", "pay", "p1", `{"amount":3}`)
	stricter := strings.Replace(harness.ApprovalsPolicy, `decision: ask, reason: "deploys need on-call"`, `decision: deny, reason: "deploys are frozen"`, 1)
	code, body := harness.HTTPDo(t, "PUT", e.S.URL+"/v1/policy", e.S.AdminKey(), []byte(stricter), "application/yaml")
	if code != 200 {
		t.Fatalf("push: %d %s", code, body)
	}
	harness.Eventually(t, 5*time.Second, "the deploy approval is invalidated", func() string {
		var got map[string]any
		harness.GetJSON(t, e.S.URL+"/v1/approvals/"+a.Approval.ID, e.Keys["alice"], &got)
		if got["status"] != "invalidated" {
			return fmt.Sprint("status ", got["status"])
		}
		return ""
	})
	var other map[string]any
	harness.GetJSON(t, e.S.URL+"/v1/approvals/"+keep.Approval.ID, e.Keys["alice"], &other)
	if other["status"] != "pending" {
		t.Fatalf("an approval the new policy still asks for: %v", other["status"])
	}
}

// TestApprovalMetrics: /metrics counts what waits for people and how long
// they took to decide.
func TestApprovalMetrics(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	metrics := func() string {
		_, body := harness.HTTPDo(t, "GET", e.S.URL+"/metrics", "", nil, "")
		return string(body)
	}
	code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["builder"], []byte(`{"tool":"deploy","args":{"v":1}}`), "application/json")
	var a harness.Answer
	json.Unmarshal(body, &a)
	if code != 200 || a.Decision != "ask" {
		t.Fatalf("check: %d %s", code, body)
	}
	if m := metrics(); !strings.Contains(m, "rein_approvals_pending 1") {
		t.Fatalf("one approval pending:\n%s", m)
	}
	harness.MustVote(t, e, "alice", e.PendingApproval(t, ""), "approve", "")
	m := metrics()
	if !strings.Contains(m, "rein_approvals_pending 0") || !strings.Contains(m, `rein_approval_decision_seconds_count{outcome="approved"} 1`) {
		t.Fatalf("after the approval:\n%s", m)
	}
}
