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

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestRunNamesWritesAndWithdrawsAsks: a write the walls refuse is recorded
// under the name the kernel resolves, with the open's flags (an approver
// tells a truncation from an append), whether the process reached it
// through /proc/self/cwd or a chain of more than eight symbolic links; a
// path rein cannot resolve so (another process's /proc) is recorded as
// unresolved and refused; and the approval a refused write asked for is
// withdrawn, on the record, when the run ends before people decide.
func TestRunNamesWritesAndWithdrawsAsks(t *testing.T) {
	e := startRein(t, writesPolicy)
	ws, home, state := t.TempDir(), t.TempDir(), t.TempDir()
	for _, p := range []string{".git/hooks/pre-commit", ".vscode/settings.json"} {
		writeFile(t, filepath.Join(ws, p), "original\n")
	}
	script := `set +e
ln -s .vscode/settings.json l12
for i in $(seq 11 -1 0); do ln -s l$((i+1)) l$i; done
echo armed >> l0 2>/dev/null || echo 'refused chain'
printf '#!/bin/sh\n' > /proc/self/cwd/.git/hooks/pre-commit 2>/dev/null || echo 'refused proc-self'
echo x > /proc/1/cwd/escape 2>/dev/null || echo 'refused other-proc'
`
	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "XDG_STATE_HOME="+state)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Bin, "run", "--workspace", ws, "--session", "names-1", "--", "bash", "-c", script)
	cmd.Dir, cmd.Env = ws, harness.CleanEnv(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rein run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"refused chain", "refused proc-self", "refused other-proc"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, stdout.String(), stderr.String())
		}
	}
	for _, p := range []string{".git/hooks/pre-commit", ".vscode/settings.json"} {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != "original\n" {
			t.Errorf("%s holds %q", p, b)
		}
	}

	var checks []struct {
		Decision string `json:"decision"`
		Approval *struct {
			ID string `json:"id"`
		} `json:"approval"`
		Check struct {
			Tool string `json:"tool"`
			Args struct {
				Path, Operation string
				Flags           []string
				Unresolved      bool
			} `json:"args"`
		} `json:"check"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/names-1/checks", e.keys["alice"], &checks)
	got := map[string]string{}
	var approval string
	for _, c := range checks {
		if c.Check.Tool != "fs.write" {
			continue
		}
		a := c.Check.Args
		got[a.Path] = fmt.Sprintf("%s %s %v unresolved=%v", c.Decision, a.Operation, a.Flags, a.Unresolved)
		if c.Approval != nil {
			approval = c.Approval.ID
		}
	}
	for path, want := range map[string]string{
		filepath.Join(ws, ".vscode/settings.json"): "deny open [O_WRONLY O_CREAT O_APPEND] unresolved=false",
		filepath.Join(ws, ".git/hooks/pre-commit"): "ask open [O_WRONLY O_CREAT O_TRUNC] unresolved=false",
		"/proc/1/cwd/escape":                       "deny open [O_WRONLY O_CREAT O_TRUNC] unresolved=true",
	} {
		if got[path] != want {
			t.Errorf("the write to %s is recorded as %q, want %q (all: %v)", path, got[path], want, got)
		}
	}
	if approval == "" {
		t.Fatalf("the hook's write asked for no approval: %v", got)
	}
	var a struct {
		Status string `json:"status"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/approvals/"+approval, e.keys["alice"], &a)
	if a.Status != "cancelled" {
		t.Errorf("the approval of the hook's write is %q after the run ended, want cancelled", a.Status)
	}
	if !strings.Contains(stderr.String(), "withdrawn: the run ended") {
		t.Errorf("rein run does not say it withdrew the approval:\n%s", stderr.String())
	}
}
