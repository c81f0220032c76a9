// Package risk derives facts and risk tags from a check's arguments: what a
// shell command, URL, path or SQL statement really does, whatever the agent
// says about it. It is a pure package: arguments in, facts and tags out.
package risk

import (
	"sort"
)

// ToolSpec says which arguments of the tools matching Pattern (a glob on the
// tool name) carry a shell command, a URL, a path or SQL (policy.md, tools:).
type ToolSpec struct {
	Pattern       string
	Shell         []string
	URL           []string
	Path          []string
	SQL           []string
	TaintsSession bool
	Resolve       bool
}

// Assessment is what rein derived from one check's arguments.
type Assessment struct {
	// Tags is the sorted list of risk tags (risk.md).
	Tags []string
	// Facts holds facts.shell, facts.urls, facts.paths and facts.sql.
	Facts map[string]any
	// TaintsSession is true when a matching tool spec marks the session tainted.
	TaintsSession bool
}

// Assess derives facts and tags for one tool call.
//
// The classifiers themselves (shell, URL, path, SQL, secrets) are not built
// yet: until they are, every check gets the empty facts skeleton below, so
// that policies referring to facts type-check and evaluate to "nothing found"
// instead of failing. Client labels never reach this function.
func Assess(tool string, args map[string]any, specs []ToolSpec) Assessment {
	a := Assessment{Tags: []string{}, Facts: EmptyFacts()}
	for _, s := range specs {
		if Glob(s.Pattern, tool) && s.TaintsSession {
			a.TaintsSession = true
		}
	}
	sort.Strings(a.Tags)
	return a
}

// EmptyFacts is the facts map of a check in which no classifier found anything.
func EmptyFacts() map[string]any {
	return map[string]any{
		"shell": map[string]any{"commands": []any{}},
		"urls":  []any{},
		"paths": []any{},
		"sql":   map[string]any{"statements": []any{}},
	}
}

// Glob reports whether s matches the shell-style pattern: '*' matches any run
// of characters (including '/' and '.'), '?' matches one character, and '\'
// makes the next character literal.
func Glob(pattern, s string) bool {
	p := []rune(pattern)
	r := []rune(s)
	var pi, si int
	star, mark := -1, 0
	for si < len(r) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				star, mark = pi, si
				pi++
				continue
			case c == '?':
				pi++
				si++
				continue
			case c == '\\' && pi+1 < len(p):
				if p[pi+1] == r[si] {
					pi += 2
					si++
					continue
				}
			case c == r[si]:
				pi++
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		pi = star + 1
		mark++
		si = mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
