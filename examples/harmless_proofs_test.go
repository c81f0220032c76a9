package examples

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
)

// TestSamplePolicyAllowsProvenReads: what rein proves read-only and inside
// the workspace runs unasked under the sample policy, in shell and file-tool
// form, and each near miss — an option that writes or runs, a read outside
// the workspace, names from input rein cannot bound — does not.
func TestSamplePolicyAllowsProvenReads(t *testing.T) {
	set := samplePolicy(t)
	allowed := []string{
		"grep -rn 'func ' --include='*.go' src",
		"rg -l TODO -g '*.go'",
		"find . -name '*.go' -print0 | xargs -0 wc -l",
		"grep -rlZ --include='*.py' import src | xargs -0 head -5",
		`for f in *.go; do wc -l "$f"; done`,
		"for f in go.mod go.sum; do head -3 $f; done",
		"head -n $((10*2)) README.md",
		"LC_ALL=C sort -u names.txt",
		"sort -k2 -n data.tsv | uniq -c | sort -rn | head",
		"du -sh node_modules",
		"cut -d, -f2 data.csv | tr -d '\\r'",
		"jq -r '.scripts | keys[]' package.json",
		"wc -l go.mod",
		"tail -n 20 CHANGELOG.md",
		"find . -name '*.go' -type f",
		"awk -F, '{print $1}' data.csv",
		"sed -n '1,10p' main.go",
	}
	for _, src := range allowed {
		if sim := bashDecision(t, set, src); sim.Decision != rein.Allow {
			t.Errorf("%q: %s by %q (risk %v), want allow", src, sim.Decision, sim.Rule, sim.Risk)
		}
	}
	// A recursive search that no glob narrows reads the workspace's .env
	// too: outside containment a person looks first (inside rein run such
	// files are masked: contained_test.go).
	for _, src := range []string{"grep -rn TODO src", "grep -r 'func main' .", "rg -n TODO internal", "git grep -n TODO"} {
		if sim := bashDecision(t, set, src); sim.Decision != rein.Ask || sim.Rule != "shell-reads-tree" {
			t.Errorf("%q: %s by %q (risk %v), want ask by shell-reads-tree", src, sim.Decision, sim.Rule, sim.Risk)
		}
	}
	notAllowed := []string{
		"grep -r key ~",
		"grep -r password /etc",
		"grep -r token ../other",
		"grep -rn key /proc/self/cwd",
		"rg --hidden token",
		"rg -uu token",
		"rg --pre cat token",
		"rg -g .env KEY",
		"find . -name '*.go' | xargs wc -l",
		"find . -name '*.go' -print0 | xargs -0 rm",
		"ls | xargs rm",
		"xargs rm < list",
		"find . -name .env -print0 | xargs -0 cat",
		"find . -name '*.go' -fprint out",
		"sort -o out.txt names.txt",
		"sort --files0-from=list",
		"uniq a.txt b.txt",
		"awk '{system(\"id\")}' a.txt",
		"sed -i s/a/b/ a.txt",
		"sed 'w out' a.txt",
		"sed '1e id' a.txt",
		"jq --rawfile k ~/.ssh/id_rsa -n '$k'",
		"jq -n env",
		"jq -n '$ENV'",
		`for f in .*; do cat "$f"; done`,
		`for f in ~/.aws/*; do cat "$f"; done`,
		"LC_ALL=/tmp/locale sort a.txt",
		"du -sh ~/.ssh",
		"tr a-z A-Z < ~/.aws/credentials",
	}
	for _, src := range notAllowed {
		if sim := bashDecision(t, set, src); sim.Decision == rein.Allow {
			t.Errorf("%q: allowed by %q (risk %v)", src, sim.Rule, sim.Risk)
		}
	}
	// Grep's glob picks the files it reads: not allowed unasked.
	for _, glob := range []string{".env*", "*.pem", "*", "**/*.go"} {
		args, _ := json.Marshal(map[string]string{"pattern": "KEY", "glob": glob})
		sim, err := pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: "Grep", Agent: "agent", Args: args}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if sim.Decision == rein.Allow {
			t.Errorf("Grep glob %s: allowed by %q", glob, sim.Rule)
		}
	}
	// The file tools reach the same answers for the same paths.
	for _, c := range []struct {
		tool, arg, path string
		want            rein.Decision
	}{
		{"Grep", "path", "src", rein.Allow},
		{"Grep", "path", "/srv/agent/internal", rein.Allow},
		{"Read", "file_path", "/srv/agent/README.md", rein.Allow},
		{"Grep", "path", "/home/dev/.ssh", rein.Deny},
		{"Read", "file_path", "/home/dev/.aws/credentials", rein.Deny},
		{"Grep", "path", "/srv/other", rein.Ask},
		{"Read", "file_path", "/tmp/notes.txt", rein.Ask},
	} {
		args, _ := json.Marshal(map[string]string{c.arg: c.path})
		sim, err := pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: c.tool, Agent: "agent", Args: args}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if sim.Decision != c.want {
			t.Errorf("%s %s: %s by %q (risk %v), want %s", c.tool, c.path, sim.Decision, sim.Rule, sim.Risk, c.want)
		}
	}
}

// TestSamplePolicyRefusesHiddenEvaluation: shell evaluation hidden in
// assignments, values whose scope rein cannot follow, wrappers that write
// or change folder by their own options, and unique prefixes of long
// options (risk/testdata/shell_assign_attacks.json) never run unasked.
func TestSamplePolicyRefusesHiddenEvaluation(t *testing.T) {
	set := samplePolicy(t)
	var attacks []struct{ Src, Why string }
	readJSON(t, "../risk/testdata/shell_assign_attacks.json", &attacks)
	if len(attacks) < 60 {
		t.Fatalf("the class has %d cases; it must keep at least 60", len(attacks))
	}
	for _, a := range attacks {
		if sim := bashDecision(t, set, a.Src); sim.Decision == rein.Allow {
			t.Errorf("%q (%s): allowed by %q, risk %v", a.Src, a.Why, sim.Rule, sim.Risk)
		}
	}
}
