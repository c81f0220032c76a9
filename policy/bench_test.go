package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchPolicy builds a policy of n rules shaped like real ones: each names a
// tool and looks at an argument, as most rules in the sample policy do.
func benchPolicy(b *testing.B, n int, toolScoped bool) *Set {
	var src strings.Builder
	src.WriteString("version: 1\nrules:\n")
	decisions := []string{"allow", "deny", "ask"}
	for i := 0; i < n; i++ {
		cond := fmt.Sprintf(`tool == "tool.%d" && has(args.amount) && args.amount > %d`, i, i)
		if !toolScoped {
			cond = fmt.Sprintf(`has(args.amount) && args.amount > %d && "tool.%d" in risk`, i+1000000, i)
		}
		fmt.Fprintf(&src, "- id: rule-%d\n  when: '%s'\n  decision: %s\n", i, cond, decisions[i%3])
	}
	p, err := Compile([]byte(src.String()))
	if err != nil {
		b.Fatal(err)
	}
	return NewSet(p, nil)
}

func benchDecide(b *testing.B, n int, toolScoped bool) {
	s := benchPolicy(b, n, toolScoped)
	in := &Input{Tool: fmt.Sprintf("tool.%d", n/2), Args: map[string]any{"amount": int64(n), "note": "x"},
		Agent: "builder", Tenant: "acme", Labels: map[string]string{}, Risk: []string{}, Facts: map[string]any{},
		Session: map[string]any{"id": "s", "calls": int64(0)}, Now: time.Now()}
	b.ReportAllocs()
	took := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := s.Evaluate(in).Decide(nil)
		took[i] = time.Since(start)
		if res.Decision == "" {
			b.Fatal("no decision")
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkDecide: rules that name their tool, as policies usually do.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) { benchDecide(b, n, true) })
	}
}

// BenchmarkDecideUnscoped: rules with no tool test, so every condition runs.
func BenchmarkDecideUnscoped(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) { benchDecide(b, n, false) })
	}
}
