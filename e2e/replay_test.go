package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestPolicyReplayCLI: `rein policy replay` decides the recorded checks with
// a candidate and exits 1 when it would block what ran before; `rein policy
// push --replay` refuses such a push and pushes a harmless one.
func TestPolicyReplayCLI(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, "version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n")
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	admin := s.ClientEnv(s.AdminKey())
	agent := s.ClientEnv(harness.AgentKey(t, s, s.AdminKey(), "builder", "demo"))
	for _, p := range []string{"a.txt", "b.txt", ".env"} {
		if r := harness.Rein(t, agent, "check", "fs.read", "--args", `{"path":"`+p+`"}`); r.Code != 0 {
			t.Fatalf("check %s: %s", p, r)
		}
	}
	strict := filepath.Join(t.TempDir(), "strict.yaml")
	harness.WriteFile(t, strict, "version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n  - {id: no-env, when: 'tool == \"fs.read\" && args.path.endsWith(\".env\")', decision: deny}\n")
	r := harness.Rein(t, admin, "policy", "replay", "--since", "1h", "--tenant", "demo", "--output", "json", strict)
	var out struct {
		Checks  int `json:"checks"`
		Blocked int `json:"newly_blocked"`
	}
	json.Unmarshal([]byte(r.Stdout), &out)
	if r.Code != 1 || out.Checks != 3 || out.Blocked != 1 {
		t.Fatalf("replay of a stricter policy: %s", r)
	}
	if r := harness.Rein(t, admin, "policy", "replay", "--since", "1h", "--tenant", "demo", "--max-newly-blocked", "1", strict); r.Code != 0 || !strings.Contains(r.Stdout, "newly blocked 1") {
		t.Fatalf("replay within the threshold: %s", r)
	}
	if r := harness.Rein(t, admin, "policy", "push", "--replay", "1h", "--tenant", "demo", strict); r.Code != 1 || !strings.Contains(r.Stderr, "not pushed") {
		t.Fatalf("push past the threshold: %s", r)
	}
	same := filepath.Join(t.TempDir(), "same.yaml")
	harness.WriteFile(t, same, "version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n  - {id: never, when: 'tool == \"rm\"', decision: deny}\n")
	if r := harness.Rein(t, admin, "policy", "push", "--replay", "1h", "--tenant", "demo", same); r.Code != 0 || !strings.Contains(r.Stdout, "Active:") {
		t.Fatalf("a push that changes nothing recorded: %s", r)
	}
}
