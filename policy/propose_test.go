package policy

import (
	"strings"
	"testing"

	"github.com/reinhq/rein"
)

const proposeBase = `version: 1
default: deny
# shell commands need on-call
rules:
  - id: shell
    when: 'tool == "shell.exec"'   # every command
    decision: ask
    approval: {approvers: ["group:oncall"]}
  - {id: pay, when: 'tool == "pay" && args.amount > 100', decision: ask}
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
`

// TestProposeAllow: the proposal allows exactly the approved action (the
// agent and its sub-agents, the tool, the arguments in full) and nothing
// else; the asking rules still ask for every other action; comments stay.
func TestProposeAllow(t *testing.T) {
	for _, c := range []struct {
		name   string
		asking []string
		x      Exact
		same   []Input // allowed by the candidate
		others []Input // still asked
	}{
		{"a command", []string{"shell"}, Exact{Tenant: "acme", Agent: "builder", Tool: "shell.exec", Args: map[string]any{"command": "npm test"}},
			[]Input{{Tool: "shell.exec", Tenant: "acme", Agent: "builder", Args: map[string]any{"command": "npm test"}},
				{Tool: "shell.exec", Tenant: "acme", Agent: "builder/n1", Args: map[string]any{"command": "npm test"}}},
			[]Input{{Tool: "shell.exec", Agent: "builder", Args: map[string]any{"command": "npm test; rm -rf /"}},
				{Tool: "shell.exec", Agent: "builderx", Args: map[string]any{"command": "npm test"}},
				{Tool: "shell.exec", Agent: "other", Args: map[string]any{"command": "npm test"}},
				{Tool: "shell.exec", Tenant: "globex", Agent: "builder", Args: map[string]any{"command": "npm test"}},
				{Tool: "shell.exec", Agent: "builder", Args: map[string]any{"command": "npm test", "cwd": "/"}}}},
		{"numbers, lists and maps", []string{"pay"}, Exact{Tenant: "acme", Agent: "billing", Tool: "pay",
			Args: map[string]any{"amount": int64(150), "fee": 1.5, "to": map[string]any{"iban": "DE\"1'2", "tags": []any{"a", true, nil}}}},
			[]Input{{Tool: "pay", Tenant: "acme", Agent: "billing", Args: map[string]any{"amount": int64(150), "fee": 1.5, "to": map[string]any{"iban": "DE\"1'2", "tags": []any{"a", true, nil}}}}},
			[]Input{{Tool: "pay", Agent: "billing", Args: map[string]any{"amount": int64(5000), "fee": 1.5, "to": map[string]any{"iban": "DE\"1'2", "tags": []any{"a", true, nil}}}},
				{Tool: "pay", Agent: "billing", Args: map[string]any{"amount": int64(150), "fee": 1.5, "to": map[string]any{"iban": "XX", "tags": []any{"a", true, nil}}}},
				{Tool: "pay", Agent: "billing", Args: map[string]any{"amount": int64(150), "fee": 1.5, "to": map[string]any{"iban": "DE\"1'2", "tags": []any{"a", true}}}}}},
	} {
		src, err := ProposeAllow([]byte(proposeBase), c.asking, c.x, "always-1", "proposed by alice from apr_1")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(string(src), "# shell commands need on-call") || !strings.Contains(string(src), "# every command") {
			t.Errorf("%s: comments lost:\n%s", c.name, src)
		}
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: the candidate does not compile: %v\n%s", c.name, err, src)
		}
		set := NewSet(p, nil)
		for _, in := range c.same {
			if r := decide(set, &in); r.Decision != rein.Allow || r.Rule != "always-1" {
				t.Errorf("%s: the proposed action %+v: %s by %q\n%s", c.name, in, r.Decision, r.Rule, src)
			}
		}
		for _, in := range c.others {
			if r := decide(set, &in); r.Decision != rein.Ask {
				t.Errorf("%s: another action %+v: %s by %q", c.name, in, r.Decision, r.Rule)
			}
		}
		if r := decide(set, &Input{Tool: "fs.read", Agent: "builder", Args: map[string]any{}}); r.Decision != rein.Allow || r.Rule != "reads" {
			t.Errorf("%s: an unrelated rule changed: %+v", c.name, r)
		}
	}
	if _, err := ProposeAllow([]byte(proposeBase), []string{"missing"}, Exact{Agent: "a", Tool: "t"}, "x", ""); err == nil {
		t.Error("a rule not in the tier was narrowed")
	}
	if _, err := ProposeAllow([]byte(proposeBase), []string{"shell"}, Exact{Agent: "a", Tool: "t"}, "reads", ""); err == nil {
		t.Error("a rule id already used was proposed")
	}
}

func TestLineDiff(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
	b := "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	want := "--- current\n+++ proposed\n@@\n one\n two\n-three\n+THREE\n four\n five\n@@\n eight\n nine\n+ten\n \n"
	if got := LineDiff(a, b); got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := LineDiff(a, a); got != "--- current\n+++ proposed\n" {
		t.Fatalf("no change: %q", got)
	}
}
