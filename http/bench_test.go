package http_test

import (
	"crypto/rand"
	mrand "math/rand/v2"

	"golang.org/x/mod/sumdb/note"

	"encoding/json"
	"fmt"
	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkVoteToWaiter measures how long a waiting agent takes to learn of
// the deciding vote, over HTTP against a SQLite-backed server, while 1,000
// approvals are pending and each has an agent long-polling
// GET /v1/approvals/{id}/wait. Each iteration approves one of them: the
// time runs from sending the vote to the waiter holding its "allow" (which
// includes the vote's write and the grant's consumption). After each vote a
// new approval and waiter take its place, so that 1,000 stay pending.
// Reported: vote-to-answer p50/p99 and, for comparison, the vote's own
// round trip.
func BenchmarkVoteToWaiter(b *testing.B) {
	const pending = 1000
	e := newEnv(b, globalPolicy)
	e.addKey("acme-approver2", "acme", "approver")
	type waiter struct {
		id     string
		answer chan time.Time
	}
	seq := 0
	done := make(chan struct{})
	defer close(done)
	start := func() *waiter {
		seq++
		res := e.check("acme-agent", map[string]any{"tool": "deploy", "session": fmt.Sprintf("bench-%d", seq)})
		w := &waiter{id: str(res["approval"].(map[string]any), "id"), answer: make(chan time.Time, 1)}
		go func() {
			for {
				req, _ := http.NewRequest("GET", e.srv.URL+"/v1/approvals/"+w.id+"/wait?timeout_ms=300000", nil)
				req.Header.Set("Authorization", "Bearer "+e.key("acme-agent").Secret)
				res, err := e.srv.Client().Do(req)
				var got struct{ Decision string }
				if err == nil {
					err = json.NewDecoder(res.Body).Decode(&got)
					res.Body.Close()
				}
				select {
				case <-done:
					return // the benchmark is over: the server is closing
				default:
				}
				switch {
				case err != nil:
					b.Errorf("waiter %s: %v", w.id, err)
				case got.Decision == "ask":
					continue // the long-poll ended before the vote
				case got.Decision != "allow":
					b.Errorf("waiter %s: %s", w.id, got.Decision)
				}
				w.answer <- time.Now()
				return
			}
		}()
		return w
	}
	queue := make([]*waiter, 0, pending)
	for range pending {
		queue = append(queue, start())
	}
	time.Sleep(2 * time.Second) // every waiter is parked in its long-poll
	lat := make([]time.Duration, 0, b.N)
	voteRTT := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := queue[0]
		queue = queue[1:]
		// quorum 2 of group:oncall: the first vote does not decide.
		b.StopTimer()
		if r := e.do("POST", "/v1/approvals/"+w.id+"/votes", "acme-approver", map[string]any{"vote": "approve"}); r.Status != http.StatusOK {
			b.Fatalf("first vote: %d %s", r.Status, r.Body)
		}
		b.StartTimer()
		sent := time.Now()
		r := e.do("POST", "/v1/approvals/"+w.id+"/votes", "acme-approver2", map[string]any{"vote": "approve"})
		acked := time.Now()
		if r.Status != http.StatusOK {
			b.Fatalf("deciding vote: %d %s", r.Status, r.Body)
		}
		answered := <-w.answer
		lat = append(lat, answered.Sub(sent))
		voteRTT = append(voteRTT, acked.Sub(sent))
		b.StopTimer()
		queue = append(queue, start())
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(voteRTT)
	pct := func(d []time.Duration, p float64) float64 {
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(pct(voteRTT, 0.50), "vote-p50-ms")
	b.ReportMetric(pct(voteRTT, 0.99), "vote-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkInclusionProof: GET /v1/audit/proof/inclusion for random entries
// of a 100,000-entry log, over HTTP against SQLite.
func BenchmarkInclusionProof(b *testing.B) {
	e := newEnv(b, globalPolicy)
	const n = 100_000
	for i := 0; i < n; i += 1000 {
		batch := make([]*rein.Entry, 1000)
		for j := range batch {
			batch[j] = &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindCheck, Actor: "builder", Subject: fmt.Sprint(i + j),
				Data: map[string]any{"tool": "fs.read", "args": map[string]any{"path": fmt.Sprintf("f%d", i+j)}}}
		}
		if err := e.store.Append(e.ctx, batch...); err != nil {
			b.Fatal(err)
		}
	}
	skey, vkey, _ := note.GenerateKey(rand.Reader, "rein/bench")
	signer, _ := note.NewSigner(skey)
	known, _ := audit.Verifiers(vkey)
	s := &audit.Sealer{Store: e.store, Origin: "rein/bench", Signer: signer, Known: known, Now: time.Now}
	cp, err := s.Seal(e.ctx)
	if err != nil {
		b.Fatal(err)
	}
	r := mrand.New(mrand.NewPCG(1, 1))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := e.do("GET", fmt.Sprintf("/v1/audit/proof/inclusion?index=%d", r.Int64N(cp.Size)), "acme-auditor", nil)
		lat = append(lat, time.Since(start))
		if res.Status != http.StatusOK {
			b.Fatalf("%d %s", res.Status, res.Body)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}

// BenchmarkAuthZENEvaluation measures one AuthZEN evaluation
// (POST /access/v1/evaluation) against one POST /v1/check of the same
// action, over HTTP against a SQLite-backed server: both are decided by the
// same pipeline and recorded with an audit entry; the difference is what the
// AuthZEN mapping costs. Reported: p50 and p99 of each, sequentially.
func BenchmarkAuthZENEvaluation(b *testing.B) {
	e := newEnv(b, globalPolicy)
	eval := map[string]any{"subject": map[string]any{"type": "user", "id": "morty"}, "action": map[string]any{"name": "fs.read"},
		"resource": map[string]any{"type": "file", "id": "README.md"}, "context": map[string]any{"path": "README.md"}}
	check := map[string]any{"tool": "fs.read", "args": map[string]any{"path": "README.md"}}
	for _, c := range []struct {
		name, path string
		body       any
	}{{"check", "/v1/check", check}, {"authzen", "/access/v1/evaluation", eval}} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				r := e.do("POST", c.path, "acme-agent", c.body)
				took = append(took, time.Since(start))
				if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"decision":"allow"`) && !strings.Contains(string(r.Body), `"decision":true`) {
					b.Fatalf("%s: %d %s; both must allow", c.path, r.Status, r.Body)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}
