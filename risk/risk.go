// Package risk derives facts and risk tags from a check's arguments: what a
// shell command, URL, path or SQL statement really does, whatever the agent
// says about it. It is a pure package: arguments in, facts and tags out.
package risk

import (
	"sort"
	"strings"
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

// Assess derives facts and tags for one tool call from the arguments that
// the matching tool specs name. Client labels never reach this function.
//
// Built so far: URLs and paths. The shell, SQL and secret classifiers are
// not built yet; their facts stay empty ("nothing found"), so that policies
// referring to them type-check and evaluate instead of failing. workspace,
// when set, is the root that paths should stay under.
func Assess(tool string, args map[string]any, specs []ToolSpec, workspace string) Assessment {
	a := Assessment{Tags: []string{}, Facts: EmptyFacts()}
	tags := map[string]bool{}
	var urls, paths []any
	seen := map[string]bool{}
	// each calls classify once per distinct string held by the named arguments.
	each := func(kind string, names []string, classify func(raw string) (any, []string)) []any {
		var out []any
		for _, name := range names {
			for _, raw := range stringsAt(args, name) {
				if seen[kind+":"+raw] {
					continue
				}
				seen[kind+":"+raw] = true
				fact, ts := classify(raw)
				out = append(out, fact)
				for _, t := range ts {
					tags[t] = true
				}
			}
		}
		return out
	}
	for _, s := range specs {
		if !Glob(s.Pattern, tool) {
			continue
		}
		a.TaintsSession = a.TaintsSession || s.TaintsSession
		urls = append(urls, each("url", s.URL, func(raw string) (any, []string) {
			f, ts := ClassifyURL(raw)
			return map[string]any{"url": f.URL, "scheme": f.Scheme, "host": f.Host, "port": int64(f.Port),
				"ip": f.IP, "private": f.Private}, ts
		})...)
		paths = append(paths, each("path", s.Path, func(raw string) (any, []string) {
			f, ts := ClassifyPath(raw, workspace)
			return map[string]any{"path": f.Path, "clean": f.Clean, "sensitive": f.Sensitive,
				"outside_workspace": f.OutsideWorkspace}, ts
		})...)
	}
	if len(paths) > 0 {
		a.Facts["paths"] = paths
	}
	if len(urls) > 0 {
		a.Facts["urls"] = urls
		if sendsBody(tool, args) {
			tags["egress"] = true
		}
	}
	for t := range tags {
		a.Tags = append(a.Tags, t)
	}
	sort.Strings(a.Tags)
	return a
}

// stringsAt returns the string, or the strings of a list, held by args[name].
func stringsAt(args map[string]any, name string) []string {
	switch v := args[name].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// sendsBody reports whether a web call sends data: a method that carries a
// body, named by the arguments or by the tool's last name segment.
func sendsBody(tool string, args map[string]any) bool {
	method, _ := args["method"].(string)
	if method == "" {
		method = tool[strings.LastIndexAny(tool, "._/")+1:]
	}
	switch strings.ToUpper(method) {
	case "POST", "PUT", "PATCH":
		return true
	}
	return false
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
