package rein

import (
	"strings"
	"testing"
)

// TestNamePatterns: the name patterns (compiled on first use) accept and
// refuse what their messages say, at their length bounds too.
func TestNamePatterns(t *testing.T) {
	for _, c := range []struct {
		re   func() interface{ MatchString(string) bool }
		name string
		ok   []string
		bad  []string
	}{
		{func() interface{ MatchString(string) bool } { return keyNameRE() }, "key name",
			[]string{"bench", "ci.bot@acme", strings.Repeat("a", 128)}, []string{"", "-x", "a/b", strings.Repeat("a", 129)}},
		{func() interface{ MatchString(string) bool } { return tenantRE() }, "tenant",
			[]string{"acme", "a.b_c-d", strings.Repeat("a", 64)}, []string{"", "Acme", "*", strings.Repeat("a", 65)}},
		{func() interface{ MatchString(string) bool } { return groupRE() }, "group",
			[]string{"finance", "org/team@x", strings.Repeat("a", 128)}, []string{"", "/x", strings.Repeat("a", 129)}},
		{func() interface{ MatchString(string) bool } { return envNameRE() }, "variable",
			[]string{"GOFLAGS", "_X1", strings.Repeat("A", 128)}, []string{"", "1X", "A-B", strings.Repeat("A", 129)}},
		{func() interface{ MatchString(string) bool } { return ProfileNameRE() }, "profile",
			[]string{"coding", "ci-2.x_y", strings.Repeat("a", 64)}, []string{"", "Coding", ".x", strings.Repeat("a", 65)}},
	} {
		for _, s := range c.ok {
			if !c.re().MatchString(s) {
				t.Errorf("%s %q refused", c.name, s)
			}
		}
		for _, s := range c.bad {
			if c.re().MatchString(s) {
				t.Errorf("%s %q accepted", c.name, s)
			}
		}
	}
}
