package e2e

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

const reviewsPolicy = `version: 1
default: deny
reviews: {tainted_sessions: true, reviewers: ["group:oncall"]}
tools:
  "web.fetch": {url: [url], taints_session: true}
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow, review: {sample: 0.1, reviewers: ["group:oncall"]}}
  - {id: web, when: 'tool == "web.fetch"', decision: allow}
  - {id: deploy, when: 'tool == "deploy"', decision: allow, review: {reviewers: ["group:oncall"]}}
`

// TestReviewsAfterTheFactE2E: a sampled allow rule queues about its share of
// 1,000 checks; a tainted session queues one review when it ends; a concern
// that locks the agent denies its next check; another tenant's reviewer sees
// nothing; per-rule counts tell which rules draw concerns.
func TestReviewsAfterTheFactE2E(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, reviewsPolicy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	agent := e.Keys["builder"]
	post := func(body string) {
		code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", agent, []byte(body), "application/json")
		if code != 200 {
			t.Fatalf("check: %d %s", code, out)
		}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 1000; i += 8 {
				post(fmt.Sprintf(`{"tool":"fs.read","args":{"path":"f%d"}}`, i))
			}
		}()
	}
	wg.Wait()
	list := func(key, query string) []map[string]any {
		var out []map[string]any
		harness.GetJSON(t, e.S.URL+"/v1/reviews?limit=500"+query, key, &out)
		return out
	}
	sampled := len(list(e.Keys["alice"], "&status=open"))
	if sampled < 60 || sampled > 140 {
		t.Fatalf("a 10%% sample of 1,000 allowed checks queued %d reviews", sampled)
	}
	if n := len(list(e.Keys["eve"], "")); n != 0 {
		t.Fatalf("another tenant's reviewer sees %d reviews", n)
	}
	// A tainted session ends: one session review.
	post(`{"tool":"web.fetch","args":{"url":"https://example.com"},"session":"run-9"}`)
	if code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/sessions/run-9/end", agent, nil, ""); code != 200 {
		t.Fatalf("end: %d %s", code, out)
	}
	var session []map[string]any
	for _, r := range list(e.Keys["alice"], "") {
		if r["kind"] == "session" && r["session"] == "run-9" {
			session = append(session, r)
		}
	}
	if len(session) != 1 {
		t.Fatalf("session reviews: %v", session)
	}
	// An identity never reviews its own actions: selfish (agent and
	// approver of group oncall) deploys, and may not judge it.
	code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["selfish"], []byte(`{"tool":"deploy","args":{"by":"selfish"}}`), "application/json")
	if code != 200 {
		t.Fatalf("selfish's check: %d %s", code, out)
	}
	for _, r := range list(e.Keys["alice"], "") {
		if r["rule"] == "deploy" && r["agent"] == "selfish" {
			if code, out := harness.HTTPDo(t, "POST", e.S.URL+"/v1/reviews/"+r["id"].(string)+"/verdict", e.Keys["selfish"], []byte(`{"verdict":"ok"}`), "application/json"); code != 403 {
				t.Fatalf("a reviewer judging their own action: %d %s", code, out)
			}
			if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/reviews/"+r["id"].(string)+"/verdict", e.Keys["eve"], []byte(`{"verdict":"ok"}`), "application/json"); code != 404 {
				t.Fatalf("another tenant's reviewer: %d", code)
			}
		}
	}
	// Every deploy is reviewed; a concern by an admin locks the agent.
	post(`{"tool":"deploy","args":{"v":1}}`)
	var deployReview string
	for _, r := range list(e.Keys["alice"], "") {
		if r["rule"] == "deploy" && r["agent"] == "builder" {
			deployReview = r["id"].(string)
		}
	}
	code, out = harness.HTTPDo(t, "POST", e.S.URL+"/v1/reviews/"+deployReview+"/verdict", e.S.AdminKey(),
		[]byte(`{"verdict":"concern","message":"unplanned deploy","lock":"agent"}`), "application/json")
	if code != 200 || !strings.Contains(string(out), `"lock_id":"lck_`) {
		t.Fatalf("concern with a lock: %d %s", code, out)
	}
	code, out = harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", agent, []byte(`{"tool":"deploy","args":{"v":2}}`), "application/json")
	var a struct{ Decision, Reason string }
	json.Unmarshal(out, &a)
	if a.Decision != "deny" || !strings.Contains(a.Reason, "locked") {
		t.Fatalf("the next check after the concern's lock: %d %s", code, out)
	}
	var stats []struct {
		Rule              string
		Reviews, Concerns int
	}
	harness.GetJSON(t, e.S.URL+"/v1/reviews/stats", e.Keys["alice"], &stats)
	if len(stats) == 0 || stats[0].Rule != "deploy" || stats[0].Concerns != 1 || stats[0].Reviews != 2 {
		t.Fatalf("per-rule stats: %+v", stats)
	}
}

// TestReviewsAcrossReplicas: two replicas on one PostgreSQL queue exactly
// the sampled checks (the documented hash of the check id), each once,
// whichever replica decided it, and both list the same reviews.
func TestReviewsAcrossReplicas(t *testing.T) {
	c := harness.NewPGCluster(t, reviewsPolicy)
	a, b := c.Start(), c.Start()
	agent := c.Key(a, "builder", "acme", `"agent"`, "")
	alice := c.Key(a, "alice", "acme", `"approver"`, `"oncall"`)
	replicas := []*harness.Server{a, b}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 1000; i += 8 {
				code, out := harness.HTTPDo(t, "POST", replicas[i%2].URL+"/v1/check", agent,
					[]byte(fmt.Sprintf(`{"tool":"fs.read","args":{"path":"f%d"}}`, i)), "application/json")
				if code != 200 {
					t.Errorf("check on replica %d: %d %s", i%2, code, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Every allowed check's id, through either replica.
	want := map[string]bool{}
	cursor := ""
	for {
		var page []struct{ ID string }
		harness.GetJSON(t, a.URL+"/v1/checks?limit=500&cursor="+cursor, alice, &page)
		for _, rec := range page {
			if sampledID(rec.ID, 0.1) {
				want[rec.ID] = true
			}
		}
		if len(page) < 500 {
			break
		}
		cursor = page[len(page)-1].ID
	}
	if len(want) < 60 || len(want) > 140 {
		t.Fatalf("a 10%% sample of 1,000 checks drew %d", len(want))
	}
	for _, s := range replicas {
		var reviews []struct {
			CheckID string `json:"check_id"`
		}
		harness.GetJSON(t, s.URL+"/v1/reviews?limit=500", alice, &reviews)
		got := map[string]bool{}
		for _, r := range reviews {
			if got[r.CheckID] {
				t.Fatalf("check %s was queued for review twice", r.CheckID)
			}
			got[r.CheckID] = true
		}
		if len(got) != len(want) {
			t.Fatalf("replica %s lists %d reviews; the sample drew %d", s.URL, len(got), len(want))
		}
		for id := range want {
			if !got[id] {
				t.Fatalf("replica %s: sampled check %s has no review", s.URL, id)
			}
		}
	}
}

// sampledID is docs/reviews.md's sample: the first 8 bytes of SHA-256 of
// the check id, big-endian, over 2^64-1, below the share.
func sampledID(id string, share float64) bool {
	sum := sha256.Sum256([]byte(id))
	return float64(binary.BigEndian.Uint64(sum[:8]))/float64(^uint64(0)) < share
}
