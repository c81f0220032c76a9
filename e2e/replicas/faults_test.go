package replicas

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/internal/testenv"
)

// The fault tests: replicas on one PostgreSQL under load while replicas
// are killed, or while PostgreSQL itself restarts.

const faultPolicy = `version: 1
default: deny
approval: {approvers: ["group:oncall"], quorum: 1, ttl: 15m, grant_ttl: 10m}
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: deploy, when: 'tool == "deploy"', decision: ask, reason: "deploys need on-call"}
`

// fleet is a cluster whose replicas come and go.
type fleet struct {
	*harness.PGCluster
	mu       sync.Mutex
	replicas []*harness.Server
}

func (f *fleet) pick() *harness.Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.replicas[rand.IntN(len(f.replicas))]
}

// loadClient has a longer timeout than httpClient: a write may wait for
// the integrator to be elected again.
var loadClient = &http.Client{Timeout: 45 * time.Second}

// try sends one request to s; code 0 means no answer (the replica died).
func try(s *harness.Server, method, path, key, body string) (int, []byte) {
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := loadClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// ackd is an acknowledged check: rein answered 200.
type ackd struct {
	ID         string `json:"id"`
	Decision   string `json:"decision"`
	AuditIndex int64  `json:"audit_index"`
	Approval   *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"approval"`
}

// checkUntilAnswered posts a check (with a request_id, so that retries are
// the same check) to random replicas until one answers 200, for up to 30 s.
func (f *fleet) checkUntilAnswered(key, body string) (*ackd, bool) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		code, b := try(f.pick(), "POST", "/v1/check", key, body)
		if code == 200 {
			var a ackd
			if json.Unmarshal(b, &a) == nil {
				return &a, true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, false
}

// logEntry is what the fault tests read of an audit entry.
type logEntry struct {
	Index   int64          `json:"index"`
	Kind    string         `json:"kind"`
	Subject string         `json:"subject"`
	Data    map[string]any `json:"data"`
}

func readLog(t *testing.T, s *harness.Server, key string) []logEntry {
	t.Helper()
	var out []logEntry
	for i, line := range harness.AllEntries(t, s, key) {
		var e logEntry
		if err := json.Unmarshal(line, &e); err != nil || e.Index != int64(i) {
			t.Fatalf("entry %d: %v %s", i, err, line)
		}
		out = append(out, e)
	}
	return out
}

// checkLog asserts that every acknowledged check is in the log exactly
// once, at the index it was answered with.
func checkLog(t *testing.T, log []logEntry, acks []*ackd) {
	t.Helper()
	checks := map[string]int{}
	for _, e := range log {
		if e.Kind == "check" {
			checks[e.Subject]++
		}
	}
	seen := map[string]bool{}
	for _, a := range acks {
		if seen[a.ID] {
			continue // a retried request_id answered twice: one check
		}
		seen[a.ID] = true
		if a.AuditIndex < 0 || a.AuditIndex >= int64(len(log)) || log[a.AuditIndex].Subject != a.ID || log[a.AuditIndex].Kind != "check" {
			t.Errorf("acknowledged check %s (%s) is not at its audit index %d", a.ID, a.Decision, a.AuditIndex)
		}
		if checks[a.ID] != 1 {
			t.Errorf("acknowledged check %s is in the log %d times", a.ID, checks[a.ID])
		}
	}
}

// TestFaultReplicaKills: three replicas under load; one at random is
// killed (SIGKILL) and replaced, several times. No acknowledged decision is
// missing from the audit log, the log verifies, no grant is consumed twice
// and no approval is lost.
func TestFaultReplicaKills(t *testing.T) {
	f := &fleet{PGCluster: harness.NewPGCluster(t, faultPolicy)}
	for range 3 {
		f.replicas = append(f.replicas, f.Start())
	}
	builder := f.Key(f.replicas[0], "builder", "acme", `"agent"`, ``)
	alice := f.Key(f.replicas[0], "alice", "acme", `"approver"`, `"oncall"`)

	var (
		mu        sync.Mutex
		acks      []*ackd
		approved  = map[string]bool{} // approvals whose approve vote was acknowledged
		grantUses = map[string]int{}  // approval -> checks allowed by its grant
		stop      atomic.Bool
		wg        sync.WaitGroup
		seq       atomic.Int64
	)
	record := func(a *ackd) {
		mu.Lock()
		defer mu.Unlock()
		acks = append(acks, a)
		if a.Decision == "allow" && a.Approval != nil {
			grantUses[a.Approval.ID]++
		}
	}
	// Readers: allowed checks.
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := seq.Add(1)
				if a, ok := f.checkUntilAnswered(builder, fmt.Sprintf(`{"tool":"fs.read","args":{"path":"f%d"},"request_id":"r%d"}`, n, n)); ok {
					record(a)
				}
			}
		}()
	}
	// Batched: checks without a request_id in four shared sessions, which
	// each replica records in shared transactions (group commit).
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				body := fmt.Sprintf(`{"tool":"fs.read","args":{"path":"b%d-%d"},"session":"batch-%d"}`, w, i, (w+i)%4)
				if a, ok := f.checkUntilAnswered(builder, body); ok {
					record(a)
				}
			}
		}()
	}
	// Deployers: ask, approve on some replica, then two replicas race to
	// use the grant.
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := seq.Add(1)
				action := fmt.Sprintf(`"tool":"deploy","session":"d%d","args":{"n":%d}`, n, n)
				a, ok := f.checkUntilAnswered(builder, fmt.Sprintf(`{%s,"request_id":"r%d"}`, action, n))
				if !ok {
					continue
				}
				record(a)
				if a.Decision != "ask" || a.Approval == nil {
					t.Errorf("deploy: %+v", a)
					continue
				}
				voted := false
				for try0 := 0; try0 < 40 && !voted; try0++ {
					switch code, _ := try(f.pick(), "POST", "/v1/approvals/"+a.Approval.ID+"/votes", alice, `{"vote":"approve"}`); code {
					case 200:
						voted = true
						mu.Lock()
						approved[a.Approval.ID] = true
						mu.Unlock()
					case 409: // an earlier try was stored, its answer lost with the replica
						voted = true
					default:
						time.Sleep(50 * time.Millisecond)
					}
				}
				var race sync.WaitGroup
				for k := range 2 {
					race.Add(1)
					go func() {
						defer race.Done()
						if u, ok := f.checkUntilAnswered(builder, fmt.Sprintf(`{%s,"request_id":"r%d-use%d"}`, action, n, k)); ok {
							record(u)
						}
					}()
				}
				race.Wait()
			}
		}()
	}
	// The killer.
	kills, integrators := 0, 0
	for k := range 3 {
		time.Sleep(2500 * time.Millisecond)
		f.mu.Lock()
		i := rand.IntN(len(f.replicas))
		if k == 0 { // the first time, the integrator
			for j, r := range f.replicas {
				if _, body := harness.HTTPDo(t, "GET", r.URL+"/metrics", "", nil, ""); strings.Contains(string(body), "\nrein_audit_integrator 1") {
					i = j
				}
			}
		}
		if _, body := harness.HTTPDo(t, "GET", f.replicas[i].URL+"/metrics", "", nil, ""); strings.Contains(string(body), "\nrein_audit_integrator 1") {
			integrators++
		}
		victim := f.replicas[i]
		f.replicas = append(f.replicas[:i:i], f.replicas[i+1:]...)
		f.mu.Unlock()
		victim.Cmd.Process.Kill() // SIGKILL
		<-victim.Exited
		kills++
		time.Sleep(500 * time.Millisecond)
		fresh := f.Start()
		f.mu.Lock()
		f.replicas = append(f.replicas, fresh)
		f.mu.Unlock()
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	s := f.pick()
	log := readLog(t, s, f.Admin)
	if len(acks) < 50 {
		t.Fatalf("only %d checks were acknowledged under load", len(acks))
	}
	checkLog(t, log, acks)
	// Every check recorded in a shared session (acknowledged or not: a
	// replica may die between its commit and its answer) is counted once
	// in its session, and nothing else is.
	inSession := map[string]int64{}
	for _, e := range log {
		if sess, _ := e.Data["session"].(string); e.Kind == "check" && strings.HasPrefix(sess, "batch-") {
			inSession[sess]++
		}
	}
	for i := range 4 {
		var sess struct{ Checks int64 }
		harness.GetJSON(t, s.URL+fmt.Sprintf("/v1/sessions/batch-%d", i), alice, &sess)
		if sess.Checks != inSession[fmt.Sprint("batch-", i)] || sess.Checks == 0 {
			t.Errorf("session batch-%d counts %d checks; the log holds %d", i, sess.Checks, inSession[fmt.Sprint("batch-", i)])
		}
	}
	consumed := map[string]int{}
	for _, e := range log {
		if e.Kind == "approval.consumed" {
			consumed[e.Subject]++
		}
	}
	for id, n := range consumed {
		if n > 1 {
			t.Errorf("approval %s consumed %d times", id, n)
		}
	}
	for id, n := range grantUses {
		if n > 1 {
			t.Errorf("the grant of approval %s allowed %d checks", id, n)
		}
	}
	for id := range approved {
		var a struct{ Status string }
		harness.GetJSON(t, s.URL+"/v1/approvals/"+id, f.Admin, &a)
		if a.Status != "approved" && a.Status != "consumed" {
			t.Errorf("approval %s was approved (acknowledged) but is %q", id, a.Status)
		}
	}
	if len(approved) == 0 || len(grantUses) == 0 {
		t.Errorf("%d approvals approved, %d grants used: the test did not exercise approvals", len(approved), len(grantUses))
	}
	out := f.Verify(s)
	if integrators == 0 {
		t.Error("the integrator was never killed")
	}
	t.Logf("%d kills (%d of the integrator), %d acknowledged checks, %d approvals approved, %d grants used, %d log entries; %s",
		kills, integrators, len(acks), len(approved), len(grantUses), len(log), strings.TrimSpace(out))
}

// pgctl runs pg_ctlcluster on the local cluster.
func pgctl(t *testing.T, action string) {
	t.Helper()
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) == 0 {
		t.Fatalf("no PostgreSQL cluster in /etc/postgresql: %v", err)
	}
	out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main", action).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_ctlcluster %s: %v\n%s", action, err, out)
	}
}

func postgresUp() bool {
	return exec.Command("pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q").Run() == nil
}

// TestFaultPostgresRestart: PostgreSQL stops under load and starts again.
// While it is down every check fails closed (deny or 503); afterwards
// checks are allowed again, and no acknowledged decision is lost.
func TestFaultPostgresRestart(t *testing.T) {
	f := &fleet{PGCluster: harness.NewPGClusterAt(t, testenv.PostgresExclusive(t), faultPolicy)}
	t.Cleanup(func() { // never leave PostgreSQL down
		if !postgresUp() {
			pgctl(t, "start")
		}
	})
	for range 2 {
		f.replicas = append(f.replicas, f.Start())
	}
	builder := f.Key(f.replicas[0], "builder", "acme", `"agent"`, ``)

	type answerAt struct {
		start, end time.Time
		code       int
		decision   string
	}
	var (
		mu      sync.Mutex
		answers []answerAt
		acks    []*ackd
		stop    atomic.Bool
		wg      sync.WaitGroup
		seq     atomic.Int64
	)
	send := func() {
		n := seq.Add(1)
		start := time.Now()
		code, b := try(f.pick(), "POST", "/v1/check", builder, fmt.Sprintf(`{"tool":"fs.read","args":{"path":"f%d"},"request_id":"r%d"}`, n, n))
		a := &ackd{}
		json.Unmarshal(b, a)
		mu.Lock()
		answers = append(answers, answerAt{start, time.Now(), code, a.Decision})
		if code == 200 {
			acks = append(acks, a)
		}
		mu.Unlock()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				send()
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	pgctl(t, "stop")
	stopped := time.Now()
	// Probes: fresh checks while it is down (the load's own requests may
	// be waiting on writes made just before the stop).
	var probes sync.WaitGroup
	var probing atomic.Bool
	probing.Store(true)
	for range 2 {
		probes.Add(1)
		go func() {
			defer probes.Done()
			for probing.Load() {
				send()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(3 * time.Second)
	probing.Store(false)
	restarting := time.Now()
	pgctl(t, "start")
	started := time.Now()
	recovered := time.Time{}
	harness.Eventually(t, 30*time.Second, "checks are allowed again after PostgreSQL restarted", func() string {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range answers {
			if a.start.After(started) && a.code == 200 && a.decision == "allow" {
				recovered = a.end
				return ""
			}
		}
		return "no allow yet"
	})
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	probes.Wait()

	down := 0
	for _, a := range answers {
		if a.start.After(stopped) && a.end.Before(restarting) {
			down++
			if a.code == 200 && a.decision != "deny" || a.code != 200 && a.code != 503 {
				t.Errorf("while PostgreSQL was down a check was answered %d %q; want deny or 503", a.code, a.decision)
			}
		}
	}
	if down == 0 {
		t.Fatal("no check was answered while PostgreSQL was down")
	}
	s := f.pick()
	checkLog(t, readLog(t, s, f.Admin), acks)
	f.Verify(s)
	t.Logf("%d answers while down (all deny or 503), allowed again %v after PostgreSQL started, %d acknowledged checks all in the log",
		down, recovered.Sub(started).Round(time.Millisecond), len(acks))
}
