package risk

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestEvaluationHiddenInAssignments: the class of shell evaluation that
// assignments hide (subscripts, integer variables, quoted names handed to
// declare and its kin, bash's special variables), values whose scope rein
// cannot follow, wrappers that write or change folder through their own
// options, and unique prefixes of long options. None is read-only.
func TestEvaluationHiddenInAssignments(t *testing.T) {
	b, err := os.ReadFile("testdata/shell_assign_attacks.json")
	if err != nil {
		t.Fatal(err)
	}
	var attacks []struct{ Src, Why string }
	if err := json.Unmarshal(b, &attacks); err != nil {
		t.Fatal(err)
	}
	if len(attacks) < 60 {
		t.Fatalf("the class has %d cases; it must keep at least 60", len(attacks))
	}
	for _, a := range attacks {
		src := a.Src
		f, tags := classifyShell(src, "/srv/agent")
		ro := len(f.Writes) == 0
		for _, c := range f.Commands {
			ro = ro && c.ReadOnly
		}
		if ro && !slices.ContainsFunc(tags, func(t string) bool { return t != "shell" }) {
			t.Errorf("%s (%s): read-only with tags %v (commands %+v)", src, a.Why, tags, f.Commands)
		}
	}
	// What stays read-only: the same shapes without the evaluation.
	for _, src := range []string{
		"F=README.md; cat \"$F\"",
		"F=README.md && cat \"$F\"",
		"declare -i n=5; head -n $n README.md",
		"declare -a a=(x y); ls",
		"env -C src cat main.go",
		"timeout --signal=KILL 5 ls",
		"git --no-pager log",
		"grep --include=*.go --rec x .",
	} {
		f, tags := classifyShell(src, "/srv/agent")
		ro := len(f.Commands) > 0 && len(f.Writes) == 0
		for _, c := range f.Commands {
			ro = ro && c.ReadOnly
		}
		if !ro || slices.ContainsFunc(tags, func(t string) bool { return t != "shell" }) {
			t.Errorf("%s: not read-only: tags %v (commands %+v)", src, tags, f.Commands)
		}
	}
}
