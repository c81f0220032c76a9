// Package risk derives facts and risk tags from a check's arguments: what a
// shell command, URL, path or SQL statement really does, whatever the agent
// says about it. It is a pure package: arguments in, facts and tags out.
package risk

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
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
	var commands, dynamic, writes, urls, paths, statements []any
	seen := map[string]bool{}
	webCall := false // a URL argument was read (not only URLs inside commands)
	// each calls classify once per distinct string held by the named arguments.
	each := func(kind string, names []string, classify func(raw string) []string) {
		for _, name := range names {
			vals := stringsAt(args, name)
			if kind == "shell" {
				vals = scriptsAt(args, name) // a list is one argv, not several scripts
			}
			for _, raw := range vals {
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
		statements = append(statements, map[string]any{"verb": st.Verb, "tables": tables, "has_where": st.HasWhere,
			"functions": anyStrings(st.Functions), "unknown_functions": anyStrings(st.UnknownFunctions)})
	}
	fileTool := false              // a matching spec names path arguments
	shellArgs := map[string]bool{} // the arguments matching specs name as commands
	webTool := false               // a matching spec names URL arguments
	sqlTool := false               // a matching spec names SQL arguments
	named := map[string]bool{}     // arguments a matching spec names
	// lookup resolves the host of a URL a resolve: true spec reads (its URL
	// arguments and the URLs in its commands) and judges every address.
	lookup := func(s ToolSpec, f URLFact, ts []string) (URLFact, []string) {
		if !s.Resolve || env.Lookup == nil || f.IP != "" || f.Host == "" || f.Private {
			return f, ts
		}
		addrs := env.Lookup(f.Host)
		if len(addrs) == 0 {
			// Fail closed: a name rein could not resolve (no answer, an
			// error, past the time limit) is not known public.
			ts = append(ts, "url.unresolved")
		}
		return resolved(f, ts, addrs)
	}
	for _, s := range allSpecs(env.Tools) {
		if !Glob(s.Pattern, tool) {
			continue
		}
		fileTool = fileTool || len(s.Path) > 0
		webTool = webTool || len(s.URL) > 0
		sqlTool = sqlTool || len(s.SQL) > 0
		for _, n := range s.Shell {
			shellArgs[n] = true
		}
		for _, n := range slices.Concat(s.Shell, s.URL, s.SQL) {
			named[n] = true
		}
		a.TaintsSession = a.TaintsSession || s.TaintsSession
		each("shell", s.Shell, func(raw string) []string {
			f, ts := classifyShell(raw, env.Workspace)
			for _, c := range f.Commands {
				commands = append(commands, c.fact())
			}
			dynamic = append(dynamic, f.dynamicFacts()...)
			for _, w := range f.Writes {
				writes = append(writes, w)
			}
			for _, u := range f.URLs {
				u, ts = lookup(s, u, ts)
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
			f, ts = lookup(s, f, ts)
			addURL(f)
			return ts
		})
		each("path", s.Path, func(raw string) []string {
			f, ts := ClassifyPath(raw, env.Workspace)
			paths = append(paths, map[string]any{"path": f.Path, "clean": f.Clean, "sensitive": f.Sensitive,
				"secret": f.Secret, "exec_config": f.ExecConfig, "outside_workspace": f.OutsideWorkspace, "unlisted": f.Unlisted})
			return append(ts, uncURL(f, addURL)...)
		})
		each("sql", s.SQL, func(raw string) []string {
			stmts, ts := ClassifySQL(raw)
			for _, st := range stmts {
				addSQL(st)
			}
			return ts
		})
	}
	if len(shellArgs) > 0 {
		// Closed world: what else a shell tool is given can change what
		// runs (env with LD_PRELOAD, cwd, stdin, extra argv). rein reads
		// only the command, so any other argument but the known harmless
		// ones is shell.extra_args.
		// (Without a command at all, nothing here says "shell": rein
		// read no command, and no rule about commands applies.)
		for name := range args {
			if !shellArgs[name] && !harmlessShellArgs[name] {
				tags["shell.extra_args"] = true
			}
		}
	}
	if sqlTool {
		// Closed world: a database tool may take its SQL under a name the
		// spec does not give (statement, sql, a list or object). Every
		// other string that starts with an SQL verb is read as SQL.
		var extra []string
		for _, v := range args {
			extra = appendLeaves(extra, v)
		}
		slices.Sort(extra)
		for _, raw := range extra {
			if seen["sql:"+raw] || !startsWithSQLVerb(raw) {
				continue
			}
			seen["sql:"+raw] = true
			stmts, ts := ClassifySQL(raw)
			for _, st := range stmts {
				addSQL(st)
			}
			for _, t := range ts {
				tags[t] = true
			}
		}
	}
	if webTool {
		// Closed world: where a web tool connects can also come from
		// arguments rein was not told of — a second URL (uri, base_url),
		// a proxy, a Host header, curl-style --resolve, a URL inside an
		// object. Every URL and every private host or address in the
		// arguments besides the data sent is judged as a URL.
		var extra []string
		for name, v := range args {
			if !sentData[strings.ToLower(name)] {
				extra = appendLeaves(extra, v)
			}
		}
		slices.Sort(extra)
		for _, raw := range extra {
			for _, u := range urlsIn(raw) {
				if seen["url:"+u] {
					continue
				}
				seen["url:"+u] = true
				f, ts := ClassifyURL(u)
				addURL(f)
				for _, t := range ts {
					tags[t] = true
				}
			}
		}
	}
	if fileTool {
		// Closed world: a file tool may take its path under a name the
		// spec does not give (file, target, filename), or inside an object
		// or list. Every other string that looks like a path is judged as
		// one: {"file": "/srv/agent/.env"} reads a secret however it is
		// spelled.
		var extra []string
		for name, v := range args {
			if !named[name] {
				extra = appendLeaves(extra, v)
			}
		}
		slices.Sort(extra)
		for _, raw := range extra {
			if seen["path:"+raw] || !pathLike(raw) {
				continue
			}
			seen["path:"+raw] = true
			f, ts := ClassifyPath(raw, env.Workspace)
			paths = append(paths, map[string]any{"path": f.Path, "clean": f.Clean, "sensitive": f.Sensitive,
				"secret": f.Secret, "exec_config": f.ExecConfig, "outside_workspace": f.OutsideWorkspace, "unlisted": f.Unlisted})
			for _, t := range append(ts, uncURL(f, addURL)...) {
				tags[t] = true
			}
		}
	}
	if len(commands) > 0 || len(dynamic) > 0 || len(writes) > 0 {
		a.Facts["shell"] = map[string]any{"commands": append([]any{}, commands...),
			"dynamic": append([]any{}, dynamic...), "writes": append([]any{}, writes...)}
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

// uncURL judges the host a UNC path names as a URL to it (smb://host/):
// opening the path connects there. It adds the URL fact and returns its tags.
func uncURL(f PathFact, add func(URLFact)) []string {
	if f.Host == "" {
		return nil
	}
	u, ts := ClassifyURL("smb://" + f.Host + "/")
	add(u)
	return ts
}

// harmlessShellArgs are the arguments of shell tools that change nothing
// about what runs: Claude Code's Bash description, timeout and
// run_in_background, and a timeout in milliseconds.
var harmlessShellArgs = map[string]bool{"description": true, "timeout": true, "timeout_ms": true, "run_in_background": true}

// sentData are the arguments of a web tool that hold what it sends, not
// where: a URL in a message body is data.
var sentData = map[string]bool{"body": true, "data": true, "json": true, "content": true, "text": true,
	"message": true, "payload": true, "form": true}

var urlInText = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>]+`)

// urlsIn finds what a string names to connect to: each URL in it, or, for a
// string that is one word without a scheme, the host (or host:port, or the
// last address of curl's HOST:PORT:ADDRESS) when it is an IP address or a
// name rein judges private. "example.com" alone stays a word.
func urlsIn(s string) []string {
	if len(s) > 8192 {
		s = s[:8192]
	}
	if m := urlInText.FindAllString(s, 16); len(m) > 0 {
		return m
	}
	if s == "" || strings.ContainsAny(s, " \t\r\n/") {
		return nil
	}
	var out []string
	for _, h := range []string{s, s[strings.LastIndexByte(s, ':')+1:]} {
		host, _, _ := splitHostPort(h)
		_, private, metadata := judgeHost(host)
		// A word without a dot or colon (GET, true, utf-8, 30) is no host
		// here unless it is a loopback or metadata name.
		name := strings.ToLower(strings.TrimSuffix(host, "."))
		hostish := strings.ContainsAny(h, ".:[") || metadata || name == "localhost" || localNames[name]
		if private && hostish {
			out = append(out, "http://"+h+"/")
		}
	}
	return out
}

// appendLeaves appends every string held by v, at any depth.
func appendLeaves(out []string, v any) []string {
	switch v := v.(type) {
	case string:
		return append(out, v)
	case []any:
		for _, x := range v {
			out = appendLeaves(out, x)
		}
	case map[string]any:
		for _, x := range v {
			out = appendLeaves(out, x)
		}
	}
	return out
}

// pathLike reports whether a string an unnamed argument holds reads as a
// file path: one line, no URL, and either a path's start (/, ~, ./, ../, a
// drive letter, \\) or one word holding a separator, starting with a dot
// (.env) or naming a file that holds secrets (id_rsa, credentials).
// Text with spaces (a file's new content, a message) is not a path unless
// it starts like one.
func pathLike(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\r") {
		return false
	}
	if i := strings.Index(s, "://"); i >= 0 && !strings.HasPrefix(strings.ToLower(s), "file://") {
		return false
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || strings.HasPrefix(s, `\\`) || strings.HasPrefix(s, "$HOME") ||
		strings.HasPrefix(strings.ToLower(s), "file://") || drivePath.MatchString(strings.ReplaceAll(s, `\`, "/")) {
		return true
	}
	if strings.ContainsAny(s, " \t") {
		return false
	}
	base := s[strings.LastIndexAny(s, `/\`)+1:]
	return strings.ContainsAny(s, `/\`) || strings.HasPrefix(s, ".") || sensitiveNames[base] || secretPath(s)
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
		"shell": map[string]any{"commands": []any{}, "dynamic": []any{}, "writes": []any{}},
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
	if isASCII(pattern) && isASCII(s) { // bytes are characters: no copy
		return glob(unsafe.Slice(unsafe.StringData(pattern), len(pattern)), unsafe.Slice(unsafe.StringData(s), len(s)))
	}
	return glob([]rune(pattern), []rune(s))
}

// glob is Glob over characters; it only reads p and r.
func glob[C byte | rune](p, r []C) bool {
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

// allSpecs yields the policy's tool specs, then BuiltinTools, without
// copying them (Assess runs for every check).
func allSpecs(tools []ToolSpec) func(func(int, ToolSpec) bool) {
	return func(yield func(int, ToolSpec) bool) {
		for i, s := range tools {
			if !yield(i, s) {
				return
			}
		}
		for i, s := range BuiltinTools {
			if !yield(len(tools)+i, s) {
				return
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// anyStrings is ss as a CEL list (never null).
func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}
