package policy

import (
	"testing"
	"time"
)

// FuzzCompile: compiling never panics; a policy that compiles decides a
// check without panicking and always gives one of the five decisions.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"version: 1\nrules: []\n",
		"version: 1\ndefault: allow\nrules:\n- {id: a, when: 'tool == \"x\"', decision: deny}\n",
		"version: 1\nrules:\n- {id: a, when: 'args.n > 1', decision: ask, approval: {quorum: 2, ttl: 1h}}\n",
		"version: 1\nrules:\n- {id: m, when: 'true', decision: modify, modify: {remove: [a.b], set: {c.d: 1}}}\n",
		"version: 1\nrules:\n- {id: l, when: 'true', limit: {rate: 1, per: 1m}}\n",
		"version: 1\nrules:\n- id: x\n  when: 'glob(\"a*\", tool) && cidr_contains(\"10.0.0.0/8\", args.ip)'\n  decision: allow\n",
		"{{{", "version: [1]", "rules: !!binary aGVsbG8=",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Compile(src)
		if err != nil {
			if _, ok := err.(Problems); !ok {
				t.Fatalf("error is not Problems: %T %v", err, err)
			}
			return
		}
		for _, in := range []*Input{
			{Tool: "x", Now: time.Unix(0, 0)},
			{Tool: "a", Args: map[string]any{"n": int64(5), "ip": "10.0.0.1", "a": map[string]any{"b": "c"}}, Now: time.Unix(0, 0)},
		} {
			res := NewSet(p, nil).Evaluate(in).Decide(nil)
			switch res.Decision {
			case "allow", "deny", "ask", "throttle", "modify":
			default:
				t.Fatalf("decision %q", res.Decision)
			}
			if res.Decision == "deny" && res.Reason == "" {
				t.Fatal("deny without a reason")
			}
		}
		Lint(p)
	})
}
