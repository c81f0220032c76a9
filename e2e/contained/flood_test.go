package contained

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// floodPolicy asks people about every write rein run's walls refuse.
const floodPolicy = `version: 1
rules:
  - id: writes-ask
    when: 'tool == "fs.write"'
    decision: ask
    reason: "a person decides on writes the walls refuse"
    approval: {approvers: ["group:oncall"]}
`

// TestRunRefusedWritesDoNotFlood: ten exec-config writes at once, each one
// people could approve, fail at once and are each recorded, but only one
// approval waits for people: the others are withdrawn at once (cancelled),
// so a loop of writes cannot fill approvers' inboxes, and that one is
// withdrawn when the run ends (rein run says which). Nothing is written.
func TestRunRefusedWritesDoNotFlood(t *testing.T) {
	e := startRein(t, floodPolicy)
	ws, home := t.TempDir(), t.TempDir()
	const n = 10
	var script strings.Builder
	for i := 0; i < n; i++ {
		p := filepath.Join(ws, ".vscode", fmt.Sprintf("f%d.json", i))
		writeFile(t, p, "original\n")
		fmt.Fprintf(&script, "(echo armed >> %q) 2>/dev/null &\n", p)
	}
	script.WriteString("wait\necho done\n")

	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home)
	r := reinRun(t, env, script.String(), "run", "--workspace", ws, "--session", "flood-1", "--", "bash", "-s")
	if r.Code != 0 || !strings.Contains(r.Stdout, "done") {
		t.Fatalf("rein run: exit %d\n%s", r.Code, r)
	}
	var all []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/approvals?session=flood-1&limit=100", e.keys["alice"], &all)
	status := map[string]int{}
	for _, a := range all {
		status[a.Status]++
	}
	if status["cancelled"] != n || len(all) != n {
		t.Errorf("approvals of ten refused writes after the run: %v (%d in all), want %d cancelled\n%s", status, len(all), n, r)
	}
	if withdrawn := strings.Count(r.Stderr, "of a refused write was withdrawn: the run ended"); withdrawn != 1 {
		t.Errorf("rein run says %d approvals were withdrawn at its end, want the 1 that waited\n%s", withdrawn, r)
	}
	var checks []struct {
		Check struct{ Tool string } `json:"check"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/flood-1/checks", e.keys["alice"], &checks)
	writes := 0
	for _, c := range checks {
		if c.Check.Tool == "fs.write" {
			writes++
		}
	}
	if writes != n {
		t.Errorf("%d refused writes recorded, want %d", writes, n)
	}
	for i := 0; i < n; i++ {
		if b, err := os.ReadFile(filepath.Join(ws, ".vscode", fmt.Sprintf("f%d.json", i))); err != nil || string(b) != "original\n" {
			t.Errorf(".vscode/f%d.json was written: %q %v", i, b, err)
		}
	}
}
