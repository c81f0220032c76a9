package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

// stopServer answers GET /v1/sessions/s/sandbox: no stop until stopAt,
// then a lock. With hold, a request with timeout_ms waits until then (as
// rein does); without, every request answers at once (a server that does
// not wait, or a stream that dropped).
func stopServer(t *testing.T, stopAt time.Time, hold bool, requests *atomic.Int64) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/v1/sessions/s/sandbox" {
			http.NotFound(w, r)
			return
		}
		if hold && r.URL.Query().Has("timeout_ms") {
			select {
			case <-time.After(time.Until(stopAt)):
			case <-r.Context().Done():
				return
			}
		}
		st := rein.SandboxStop{Sandbox: &rein.Sandbox{}}
		if !time.Now().Before(stopAt) {
			st.Stop = &rein.Lock{ID: "lock_1", Reason: "stop"}
		}
		json.NewEncoder(w).Encode(st)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestWatchStopWaits: rein run learns of a stop as soon as rein answers
// its wait (well under the polling interval), asking once; against a
// server that answers at once it polls, every stopPoll, and still stops.
func TestWatchStopWaits(t *testing.T) {
	for _, c := range []struct {
		name     string
		hold     bool
		within   time.Duration
		maxAsked int64
	}{
		{"long poll", true, 150 * time.Millisecond, 2},
		{"polling", false, stopPoll + 300*time.Millisecond, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked atomic.Int64
			stopAt := time.Now().Add(1200 * time.Millisecond)
			s := stopServer(t, stopAt, c.hold, &asked)
			p := exec.Command("sleep", "30")
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			defer p.Process.Kill()
			var errb bytes.Buffer
			r := &containment{e: &env{stdout: &errb, stderr: &errb}, what: "rein run", c: client.New(s.URL, "k"), session: "s"}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			lock := r.watchStop(ctx, p.Process)
			late := time.Since(stopAt)
			if lock == nil || lock.ID != "lock_1" {
				t.Fatalf("no stop: %v %s", lock, errb.String())
			}
			if late > c.within {
				t.Errorf("the stop was seen %s after it was made, want within %s", late, c.within)
			}
			if n := asked.Load(); n > c.maxAsked {
				t.Errorf("rein was asked %d times", n)
			}
			st, _ := p.Process.Wait()
			if st == nil || st.Sys() == nil || st.Success() {
				t.Errorf("the process was not killed: %v", st)
			}
		})
	}
}
