package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/bench"
)

func init() {
	register(&command{name: "bench", summary: "load-test a rein server (or Open Policy Agent) with a mix of checks",
		args: "[--target rein|opa] [--server URL] [--key KEY] [--concurrency N] [--rate R] [--duration D] [--warmup D] [--mix SHARES] [--verify] [--output json]",
		example: `  # A server deciding with the benchmark policy, and an agent key for it:
  rein serve --policy bench/policy.yaml
  export REIN_KEY=$(rein keys create bench --role agent --tenant bench --output json | jq -r .key)

  # 64 concurrent agents for 30 s after a 5 s warm-up (Ctrl-C stops early and
  # prints what was measured so far):
  rein bench --concurrency 64 --duration 30s --warmup 5s

  # A fixed load of 1,000 checks/s (compare the servers' CPU per check at
  # the same load, where saturation would compare their batch sizes too):
  rein bench --concurrency 64 --rate 1000 --duration 30s

  # Only allowed checks, as JSON:
  rein bench --mix allow=100 --duration 10s --output json

  # Open Policy Agent deciding bench/policy.rego, with the same requests:
  opa run --server --addr 127.0.0.1:8181 bench/policy.rego &
  rein bench --target opa --server http://127.0.0.1:8181 --concurrency 64 --duration 30s

  # Check that a server decides every kind of check of the mix as expected:
  rein bench --verify`,
		run: runBench})
}

// benchOptions are the parsed flags of rein bench.
type benchOptions struct {
	target      string
	server      string
	key         string
	opaPath     string
	concurrency int
	rate        float64
	duration    time.Duration
	warmup      time.Duration
	shares      map[string]int
	session     string
	verify      bool
	output      string
}

// parseBench reads the flags; ok false means exit with code.
func parseBench(e *env, args []string) (*benchOptions, int, bool) {
	fs := flags(e, "rein bench", commandNamed("bench"))
	o := &benchOptions{}
	fs.StringVar(&o.target, "target", "rein", "what to load: rein (POST /v1/check) or opa (POST /v1/data/<opa-path>)")
	fs.StringVar(&o.server, "server", "", "server address (default: rein $REIN_SERVER or http://127.0.0.1:8750; opa http://127.0.0.1:8181)")
	fs.StringVar(&o.key, "key", "", "agent key for rein (default $REIN_KEY)")
	fs.StringVar(&o.opaPath, "opa-path", "rein/bench/decision", "OPA document that decides a check")
	fs.IntVar(&o.concurrency, "concurrency", 32, "concurrent agents, each with one check in flight on its own keep-alive connection")
	fs.Float64Var(&o.rate, "rate", 0, "offered load in checks per second, all agents together (0: each agent sends again as soon as it is answered); a check's latency counts from when it was due")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long to measure")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "how long to send checks before measuring (not counted)")
	mix := fs.String("mix", "allow=70,deny=10,ask=10,throttle=10", "share of each decision (relative); the checks of each are listed by --verify")
	fs.StringVar(&o.session, "session", "", "prefix of the session ids, one session per agent (default bench-<time>)")
	fs.BoolVar(&o.verify, "verify", false, "send each kind of check of the mix once and compare the decisions with the expected ones; no load")
	fs.StringVar(&o.output, "output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return nil, code, false
	}
	fail := func(format string, a ...any) (*benchOptions, int, bool) {
		fmt.Fprintf(e.stderr, "rein bench: "+format+"\n", a...)
		return nil, exitUsage, false
	}
	if len(pos) > 0 {
		return fail("unexpected argument %q; see rein bench --help", pos[0])
	}
	switch o.target {
	case "rein":
		if o.server == "" {
			o.server = e.getenv("REIN_SERVER")
		}
		if o.server == "" {
			o.server = "http://127.0.0.1:8750"
		}
		if o.key == "" {
			o.key = e.getenv("REIN_KEY")
		}
		if o.key == "" {
			return fail("--target rein needs an agent key: --key or REIN_KEY (rein keys create bench --role agent --tenant bench)")
		}
	case "opa":
		if o.server == "" {
			o.server = "http://127.0.0.1:8181"
		}
	default:
		return fail("--target is rein or opa, not %q", o.target)
	}
	if !strings.HasPrefix(o.server, "http://") && !strings.HasPrefix(o.server, "https://") {
		return fail("--server %q: give a URL such as http://127.0.0.1:8750", o.server)
	}
	if o.concurrency < 1 || o.concurrency > 10000 {
		return fail("--concurrency is 1 to 10000, not %d", o.concurrency)
	}
	if o.rate < 0 || o.rate > 1e6 || o.rate != o.rate {
		return fail("--rate is 0 (as fast as answered) to 1000000 checks per second, not %v", o.rate)
	}
	if o.duration <= 0 || o.warmup < 0 {
		return fail("--duration must be above 0 and --warmup at least 0")
	}
	if o.output != "text" && o.output != "json" {
		return fail("--output is text or json, not %q", o.output)
	}
	var err error
	if o.shares, err = bench.ParseShares(*mix); err != nil {
		return fail("%v", err)
	}
	if o.session == "" {
		o.session = fmt.Sprintf("bench-%d", time.Now().Unix())
	}
	return o, 0, true
}

func (o *benchOptions) targetFor() *bench.Target {
	if o.target == "opa" {
		return bench.OPA(o.server, o.opaPath)
	}
	return bench.Rein(o.server, o.key)
}

func runBench(ctx context.Context, e *env, args []string) int {
	o, code, ok := parseBench(e, args)
	if !ok {
		return code
	}
	target := o.targetFor()
	mix, err := bench.NewMix(bench.Items, o.shares)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein bench: %v\n", err)
		return exitUsage
	}
	client := bench.NewClient(o.concurrency)
	if err := bench.Prime(ctx, client, target, mix, o.session+"-prime"); err != nil {
		fmt.Fprintf(e.stderr, "rein bench: %s at %s: %v\n", target.Name, target.URL, err)
		return exitUsage
	}
	if o.verify {
		return printVerdicts(e, o, bench.Verify(ctx, client, target, bench.Items, o.session+"-verify"))
	}
	cfg := bench.Config{Target: target, Mix: mix, Concurrency: o.concurrency, Rate: o.rate, Duration: o.duration,
		Warmup: o.warmup, Session: o.session, Client: client}
	progress := isTerminal(os.Stdout)
	if progress {
		cfg.Progress = func(p bench.Progress) {
			phase := "warm-up"
			if p.Measuring {
				phase = "measuring"
			}
			fmt.Fprintf(e.stderr, "\r\033[K%5.0fs  %-9s  %8.0f checks/s  %d errors", p.Elapsed.Seconds(), phase, p.Rate, p.Errors)
		}
	}
	runCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	res, err := bench.Run(runCtx, cfg)
	stop()
	if progress {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "rein bench: %v\n", err)
		return exitUsage
	}
	if o.output == "json" {
		printJSON(e, struct {
			*bench.Result
			Mix map[string]int `json:"mix"`
		}{res, o.shares})
	} else {
		printBench(e, res, o.shares)
	}
	switch {
	case res.Interrupted:
		fmt.Fprintf(e.stderr, "rein bench: interrupted; the result covers the first %s measured\n", time.Duration(res.Duration))
		return exitNegative
	case res.Checks == 0:
		fmt.Fprintf(e.stderr, "rein bench: no check was answered in the measured time\n")
		return exitNegative
	case res.Errors > 0 || len(res.Unexpected) > 0:
		return exitNegative
	}
	return exitOK
}

// printBench writes the result as text.
func printBench(e *env, r *bench.Result, shares map[string]int) {
	ms := func(m bench.Millis) string { return fmtMillis(time.Duration(m)) }
	fmt.Fprintf(e.stdout, "rein bench: %s at %s\n", r.Target, r.URL)
	offered := ""
	if r.Rate > 0 {
		offered = fmt.Sprintf(", offered %s/s", thousands(r.Rate))
	}
	fmt.Fprintf(e.stdout, "  concurrency %d%s, warm-up %s, measured %s, mix %s\n", r.Concurrency, offered,
		time.Duration(r.Warmup), time.Duration(r.Duration), sharesString(shares))
	fmt.Fprintf(e.stdout, "  checks      %s (%s/s)\n", thousands(float64(r.Checks)), thousands(r.Throughput))
	fmt.Fprintf(e.stdout, "  errors      %s\n", thousands(float64(r.Errors)))
	fmt.Fprintf(e.stdout, "  latency     p50 %s  p90 %s  p99 %s  max %s  (mean %s)\n",
		ms(r.Latency.P50), ms(r.Latency.P90), ms(r.Latency.P99), ms(r.Latency.Max), ms(r.Latency.Mean))
	var parts []string
	for _, d := range sortedKeys(r.Decisions) {
		parts = append(parts, fmt.Sprintf("%s %s (%.1f%%)", d, thousands(float64(r.Decisions[d])),
			100*float64(r.Decisions[d])/float64(max(r.Checks, 1))))
	}
	fmt.Fprintf(e.stdout, "  decisions   %s\n", strings.Join(parts, "  "))
	if r.GeneratorCPU > 0 {
		fmt.Fprintf(e.stdout, "  generator   %.1f µs of CPU per check, %.1f%% of the machine's CPU (this load generator's own)\n", r.GeneratorCPU, r.GeneratorShare)
	}
	if r.MachineBusy >= 0 {
		fmt.Fprintf(e.stdout, "  machine     %.1f%% busy while measured (%d CPUs, every process)\n", r.MachineBusy, runtime.NumCPU())
	}
	if len(r.Unexpected) > 0 {
		fmt.Fprintln(e.stdout, "  wrong decisions, counted as errors (the server does not decide like bench/policy.yaml; see rein bench --verify):")
		for _, k := range sortedKeys(r.Unexpected) {
			fmt.Fprintf(e.stdout, "    %s: %s\n", k, thousands(float64(r.Unexpected[k])))
		}
	}
	for _, s := range r.ErrorSamples {
		fmt.Fprintf(e.stdout, "  error: %s\n", s)
	}
}

// printVerdicts writes how each item was decided; exit 1 on any difference.
func printVerdicts(e *env, o *benchOptions, vs []bench.Verdict) int {
	bad := 0
	type row struct {
		Check    string `json:"check"`
		Tool     string `json:"tool"`
		Want     string `json:"want"`
		WantRule string `json:"want_rule"`
		Got      string `json:"got"`
		GotRule  string `json:"got_rule"`
		Error    string `json:"error,omitempty"`
		OK       bool   `json:"ok"`
	}
	var rows []row
	for _, v := range vs {
		r := row{Check: v.Item.Name, Tool: v.Item.Tool, Want: v.Item.Want, WantRule: v.Item.Rule,
			Got: v.Got.Decision, GotRule: v.Got.Rule, OK: v.OK()}
		if v.Err != nil {
			r.Error = v.Err.Error()
		}
		if !r.OK {
			bad++
		}
		rows = append(rows, r)
	}
	if o.output == "json" {
		printJSON(e, map[string]any{"target": o.target, "checks": rows, "mismatches": bad})
	} else {
		fmt.Fprintf(e.stdout, "%-14s %-18s %-22s %-22s\n", "CHECK", "TOOL", "EXPECTED", "GOT")
		for _, r := range rows {
			got := r.Got + " [" + r.GotRule + "]"
			if r.Error != "" {
				got = "error: " + r.Error
			}
			mark := ""
			if !r.OK {
				mark = "  <- differs"
			}
			fmt.Fprintf(e.stdout, "%-14s %-18s %-22s %-22s%s\n", r.Check, r.Tool, r.Want+" ["+r.WantRule+"]", got, mark)
		}
		if bad == 0 {
			fmt.Fprintf(e.stdout, "%s decides all %d checks of the mix as expected\n", o.target, len(rows))
		} else {
			fmt.Fprintf(e.stdout, "%d of %d checks decided otherwise\n", bad, len(rows))
		}
	}
	if bad > 0 {
		return exitNegative
	}
	return exitOK
}

func sharesString(s map[string]int) string {
	var parts []string
	for _, d := range bench.Decisions {
		if n, ok := s[d]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", d, n))
		}
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	order := func(k string) int {
		if i := slices.Index(bench.Decisions, k); i >= 0 {
			return i
		}
		return len(bench.Decisions)
	}
	sort.Slice(keys, func(i, j int) bool {
		if oi, oj := order(keys[i]), order(keys[j]); oi != oj {
			return oi < oj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// fmtMillis writes a duration in milliseconds with three significant digits.
func fmtMillis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// thousands writes a whole number with thousands separators: 12,345.
func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
