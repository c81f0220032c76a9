// Package examples holds the sample policy; its tests hold the policy to
// the promises the README makes about it.
package examples

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
)

// TestSamplePolicyRoutesShellRisk runs every case of the shell classifier's
// corpus through the sample policy as a Bash call: whatever is destructive,
// privileged, pipes code into a shell, reads secrets, reaches a private
// address or could not be read must be denied or go to a person, and only
// commands with no risk tag at all may run unasked.
func TestSamplePolicyRoutesShellRisk(t *testing.T) {
	src, err := os.ReadFile("policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	set := policy.NewSet(p, nil)
	b, err := os.ReadFile("../risk/testdata/shell_corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []struct {
		Src string   `json:"src"`
		Has []string `json:"has"`
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	risky := []string{"shell.destructive", "shell.privileged", "shell.pipe_to_shell", "shell.secrets",
		"shell.dynamic", "shell.parse_error", "url.private", "url.metadata", "sql.destructive"}
	counts := map[rein.Decision]int{}
	for _, c := range corpus {
		args, _ := json.Marshal(map[string]string{"command": c.Src})
		sim, err := pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: "Bash", Agent: "agent", Args: args}, nil, time.Now())
		if err != nil {
			t.Fatalf("%q: %v", c.Src, err)
		}
		counts[sim.Decision]++
		isRisky := slices.ContainsFunc(risky, func(tag string) bool { return slices.Contains(sim.Risk, tag) })
		if isRisky && sim.Decision != rein.Deny && sim.Decision != rein.Ask {
			t.Errorf("%q (risk %v): %s by %q; a risky command must be denied or asked", c.Src, sim.Risk, sim.Decision, sim.Rule)
		}
		if sim.Decision == rein.Allow && len(c.Has) > 0 {
			t.Errorf("%q (risk %v): allowed by %q", c.Src, sim.Risk, sim.Rule)
		}
		for _, tag := range []string{"shell.pipe_to_shell", "shell.secrets"} {
			if slices.Contains(sim.Risk, tag) && sim.Decision != rein.Deny {
				t.Errorf("%q: %s must be denied, got %s", c.Src, tag, sim.Decision)
			}
		}
	}
	if counts[rein.Allow] == 0 || counts[rein.Ask] == 0 || counts[rein.Deny] == 0 {
		t.Errorf("decisions %v: the corpus should exercise allow, ask and deny", counts)
	}
	t.Logf("decisions over %d commands: %v", len(corpus), counts)
}
