package release

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/internal/testenv"
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
	f, err := os.Open(filepath.Join(harness.ModuleRoot, "README.md"))
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
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	agent := harness.AgentKey(t, s, s.AdminKey(), "builder", "demo")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.Symlink(harness.Bin, filepath.Join(dir, "bin", "rein")); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		cmd := exec.Command("bash", "-c", c.cmd)
		cmd.Dir, cmd.Env = dir, s.ClientEnv(agent)
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

// readmeBlock returns the README's first shell block that contains marker:
// its line number and its lines.
func readmeBlock(t *testing.T, marker string) (int, []string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(harness.ModuleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	start, inBlock := 0, false
	for n, line := range strings.Split(string(src), "\n") {
		switch {
		case !inBlock && strings.HasPrefix(line, "```sh"):
			inBlock, start, block = true, n+2, nil
		case inBlock && strings.HasPrefix(line, "```"):
			inBlock = false
			if slices.ContainsFunc(block, func(l string) bool { return strings.Contains(l, marker) }) {
				return start, block
			}
		case inBlock:
			block = append(block, line)
		}
	}
	t.Fatalf("README.md has no shell block with %q", marker)
	return 0, nil
}

// TestReadmeMCPDemoAsWritten runs the README's MCP gateway demo exactly as
// written (its JSON-RPC lines piped into `bin/rein mcp` in front of the
// reference filesystem server, from npm) against a server with the sample
// policy: the read is forwarded and answered, the write outside the
// workspace is answered at once with the approval it waits for, as the
// README shows, and the whole demo ends.
func TestReadmeMCPDemoAsWritten(t *testing.T) {
	t.Parallel()
	line, block := readmeBlock(t, "bin/rein mcp --name fs")
	var script []string
	for _, l := range block {
		if !strings.HasPrefix(l, "#") {
			script = append(script, l)
		}
	}
	npm := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "e2e", "mcp"))
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	agent := harness.AgentKey(t, s, s.AdminKey(), "claude", "demo")
	// A directory like a clone of the repository: bin/rein, and the npm
	// packages where `npx -y` finds the reference server without a download.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	for link, target := range map[string]string{"bin/rein": harness.Bin, "node_modules": filepath.Join(npm, "node_modules"),
		"package.json": filepath.Join(npm, "package.json")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = dir, harness.CleanEnv(s.ClientEnv(agent)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	started := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("README.md:%d: the MCP demo failed after %s: %v\nstdout:\n%s\nstderr:\n%s", line, time.Since(started).Round(time.Second), err, out, stderr.String())
	}
	answers := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.ID != 0 {
			answers[m.ID] = string(m.Result)
		}
	}
	var read, write struct {
		Content []struct{ Text string }
		IsError bool
	}
	if json.Unmarshal([]byte(answers[2]), &read) != nil || read.IsError || len(read.Content) == 0 || !strings.Contains(read.Content[0].Text, "/tmp/rein-demo") {
		t.Errorf("README.md:%d: the listing (id 2) is not answered by the server: %s\nall output:\n%s\nstderr:\n%s", line, answers[2], out, stderr.String())
	}
	if json.Unmarshal([]byte(answers[3]), &write) != nil || !write.IsError || len(write.Content) == 0 ||
		!regexp.MustCompile(`^fs\.write_file needs approval apr_\S+ \(http://\S+/approvals/apr_\S+\): .*Nobody decided within 0s`).MatchString(write.Content[0].Text) {
		t.Errorf("README.md:%d: the write (id 3) is not answered with its approval at once: %s\nall output:\n%s\nstderr:\n%s", line, answers[3], out, stderr.String())
	}
	// What the README shows under the demo is what rein answered.
	shown := strings.Join(block, "\n")
	for _, want := range []string{`"text":"Allowed directories:\n/tmp/rein-demo"`, "fs.write_file needs approval apr_", "Nobody decided within 0s", `"isError":true`} {
		if !strings.Contains(shown, want) {
			t.Errorf("README.md:%d: the demo's comments no longer show %q", line, want)
		}
	}
}

// TestReadmeQuickStartHasPasskeys: the tour's large payment needs a passkey
// (step_up). On a server started as the quick start starts it (no
// base_url, a loopback address), people reach rein at localhost, which
// WebAuthn accepts: the approval's link names it, the console offers a
// passkey with localhost as its relying party, and rein says where the
// console is. An IP address there made every passkey ceremony a 409.
func TestReadmeQuickStartHasPasskeys(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	port := s.URL[strings.LastIndexByte(s.URL, ':')+1:]
	base := "http://localhost:" + port
	// The line follows "rein is listening on": it may still be on its way.
	want := "the console, and the links in approvals, are at " + base + "/"
	harness.Eventually(t, 5*time.Second, "rein serve says where the console is ("+want+")", func() string {
		if !strings.Contains(s.Stdout.String(), want) {
			return s.Stdout.String()
		}
		return ""
	})
	admin := s.AdminKey()
	agent := harness.AgentKey(t, s, admin, "builder", "demo")
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", admin, []byte(`{"name":"bob","tenant":"demo","roles":["approver"],"groups":["finance"]}`), "application/json")
	if code != 201 {
		t.Fatalf("create approver: %d %s", code, body)
	}
	var bob struct{ Key string }
	json.Unmarshal(body, &bob)

	code, body = harness.HTTPDo(t, "POST", s.URL+"/v1/check", agent, []byte(`{"tool":"payments.transfer","args":{"amount":5000,"to":"acme"},"intent":"pay invoice 42"}`), "application/json")
	var res struct {
		Decision string
		Approval struct{ ID, URL string }
	}
	if code != 200 || json.Unmarshal(body, &res) != nil || res.Decision != "ask" {
		t.Fatalf("the tour's payment: %d %s", code, body)
	}
	if want := base + "/approvals/" + res.Approval.ID; res.Approval.URL != want {
		t.Errorf("the approval's link is %q, want %q", res.Approval.URL, want)
	}
	// Without a passkey the approver is told to confirm in the console.
	code, body = harness.HTTPDo(t, "POST", s.URL+"/v1/approvals/"+res.Approval.ID+"/votes", bob.Key, []byte(`{"vote":"approve","revision":1}`), "application/json")
	if code != 403 || !strings.Contains(string(body), base+"/approvals/"+res.Approval.ID) {
		t.Errorf("an approving vote without a passkey: %d %s; want 403 naming the console page", code, body)
	}
	// The console can register a passkey for the approver.
	code, body = harness.HTTPDo(t, "POST", s.URL+"/v1/passkeys/registration", bob.Key, nil, "")
	var reg struct {
		Options struct {
			PublicKey struct {
				RP struct{ ID string } `json:"rp"`
			} `json:"publicKey"`
		} `json:"options"`
		Ceremony string `json:"ceremony"`
	}
	if code != 200 || json.Unmarshal(body, &reg) != nil || reg.Options.PublicKey.RP.ID != "localhost" || reg.Ceremony == "" {
		t.Errorf("a passkey registration on the quick-start server: %d %s; want 200 with relying party localhost", code, body)
	}
}

// TestReadmeTourLeavesTheCloneClean: every file the tour's commands write
// into the clone (`-o`, `--out`, `--pin`, `> file` of `bin/rein` and `go
// build` lines) is one .gitignore names,
// so that the tour leaves `git status` clean and a later build of the clone
// is not marked +dirty.
func TestReadmeTourLeavesTheCloneClean(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(harness.ModuleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	written := regexp.MustCompile(`(?:^|\s)(?:(?:-o|--out|--pin)\s+|>\s*)([^\s&|;'"()]+)`)
	var files []string
	inBlock := false
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock && strings.HasPrefix(line, "```sh")
			continue
		}
		// The tour's commands, run in the clone: bin/rein and go build.
		if !inBlock || !strings.HasPrefix(line, "bin/rein ") && !strings.HasPrefix(line, "go build ") {
			continue
		}
		if i := strings.Index(line, " # "); i >= 0 {
			line = line[:i]
		}
		for _, m := range written.FindAllStringSubmatch(line, -1) {
			f := m[1]
			if strings.HasPrefix(f, "/") || strings.HasPrefix(f, "$") || strings.HasPrefix(f, "&") {
				continue // outside the clone, or not a file
			}
			files = append(files, strings.TrimPrefix(f, "./"))
		}
	}
	for _, want := range []string{"bin/rein", "audit-bundle", "last.checkpoint", "rein-audit.pub"} {
		if !slices.Contains(files, want) {
			t.Errorf("found no command writing %s in the README (found %q): the parser misses it", want, files)
		}
	}
	for _, f := range files {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", f)
		cmd.Dir = harness.ModuleRoot
		if err := cmd.Run(); err != nil {
			t.Errorf("the README's tour writes %s into the clone, and .gitignore does not name it (git check-ignore: %v)", f, err)
		}
	}
}
