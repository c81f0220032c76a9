package examples

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/sqlite"
	"go.yaml.in/yaml/v3"
)

// sampleServer is the sample policy behind the real decision path (SQLite
// store, sessions, approvals, audit), with one agent key and two sessions:
// "run", started contained as rein run starts it, and "hooks", an ordinary
// session such as Claude Code's hooks make.
type sampleServer struct {
	p   *pipeline.Pipeline
	key *rein.Key
}

const (
	contained   = "run"
	uncontained = "hooks"
)

func newSampleServer(t *testing.T) *sampleServer {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	src, err := os.ReadFile("policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	active := &policy.Active{}
	active.Set("", pol)
	s := &sampleServer{
		p:   &pipeline.Pipeline{Store: store, Policies: active, BaseURL: "http://rein", Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		key: &rein.Key{ID: "key_agent", Name: "agent", Tenant: "default", Roles: []rein.Role{rein.RoleAgent}},
	}
	s.key.CreatedAt, s.key.SecretHash = time.Now(), rein.HashSecret(s.key.ID)
	if err := store.CreateKey(ctx, s.key, nil); err != nil {
		t.Fatal(err)
	}
	st := rein.SandboxStart{Profile: "coding", Workspace: "/srv/agent", Command: []string{"claude"}, Features: "landlock seccomp"}
	if _, err := s.p.StartSandbox(ctx, s.key, contained, st); err != nil {
		t.Fatalf("starting session %s contained: %v", contained, err)
	}
	return s
}

// decide makes one check in session and returns rein's answer.
func (s *sampleServer) decide(t *testing.T, session, tool string, args any) *rein.CheckRecord {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.p.Check(context.Background(), s.key, &rein.CheckRequest{Tool: tool, Args: b, Session: session})
	if err != nil {
		t.Fatalf("%s %s in %s: %v", tool, b, session, err)
	}
	return rec
}

// shell decides a command as the shell.exec check an agent's shell tool makes.
func (s *sampleServer) shell(t *testing.T, session, command string) *rein.CheckRecord {
	t.Helper()
	return s.decide(t, session, "shell.exec", map[string]string{"command": command})
}

// devCommand is one line of a corpus in testdata: the command and the
// tldr-pages page it was adapted from.
type devCommand struct {
	src, page string
}

// readCommands reads a corpus: one command a line, each under a
// "# tldr: PAGE" line naming its source; other # lines are comments.
func readCommands(t *testing.T, path string) []devCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []devCommand
	page, seen := "", map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# tldr: "):
			page = strings.TrimPrefix(line, "# tldr: ")
		case line == "" || strings.HasPrefix(line, "#"):
		case page == "":
			t.Fatalf("%s:%d: %q has no source page above it", path, n, line)
		case seen[line]:
			t.Fatalf("%s:%d: %q appears twice", path, n, line)
		case strings.Contains(line, "{{"):
			t.Fatalf("%s:%d: %q keeps a tldr placeholder", path, n, line)
		default:
			seen[line] = true
			out = append(out, devCommand{src: line, page: page})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestContainedWorkFlows decides every everyday developer command of the
// corpus as a shell.exec check, once in a session rein run started
// contained and once in an ordinary session (hook mode): contained, at
// least 90 % must run without a person. The hook-mode rate is reported
// beside it, with no threshold: there the sample policy asks for anything
// beyond reading. Denials (false alarms, in this corpus) are reported.
func TestContainedWorkFlows(t *testing.T) {
	const corpus = "testdata/dev_commands.txt"
	cmds := readCommands(t, corpus)
	if len(cmds) < 150 {
		t.Fatalf("%s has %d commands; it must keep at least 150", corpus, len(cmds))
	}
	s := newSampleServer(t)
	allowed, denied := map[string]int{}, map[string]int{}
	for _, session := range []string{contained, uncontained} {
		for _, c := range cmds {
			rec := s.shell(t, session, c.src)
			switch {
			case rec.Decision == rein.Allow:
				allowed[session]++
			case rec.Decision == rein.Deny:
				denied[session]++
				t.Logf("%s: denied: %q (%s): by %q, risk %v", session, c.src, c.page, rec.Rule, rec.Risk)
			case session == contained:
				t.Logf("%s: %s: %q: by %q, risk %v", session, rec.Decision, c.src, rec.Rule, rec.Risk)
			}
		}
	}
	rate := func(n int) string {
		return fmt.Sprintf("%d of %d (%.1f %%)", n, len(cmds), 100*float64(n)/float64(len(cmds)))
	}
	t.Logf("run without a person: contained (rein run, coding) %s, %d denied; hook mode %s, %d denied",
		rate(allowed[contained]), denied[contained], rate(allowed[uncontained]), denied[uncontained])
	if 10*allowed[contained] < 9*len(cmds) {
		t.Errorf("contained, %s run without a person; the sample policy promises at least 90 %%", rate(allowed[contained]))
	}
	if allowed[uncontained] >= allowed[contained] {
		t.Errorf("hook mode allows %d, contained %d: containment should be what lets work run", allowed[uncontained], allowed[contained])
	}
}

// TestContainedStillAsks: commands that destroy work, cross the boundary
// (push, publish, upload) or need privilege still go to a person inside
// containment, or are denied, as they are outside it; the contained rules
// never turn one of them into an allow.
func TestContainedStillAsks(t *testing.T) {
	const corpus = "testdata/dev_commands_dangerous.txt"
	cmds := readCommands(t, corpus)
	if len(cmds) < 30 {
		t.Fatalf("%s has %d commands; it must keep at least 30", corpus, len(cmds))
	}
	s := newSampleServer(t)
	for _, c := range cmds {
		in, out := s.shell(t, contained, c.src), s.shell(t, uncontained, c.src)
		if in.Decision != rein.Ask && in.Decision != rein.Deny {
			t.Errorf("contained: %q: %s by %q (risk %v); it must ask or be denied", c.src, in.Decision, in.Rule, in.Risk)
		}
		if in.Decision != out.Decision {
			t.Errorf("%q: %s by %q contained, %s by %q outside; containment must not change it", c.src, in.Decision, in.Rule, out.Decision, out.Rule)
		}
	}
}

// TestContainedRefusesShellAttacks: no command of the attack corpus runs
// unasked in either session, and whatever the shell classifier's corpus
// tags as risky is denied or asked inside containment too.
func TestContainedRefusesShellAttacks(t *testing.T) {
	s := newSampleServer(t)
	var attacks []struct {
		Src string `json:"src"`
		Why string `json:"why"`
	}
	readJSON(t, "../risk/testdata/shell_attacks.json", &attacks)
	if len(attacks) < 150 {
		t.Fatalf("the attack corpus has %d cases; it must keep at least 150", len(attacks))
	}
	allowed := map[string]int{}
	for _, session := range []string{contained, uncontained} {
		for _, a := range attacks {
			if rec := s.shell(t, session, a.Src); rec.Decision == rein.Allow {
				allowed[session]++
				t.Errorf("%s: %q (%s): allowed by %q, risk %v", session, a.Src, a.Why, rec.Rule, rec.Risk)
			}
		}
	}
	t.Logf("%d attacks: %d allowed contained, %d in hook mode", len(attacks), allowed[contained], allowed[uncontained])

	var corpus []struct {
		Src string   `json:"src"`
		Has []string `json:"has"`
	}
	readJSON(t, "../risk/testdata/shell_corpus.json", &corpus)
	risky := []string{"shell.destructive", "shell.privileged", "shell.pipe_to_shell", "shell.secrets", "shell.exec_config",
		"shell.env_exec", "shell.dynamic", "shell.parse_error", "egress", "url.private", "url.metadata", "sql.destructive"}
	for _, c := range corpus {
		rec := s.shell(t, contained, c.Src)
		if slices.ContainsFunc(risky, func(tag string) bool { return slices.Contains(rec.Risk, tag) }) &&
			rec.Decision != rein.Deny && rec.Decision != rein.Ask {
			t.Errorf("contained: %q (risk %v): %s by %q; a risky command must be denied or asked", c.Src, rec.Risk, rec.Decision, rec.Rule)
		}
		for _, tag := range []string{"shell.pipe_to_shell", "shell.secrets"} {
			if slices.Contains(rec.Risk, tag) && rec.Decision != rein.Deny {
				t.Errorf("contained: %q: %s must be denied, got %s", c.Src, tag, rec.Decision)
			}
		}
	}
}

// TestContainedEgress: from a contained run, the package registries and
// model APIs are reached on 443 without a person, however often (rein run's
// proxy checks every connection, and a package manager opens many); any
// other host or port asks; outside containment no rule allows net.connect.
func TestContainedEgress(t *testing.T) {
	s := newSampleServer(t)
	connect := func(session, host string, port int) *rein.CheckRecord {
		return s.decide(t, session, "net.connect", map[string]any{"host": host, "port": port})
	}
	registries := []string{"proxy.golang.org", "sum.golang.org", "registry.npmjs.org", "registry.yarnpkg.com", "pypi.org",
		"files.pythonhosted.org", "crates.io", "index.crates.io", "static.crates.io", "api.anthropic.com", "api.openai.com"}
	for _, h := range registries {
		for i := 0; i < 5; i++ {
			if rec := connect(contained, h, 443); rec.Decision != rein.Allow || rec.Rule != "egress-registries" {
				t.Errorf("contained, connection %d to %s:443: %s by %q", i+1, h, rec.Decision, rec.Rule)
			}
		}
		if rec := connect(contained, h, 80); rec.Decision != rein.Ask || rec.Rule != "egress-other-hosts" {
			t.Errorf("contained, %s:80: %s by %q", h, rec.Decision, rec.Rule)
		}
		if rec := connect(uncontained, h, 443); rec.Decision != rein.Deny {
			t.Errorf("outside containment, %s:443: %s by %q", h, rec.Decision, rec.Rule)
		}
	}
	for _, h := range []string{"example.com", "github.com", "registry.npmjs.org.evil.example", "evil-pypi.org", "pypi.org.", "PYPI.ORG"} {
		if rec := connect(contained, h, 443); rec.Decision != rein.Ask || rec.Rule != "egress-other-hosts" {
			t.Errorf("contained, %s:443: %s by %q", h, rec.Decision, rec.Rule)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestContainedRulesAgree: shell-needs-review leaves out exactly what
// shell-contained-work allows, word for word, so the two copies of the
// condition cannot drift apart (a broader allow would leave commands no rule
// matches, denied; a narrower one would ask for contained work).
func TestContainedRulesAgree(t *testing.T) {
	src, err := os.ReadFile("policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules []struct {
			ID   string `yaml:"id"`
			When string `yaml:"when"`
		} `yaml:"rules"`
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	when := map[string]string{}
	for _, r := range doc.Rules {
		when[r.ID] = strings.Join(strings.Fields(r.When), " ")
	}
	work, review := when["shell-contained-work"], when["shell-needs-review"]
	if work == "" || !strings.HasSuffix(review, "&& !("+work+")") {
		t.Errorf("shell-needs-review must end with && !(<the condition of shell-contained-work>)\nwork:   %s\nreview: %s", work, review)
	}
}
