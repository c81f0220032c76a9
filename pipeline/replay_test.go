package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

const replayPolicy = `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: deploys, when: 'tool == "deploy"', decision: ask}
`

// TestReplay: a candidate that denies reads of .env files and allows
// deploys to staging changes exactly those recorded checks, counted per
// transition and rule; nothing is recorded by the replay.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	f := setup(t, replayPolicy)
	for i := range 5 {
		f.check(t, "fs.read", fmt.Sprintf(`{"path":"notes-%d.txt"}`, i))
	}
	f.check(t, "fs.read", `{"path":".env"}`)
	f.check(t, "deploy", `{"env":"staging"}`)
	f.check(t, "deploy", `{"env":"prod"}`)
	before, _, _ := f.store.AuditSize(ctx)
	candidate := mustCompile(t, `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: no-env, when: 'tool == "fs.read" && args.path.endsWith(".env")', decision: deny}
  - {id: deploys, when: 'tool == "deploy"', decision: ask}
  - {id: staging, when: 'tool == "deploy" && args.env == "staging"', decision: allow}
`)
	// "staging" alone cannot beat the ask (deny > ask > allow): only .env changes.
	out, err := f.p.Replay(ctx, "acme", "", candidate, time.Now().Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Checks != 8 || out.Changed != 1 || out.NewlyBlocked != 1 || out.NewlyDenied != 1 || out.Transitions["allow->deny"] != 1 || out.ByRule["no-env"] != 1 {
		t.Fatalf("replay: %+v", out)
	}
	if len(out.Examples) != 1 || out.Examples[0].Tool != "fs.read" || out.Examples[0].AfterRule != "no-env" {
		t.Fatalf("examples: %+v", out.Examples)
	}
	after, _, _ := f.store.AuditSize(ctx)
	if after != before {
		t.Fatalf("a replay recorded %d audit entries", after-before)
	}
	// Since: nothing recorded after now.
	if out, _ := f.p.Replay(ctx, "acme", "", candidate, time.Now().Add(time.Minute), nil); out.Checks != 0 {
		t.Fatalf("since the future: %d checks", out.Checks)
	}
}

// BenchmarkReplay100k replays 100,000 recorded checks (shell commands, file
// reads and URLs under the sample-like policy) against a candidate.
func BenchmarkReplay100k(b *testing.B) {
	ctx := context.Background()
	f := setup(b, `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read" && !("path.sensitive" in risk)', decision: allow}
  - {id: shell, when: 'tool == "shell.exec" && risk.all(t, t == "shell")', decision: allow}
  - {id: shell-ask, when: 'tool == "shell.exec" && "shell.destructive" in risk', decision: ask}
  - {id: web, when: 'tool == "http.get" && !("url.private" in risk)', decision: allow}
`)
	const n = 100_000
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				var tool, args string
				switch i % 3 {
				case 0:
					tool, args = "shell.exec", fmt.Sprintf(`{"command":"ls -la dir%d && grep -r x src | head"}`, i)
				case 1:
					tool, args = "fs.read", fmt.Sprintf(`{"path":"src/file%d.go"}`, i)
				default:
					tool, args = "http.get", fmt.Sprintf(`{"url":"https://example.com/page/%d"}`, i)
				}
				if _, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: tool, Args: json.RawMessage(args)}); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	candidate := mustCompile(b, `version: 1
rules:
  - {id: reads, when: 'tool == "fs.read" && !("path.sensitive" in risk) && !args.path.endsWith(".go")', decision: allow}
  - {id: shell, when: 'tool == "shell.exec" && risk.all(t, t == "shell")', decision: allow}
  - {id: web, when: 'tool == "http.get" && !("url.private" in risk)', decision: allow}
`)
	b.ResetTimer()
	for range b.N {
		out, err := f.p.Replay(ctx, "acme", "", candidate, time.Now().Add(-24*time.Hour), nil)
		if err != nil || out.Checks != n {
			b.Fatalf("%v: %d checks", err, out.Checks)
		}
		b.ReportMetric(float64(out.TookMS), "ms/replay")
	}
}

// TestReplayConcerns: only the checks reviewers marked a concern (and every
// check of a session marked one) are decided again; ok verdicts, open
// reviews and other tenants' concerns are left out.
func TestReplayConcerns(t *testing.T) {
	ctx := context.Background()
	f := setup(t, `version: 1
rules:
  - {id: deploys, when: 'tool == "deploy"', decision: allow, review: {reviewers: ["group:security"]}}
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
`)
	stored(t, f, f.key)
	admin := &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	for _, env := range []string{"prod", "staging", "dev"} {
		f.check(t, "deploy", `{"env":"`+env+`"}`)
	}
	list, err := f.p.Reviews(ctx, admin, "acme", rein.ReviewFilter{Status: rein.ReviewOpen})
	if err != nil || len(list) != 3 {
		t.Fatalf("reviews: %v %d", err, len(list))
	}
	for _, r := range list {
		switch string(r.Args) {
		case `{"env":"prod"}`:
			_, err = f.p.DecideReview(ctx, admin, r.ID, ReviewVerdict{Verdict: "concern", Message: "prod deploy without a ticket"})
		case `{"env":"staging"}`:
			_, err = f.p.DecideReview(ctx, admin, r.ID, ReviewVerdict{Verdict: "ok"})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	candidate := mustCompile(t, `version: 1
rules:
  - {id: deploys, when: 'tool == "deploy"', decision: allow}
  - {id: prod, when: 'tool == "deploy" && args.env == "prod"', decision: ask}
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
`)
	out, err := f.p.ReplayConcerns(ctx, "acme", "", candidate, time.Now().Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Input != rein.ReplayConcerns || out.Checks != 1 || out.Changed != 1 || out.Transitions["allow->ask"] != 1 || out.ByRule["prod"] != 1 {
		t.Fatalf("replay of the concerns: %+v", out)
	}
	// The same candidate over everything: three checks, still one change.
	if all, _ := f.p.Replay(ctx, "acme", "", candidate, time.Now().Add(-time.Hour), nil); all.Input != rein.ReplayAll || all.Checks != 3 || all.Changed != 1 {
		t.Fatalf("replay of everything: %+v", all)
	}
	// Another tenant's concerns are not this tenant's input.
	if other, _ := f.p.ReplayConcerns(ctx, "other", "", candidate, time.Now().Add(-time.Hour), nil); other.Checks != 0 {
		t.Fatalf("another tenant's replay of concerns: %+v", other)
	}
}

// TestSimulateLimitsAndLocks: the simulator names the limit rules a check
// would spend a token of, and an active lock that would stop it first.
func TestSimulateLimitsAndLocks(t *testing.T) {
	ctx := context.Background()
	f := setup(t, `version: 1
rules:
  - {id: mail, when: 'tool == "email.send"', decision: allow}
  - {id: mail-rate, when: 'tool == "email.send"', limit: {rate: 5, per: 1h, by: [agent]}}
`)
	req := &rein.CheckRequest{Tool: "email.send", Agent: "builder", Args: json.RawMessage(`{}`)}
	sim, err := Simulate(f.p.Policies.For("acme"), "acme", req, nil, time.Now())
	if err != nil || sim.Decision != rein.Allow || len(sim.Limits) != 1 || sim.Limits[0].Rule != "mail-rate" || sim.Limits[0].Rate != 5 || sim.Limits[0].PerSeconds != 3600 {
		t.Fatalf("limits: %v %+v", err, sim)
	}
	if err := f.p.SimulateLocks(ctx, sim, "acme", req); err != nil || sim.Lock != nil {
		t.Fatalf("no lock: %v %+v", err, sim.Lock)
	}
	admin := &rein.Key{ID: "key_admin", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	if _, err := f.p.CreateLock(ctx, admin, &LockRequest{Target: rein.LockTarget{Tool: "email.*"}, Reason: "spam"}); err != nil {
		t.Fatal(err)
	}
	if err := f.p.SimulateLocks(ctx, sim, "acme", req); err != nil || sim.Lock == nil || sim.Decision != rein.Deny || sim.PolicyDecision != rein.Allow {
		t.Fatalf("under a lock: %v %+v", err, sim)
	}
}
