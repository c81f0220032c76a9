package examples

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/reinhq/rein"
)

// TestSamplePolicyRefusesShellAttacks: no command of the attack corpus
// (environment variables that change what runs, constructs rein does not
// model, writes, secret reads, programs that are not the system's) runs
// unasked under the sample policy.
func TestSamplePolicyRefusesShellAttacks(t *testing.T) {
	set := samplePolicy(t)
	b, err := os.ReadFile("../risk/testdata/shell_attacks.json")
	if err != nil {
		t.Fatal(err)
	}
	var attacks []struct {
		Src string `json:"src"`
		Why string `json:"why"`
	}
	if err := json.Unmarshal(b, &attacks); err != nil {
		t.Fatal(err)
	}
	if len(attacks) < 150 {
		t.Fatalf("the attack corpus has %d cases; it must keep at least 150", len(attacks))
	}
	allowed := 0
	for _, a := range attacks {
		sim := bashDecision(t, set, a.Src)
		if sim.Decision == rein.Allow {
			allowed++
			t.Errorf("%q (%s): allowed by %q, risk %v", a.Src, a.Why, sim.Rule, sim.Risk)
		}
	}
	t.Logf("%d attacks, %d allowed", len(attacks), allowed)
}
