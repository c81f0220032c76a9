package contained

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// writesPolicy asks the on-call group about the pre-commit hook and denies
// every other write the walls refuse, naming the rule; it allows the one
// outside path /etc/rein-allowed (which the walls refuse all the same:
// policy cannot widen them).
const writesPolicy = `version: 1
rules:
  - id: hook-asks
    when: 'tool == "fs.write" && sandbox.contained && args.path.endsWith("/.git/hooks/pre-commit")'
    decision: ask
    reason: "a person decides on a git hook"
    approval: {approvers: ["group:oncall"]}
  - {id: outside-allowed, when: 'tool == "fs.write" && args.path == "/etc/rein-allowed"', decision: allow}
  - id: other-writes
    when: 'tool == "fs.write" && !args.path.endsWith("/.git/hooks/pre-commit") && args.path != "/etc/rein-allowed"'
    decision: deny
    reason: "exec-config stays as it is"
`

// TestRunRecordsRefusedWrites: every write the walls of rein run refuse —
// files that arm later execution (VCS hooks and config, CI files of
// several forges, editor and agent MCP configs, package-manager hooks,
// Python start-up files), masked secrets, paths outside the workspace —
// is an fs.write check of the run's session, recorded with the walls that
// refused it, and fails at once; none is written without an approval. The
// one write people approve (the test votes through the API after it
// failed) is carried out by rein for exactly that path when the command
// tries again.
func TestRunRecordsRefusedWrites(t *testing.T) {
	e := startRein(t, writesPolicy)
	ws, home, state := t.TempDir(), t.TempDir(), t.TempDir()
	targets := append([]string{}, execConfigFiles...)
	targets = append(targets, ".github/actions/setup/action.yml", ".gitea/workflows/ci.yml", ".forgejo/workflows/ci.yml",
		".woodpecker.yml", ".husky/pre-push", ".zed/settings.json", ".codex/config.toml", ".git/commondir")
	for _, p := range targets {
		writeFile(t, filepath.Join(ws, p), "original\n")
	}
	writeFile(t, filepath.Join(ws, ".env"), "CANARY-writes-7f3a\n")
	writeFile(t, filepath.Join(ws, "src/main.go"), "package main\n")

	var script strings.Builder
	script.WriteString("set +e\n")
	try := func(name, cmd string) {
		fmt.Fprintf(&script, "( %s ) 2>/dev/null && echo 'WRITTEN %s' || echo 'refused %s'\n", cmd, name, name)
	}
	for _, p := range targets {
		if p == ".git/hooks/pre-commit" {
			continue
		}
		try(p, fmt.Sprintf("echo armed >> %q", filepath.Join(ws, p)))
	}
	try("rename over .git/config", fmt.Sprintf("echo '[core]' > %[1]s/.git/config.new && mv %[1]s/.git/config.new %[1]s/.git/config", ws))
	try("new hook in .git/hooks", fmt.Sprintf("echo armed > %q", filepath.Join(ws, ".git/hooks/post-checkout")))
	try("symlink to the editor tasks", fmt.Sprintf("ln -s .vscode/tasks.json %[1]s/innocent && echo armed >> %[1]s/innocent", ws))
	try("masked .env", fmt.Sprintf("echo x > %q", filepath.Join(ws, ".env")))
	try("/etc/rein-allowed", "echo x > /etc/rein-allowed")
	fmt.Fprintf(&script, "echo 'package main // edited' > %q && echo 'edited the workspace'\n", filepath.Join(ws, "src/main.go"))
	// Last: the hook people approve. The write fails at once (a blocked
	// write never waits); once people approved it, the agent tries again
	// (told by a file the test makes) and rein carries it out.
	hook := filepath.Join(ws, ".git/hooks/pre-commit")
	fmt.Fprintf(&script, "printf '#!/bin/sh\\necho approved-hook\\n' > %q 2>/dev/null && echo 'hook written at once'\n", hook)
	fmt.Fprintf(&script, "for i in $(seq 1800); do [ -e %q ] && break; sleep 0.1; done\n", filepath.Join(ws, "go-on"))
	fmt.Fprintf(&script, "printf '#!/bin/sh\\necho approved-hook\\n' > %q && echo 'hook written'\n", hook)

	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "XDG_STATE_HOME="+state)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Bin, "run", "--workspace", ws, "--session", "writes-1", "--", "bash", "-s")
	cmd.Dir, cmd.Env, cmd.Stdin = ws, harness.CleanEnv(env...), strings.NewReader(script.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// The hook's write failed and waits for an approval; alice approves it.
	var approval string
	harness.Eventually(t, 2*time.Minute, "the approval of the hook's write", func() string {
		var list []struct {
			ID string `json:"id"`
		}
		harness.GetJSON(t, e.s.URL+"/v1/approvals?status=pending&session=writes-1", e.keys["alice"], &list)
		if len(list) == 0 {
			return "no pending approval yet\n" + stderr.String()
		}
		approval = list[0].ID
		return ""
	})
	if code, body := harness.HTTPDo(t, "POST", e.s.URL+"/v1/approvals/"+approval+"/votes", e.keys["alice"], []byte(`{"vote":"approve"}`), "application/json"); code != 200 {
		t.Fatalf("approve %s: %d %s", approval, code, body)
	}
	writeFile(t, filepath.Join(ws, "go-on"), "")
	if err := <-done; err != nil {
		t.Fatalf("rein run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "WRITTEN") {
			t.Errorf("%s", line)
		}
	}
	if refused := strings.Count(out, "refused "); refused < len(targets)-1+5 {
		t.Errorf("only %d writes refused:\n%s", refused, out)
	}
	if strings.Contains(out, "hook written at once") {
		t.Errorf("the hook was written before anyone approved it:\n%s", out)
	}
	if !strings.Contains(out, "hook written") || !strings.Contains(out, "edited the workspace") {
		t.Errorf("the approved write or the workspace edit failed:\n%s\n%s", out, stderr.String())
	}
	for _, p := range targets {
		want := "original\n"
		if p == ".git/hooks/pre-commit" {
			want = "#!/bin/sh\necho approved-hook\n"
		}
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != want {
			t.Errorf("%s holds %q, want %q", p, b, want)
		}
	}
	for _, p := range []string{".git/hooks/post-checkout"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}

	// Each attempt is a check of the session, with the walls that refused it.
	var checks []struct {
		ID       string `json:"id"`
		Decision string `json:"decision"`
		Rule     string `json:"rule"`
		Approval *struct {
			ID string `json:"id"`
		} `json:"approval"`
		Check struct {
			Tool string `json:"tool"`
			Args struct {
				Path, Operation, Walls string
			} `json:"args"`
		} `json:"check"`
		Result *struct {
			Status  string `json:"status"`
			Summary string `json:"summary"`
		} `json:"result"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/writes-1/checks", e.keys["alice"], &checks)
	recorded := map[string][]string{}
	for _, c := range checks {
		if c.Check.Tool != "fs.write" {
			continue
		}
		rel := strings.TrimPrefix(c.Check.Args.Path, ws+"/")
		recorded[rel] = append(recorded[rel], c.Decision)
		if !strings.Contains(c.Check.Args.Walls, c.Check.Args.Path) || c.Check.Args.Operation == "" {
			t.Errorf("check of %s does not name the walls: %+v", rel, c.Check.Args)
		}
	}
	for _, p := range targets {
		if p == ".git/hooks/pre-commit" {
			continue
		}
		if d := recorded[p]; len(d) == 0 || d[0] != "deny" {
			t.Errorf("the write to %s is not recorded as denied: %v", p, d)
		}
	}
	for p, n := range map[string]int{".git/hooks/post-checkout": 1, ".env": 1, "/etc/rein-allowed": 1, ".git/config": 2, ".vscode/tasks.json": 2} {
		if len(recorded[p]) < n {
			t.Errorf("the write to %s is recorded %d times, want %d (the rename over it, the write through a symlink)", p, len(recorded[p]), n)
		}
	}
	if d := recorded[".git/hooks/pre-commit"]; len(d) < 2 || !contains(d, "ask") || !contains(d, "allow") {
		t.Errorf("the hook's write: %v, want asked, then allowed after the approval", d)
	}
	var carried bool
	for _, c := range checks {
		if c.Check.Tool == "fs.write" && c.Decision == "allow" && strings.HasSuffix(c.Check.Args.Path, "/.git/hooks/pre-commit") {
			carried = c.Result != nil && c.Result.Status == "succeeded" && strings.Contains(c.Result.Summary, approval)
		}
	}
	if !carried {
		t.Errorf("the approved write is not recorded as carried out by rein under approval %s: %+v", approval, checks)
	}
	// The walls are the kernel's: policy allowing a path outside does not
	// make it writable.
	if d := recorded["/etc/rein-allowed"]; len(d) == 0 || d[0] != "allow" {
		t.Errorf("/etc/rein-allowed: %v", d)
	}
	for _, c := range checks {
		if c.Check.Args.Path == "/etc/rein-allowed" && (c.Result == nil || c.Result.Status != "failed" || !strings.Contains(c.Result.Summary, "outside the workspace")) {
			t.Errorf("the allowed write the walls refused has no failed result naming them: %+v", c.Result)
		}
	}
	if _, err := os.Stat("/etc/rein-allowed"); err == nil {
		t.Errorf("/etc/rein-allowed was written outside")
	}
	if strings.Contains(out+stderr.String(), "CANARY-writes") {
		t.Errorf("the masked .env was read")
	}
	b, _ := json.Marshal(recorded)
	t.Logf("recorded writes: %s", b)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
