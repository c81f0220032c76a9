package risk

import (
	"path"
	"slices"
	"strings"
	"testing"
)

// TestGlobMatch: a pattern could name a file as bash reads it (bash(1),
// "Pattern Matching"; POSIX XBD 9.3.5): negation with ! or ^, a leading "]",
// classes, equivalence classes and collating symbols are each one
// character, and a "[" that nothing closes is an ordinary character.
func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"[!x]sh", "ssh", true},
		{"[^x]sh", "ssh", true},
		{".[!a]nv", ".env", true},
		{"[[:alpha:]]ey", "key", true},
		{".e[[:alpha:]]v", ".env", true},
		{"[[=s=]]hadow", "shadow", true},
		{"ss[[.h.]]", "ssh", true},
		{"[]e]nv", "env", true},
		{"[!]x]nv", "env", true},
		{"[[:alpha:]]nviron", "environ", true},
		{".[!a]x]nv", ".env", true}, // the first "]" may have been quoted: [!a\]x] is one character
		{"e[nv", "e[nv", true},      // nothing closes the "[": a literal
		{"*.pem", "key.pem", true},
		{"id_*", "id_rsa", true},
		// What no reading can match.
		{"*.go", "key.pem", false},
		{"[0-9]*.log", "shadow", false},
		{"[!x]sh", "bash", false},
		{"e[nv", "env", false},
	} {
		if got := globMatch(c.pattern, c.name); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// TestShellGlobBracketSecrets: a bracket expression in a path does not hide
// a secret read. Each command reads a file shell-secrets denies when
// written plainly.
func TestShellGlobBracketSecrets(t *testing.T) {
	for _, src := range []string{
		"cat rein-data/admin.[[:alpha:]]ey",
		"cat ~/.[!x]sh/*",
		"cat ~/.[[:alpha:]]sh/*",
		"cat .[!a]nv",
		"cat .e[[:alpha:]]v",
		"cat /proc/self/[[:alpha:]]nviron",
		"cat /proc/self/[!x]nviron",
		"cat /etc/[[=s=]]hadow",
		"cat /etc/[[:alpha:]]hadow",
		"cat ~/.git-[[:alpha:]]redentials",
		`cat /proc/self/[!"x"]nviron`,
		`cat .[!a"]"x]nv`,
		`cat .[!a\]x]nv`,
	} {
		f, tags := ClassifyShell(src)
		if !slices.Contains(tags, tS) {
			t.Errorf("%q: tags %v, want %s", src, tags, tS)
		}
		for _, c := range f.Commands {
			if c.ReadOnly {
				t.Errorf("%q: %s read-only", src, c.Name)
			}
		}
	}
	// Globs that cannot reach a secret keep their answer.
	for _, src := range []string{"cat src/[a-z]*.go", "ls docs/[!_]*.md", "cat README.[m]d"} {
		if _, tags := ClassifyShell(src); slices.Contains(tags, tS) {
			t.Errorf("%q: tags %v, not a secret read", src, tags)
		}
	}
}

// FuzzGlobMatch: the reading of a pattern covers Go's path.Match wherever
// that one is defined (brackets there are one character too, so every name
// it matches must match here), the matcher on a tokenised name agrees with
// the intersection of two patterns when one of them is a plain name, and
// neither panics.
func FuzzGlobMatch(f *testing.F) {
	for _, s := range [][2]string{{"[!x]sh", "ssh"}, {"*.pem", "key.pem"}, {".[!a]x]nv", ".env"}, {"[[:alpha:]]ey", "key"},
		{"a*b?c[d", "a[b"}, {"[]", "]"}, {"**", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 64 || len(name) > 64 || strings.Contains(pattern, `\`) {
			return
		}
		got := globMatch(pattern, name)
		// path.Match lets "*" stop inside a multi-byte character; the
		// shell does not, so the comparison holds for ASCII.
		if ok, err := path.Match(pattern, name); err == nil && ok && !got && ascii(pattern+name) {
			t.Fatalf("globMatch(%q, %q) = false, path.Match says true", pattern, name)
		}
		if hasGlob(pattern) && !strings.ContainsAny(name, "*?[") {
			if both := globsIntersect(globToks(pattern, true), globToks(name, false)); both != got {
				t.Fatalf("globMatch(%q, %q) = %v, globsIntersect %v", pattern, name, got, both)
			}
		}
	})
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Glob runs for every tool spec on every check: ASCII names and patterns
// are matched in place, without copying either.
func TestGlobASCIIDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Glob("mcp__*__run_?ommand", "mcp__github__run_command") }); n != 0 {
		t.Fatalf("%v allocations per ASCII match", n)
	}
	if !Glob("mcp__*__run_?ommand", "mcp__github__run_command") || Glob("fs.*", "fß.read") || !Glob("fß.*", "fß.read") {
		t.Fatal("ASCII and non-ASCII matches disagree with the pattern")
	}
}
