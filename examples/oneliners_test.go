package examples

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/reinhq/rein"
)

// labelledLine is one line of testdata/oneliners.txt.
type labelledLine struct {
	src       string
	dangerous bool
	page      string
}

func readLabelled(t *testing.T, path string) []labelledLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledLine
	seen := map[string]bool{}
	page := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "# tldr: "); ok {
			page = p
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		label, src, _ := strings.Cut(line, " ")
		if label != "harmless" && label != "dangerous" {
			t.Fatalf("%s:%d: the line must start with harmless or dangerous: %q", path, n, line)
		}
		switch {
		case page == "":
			t.Fatalf("%s:%d: no # tldr: line names the page %q comes from", path, n, src)
		case seen[src]:
			t.Fatalf("%s:%d: %q twice", path, n, src)
		case strings.Contains(src, "{{"):
			t.Fatalf("%s:%d: a placeholder is left in %q", path, n, src)
		}
		seen[src] = true
		out = append(out, labelledLine{src: src, dangerous: label == "dangerous", page: page})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSamplePolicyOnLabelledOneLiners: the hand-labelled corpus through
// the sample policy as Bash calls outside containment. No dangerous line
// may run unasked; at least 60 % of the harmless ones must (docs/risk.md
// lists the rest).
func TestSamplePolicyOnLabelledOneLiners(t *testing.T) {
	set := samplePolicy(t)
	lines := readLabelled(t, "testdata/oneliners.txt")
	if len(lines) < 200 {
		t.Fatalf("the corpus has %d lines; it must keep at least 200", len(lines))
	}
	harmless, harmlessAllowed, dangerous := 0, 0, 0
	for _, l := range lines {
		sim := bashDecision(t, set, l.src)
		allowed := sim.Decision == rein.Allow
		if l.dangerous {
			dangerous++
			if allowed {
				t.Errorf("dangerous %q (%s) allowed by %q, risk %v", l.src, l.page, sim.Rule, sim.Risk)
			}
			continue
		}
		harmless++
		if allowed {
			harmlessAllowed++
		} else {
			t.Logf("harmless, not allowed: %q: %s by %q, risk %v", l.src, sim.Decision, sim.Rule, sim.Risk)
		}
	}
	share := 100 * float64(harmlessAllowed) / float64(harmless)
	t.Logf("%d lines: %d harmless, %d of them allowed (%.1f %%); %d dangerous", len(lines), harmless, harmlessAllowed, share, dangerous)
	if share < 60 {
		t.Errorf("%.1f %% of the harmless lines allowed; the goal is at least 60 %%", share)
	}
}
