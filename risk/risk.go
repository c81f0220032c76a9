// Package risk derives facts and risk tags from a check's arguments: what a
// shell command, URL, path or SQL statement really does, whatever the agent
// says about it. It is a pure package: arguments in, facts and tags out.
package risk

import (
	"net/netip"
	"slices"
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

// Env is what Assess needs besides the check: the policy's tool specs, the
// workspace root paths should stay under (empty: none), and, for tools whose
// spec says resolve: true, a way to look host names up (nil: names are not
// resolved). Lookup is the only I/O the classifiers can reach, and only
// through what the caller passes in.
type Env struct {
	Tools     []ToolSpec
	Workspace string
	Lookup    func(host string) []netip.Addr
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

// Assess derives facts and tags for one tool call: the shell, URL, path and
// SQL classifiers read the arguments that the matching tool specs name (the
// policy's own, then BuiltinTools), and the secret and money detectors read
// every argument. Client labels never reach this function, so they cannot
// remove or change a tag.
func Assess(tool string, args map[string]any, env Env) Assessment {
	a := Assessment{Tags: []string{}, Facts: EmptyFacts()}
	tags := map[string]bool{}
	var commands, urls, paths, statements []any
	seen := map[string]bool{}
	webCall := false // a URL argument was read (not only URLs inside commands)
	// each calls classify once per distinct string held by the named arguments.
	each := func(kind string, names []string, classify func(raw string) []string) {
		for _, name := range names {
			for _, raw := range stringsAt(args, name) {
				if seen[kind+":"+raw] {
					continue
				}
				seen[kind+":"+raw] = true
				for _, t := range classify(raw) {
					tags[t] = true
				}
			}
		}
	}
	addURL := func(f URLFact) {
		urls = append(urls, map[string]any{"url": f.URL, "scheme": f.Scheme, "host": f.Host, "port": int64(f.Port),
			"ip": f.IP, "private": f.Private})
	}
	addSQL := func(st SQLStatement) {
		tables := make([]any, len(st.Tables))
		for i, t := range st.Tables {
			tables[i] = t
		}
		statements = append(statements, map[string]any{"verb": st.Verb, "tables": tables, "has_where": st.HasWhere})
	}
	for _, s := range slices.Concat(env.Tools, BuiltinTools) {
		if !Glob(s.Pattern, tool) {
			continue
		}
		a.TaintsSession = a.TaintsSession || s.TaintsSession
		each("shell", s.Shell, func(raw string) []string {
			f, ts := ClassifyShell(raw)
			for _, c := range f.Commands {
				commands = append(commands, commandFact(c))
			}
			for _, u := range f.URLs {
				addURL(u)
			}
			for _, st := range f.SQL {
				addSQL(st)
			}
			return ts
		})
		each("url", s.URL, func(raw string) []string {
			webCall = true
			f, ts := ClassifyURL(raw)
			if s.Resolve && env.Lookup != nil && f.IP == "" && f.Host != "" && !f.Private {
				f, ts = resolved(f, ts, env.Lookup(f.Host))
			}
			addURL(f)
			return ts
		})
		each("path", s.Path, func(raw string) []string {
			f, ts := ClassifyPath(raw, env.Workspace)
			paths = append(paths, map[string]any{"path": f.Path, "clean": f.Clean, "sensitive": f.Sensitive,
				"outside_workspace": f.OutsideWorkspace})
			return ts
		})
		each("sql", s.SQL, func(raw string) []string {
			stmts, ts := ClassifySQL(raw)
			for _, st := range stmts {
				addSQL(st)
			}
			return ts
		})
	}
	if len(commands) > 0 {
		a.Facts["shell"] = map[string]any{"commands": commands}
	}
	if len(statements) > 0 {
		a.Facts["sql"] = map[string]any{"statements": statements}
	}
	if len(paths) > 0 {
		a.Facts["paths"] = paths
	}
	if len(urls) > 0 {
		a.Facts["urls"] = urls
		if webCall && sendsBody(tool, args) {
			tags["egress"] = true
		}
	}
	secrets, ts := ScanArgs(args)
	for _, t := range ts {
		tags[t] = true
	}
	for _, f := range secrets {
		a.Facts["secrets"] = append(a.Facts["secrets"].([]any), map[string]any{"arg": f.Arg, "kind": f.Kind})
	}
	a.Tags = sortedTags(tags)
	return a
}

// resolved judges a URL by the addresses its host name resolved to: private
// when any of them is (an attacker's name can point anywhere), and the first
// private address (else the first address) as its ip.
func resolved(f URLFact, tags []string, addrs []netip.Addr) (URLFact, []string) {
	for _, a := range addrs {
		a = a.Unmap()
		if f.IP == "" {
			f.IP = a.String()
		}
		if metadataIPs[a] && !slices.Contains(tags, "url.metadata") {
			tags = append(tags, "url.metadata")
		}
		if IsPrivate(a) || metadataIPs[a] {
			f.IP = a.String()
			f.Private = true
		}
	}
	if f.Private && !slices.Contains(tags, "url.private") {
		tags = append(tags, "url.private")
	}
	return f, tags
}

// commandFact is a shell command as the policy sees it (facts.shell.commands).
func commandFact(c ShellCommand) map[string]any {
	args := make([]any, len(c.Args))
	for i, x := range c.Args {
		args[i] = x
	}
	redirects := make([]any, len(c.Redirects))
	for i, r := range c.Redirects {
		redirects[i] = map[string]any{"op": r.Op, "target": r.Target}
	}
	return map[string]any{"name": c.Name, "args": args, "redirects": redirects}
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
		// secrets lists where credentials were found ({arg, kind}), never their values.
		"secrets": []any{},
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
