package replicas

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// approveAcross asks on replica a, waits on replica b, approves on a, and
// returns how long b's waiter took to answer after the vote was answered.
func approveAcross(t *testing.T, a, b *harness.Server, builder, alice string, n int) time.Duration {
	t.Helper()
	var ask harness.Answer
	if code := harness.PostJSON(t, a.URL+"/v1/check", builder, fmt.Sprintf(`{"tool":"deploy","session":"x","args":{"n":%d}}`, n), &ask); code != 200 || ask.Decision != "ask" {
		t.Fatalf("deploy %d on A: %d %+v", n, code, ask)
	}
	type waited struct {
		decision string
		at       time.Time
	}
	done := make(chan waited, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		var w map[string]any
		code, body := harness.HTTPDo(t, "GET", b.URL+"/v1/approvals/"+ask.Approval.ID+"/wait?timeout_ms=10000", builder, nil, "")
		if code == 200 {
			jsonUnmarshal(body, &w)
		}
		done <- waited{fmt.Sprint(w["decision"]), time.Now()}
	}()
	<-started
	time.Sleep(20 * time.Millisecond) // the waiter is waiting
	if code := harness.PostJSON(t, a.URL+"/v1/approvals/"+ask.Approval.ID+"/votes", alice, `{"vote":"approve"}`, nil); code != 200 {
		t.Fatalf("approve on A: %d", code)
	}
	voted := time.Now()
	w := <-done
	if w.decision != "allow" {
		t.Fatalf("the waiter on B after approval on A: %q", w.decision)
	}
	return w.at.Sub(voted)
}

// TestReplicasShareChanges: two replicas on one PostgreSQL. An approval
// given on A wakes the waiter on B (by notification, not by its
// once-a-second poll), B's event stream carries what happens on A, a lock
// set on A stops checks on B, a policy pushed to A is live on B, and a
// question asked on B and answered on A reaches its waiter on B.
func TestReplicasShareChanges(t *testing.T) {
	c := harness.NewPGCluster(t, harness.ApprovalsPolicy)
	a, b := c.Start(), c.Start()
	builder := c.Key(a, "builder", "acme", `"agent"`, ``)
	alice := c.Key(a, "alice", "acme", `"approver"`, `"oncall"`)
	acmeAdmin := c.Key(a, "acme-admin", "acme", `"admin"`, ``)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := harness.Subscribe(t, ctx, b.URL, alice, "")

	var took []time.Duration
	for i := range 5 {
		took = append(took, approveAcross(t, a, b, builder, alice, i))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if took[2] > 300*time.Millisecond {
		t.Errorf("waiters on B woke %v after approvals on A (median %v); a notification should take milliseconds, polling up to a second", took, took[2])
	}
	harness.WaitEvent(t, stream, "approval.created", func(e harness.SSEEvent) bool { return e.Data["tenant"] == "acme" })
	harness.WaitEvent(t, stream, "approval.updated", func(e harness.SSEEvent) bool { return e.Data["status"] == "approved" })

	// A lock set on A stops checks on B.
	var lock struct{ ID string }
	if code := harness.PostJSON(t, a.URL+"/v1/locks", acmeAdmin, `{"target":{"agent":"builder"},"reason":"incident 7"}`, &lock); code != 201 && code != 200 {
		t.Fatalf("lock on A: %d", code)
	}
	locked := time.Now()
	harness.Eventually(t, 2*time.Second, "the lock set on A denies on B", func() string {
		var got harness.Answer
		harness.PostJSON(t, b.URL+"/v1/check", builder, `{"tool":"deploy","args":{"n":100}}`, &got)
		if got.Decision != "deny" || !strings.Contains(got.Reason, "incident 7") {
			return fmt.Sprintf("%+v", got)
		}
		return ""
	})
	t.Logf("lock on A in force on B after %v", time.Since(locked))
	harness.WaitEvent(t, stream, "lock.updated", func(e harness.SSEEvent) bool { return e.Data["id"] == lock.ID })
	if code, body := harness.HTTPDo(t, "DELETE", a.URL+"/v1/locks/"+lock.ID, acmeAdmin, nil, ""); code != 200 {
		t.Fatalf("unlock: %d %s", code, body)
	}
	harness.Eventually(t, 2*time.Second, "the lock removed on A is gone on B", func() string {
		var got harness.Answer
		harness.PostJSON(t, b.URL+"/v1/check", builder, `{"tool":"deploy","args":{"n":101}}`, &got)
		if got.Decision != "ask" {
			return fmt.Sprintf("%+v", got)
		}
		return ""
	})

	// A policy pushed to A is live on B.
	newPolicy := "version: 1\ndefault: deny\nrules:\n  - {id: deploy-ok, when: 'tool == \"deploy\"', decision: allow}\n"
	if code, body := harness.HTTPDo(t, "PUT", a.URL+"/v1/policy", c.Admin, []byte(newPolicy), "application/yaml"); code != 200 {
		t.Fatalf("push policy to A: %d %s", code, body)
	}
	harness.Eventually(t, 2*time.Second, "the policy pushed to A decides on B", func() string {
		var got harness.Answer
		harness.PostJSON(t, b.URL+"/v1/check", builder, `{"tool":"deploy","args":{"n":102}}`, &got)
		if got.Decision != "allow" {
			return fmt.Sprintf("%+v", got)
		}
		return ""
	})

	// A question asked on B, answered on A, reaches its waiter on B.
	var q struct{ ID string }
	if code := harness.PostJSON(t, b.URL+"/v1/questions", builder, `{"session":"x","text":"which?","choices":["a","b"],"ask":["group:oncall"]}`, &q); code != 201 {
		t.Fatalf("question on B: %d", code)
	}
	got := make(chan map[string]any, 1)
	go func() {
		var w map[string]any
		_, body := harness.HTTPDo(t, "GET", b.URL+"/v1/questions/"+q.ID+"/wait?timeout_ms=10000", builder, nil, "")
		jsonUnmarshal(body, &w)
		got <- w
	}()
	time.Sleep(50 * time.Millisecond)
	if code := harness.PostJSON(t, a.URL+"/v1/questions/"+q.ID+"/answer", alice, `{"answer":"b"}`, nil); code != 200 {
		t.Fatalf("answer on A: %d", code)
	}
	answered := time.Now()
	w := <-got
	if w["status"] != "answered" || w["answer"] != "b" {
		t.Fatalf("the waiter on B: %v", w)
	}
	if d := time.Since(answered); d > 700*time.Millisecond {
		t.Errorf("the question's waiter on B answered %v after the answer on A", d)
	}
	c.Verify(b)
}

// TestReplicasShareRateLimits: a limit of 5 an hour holds across two
// replicas checked at once: exactly 5 allowed, the rest throttled.
func TestReplicasShareRateLimits(t *testing.T) {
	c := harness.NewPGCluster(t, `version: 1
default: deny
rules:
  - {id: mail, when: 'tool == "email.send"', decision: allow}
  - id: mail-rate
    when: 'tool == "email.send"'
    limit: {rate: 5, per: 1h, by: [agent]}
`)
	a, b := c.Start(), c.Start()
	builder := c.Key(a, "builder", "acme", `"agent"`, ``)
	decisions := make(chan string, 16)
	for i := range 16 {
		s := a
		if i%2 == 1 {
			s = b
		}
		go func() {
			var got harness.Answer
			harness.PostJSON(t, s.URL+"/v1/check", builder, fmt.Sprintf(`{"tool":"email.send","args":{"to":"x%d@example.com"}}`, i), &got)
			if got.Decision == "deny" {
				t.Log(got.Reason)
			}
			decisions <- got.Decision
		}()
	}
	count := map[string]int{}
	for range 16 {
		count[<-decisions]++
	}
	if count["allow"] != 5 || count["throttle"] != 11 {
		t.Fatalf("decisions %v; want 5 allow and 11 throttle across both replicas", count)
	}
}

// BenchmarkApprovalAcrossReplicas: an agent waits on replica B for an
// approval that a person gives on replica A. Each round asks on A, starts
// the waiter on B, approves on A, and measures from the vote's answer to
// the waiter's allow; p50 and p99 are reported. Run:
//
//	go test ./e2e/replicas -run '^$' -bench ApprovalAcrossReplicas -benchtime 200x
func BenchmarkApprovalAcrossReplicas(b *testing.B) {
	c := harness.NewPGCluster(b, harness.ApprovalsPolicy)
	ra, rb := c.Start(), c.Start()
	builder := c.Key(ra, "builder", "acme", `"agent"`, ``)
	alice := c.Key(ra, "alice", "acme", `"approver"`, `"oncall"`)
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		var ask harness.Answer
		if code := harness.PostJSON(b, ra.URL+"/v1/check", builder, fmt.Sprintf(`{"tool":"deploy","session":"bench","args":{"n":%d}}`, i), &ask); code != 200 || ask.Approval == nil {
			b.Fatalf("ask: %d %+v", code, ask)
		}
		done := make(chan time.Time, 1)
		go func() {
			code, body := try(rb, "GET", "/v1/approvals/"+ask.Approval.ID+"/wait?timeout_ms=10000", builder, "")
			if code != 200 || !strings.Contains(string(body), `"decision":"allow"`) {
				done <- time.Time{}
				return
			}
			done <- time.Now()
		}()
		time.Sleep(10 * time.Millisecond) // the waiter is waiting on B
		if code, _ := try(ra, "POST", "/v1/approvals/"+ask.Approval.ID+"/votes", alice, `{"vote":"approve"}`); code != 200 {
			b.Fatalf("approve: %d", code)
		}
		voted := time.Now()
		at := <-done
		if at.IsZero() {
			b.Fatal("the waiter on B did not get allow")
		}
		took = append(took, at.Sub(voted))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}

// TestReplicaStreamSeesOthersLongAfterStart: events reach another
// replica's stream once it announces it, not only while the publishing
// replica has just started (and sends to everyone until it knows better).
func TestReplicaStreamSeesOthersLongAfterStart(t *testing.T) {
	c := harness.NewPGCluster(t, harness.ApprovalsPolicy)
	a, b := c.Start(), c.Start()
	builder := c.Key(a, "builder", "acme", `"agent"`, ``)
	alice := c.Key(a, "alice", "acme", `"approver"`, `"oncall"`)
	time.Sleep(7 * time.Second) // longer than a start's assumption (announceValid, 6 s)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := harness.Subscribe(t, ctx, b.URL, alice, "")
	time.Sleep(200 * time.Millisecond) // the announcement reaches A
	var got harness.Answer
	if code := harness.PostJSON(t, a.URL+"/v1/check", builder, `{"tool":"deploy","args":{"n":1}}`, &got); code != 200 || got.Decision != "ask" {
		t.Fatalf("check on A: %d %+v", code, got)
	}
	harness.WaitEvent(t, stream, "decision", func(e harness.SSEEvent) bool { return e.Data["id"] == got.ID })
}
