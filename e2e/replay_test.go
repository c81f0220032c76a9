package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyReplayCLI: `rein policy replay` decides the recorded checks with
// a candidate and exits 1 when it would block what ran before; `rein policy
// push --replay` refuses such a push and pushes a harmless one.
func TestPolicyReplayCLI(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, pol, "version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n")
	s := startServer(t, t.TempDir(), nil, "--policy", pol)
	admin := s.clientEnv(s.adminKey())
	agent := s.clientEnv(createAgentKey(t, s, s.adminKey(), "builder", "demo"))
	for _, p := range []string{"a.txt", "b.txt", ".env"} {
		if r := rein(t, agent, "check", "fs.read", "--args", `{"path":"`+p+`"}`); r.code != 0 {
			t.Fatalf("check %s: %s", p, r)
		}
	}
	strict := filepath.Join(t.TempDir(), "strict.yaml")
	writeFile(t, strict, "version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n  - {id: no-env, when: 'tool == \"fs.read\" && args.path.endsWith(\".env\")', decision: deny}\n")
	r := rein(t, admin, "policy", "replay", "--since", "1h", "--tenant", "demo", "--output", "json", strict)
	var out struct {
		Checks  int `json:"checks"`
		Blocked int `json:"newly_blocked"`
	}
	json.Unmarshal([]byte(r.stdout), &out)
	if r.code != 1 || out.Checks != 3 || out.Blocked != 1 {
		t.Fatalf("replay of a stricter policy: %s", r)
	}
	if r := rein(t, admin, "policy", "replay", "--since", "1h", "--tenant", "demo", "--max-newly-blocked", "1", strict); r.code != 0 || !strings.Contains(r.stdout, "newly blocked 1") {
		t.Fatalf("replay within the threshold: %s", r)
	}
	if r := rein(t, admin, "policy", "push", "--replay", "1h", "--tenant", "demo", strict); r.code != 1 || !strings.Contains(r.stderr, "not pushed") {
		t.Fatalf("push past the threshold: %s", r)
	}
	same := filepath.Join(t.TempDir(), "same.yaml")
	writeFile(t, same, "version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n  - {id: never, when: 'tool == \"rm\"', decision: deny}\n")
	if r := rein(t, admin, "policy", "push", "--replay", "1h", "--tenant", "demo", same); r.code != 0 || !strings.Contains(r.stdout, "Active:") {
		t.Fatalf("a push that changes nothing recorded: %s", r)
	}
}
