package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeCheck is one `bin/rein check …` line of the README's tour with the
// answer the README shows under it.
type readmeCheck struct {
	line   int
	cmd    string
	output []string // the "# …" lines that follow, without "# "
}

// readmeChecks reads the README's shell blocks and returns every `bin/rein
// check` command that is followed by its printed answer.
func readmeChecks(t *testing.T) []readmeCheck {
	t.Helper()
	f, err := os.Open(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCheck
	var cur *readmeCheck
	inBlock := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock && strings.HasPrefix(line, "```sh")
			cur = nil
		case !inBlock:
		case strings.HasPrefix(line, "bin/rein check ") && !strings.Contains(line, "--wait"):
			out = append(out, readmeCheck{line: n, cmd: line})
			cur = &out[len(out)-1]
		case cur != nil && strings.HasPrefix(line, "# "):
			cur.output = append(cur.output, strings.TrimPrefix(line, "# "))
		default:
			cur = nil
		}
	}
	return out
}

// readmePattern turns a line the README shows into a pattern: "..." and
// "apr_01J..." stand for whatever rein printed there.
func readmePattern(shown string) *regexp.Regexp {
	shown = regexp.MustCompile(`\b([a-z]+_)01J\.\.\.`).ReplaceAllString(shown, "$1...") // ids: apr_01J... is any apr_ id
	parts := strings.Split(shown, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// TestReadmeTourAsWritten runs the README tour's `bin/rein check` commands
// exactly as written (through a shell, from a directory with bin/rein)
// against a server with the sample policy, and compares what they print with
// what the README shows: the decision line, and every risk and args line it
// quotes. The README cannot drift from what rein does.
func TestReadmeTourAsWritten(t *testing.T) {
	checks := readmeChecks(t)
	if len(checks) < 8 {
		t.Fatalf("found %d `bin/rein check` examples in the README; the tour has more", len(checks))
	}
	s := startServer(t, t.TempDir(), nil, "--policy", samplePolicy)
	agent := createAgentKey(t, s, s.adminKey(), "builder", "demo")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.Symlink(reinBin, filepath.Join(dir, "bin", "rein")); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		cmd := exec.Command("bash", "-c", c.cmd)
		cmd.Dir, cmd.Env = dir, s.clientEnv(agent)
		out, _ := cmd.Output() // exit 1 is a negative answer, as the README says
		printed := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		for _, shown := range c.output {
			found := false
			for _, p := range printed {
				if readmePattern(strings.TrimSpace(shown)).MatchString(strings.TrimSpace(p)) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("README.md:%d: `%s`\n  the README shows: %s\n  rein printed:\n    %s", c.line, c.cmd, shown, strings.Join(printed, "\n    "))
			}
		}
	}
}
