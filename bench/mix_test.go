package bench_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/reinhq/rein/bench"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/risk"
)

// TestItemsDecidedByBenchPolicy holds bench/policy.yaml to the decision and
// rule each item of the mix expects, through rein's own facts and policy
// stages, with the rate limit of the throttled items spent (as `rein bench`
// spends it before measuring) and, for the other items, untouched.
func TestItemsDecidedByBenchPolicy(t *testing.T) {
	src, err := os.ReadFile("policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	set := policy.NewSet(p, nil)
	seen := map[string]int{}
	for i, it := range bench.Items {
		seen[it.Want]++
		var args map[string]any
		if err := json.Unmarshal([]byte(it.ArgsFor(uint64(1000+i))), &args); err != nil {
			t.Fatalf("%s: args are not JSON: %v", it.Name, err)
		}
		a := risk.Assess(it.Tool, args, risk.Env{Tools: set.Tools(), Workspace: set.Workspace(), Lookup: pipeline.LookupHost})
		ev := set.Evaluate(&policy.Input{Tool: it.Tool, Args: args, Agent: "bench", Tenant: "bench", Labels: map[string]string{},
			Risk: a.Tags, Facts: a.Facts, Session: pipeline.SessionDefaults("s"), Now: time.Now()})
		verdicts := map[*policy.Rule]policy.LimitVerdict{}
		for _, m := range ev.Limits() {
			verdicts[m.Rule] = policy.LimitVerdict{Exceeded: it.Want == "throttle", RetryAfter: time.Hour}
		}
		res := ev.Decide(verdicts)
		if string(res.Decision) != it.Want || res.Rule != it.Rule {
			t.Errorf("%s (%s %s): %s by %q, want %s by %q", it.Name, it.Tool, it.ArgsFor(1), res.Decision, res.Rule, it.Want, it.Rule)
		}
	}
	for _, d := range bench.Decisions {
		if seen[d] == 0 {
			t.Errorf("no item of the mix expects %s", d)
		}
	}
}

func TestParseShares(t *testing.T) {
	got, err := bench.ParseShares("allow=70, deny=10,ask=10,throttle=10")
	if err != nil || got["allow"] != 70 || got["deny"] != 10 || got["ask"] != 10 || got["throttle"] != 10 {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := bench.ParseShares("allow=1"); err != nil || len(got) != 1 {
		t.Fatalf("allow=1: %v %v", got, err)
	}
	for _, bad := range []string{"", "allow", "allow=x", "allow=-1", "modify=10", "allow=0", "allow=5,allow=6", "allow=1001"} {
		if _, err := bench.ParseShares(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestMixHonoursShares: over the table, each decision gets its share and,
// within it, each item its weight.
func TestMixHonoursShares(t *testing.T) {
	m, err := bench.NewMix(bench.Items, map[string]int{"allow": 70, "deny": 10, "ask": 10, "throttle": 10})
	if err != nil {
		t.Fatal(err)
	}
	byDecision, byItem := map[string]int{}, map[string]int{}
	for n := range uint64(len(m.Table)) {
		it := m.Pick(n)
		byDecision[it.Want]++
		byItem[it.Name]++
	}
	total := len(m.Table)
	for d, want := range map[string]int{"allow": 70, "deny": 10, "ask": 10, "throttle": 10} {
		if got := byDecision[d] * 100 / total; got != want {
			t.Errorf("%s: %d%% of the table, want %d%%", d, got, want)
		}
	}
	// allow: read-file 3, get-https 2, pay-small 1, mail-internal 2,
	// shell-read 2, write-workspace 2 (of 12).
	if byItem["read-file"] != byDecision["allow"]*3/12 || byItem["pay-small"] != byDecision["allow"]/12 {
		t.Errorf("allow items not by weight: %v", byItem)
	}
	// The decisions are interleaved: any 100 consecutive requests, wherever
	// a run's measured window starts, hold each decision's share to within
	// two points (a shuffled table drifted by chance in short runs).
	for start := uint64(0); start < uint64(len(m.Table)); start += 37 {
		window := map[string]int{}
		for n := start; n < start+100; n++ {
			window[m.Pick(n).Want]++
		}
		for d, want := range map[string]int{"allow": 70, "deny": 10, "ask": 10, "throttle": 10} {
			if got := window[d]; got < want-2 || got > want+2 {
				t.Fatalf("requests %d to %d: %d %s, want %d ± 2", start, start+99, got, d, want)
			}
		}
	}

	only, err := bench.NewMix(bench.Items, map[string]int{"allow": 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range only.Table {
		if it.Want != "allow" {
			t.Fatalf("allow-only mix holds %s", it.Name)
		}
	}
}

func TestBodies(t *testing.T) {
	it := &bench.Items[0]
	var rb, ob map[string]any
	if err := json.Unmarshal(bench.Rein("http://x/", "k").Body(nil, it, it.ArgsFor(7), "s-1"), &rb); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bench.OPA("http://x", "/rein/bench/decision").Body(nil, it, it.ArgsFor(7), "s-1"), &ob); err != nil {
		t.Fatal(err)
	}
	in, _ := ob["input"].(map[string]any)
	rj, _ := json.Marshal(rb)
	oj, _ := json.Marshal(in)
	if string(rj) != string(oj) {
		t.Fatalf("OPA's input %s differs from rein's check %s", oj, rj)
	}
	if rb["tool"] != it.Tool || rb["session"] != "s-1" || rb["args"].(map[string]any)["path"] != "/srv/agent/reports/7.csv" {
		t.Fatalf("check body %s", rj)
	}
	if u := bench.OPA("http://x/", "/rein/bench/decision").URL; u != "http://x/v1/data/rein/bench/decision" {
		t.Fatalf("OPA URL %s", u)
	}
	if u := bench.Rein("http://x/", "k").URL; u != "http://x/v1/check" {
		t.Fatalf("rein URL %s", u)
	}
}
