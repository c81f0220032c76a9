package bench_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/bench"
)

// TestRunCounts drives a stand-in server that answers like rein (the
// expected decision, except that every 50th check is a 503 and read-file
// checks of session 0 come back deny): the run counts checks, decisions,
// errors and unexpected decisions, over keep-alive connections only.
func TestRunCounts(t *testing.T) {
	var n, conns atomic.Int64
	want := map[string]string{}
	for _, it := range bench.Items {
		want[it.Tool+" "+strings.SplitN(it.Args, ",", 2)[0]] = it.Want
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
			http.Error(w, `{"error":{"code":"unavailable"}}`, 503)
			return
		}
		d := ""
		for _, it := range bench.Items {
			var a, b map[string]any
			json.Unmarshal([]byte(it.ArgsFor(0)), &a)
			json.Unmarshal(c.Args, &b)
			if it.Tool == c.Tool && len(a) == len(b) && a["amount"] == b["amount"] && a["to"] == b["to"] && a["url"] == nil == (b["url"] == nil) {
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
	if total := res.Checks + res.Errors; total > uint64(n.Load()) || res.Errors == 0 || res.Errors > total/40 {
		t.Errorf("%d checks + %d errors (server answered %d, every 50th with 503)", res.Checks, res.Errors, n.Load())
	}
	if len(res.ErrorSamples) == 0 || !strings.Contains(res.ErrorSamples[0], "HTTP 503") {
		t.Errorf("error samples %q", res.ErrorSamples)
	}
	var sum uint64
	for _, v := range res.Decisions {
		sum += v
	}
	if sum != res.Checks || res.Decisions["ask"] == 0 || res.Decisions["throttle"] == 0 {
		t.Errorf("decisions %v for %d checks", res.Decisions, res.Checks)
	}
	if len(res.Unexpected) != 1 || res.Unexpected["read-file: got deny"] == 0 {
		t.Errorf("unexpected %v; want only read-file: got deny (session 0)", res.Unexpected)
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
