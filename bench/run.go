package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one benchmark run.
type Config struct {
	Target      *Target
	Mix         *Mix
	Concurrency int // workers, each with one request in flight
	// Rate, when above 0, is the load offered in checks per second, all
	// workers together: check n is due at start + n/Rate, and a worker
	// waits for its check's time. A check's latency counts from when it
	// was due, so time spent waiting for a free worker (the server being
	// slower than the rate) is part of it. 0: each worker sends its next
	// check as soon as the last is answered (saturation).
	Rate     float64
	Duration time.Duration // measured time
	Warmup   time.Duration // time before measuring: sent, not counted
	// Session prefixes the session ids: worker i sends every check in
	// session "<Session>-<i>".
	Session string
	// Client is unused by the load itself (each worker holds a connection
	// of its own, conn.go); kept for callers that share one with Prime.
	Client *http.Client
	// Progress, when set, is called about once a second.
	Progress func(Progress)
}

// Progress is the state of a run while it goes.
type Progress struct {
	Elapsed   time.Duration // since the start, warm-up included
	Measuring bool
	Checks    uint64  // answered in the measured time so far
	Errors    uint64  // in the measured time so far
	Rate      float64 // answers per second over the last interval (warm-up included)
}

// Result is the outcome of a run.
type Result struct {
	Target      string            `json:"target"`
	URL         string            `json:"url"`
	Concurrency int               `json:"concurrency"`
	Rate        float64           `json:"rate"` // the offered load in checks per second; 0: as fast as answered
	Warmup      Seconds           `json:"warmup_s"`
	Duration    Seconds           `json:"duration_s"`  // the measured time
	Interrupted bool              `json:"interrupted"` // stopped before the end: Duration is what was measured
	Checks      uint64            `json:"checks"`      // answered with the expected decision
	Errors      uint64            `json:"errors"`      // failed requests, non-200 answers and wrong decisions
	Throughput  float64           `json:"throughput"`  // decisions per second
	Latency     Latency           `json:"latency"`
	Decisions   map[string]uint64 `json:"decisions"`
	// Unexpected counts decisions other than the item's expected one, by
	// "item: got decision". Each is also an error, never a check: a wrong
	// answer is not throughput.
	Unexpected map[string]uint64 `json:"unexpected"`
	// ErrorSamples are the first distinct errors.
	ErrorSamples []string `json:"error_samples"`
	// GeneratorCPU is the CPU time the load generator itself used per
	// request (warm-up included), in µs: it shares the machine with
	// the server when both run on one host.
	GeneratorCPU float64 `json:"generator_cpu_us_per_check"`
	// GeneratorShare is the generator's CPU time over the measured time,
	// as a percentage of the machine's CPUs (warm-up included in neither).
	GeneratorShare float64 `json:"generator_cpu_pct"`
	// MachineBusy is how busy the machine's CPUs were during the measured
	// time (every process, this one included), in percent; -1 where the
	// system does not tell (/proc/stat).
	MachineBusy float64 `json:"machine_busy_pct"`
}

// Latency is the distribution of the answered checks' round trips, in ms.
type Latency struct {
	P50  Millis `json:"p50_ms"`
	P90  Millis `json:"p90_ms"`
	P99  Millis `json:"p99_ms"`
	Max  Millis `json:"max_ms"`
	Mean Millis `json:"mean_ms"`
}

// Millis is a duration written in JSON as milliseconds.
type Millis time.Duration

func (m Millis) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", float64(m)/float64(time.Millisecond)), nil
}

// Seconds is a duration written in JSON as seconds.
type Seconds time.Duration

func (s Seconds) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", time.Duration(s).Seconds()), nil
}

// NewClient returns an HTTP client that keeps a connection alive for each
// of n workers (and some to spare), without compression.
func NewClient(n int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2*n + 16,
			MaxIdleConnsPerHost: 2*n + 16,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// worker is what one worker counted.
type worker struct {
	hist       Histogram
	decisions  map[string]uint64
	unexpected map[string]uint64
	errors     uint64
	samples    []string
	buf        []byte
	conn       *conn
}

// maxSamples is how many distinct errors a run keeps.
const maxSamples = 5

// Run sends checks from Concurrency workers for Warmup + Duration and
// counts what was answered in the measured time: a check counts when it
// was sent after the warm-up and answered before the end.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Concurrency < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 {
		return nil, errors.New("bench: concurrency must be at least 1 and duration above 0")
	}
	cpu0 := processCPU()
	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	measureTo := measureFrom.Add(cfg.Duration)
	var seq, answered, measuredChecks, measuredErrors atomic.Uint64
	workers := make([]*worker, cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range workers {
		c, err := newConn(cfg.Target)
		if err != nil {
			return nil, err
		}
		w := &worker{decisions: map[string]uint64{}, unexpected: map[string]uint64{}, conn: c}
		workers[i] = w
		session := fmt.Sprintf("%s-%d", cfg.Session, i)
		wg.Go(func() {
			defer w.conn.close()
			for ctx.Err() == nil {
				n := seq.Add(1)
				sent := time.Now()
				if cfg.Rate > 0 {
					due := start.Add(time.Duration(float64(n-1) / cfg.Rate * float64(time.Second)))
					if wait := due.Sub(sent); wait > 0 {
						if !due.Before(measureTo) {
							return
						}
						select {
						case <-time.After(wait):
						case <-ctx.Done():
							return
						}
					}
					sent = due
				}
				if !sent.Before(measureTo) {
					return
				}
				it := cfg.Mix.Pick(n)
				ans, err := w.send(ctx, cfg, it, n, session)
				done := time.Now()
				answered.Add(1)
				if sent.Before(measureFrom) || done.After(measureTo) {
					continue
				}
				if err == nil && ans.Decision != it.Want {
					w.decisions[ans.Decision]++
					w.unexpected[it.Name+": got "+ans.Decision]++
					err = fmt.Errorf("%s: got %s, want %s", it.Name, ans.Decision, it.Want)
				}
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					w.errors++
					measuredErrors.Add(1)
					if len(w.samples) < maxSamples && !slices.Contains(w.samples, err.Error()) {
						w.samples = append(w.samples, err.Error())
					}
					continue
				}
				measuredChecks.Add(1)
				w.hist.Record(done.Sub(sent))
				w.decisions[ans.Decision]++
			}
		})
	}
	// The machine's CPU time over the measured time (and this process's).
	var busy0, busy1 cpuTimes
	var gen0, gen1 time.Duration
	var busyMu sync.Mutex
	busyTimers := []*time.Timer{
		time.AfterFunc(cfg.Warmup, func() { busyMu.Lock(); busy0, gen0 = machineCPU(), processCPU(); busyMu.Unlock() }),
		time.AfterFunc(cfg.Warmup+cfg.Duration, func() { busyMu.Lock(); busy1, gen1 = machineCPU(), processCPU(); busyMu.Unlock() }),
	}
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if cfg.Progress == nil {
			return
		}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		last, lastAt := uint64(0), start
		for {
			select {
			case <-stopProgress:
				return
			case now := <-t.C:
				n := answered.Load()
				cfg.Progress(Progress{Elapsed: now.Sub(start), Measuring: !now.Before(measureFrom),
					Checks: measuredChecks.Load(), Errors: measuredErrors.Load(),
					Rate: float64(n-last) / now.Sub(lastAt).Seconds()})
				last, lastAt = n, now
			}
		}
	}()
	wg.Wait()
	cpu := processCPU() - cpu0
	for _, t := range busyTimers {
		t.Stop()
	}
	close(stopProgress)
	<-progressDone
	measured := cfg.Duration
	interrupted := ctx.Err() != nil
	if interrupted {
		// Stopped early (Ctrl-C): the result covers the measured time so far.
		measured = min(time.Since(measureFrom), cfg.Duration).Truncate(time.Millisecond)
		if measured < 100*time.Millisecond {
			return nil, ctx.Err()
		}
	}

	res := &Result{Target: cfg.Target.Name, URL: cfg.Target.URL, Concurrency: cfg.Concurrency, Rate: cfg.Rate,
		Warmup: Seconds(cfg.Warmup), Duration: Seconds(measured), Interrupted: interrupted,
		Decisions: map[string]uint64{}, Unexpected: map[string]uint64{}, ErrorSamples: []string{}}
	var h Histogram
	for _, w := range workers {
		h.Merge(&w.hist)
		res.Errors += w.errors
		for k, v := range w.decisions {
			res.Decisions[k] += v
		}
		for k, v := range w.unexpected {
			res.Unexpected[k] += v
		}
		for _, s := range w.samples {
			if len(res.ErrorSamples) < maxSamples && !slices.Contains(res.ErrorSamples, s) {
				res.ErrorSamples = append(res.ErrorSamples, s)
			}
		}
	}
	res.Checks = h.Count()
	if n := answered.Load(); n > 0 {
		res.GeneratorCPU = float64(cpu.Microseconds()) / float64(n)
	}
	res.Throughput = float64(res.Checks) / measured.Seconds()
	busyMu.Lock()
	if busy1.total == 0 { // the last answer came before the end's timer, or the run was interrupted
		busy1, gen1 = machineCPU(), processCPU()
	}
	res.MachineBusy = busy1.busySince(busy0)
	if gen1 > gen0 && busy1.total > busy0.total {
		res.GeneratorShare = 100 * float64(gen1-gen0) / (float64(busy1.total-busy0.total) * float64(time.Second) / clockTicks)
	}
	busyMu.Unlock()
	res.Latency = Latency{P50: Millis(h.Percentile(0.50)), P90: Millis(h.Percentile(0.90)),
		P99: Millis(h.Percentile(0.99)), Max: Millis(h.Max()), Mean: Millis(h.Mean())}
	return res, nil
}

// send posts one check and reads its decision.
func (w *worker) send(ctx context.Context, cfg Config, it *Item, n uint64, session string) (Answer, error) {
	w.buf = cfg.Target.Body(w.buf[:0], it, it.ArgsFor(n), session)
	body, err := w.conn.post(ctx, w.buf)
	if err != nil {
		return Answer{}, err
	}
	return cfg.Target.Decode(body)
}

// Send posts one body to the target and decodes the answer. resp is a
// buffer reused for the answer.
func Send(ctx context.Context, c *http.Client, t *Target, body []byte, resp *bytes.Buffer) (Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	req.Header = t.Header.Clone()
	res, err := c.Do(req)
	if err != nil {
		return Answer{}, err
	}
	resp.Reset()
	_, err = io.Copy(resp, res.Body)
	res.Body.Close()
	if err != nil {
		return Answer{}, fmt.Errorf("reading the answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return Answer{}, fmt.Errorf("HTTP %d: %.300s", res.StatusCode, bytes.TrimSpace(resp.Bytes()))
	}
	return t.Decode(resp.Bytes())
}

// Verdict is how a server decided one item of the mix, against what the
// benchmark expects.
type Verdict struct {
	Item *Item
	Got  Answer
	Err  error
}

// OK reports whether the server gave the expected decision by the expected rule.
func (v Verdict) OK() bool {
	return v.Err == nil && v.Got.Decision == v.Item.Want && v.Got.Rule == v.Item.Rule
}

// Prime spends the rate-limit budget of the throttled items, so that they
// answer throttle from the start of the run: each is sent until it does
// (at most 20 times). Servers that keep no count (OPA) answer throttle at once.
func Prime(ctx context.Context, c *http.Client, t *Target, mix *Mix, session string) error {
	var resp bytes.Buffer
	seen := map[*Item]bool{}
	for _, it := range mix.Table {
		if it.Want != "throttle" || seen[it] {
			continue
		}
		seen[it] = true
		var last Answer
		for i := range 20 {
			body := t.Body(nil, it, it.ArgsFor(uint64(i)), session)
			a, err := Send(ctx, c, t, body, &resp)
			if err != nil {
				return fmt.Errorf("priming %s: %w", it.Name, err)
			}
			if last = a; a.Decision == "throttle" {
				break
			}
		}
		if last.Decision != "throttle" {
			return fmt.Errorf("priming %s: still %s after 20 checks; is the server deciding with bench/policy.yaml?", it.Name, last.Decision)
		}
	}
	return nil
}

// Verify sends every item once (after Prime) and returns how each was decided.
func Verify(ctx context.Context, c *http.Client, t *Target, items []Item, session string) []Verdict {
	var resp bytes.Buffer
	out := make([]Verdict, len(items))
	for i := range items {
		it := &items[i]
		a, err := Send(ctx, c, t, t.Body(nil, it, it.ArgsFor(uint64(i)), session), &resp)
		out[i] = Verdict{Item: it, Got: a, Err: err}
	}
	return out
}
