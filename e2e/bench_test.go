package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/bench"
	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestBench runs `rein bench` against a real server deciding with the
// benchmark policy: --verify finds every kind of check decided as expected,
// a short run answers checks of all four decisions in the shares asked for,
// with no error, and the audit log holds an entry for each of them.
func TestBench(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", "bench/policy.yaml")
	admin := s.AdminKey()
	key := harness.AgentKey(t, s, admin, "bench", "bench")
	env := s.ClientEnv(key)

	v := harness.Rein(t, env, "bench", "--verify")
	if want := fmt.Sprintf("rein decides all %d checks of the mix as expected", len(bench.Items)); v.Code != 0 || !strings.Contains(v.Stdout, want) {
		t.Fatalf("rein bench --verify: %s", v)
	}

	r := harness.Rein(t, env, "bench", "--duration", "2s", "--warmup", "300ms", "--concurrency", "8", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("rein bench: %s", r)
	}
	var res struct {
		Target      string            `json:"target"`
		Concurrency int               `json:"concurrency"`
		Duration    float64           `json:"duration_s"`
		Checks      uint64            `json:"checks"`
		Errors      uint64            `json:"errors"`
		Throughput  float64           `json:"throughput"`
		Decisions   map[string]uint64 `json:"decisions"`
		Unexpected  map[string]uint64 `json:"unexpected"`
		Latency     map[string]float64
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("rein bench --output json: not JSON: %v\n%s", err, r)
	}
	if res.Target != "rein" || res.Concurrency != 8 || res.Duration != 2 || res.Errors != 0 || len(res.Unexpected) != 0 {
		t.Fatalf("rein bench: %+v", res)
	}
	if res.Checks < 50 || res.Throughput != float64(res.Checks)/2 {
		t.Fatalf("rein bench: %d checks, %.1f/s; want a sane count and checks/duration", res.Checks, res.Throughput)
	}
	var sum uint64
	for _, d := range []string{"allow", "deny", "ask", "throttle"} {
		sum += res.Decisions[d]
		share := float64(res.Decisions[d]) / float64(res.Checks)
		want := map[string]float64{"allow": 0.7, "deny": 0.1, "ask": 0.1, "throttle": 0.1}[d]
		if share < want-0.06 || share > want+0.06 {
			t.Errorf("%s: %.1f%% of the checks, want about %.0f%%", d, share*100, want*100)
		}
	}
	if sum != res.Checks {
		t.Errorf("decisions add up to %d of %d checks", sum, res.Checks)
	}
	p50, p99, mx := res.Latency["p50_ms"], res.Latency["p99_ms"], res.Latency["max_ms"]
	if !(p50 > 0 && p50 <= p99 && p99 <= mx) {
		t.Errorf("latency p50 %.3f p99 %.3f max %.3f ms: not ordered", p50, p99, mx)
	}

	// Every answered check has its audit entry: the log grew by at least
	// the checks counted (warm-up and priming add more).
	auditor := createKeyWithRole(t, s, admin, "auditor1", "bench", "auditor")
	harness.Eventually(t, harness.ReloadTimeout, "the audit log is sealed", func() string {
		code, body := harness.HTTPDo(t, "GET", s.URL+"/v1/audit/checkpoint", auditor, nil, "")
		lines := strings.Split(string(body), "\n")
		if code != http.StatusOK || len(lines) < 2 {
			return fmt.Sprintf("%d %s", code, body)
		}
		if size, _ := strconv.ParseUint(lines[1], 10, 64); size < res.Checks {
			return fmt.Sprintf("checkpoint size %d below the %d checks counted", size, res.Checks)
		}
		return ""
	})

	// Ctrl-C in the middle of a run prints what was measured until then.
	cmd := exec.Command(harness.Bin, "bench", "--duration", "60s", "--warmup", "200ms", "--concurrency", "4", "--output", "json")
	cmd.Dir, cmd.Env = harness.ModuleRoot, harness.CleanEnv(env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(harness.CommandTimeout):
		cmd.Process.Kill()
		t.Fatal("rein bench did not stop on SIGINT")
	}
	var part struct {
		Interrupted bool    `json:"interrupted"`
		Duration    float64 `json:"duration_s"`
		Checks      uint64  `json:"checks"`
	}
	if err := json.Unmarshal(out.Bytes(), &part); err != nil || cmd.ProcessState.ExitCode() != 1 || !part.Interrupted ||
		part.Duration <= 0 || part.Duration > 5 || part.Checks == 0 || !strings.Contains(errs.String(), "interrupted") {
		t.Errorf("rein bench stopped by SIGINT: exit %d %+v %v\nstdout:\n%s\nstderr:\n%s", cmd.ProcessState.ExitCode(), part, err, &out, &errs)
	}

	// Text output, as a person reads it.
	txt := harness.Rein(t, env, "bench", "--duration", "500ms", "--warmup", "0s", "--concurrency", "2", "--mix", "allow=1")
	if txt.Code != 0 || !strings.Contains(txt.Stdout, "/s)") ||
		!strings.Contains(txt.Stdout, "p99") || strings.Contains(txt.Stdout, "deny") {
		t.Errorf("rein bench text output:\n%s", txt)
	}
}

// TestBenchWrongPolicy: a server that does not decide like the benchmark
// policy is refused before any load, saying why.
func TestBenchWrongPolicy(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	key := harness.AgentKey(t, s, s.AdminKey(), "bench", "bench")
	r := harness.Rein(t, s.ClientEnv(key), "bench", "--duration", "1s")
	if r.Code != 2 || !strings.Contains(r.Stderr, "bench/policy.yaml") {
		t.Fatalf("rein bench against the sample policy: %s", r)
	}
	r = harness.Rein(t, s.ClientEnv(key), "bench", "--verify", "--mix", "allow=1")
	if r.Code != 1 || !strings.Contains(r.Stdout, "differs") {
		t.Fatalf("rein bench --verify against the sample policy: %s", r)
	}
	if code, _ := harness.HTTPDo(t, "GET", s.URL+"/readyz", "", nil, ""); code != http.StatusOK {
		t.Fatalf("server not ready after the refused runs")
	}
}

// createKeyWithRole creates a key with one role and returns its secret.
func createKeyWithRole(t *testing.T, s *harness.Server, admin, name, tenant, role string) string {
	t.Helper()
	r := harness.Rein(t, s.ClientEnv(admin), "keys", "create", name, "--role", role, "--tenant", tenant, "--output", "json")
	if r.Code != 0 {
		t.Fatalf("rein keys create %s: %s", name, r)
	}
	var k struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil {
		t.Fatal(err)
	}
	return k.Key
}
