package examples

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
)

var record = flag.Bool("record", false, "rewrite the decisions recorded in risk/testdata/shell_benign.json")

// bashDecision runs one command through the sample policy as a Bash call.
func bashDecision(t *testing.T, set *policy.Set, src string) *pipeline.Simulation {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": src})
	sim, err := pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: "Bash", Agent: "agent", Args: args}, nil, time.Now())
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return sim
}

func samplePolicy(t *testing.T) *policy.Set {
	t.Helper()
	src, err := os.ReadFile("policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	return policy.NewSet(p, nil)
}

// benignCase is an everyday developer command with the sample policy's
// answer: before is the answer rein gave before its shell analysis became
// closed-world (kept for the record), decision and rule the answer now.
type benignCase struct {
	Src      string `json:"src"`
	Before   string `json:"before"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
}

// TestSamplePolicyKeepsBenignAnswers: everyday commands keep their recorded
// answers, and the test reports how many of them are false alarms (denied,
// or sent to a person by a risk rule rather than by routine review).
func TestSamplePolicyKeepsBenignAnswers(t *testing.T) {
	set := samplePolicy(t)
	const file = "../risk/testdata/shell_benign.json"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []benignCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("the benign set has %d cases; it must keep at least 100", len(cases))
	}
	alarms, allowed, changed := 0, 0, 0
	for i, c := range cases {
		sim := bashDecision(t, set, c.Src)
		if *record {
			cases[i].Decision, cases[i].Rule = string(sim.Decision), sim.Rule
			if cases[i].Before == "" {
				cases[i].Before = string(sim.Decision)
			}
		} else if string(sim.Decision) != c.Decision || sim.Rule != c.Rule {
			t.Errorf("%q: %s by %q (risk %v), recorded %s by %q", c.Src, sim.Decision, sim.Rule, sim.Risk, c.Decision, c.Rule)
		}
		if sim.Decision == rein.Allow {
			allowed++
		}
		if string(sim.Decision) != cases[i].Before {
			changed++
			t.Logf("changed: %q: %s before, %s now by %q, risk %v", c.Src, cases[i].Before, sim.Decision, sim.Rule, sim.Risk)
		}
		if sim.Decision == rein.Deny || sim.Decision == rein.Ask && sim.Rule != "shell-needs-review" {
			alarms++
			t.Logf("false alarm: %q: %s by %q, risk %v", c.Src, sim.Decision, sim.Rule, sim.Risk)
		}
	}
	t.Logf("%d benign commands: %d allowed, %d false alarms, %d answers changed", len(cases), allowed, alarms, changed)
	if *record {
		rows := make([]string, len(cases))
		for i, c := range cases {
			row, _ := json.Marshal(c)
			rows[i] = "  " + string(row)
		}
		if err := os.WriteFile(file, []byte("[\n"+strings.Join(rows, ",\n")+"\n]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
