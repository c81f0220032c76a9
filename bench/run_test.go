package bench_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/bench"
)

// TestRunCounts drives a stand-in server that answers like rein (the
// expected decision, except that every 50th check is a 503 and read-file
// checks of session 0 come back deny): the run counts checks, decisions,
// errors and unexpected decisions (each an error, never a check), over
// keep-alive connections only.
func TestRunCounts(t *testing.T) {
	var n, conns atomic.Int64
	// Each item's arguments with its number left open.
	patterns := make([]*regexp.Regexp, len(bench.Items))
	for i, it := range bench.Items {
		patterns[i] = regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(it.Args), regexp.QuoteMeta("{n}"), "[0-9]+") + "$")
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			Tool    string          `json:"tool"`
			Args    json.RawMessage `json:"args"`
			Session string          `json:"session"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &c); err != nil || r.Header.Get("Authorization") != "Bearer k" || r.URL.Path != "/v1/check" {
			http.Error(w, "bad request", 400)
			return
		}
		if n.Add(1)%50 == 0 {
			http.Error(w, `{"error":{"code":"unavailable"}}`, http.StatusServiceUnavailable)
			return
		}
		d := ""
		for i, it := range bench.Items {
			if it.Tool == c.Tool && patterns[i].Match(c.Args) {
				d = it.Want
			}
		}
		if c.Tool == "fs.read" && strings.HasSuffix(c.Session, "-0") {
			d = "deny"
		}
		time.Sleep(200 * time.Microsecond)
		w.Write([]byte(`{"id":"chk_1","decision":"` + d + `","rule":"r"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	mix, err := bench.NewMix(bench.Items, bench.DefaultShares)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bench.Run(context.Background(), bench.Config{Target: bench.Rein(srv.URL, "k"), Mix: mix,
		Concurrency: 4, Duration: 400 * time.Millisecond, Warmup: 100 * time.Millisecond, Session: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checks < 100 {
		t.Fatalf("only %d checks", res.Checks)
	}
	wrong := res.Unexpected["read-file: got deny"]
	if len(res.Unexpected) != 1 || wrong == 0 {
		t.Errorf("unexpected %v; want only read-file: got deny (session 0)", res.Unexpected)
	}
	unavailable := res.Errors - wrong
	if total := res.Checks + res.Errors; total > uint64(n.Load()) || res.Errors < wrong || unavailable == 0 || unavailable > total/40 {
		t.Errorf("%d checks + %d errors, %d of them wrong decisions (server answered %d, every 50th with 503)", res.Checks, res.Errors, wrong, n.Load())
	}
	samples := strings.Join(res.ErrorSamples, "; ")
	if !strings.Contains(samples, "HTTP 503") || !strings.Contains(samples, "read-file: got deny, want allow") {
		t.Errorf("error samples %q", res.ErrorSamples)
	}
	var sum uint64
	for _, v := range res.Decisions {
		sum += v
	}
	if sum != res.Checks+wrong || res.Decisions["ask"] == 0 || res.Decisions["throttle"] == 0 {
		t.Errorf("decisions %v for %d checks and %d wrong answers", res.Decisions, res.Checks, wrong)
	}
	if res.MachineBusy <= 0 || res.MachineBusy > 100 || res.GeneratorShare <= 0 || res.GeneratorShare > 100 || res.GeneratorCPU <= 0 {
		t.Errorf("machine busy %.1f%%, generator %.1f%% and %.1f µs per check", res.MachineBusy, res.GeneratorShare, res.GeneratorCPU)
	}
	if res.Throughput != float64(res.Checks)/0.4 {
		t.Errorf("throughput %.1f for %d checks in 0.4 s", res.Throughput, res.Checks)
	}
	if !(res.Latency.P50 > 0 && res.Latency.P50 <= res.Latency.P99 && res.Latency.P99 <= res.Latency.Max) {
		t.Errorf("latency %+v", res.Latency)
	}
	// A worker may send its next check before its connection is back in
	// the idle pool, and then dials another: a few more than 4, never one
	// per check.
	if c := conns.Load(); c > 8 {
		t.Errorf("%d connections for 4 workers and %d checks; want keep-alive", c, n.Load())
	}
}

// TestRunInterrupted: a run stopped early (Ctrl-C) reports what it measured
// until then, marked as interrupted.
func TestRunInterrupted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"decision":"allow","rule":"files-read"}`))
	}))
	defer srv.Close()
	mix, err := bench.NewMix(bench.Items, map[string]int{"allow": 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	res, err := bench.Run(ctx, bench.Config{Target: bench.Rein(srv.URL, "k"), Mix: mix,
		Concurrency: 2, Duration: time.Minute, Warmup: 100 * time.Millisecond, Session: "t"})
	if err != nil {
		t.Fatal(err)
	}
	d := time.Duration(res.Duration)
	if !res.Interrupted || d < 200*time.Millisecond || d > 2*time.Second || res.Checks == 0 {
		t.Fatalf("interrupted %v after %s with %d checks", res.Interrupted, d, res.Checks)
	}
	if res.Throughput != float64(res.Checks)/d.Seconds() {
		t.Errorf("throughput %.1f for %d checks in %s", res.Throughput, res.Checks, d)
	}
	if len(res.Unexpected) > 0 {
		// read-file expects allow by files-read, but other allow items
		// (same decision) are fine: only decisions are compared in runs.
		t.Errorf("unexpected %v", res.Unexpected)
	}

	// Stopped during the warm-up: nothing was measured, so no result.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := bench.Run(ctx2, bench.Config{Target: bench.Rein(srv.URL, "k"), Mix: mix,
		Concurrency: 1, Duration: time.Second, Warmup: time.Second, Session: "t"}); err == nil {
		t.Error("a run stopped in its warm-up returned a result")
	}
}

func TestOPADecode(t *testing.T) {
	opa := bench.OPA("http://x", "rein/bench/decision")
	a, err := opa.Decode([]byte(`{"result":{"decision":"ask","rule":"payments-large","reason":"r"}}`))
	if err != nil || a.Decision != "ask" || a.Rule != "payments-large" {
		t.Fatalf("%+v %v", a, err)
	}
	// OPA answers {} for a path with no policy: say so.
	if _, err := opa.Decode([]byte(`{}`)); err == nil || !strings.Contains(err.Error(), "policy loaded") {
		t.Fatalf("empty result: %v", err)
	}
	if _, err := bench.Rein("http://x", "k").Decode([]byte(`{"error":{"code":"x"}}`)); err == nil {
		t.Fatal("rein answer without a decision accepted")
	}
}

// TestRunRate: with a rate, the run offers that load and no more (about
// rate × duration checks, not as many as the workers could send), and a
// server slower than the rate shows in the latency, counted from when each
// check was due.
func TestRunRate(t *testing.T) {
	var n atomic.Int64
	var delay atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &c)
		n.Add(1)
		time.Sleep(time.Duration(delay.Load()))
		d := ""
		for _, it := range bench.Items {
			if it.Tool == c.Tool && strings.HasPrefix(string(c.Args), strings.SplitN(it.Args, "{n}", 2)[0]) {
				d = it.Want
			}
		}
		w.Write([]byte(`{"id":"chk_1","decision":"` + d + `","rule":"r"}`))
	}))
	defer srv.Close()
	mix, err := bench.NewMix(bench.Items, map[string]int{"allow": 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := bench.Config{Target: bench.Rein(srv.URL, "k"), Mix: mix, Concurrency: 8, Rate: 200,
		Duration: time.Second, Warmup: 200 * time.Millisecond, Session: "t"}
	res, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 200 checks/s for 1 s measured, 1.2 s in all; each worker alone could
	// send thousands a second to this server.
	if res.Rate != 200 || res.Checks < 170 || res.Checks > 205 || n.Load() > 250 {
		t.Errorf("rate %v: %d checks measured, %d sent in 1.2 s; want about 200 and 240", res.Rate, res.Checks, n.Load())
	}
	// A server that takes 100 ms per check serves 8 workers at 80/s: the
	// checks due at 200/s wait for a worker, and that wait is latency.
	delay.Store(int64(100 * time.Millisecond))
	n.Store(0)
	res, err = bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checks > 100 || res.Latency.P90 < bench.Millis(300*time.Millisecond) {
		t.Errorf("slow server: %d checks, latency %+v; want under 100 checks and latency well above the 100 ms service time", res.Checks, res.Latency)
	}
}
