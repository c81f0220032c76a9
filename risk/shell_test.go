package risk

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// Short names for the tags of the shell corpus.
const (
	tD  = "shell.destructive"
	tP  = "shell.privileged"
	tPS = "shell.pipe_to_shell"
	tN  = "shell.network"
	tE  = "egress"
	tS  = "shell.secrets"
	tDY = "shell.dynamic"
	tPE = "shell.parse_error"
)

var allShellTags = []string{tD, tP, tPS, tN, tE, tS, tDY, tPE}

// shellCase is one case of testdata/shell_corpus.json: has lists the tags
// that must be present, and every other tag of allShellTags must be absent.
// cmds, when set, is the exact list of command names rein must find.
type shellCase struct {
	Src  string   `json:"src"`
	Has  []string `json:"has"`
	Cmds []string `json:"cmds"`
}

// shellCorpus reads the corpus, which the sample policy's tests share.
func shellCorpus(t testing.TB) []shellCase {
	b, err := os.ReadFile("testdata/shell_corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []shellCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestShellCorpus(t *testing.T) {
	corpus := shellCorpus(t)
	if len(corpus) < 150 {
		t.Fatalf("the shell corpus has %d cases; it must keep at least 150", len(corpus))
	}
	for _, c := range corpus {
		facts, tags := ClassifyShell(c.Src)
		if !slices.Contains(tags, "shell") {
			t.Errorf("%q: tags %v lack shell", c.Src, tags)
		}
		var absent []string
		for _, tag := range allShellTags {
			if !slices.Contains(c.Has, tag) {
				absent = append(absent, tag)
			}
		}
		checkTags(t, c.Src, tags, c.Has, absent)
		if c.Cmds != nil {
			var names []string
			for _, cmd := range facts.Commands {
				names = append(names, cmd.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.Cmds, ",") {
				t.Errorf("%q: commands %v, want %v", c.Src, names, c.Cmds)
			}
		}
	}
}

func TestShellFacts(t *testing.T) {
	f, _ := ClassifyShell(`sudo rm -rf "/srv/my app" > /tmp/log 2>&1`)
	if len(f.Commands) != 1 {
		t.Fatalf("commands %+v", f.Commands)
	}
	c := f.Commands[0]
	if c.Name != "rm" || strings.Join(c.Args, "|") != "-rf|/srv/my app" {
		t.Errorf("command %+v", c)
	}
	if len(c.Redirects) != 2 || c.Redirects[0].Op != ">" || c.Redirects[0].Target != "/tmp/log" || c.Redirects[1].Op != ">&" {
		t.Errorf("redirects %+v", c.Redirects)
	}
	// A script that does not parse has no commands, only the tag.
	f, tags := ClassifyShell("rm -rf / (")
	if len(f.Commands) != 0 || !slices.Contains(tags, tPE) {
		t.Errorf("parse error: %+v %v", f, tags)
	}
}

// TestShellLimits: hostile inputs stay cheap and say they were not read.
func TestShellLimits(t *testing.T) {
	deep := "rm -rf /"
	for range 20 {
		deep = "sh -c " + quoteShell(deep)
	}
	if _, tags := ClassifyShell(deep); !slices.Contains(tags, tDY) {
		t.Errorf("nesting past the limit must be shell.dynamic: %v", tags)
	}
	if _, tags := ClassifyShell("echo {1..100000000}"); slices.Contains(tags, tD) {
		t.Errorf("a huge brace expansion: %v", tags)
	}
	// Nested substitutions are judged once each (this input took
	// exponential time before; it must finish in well under a second).
	nested := strings.Repeat("bash <($(", 40) + "curl x" + strings.Repeat("))", 40)
	if _, tags := ClassifyShell(nested); !slices.Contains(tags, tPS) {
		t.Errorf("nested substitutions around curl: %v", tags)
	}
	many := strings.Repeat("true; ", 5000)
	if f, _ := ClassifyShell(many); len(f.Commands) != maxShellCommands {
		t.Errorf("commands kept: %d, want the cap %d", len(f.Commands), maxShellCommands)
	}
}

// FuzzClassifyShell: any input classifies without a panic, and always says
// shell; a script that parses with a destructive command keeps its tag when
// wrapped in sh -c.
func FuzzClassifyShell(f *testing.F) {
	for _, c := range shellCorpus(f) {
		f.Add(c.Src)
	}
	for _, name := range []string{"testdata/shell_attacks.json", "testdata/shell_benign.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var cases []shellCase
		if err := json.Unmarshal(b, &cases); err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			f.Add(c.Src)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		facts, tags := ClassifyShell(src)
		if !slices.Contains(tags, "shell") {
			t.Fatalf("%q: tags %v", src, tags)
		}
		if len(facts.Commands) > maxShellCommands {
			t.Fatalf("%q: %d commands kept", src, len(facts.Commands))
		}
		// Closed world: shell.dynamic always says what, a read-only command
		// is resolved and writes nothing, and a variable that changes what
		// runs is never set without shell.env_exec.
		if slices.Contains(tags, tDY) != (len(facts.Dynamic) > 0) {
			t.Fatalf("%q: tags %v, dynamic facts %+v", src, tags, facts.Dynamic)
		}
		if len(facts.Writes) > 0 && !slices.Contains(tags, "shell.write") {
			t.Fatalf("%q: writes %v without shell.write", src, facts.Writes)
		}
		for _, c := range facts.Commands {
			if c.ReadOnly && (!c.Resolved || len(c.Writes) > 0) {
				t.Fatalf("%q: %+v read-only", src, c)
			}
			for name := range c.Env {
				if _, ok := envExec(name); ok && !slices.Contains(tags, "shell.env_exec") {
					t.Fatalf("%q: %s set without shell.env_exec", src, name)
				}
			}
		}
		if slices.Contains(tags, tD) && !slices.Contains(tags, tPE) && !slices.Contains(tags, tDY) {
			if _, wrapped := ClassifyShell("sh -c " + quoteShell(src)); !slices.Contains(wrapped, tD) {
				t.Fatalf("%q: destructive alone, not inside sh -c", src)
			}
		}
	})
}
