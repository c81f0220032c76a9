package contained

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// people could approve, hold one approval at a time: the others are
// recorded and their approvals withdrawn at once (cancelled), so a loop of
// writes cannot fill approvers' inboxes; the one held ends when people
// reject it, and nothing is written.
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
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Bin, "run", "--workspace", ws, "--session", "flood-1", "--", "bash", "-s")
	cmd.Dir, cmd.Env, cmd.Stdin = ws, harness.CleanEnv(env...), strings.NewReader(script.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	type approval struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	list := func() (pending, cancelled []approval) {
		var all []approval
		harness.GetJSON(t, e.s.URL+"/v1/approvals?session=flood-1&limit=100", e.keys["alice"], &all)
		for _, a := range all {
			switch a.Status {
			case "pending":
				pending = append(pending, a)
			case "cancelled":
				cancelled = append(cancelled, a)
			}
		}
		return
	}
	var held approval
	harness.Eventually(t, 2*time.Minute, "one pending approval and the others withdrawn", func() string {
		pending, cancelled := list()
		if len(pending) > 1 {
			t.Fatalf("%d approvals pending at once, want at most 1", len(pending))
		}
		if len(pending) != 1 || len(cancelled) != n-1 {
			return fmt.Sprintf("%d pending, %d cancelled\n%s", len(pending), len(cancelled), stderr.String())
		}
		held = pending[0]
		return ""
	})
	if code, body := harness.HTTPDo(t, "POST", e.s.URL+"/v1/approvals/"+held.ID+"/votes", e.keys["alice"], []byte(`{"vote":"reject"}`), "application/json"); code != 200 {
		t.Fatalf("reject %s: %d %s", held.ID, code, body)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the run did not end after the rejection\n%s\n%s", stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "done") {
		t.Errorf("the command did not finish:\n%s\n%s", stdout.String(), stderr.String())
	}
	if pending, cancelled := list(); len(pending) != 0 || len(cancelled) != n-1 {
		t.Errorf("after the run: %d pending, %d cancelled; want 0 and %d", len(pending), len(cancelled), n-1)
	}
	for i := 0; i < n; i++ {
		if b, err := os.ReadFile(filepath.Join(ws, ".vscode", fmt.Sprintf("f%d.json", i))); err != nil || string(b) != "original\n" {
			t.Errorf(".vscode/f%d.json was written: %q %v", i, b, err)
		}
	}
}
