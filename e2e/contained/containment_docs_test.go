package contained

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestContainmentDocsPolicy takes the net.connect policy of
// docs/containment.md as written: it must lint without a problem, and each
// `rein policy explain` line of the page must print the decision the page
// shows under it. Every registry the allowing rule names is allowed on 443
// and asked about on another port, so the asking rule names the same list.
// Its profiles example compiles.
func TestContainmentDocsPolicy(t *testing.T) {
	t.Parallel()
	const page = "docs/containment.md"
	b, err := os.ReadFile(filepath.Join(harness.ModuleRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var policies, profiles, shell [][]string
	for i := 0; i < len(lines); i++ {
		open := strings.TrimSpace(lines[i])
		if open != "```yaml" && open != "```sh" {
			continue
		}
		var block []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			block = append(block, lines[i])
		}
		if open == "```yaml" && len(block) > 0 && block[0] == "profiles:" {
			profiles = append(profiles, block)
		} else if open == "```yaml" {
			policies = append(policies, block)
		} else {
			shell = append(shell, block)
		}
	}
	if len(policies) != 2 {
		t.Fatalf("%s has %d yaml blocks; the test expects its net.connect policy and its rule on sandbox", page, len(policies))
	}
	// The profiles example is a section to copy into a policy: it compiles.
	if len(profiles) != 1 {
		t.Fatalf("%s has %d yaml blocks of profiles; the test expects one", page, len(profiles))
	}
	prof := filepath.Join(t.TempDir(), "profiles.yaml")
	writeFile(t, prof, "version: 1\n"+strings.Join(profiles[0], "\n")+"\n")
	if r := harness.Rein(t, nil, "policy", "lint", "--strict", prof); r.Code != 0 || !strings.Contains(r.Stdout, "0 warnings") {
		t.Fatalf("rein policy lint --strict on the profiles of %s: %s", page, r)
	}
	// The rule on sandbox is a rule to copy into a policy: it compiles in one.
	rule := filepath.Join(t.TempDir(), "rule.yaml")
	writeFile(t, rule, "version: 1\nrules:\n"+strings.Join(policies[1], "\n")+"\n")
	if r := harness.Rein(t, nil, "policy", "lint", "--strict", rule); r.Code != 0 || !strings.Contains(r.Stdout, "0 warnings") {
		t.Fatalf("rein policy lint --strict on the sandbox rule of %s: %s", page, r)
	}
	policy := strings.Join(policies[0], "\n") + "\n"
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, path, policy)

	r := harness.Rein(t, nil, "policy", "lint", "--strict", path)
	if r.Code != 0 || !strings.Contains(r.Stdout, "0 warnings") {
		t.Fatalf("rein policy lint --strict on the policy of %s: %s", page, r)
	}

	// The explain lines of the page, each followed by the decision it shows.
	explain := regexp.MustCompile(`^rein policy explain policy\.yaml --check '(.+)'$`)
	shown := 0
	for _, block := range shell {
		for i, line := range block {
			m := explain.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			if i+1 >= len(block) || !strings.HasPrefix(block[i+1], "# ") {
				t.Errorf("%s: %q shows no output under it", page, line)
				continue
			}
			want := strings.TrimPrefix(block[i+1], "# ")
			r := harness.Rein(t, nil, "policy", "explain", path, "--check", m[1])
			got, _, _ := strings.Cut(r.Stdout, "\n")
			if got != want {
				t.Errorf("%s: %s\n  prints %q\n  the page shows %q", page, line, got, want)
			}
			shown++
		}
	}
	if shown < 2 {
		t.Errorf("%s shows %d rein policy explain lines; it has two (a registry allowed, another host asked)", page, shown)
	}

	decide := func(host string, port int) string {
		t.Helper()
		check := `{"tool": "net.connect", "args": {"host": "` + host + `", "port": ` + strconv.Itoa(port) + `}}`
		r := harness.Rein(t, nil, "policy", "explain", path, "--check", check)
		got, _, _ := strings.Cut(r.Stdout, "\n")
		return got
	}
	allowRule := regexp.MustCompile(`(?s)id: egress-registries.*?when: (.*?)decision:`).FindStringSubmatch(policy)
	if allowRule == nil {
		t.Fatalf("no rule egress-registries in the policy of %s", page)
	}
	_, list, _ := strings.Cut(allowRule[1], "in [")
	hosts := regexp.MustCompile(`"([a-z0-9.-]+)"`).FindAllStringSubmatch(list, -1)
	if len(hosts) < 5 {
		t.Fatalf("egress-registries names %d hosts", len(hosts))
	}
	for _, h := range hosts {
		if got := decide(h[1], 443); !strings.HasPrefix(got, "decision: allow [egress-registries]") {
			t.Errorf("%s:443: %s", h[1], got)
		}
		if got := decide(h[1], 80); !strings.HasPrefix(got, "decision: ask [egress-other-hosts]") {
			t.Errorf("%s:80: %s", h[1], got)
		}
	}
	for _, h := range []string{"example.com", "registry.npmjs.org.evil.example", "evil-pypi.org"} {
		if got := decide(h, 443); !strings.HasPrefix(got, "decision: ask [egress-other-hosts]") {
			t.Errorf("%s:443: %s", h, got)
		}
	}
}
