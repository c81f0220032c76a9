package examples

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
)

// TestSamplePolicySQL: under the sample policy, no query of
// risk/testdata/sql_attacks.json runs without a person (statements without
// a semicolon, dollar-quote tags beyond ASCII, files and URLs read as
// tables, credential catalogs), those that read credentials are denied, and
// every read of risk/testdata/sql_benign.json runs (rule sql-reads).
func TestSamplePolicySQL(t *testing.T) {
	set := samplePolicy(t)
	decide := func(query string) (*pipeline.Simulation, error) {
		args, _ := json.Marshal(map[string]string{"query": query})
		return pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: "db.query", Agent: "agent", Args: args}, nil, time.Now())
	}
	var attacks []struct{ Src, Class, Want string }
	readJSON(t, "../risk/testdata/sql_attacks.json", &attacks)
	allowed, secrets, denied := 0, 0, 0
	for _, a := range attacks {
		sim, err := decide(a.Src)
		if err != nil {
			t.Fatalf("%q: %v", a.Src, err)
		}
		if sim.Decision == rein.Allow || sim.Decision == rein.Modify {
			allowed++
			t.Errorf("%q: %s by %q, risk %v", a.Src, sim.Decision, sim.Rule, sim.Risk)
		}
		if a.Want == "sql.secrets" {
			secrets++
			if sim.Decision == rein.Deny {
				denied++
			}
		}
		if a.Want == "sql.secrets" && sim.Decision != rein.Deny {
			t.Errorf("%q reads credentials: %s by %q, risk %v", a.Src, sim.Decision, sim.Rule, sim.Risk)
		}
	}
	var benign []string
	readJSON(t, "../risk/testdata/sql_benign.json", &benign)
	runs := 0
	for _, q := range benign {
		sim, err := decide(q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if sim.Decision == rein.Allow && sim.Rule == "sql-reads" {
			runs++
		} else {
			t.Errorf("%q: %s by %q, risk %v", q, sim.Decision, sim.Rule, sim.Risk)
		}
	}
	t.Logf("attacks allowed: %d of %d; credential reads denied: %d of %d; reads allowed: %d of %d",
		allowed, len(attacks), denied, secrets, runs, len(benign))
}
