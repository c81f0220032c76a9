package risk

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
)

// PathFact is what rein reads from one file path (risk.md, Paths).
type PathFact struct {
	Path      string `json:"path"`
	Clean     string `json:"clean"`
	Sensitive bool   `json:"sensitive"` // Secret or ExecConfig
	// Secret: reading the path can reveal a key, credential or secret.
	Secret bool `json:"secret"`
	// ExecConfig: writing the path arms later execution (shell start-up
	// files, scheduled jobs, a tool's or repository's configuration, CI).
	ExecConfig       bool `json:"exec_config"`
	OutsideWorkspace bool `json:"outside_workspace"`
	// Unlisted: Secret only because the closed world says so (outside the
	// workspace and not known public, below a private system root, a hidden
	// name in a home), not because the path is a known credential store.
	// Policy may ask about such a read where it denies a known store.
	Unlisted bool `json:"unlisted"`
	// Host is the host a UNC path names (\\host\share, //host/share,
	// \\?\UNC\host\share): opening it connects there and offers the
	// user's credentials.
	Host string `json:"host,omitempty"`
}

// sensitiveNames are file and directory names that hold keys, credentials
// or shell start-up code wherever they are: a word that is one of them is
// read as a path even without a slash. (sensitivePathRules holds the full
// knowledge; this short list is what shell analysis tries globs against.)
var sensitiveNames = map[string]bool{
	".ssh": true, ".aws": true, ".gnupg": true, ".kube": true, ".docker": true, ".azure": true,
	".env": true, ".netrc": true, ".npmrc": true, ".pypirc": true, ".git-credentials": true, ".pgpass": true,
	".bashrc": true, ".bash_profile": true, ".profile": true, ".zshrc": true, ".zprofile": true, ".bash_login": true,
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true, "authorized_keys": true, "known_hosts": true,
	"credentials": true, "Keychains": true, "gcloud": true,
}

var (
	drivePath = regexp.MustCompile(`^[A-Za-z]:(/|$)`)
	// homePrefixes are the spellings of a user's home directory, each
	// matched (as a glob) against a path's first segments.
	homePrefixes = [][]string{{"", "home", "*"}, {"", "Users", "*"}, {"", "root"}, {"", "var", "root"},
		{"?:", "Users", "*"}, {"$HOME"}, {"${HOME}"}, {"%USERPROFILE%"}, {"%HOMEDRIVE%%HOMEPATH%"}, {"~*"}}
	// envPrefixes are environment variables that name a known directory.
	envPrefixes = map[string]string{"$XDG_CONFIG_HOME": "~/.config", "${XDG_CONFIG_HOME}": "~/.config",
		"%APPDATA%": "~/AppData/Roaming", "%LOCALAPPDATA%": "~/AppData/Local", "$XDG_DATA_HOME": "~/.local/share",
		"${XDG_DATA_HOME}": "~/.local/share"}
)

// ClassifyPath cleans a path lexically and judges it. workspace, when set, is
// the root that agents' paths should stay under. Windows paths (C:\x, c:/x,
// \\server\share) are read too, and a path with glob characters or braces
// (~/.s*/id_*, /etc/sha{dow,x}) is sensitive when it could match a
// sensitive path.
func ClassifyPath(raw, workspace string) (PathFact, []string) {
	alts := otherSpellings(raw)
	if len(alts) == 0 {
		return classifyPath(raw, workspace)
	}
	// The path as written, and as the system would open it: judged as
	// each, the worse of them.
	f, tags := classifyPath(strings.ReplaceAll(raw, "\x00", ""), workspace)
	f.Path = raw
	for _, alt := range alts {
		g, more := classifyPath(alt, workspace)
		f.Unlisted = f.Secret && f.Unlisted && (!g.Secret || g.Unlisted) || !f.Secret && g.Secret && g.Unlisted
		f.Secret, f.ExecConfig = f.Secret || g.Secret, f.ExecConfig || g.ExecConfig
		f.Sensitive, f.OutsideWorkspace = f.Sensitive || g.Sensitive, f.OutsideWorkspace || g.OutsideWorkspace
		if f.Host == "" {
			f.Host = g.Host
		}
		for _, t := range more {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	return f, tags
}

// otherSpellings returns the paths the system may open for raw, when they
// differ from raw read as written:
//   - C file APIs end a path at NUL: "/srv/.env\x00.txt" opens .env;
//   - a file: URL names the path it encodes: "file:///etc/shadow",
//     "file://localhost/C:/x", percent-encoding decoded;
//   - Windows drops trailing dots and spaces from each name (".env ",
//     ".env." open .env) and reads "name:stream" as a stream of the file
//     name (".env::$DATA" is .env itself).
//   - HFS+ ignores some invisible code points in names (".g\u200cit" is
//     .git: git's utf8.c is_hfs_dotgit, CVE-2014-9390).
//   - a Windows 8.3 short name (GIT~1, SSH~1, GITHUB~1) stands for a long
//     name it abbreviates (shortNameGlob): it is judged as the glob of
//     those names.
func otherSpellings(raw string) []string {
	if !mayBeSpelledOtherwise(raw) {
		return nil
	}
	var out []string
	add := func(p string) {
		if p != raw && p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if i := strings.IndexByte(raw, 0); i >= 0 {
		add(raw[:i])
	}
	for _, p := range append([]string{raw}, out...) {
		if rest, ok := cutFold(p, "file:"); ok {
			if after, ok := strings.CutPrefix(rest, "//"); ok {
				// file://host/path: the host is local ("", localhost) or a
				// share (\\host\path).
				host, path, _ := strings.Cut(after, "/")
				if host == "" || strings.EqualFold(host, "localhost") {
					rest = "/" + path
				} else {
					rest = "//" + after
				}
			}
			if dec, err := url.PathUnescape(rest); err == nil {
				rest = dec
			}
			if len(rest) > 2 && rest[0] == '/' && rest[2] == ':' { // /C:/x
				rest = rest[1:]
			}
			add(rest)
		}
	}
	for _, p := range append([]string{raw}, out...) {
		add(strings.Map(func(r rune) rune {
			if hfsIgnored(r) {
				return -1
			}
			return r
		}, p))
	}
	for _, p := range append([]string{raw}, out...) {
		segs := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
		changed := false
		for i, seg := range segs {
			if g, ok := shortNameGlob(seg, i == len(segs)-1); ok {
				segs[i], changed = g, true
			}
		}
		if changed {
			add(strings.Join(segs, "/"))
		}
	}
	for _, p := range append([]string{raw}, out...) {
		segs := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
		changed := false
		for i, seg := range segs {
			t := seg
			if j := strings.IndexByte(t, ':'); j > 0 && !(i == 0 && j == 1) {
				t = t[:j] // name:stream, name::$DATA
			}
			t = strings.TrimRight(t, ". ")
			if t == "" && seg != "" && seg != "." && seg != ".." {
				t = seg // "..." and the like: not a name Windows shortens to nothing
			}
			if t != seg && seg != "." && seg != ".." {
				segs[i], changed = t, true
			}
		}
		if changed {
			add(strings.Join(segs, "/"))
		}
	}
	return out
}

// mayBeSpelledOtherwise is a quick test that otherSpellings has nothing to
// find: no NUL, no colon past a drive letter, no byte outside ASCII, no
// "~" and digit past the start, no name that ends in a dot or a space. It keeps the common case free of allocations.
func mayBeSpelledOtherwise(raw string) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == 0, c == ':' && i != 1, c >= 0x80, c == '~' && i > 0 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '9':
			return true
		case (c == '.' || c == ' ') && (i+1 == len(raw) || raw[i+1] == '/' || raw[i+1] == '\\'):
			if c == ' ' || !(i == 0 || raw[i-1] == '/' || raw[i-1] == '\\' || raw[i-1] == '.' && (i == 1 || raw[i-2] == '/' || raw[i-2] == '\\')) {
				return true // not "." or ".."
			}
		}
	}
	return false
}

// hfsIgnored reports the code points HFS+ leaves out of a name when it
// compares names (git's utf8.c next_hfs_char: zero-width and directional
// marks, the deprecated format characters, the byte-order mark).
func hfsIgnored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// cutFold is strings.CutPrefix without regard to case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func classifyPath(raw, workspace string) (PathFact, []string) {
	f := PathFact{Path: raw}
	tags := []string{"path"}
	p := strings.ReplaceAll(raw, `\`, "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			tags = append(tags, "path.traversal")
			break
		}
	}
	f.Clean = cleanPath(p)
	if throughLink(p) {
		// ".." out of a link: lexical cleaning cannot say where it ends.
		tags = append(tags, "path.unresolved")
		f.Secret, f.ExecConfig = true, true
	}
	if host, device := uncHost(p); host != "" {
		tags = append(tags, "path.network")
		f.Host = host
	} else if device {
		f.Secret = true // a raw disk, a shadow copy, another process's pipe
	}
	// A template (.env.example) is not a secret by its name alone, nor is a
	// source file by a name pattern (credentials.go against credentials.*;
	// a rule naming it exactly, wp-config.php, still holds).
	base := strings.ToLower(f.Clean[strings.LastIndexByte(f.Clean, '/')+1:])
	tmpl, code := isTemplate(base), IsSourceCode(base)
	ws := ""
	if workspace != "" {
		ws = cleanPath(strings.ReplaceAll(workspace, `\`, "/"))
	}
	cleanInside := ws != "" && !outsideWorkspace(f.Clean, ws)
	closed := false // secret by the closed world alone, so far
	for _, c := range pathCandidates(f.Clean, workspace) {
		lc := strings.ToLower(c)
		segs := strings.Split(lc, "/")
		// The closed world is about what lies around the workspace: a
		// workspace under /var/www or ~/.local/src is the agent's own,
		// and only what lies below it counts there.
		within, below := false, segs
		switch {
		case ws == "":
		case strings.HasPrefix(c, "~"):
			if within = cleanInside; within {
				below = nil // its absolute form is judged
			}
		case isAbsPath(c):
			if within = !outsideWorkspace(c, ws); within {
				below = segs[len(strings.Split(strings.TrimSuffix(ws, "/"), "/")):]
			}
		default:
			within = true // relative: under the workspace, judged joined to it too
		}
		if !within && closedSecret(segs) {
			closed = true // decided once the listed rules have had their say
		}
		if !f.ExecConfig && len(below) > 0 && execClosed(below) {
			f.ExecConfig = true
		}
		if !strings.ContainsAny(lc, "*?[") {
			// The common case: a plain path, matched without allocations.
			for i := range compiledPathRules {
				r := &compiledPathRules[i]
				secret := r.secret && !(tmpl && r.anywhere) && !(code && r.anywhere && r.lastGlob)
				if (secret && !f.Secret || r.execConfig && !f.ExecConfig) && r.matches(segs) {
					f.Secret = f.Secret || secret
					f.ExecConfig = f.ExecConfig || r.execConfig
				}
			}
			continue
		}
		// A last name that starts with a wildcard (*.md, *) names no file
		// in particular: only rules for directories and fixed places
		// apply to it, not names that can be anywhere.
		wild := strings.IndexAny(segs[len(segs)-1], "*?[") == 0
		for i, r := range sensitivePathRules {
			if wild && strings.HasPrefix(r.pattern, "**/") && !strings.HasSuffix(r.pattern, "/**") {
				continue
			}
			pr := &compiledPathRules[i]
			secret := r.secret && !(tmpl && pr.anywhere) && !(code && pr.anywhere && pr.lastGlob)
			if (secret && !f.Secret || r.execConfig && !f.ExecConfig) && mayMeet(r.pattern, c) &&
				segsMeet(compiledPathRules[i].segs, segs) {
				f.Secret = f.Secret || secret
				f.ExecConfig = f.ExecConfig || r.execConfig
			}
		}
	}
	if closed && !f.Secret {
		f.Secret, f.Unlisted = true, true
	}
	if workspace != "" {
		f.OutsideWorkspace = outsideWorkspace(f.Clean, ws)
		// Closed world: outside the workspace, only what is known public
		// reads as harmless.
		if f.OutsideWorkspace && !f.Secret {
			abs := f.Clean
			if !isAbsPath(abs) && !strings.HasPrefix(abs, "~") && !strings.HasPrefix(abs, "$") &&
				!strings.HasPrefix(abs, "%") {
				abs = cleanPath(strings.TrimSuffix(ws, "/") + "/" + abs)
			}
			f.Secret = !publicPath(abs)
			f.Unlisted = f.Secret
		}
	}
	f.Sensitive = f.Secret || f.ExecConfig
	if f.Sensitive {
		tags = append(tags, "path.sensitive")
	}
	if f.OutsideWorkspace {
		tags = append(tags, "path.outside_workspace")
	}
	return f, tags
}

// pathRule is a sensitivePathRules entry split into lower-case segments.
type pathRule struct {
	segs []string
	// Quick tests before matchSegments: the first segments when they are
	// plain ("" for an absolute pattern, "~", "etc"), the last segment when
	// it is a plain name, and a plain segment that must occur somewhere
	// (the one after a leading "**").
	prefix     []string
	last, need string
	// A last segment with wildcards (id_rsa*, *.pem) matches only names
	// that start and end with its plain ends: a test of two strings
	// before matchSegments tries every way the segments could line up.
	lastGlob           bool
	lastHead, lastTail string
	suffix             bool // "**/" then only plain names: a suffix test is enough
	anywhere           bool // a name wherever it is ("**/x", not "**/x/**")
	secret, execConfig bool
}

var compiledPathRules = func() []pathRule {
	out := make([]pathRule, len(sensitivePathRules))
	for i, r := range sensitivePathRules {
		segs := strings.Split(strings.ToLower(r.pattern), "/")
		pr := pathRule{segs: segs, secret: r.secret, execConfig: r.execConfig}
		for _, x := range segs[:len(segs)-1] {
			if x == "**" || strings.ContainsAny(x, "*?[") {
				break
			}
			pr.prefix = append(pr.prefix, x)
		}
		if last := segs[len(segs)-1]; !strings.ContainsAny(last, "*?[") {
			pr.last = last
		}
		if last := segs[len(segs)-1]; last != "**" && strings.ContainsAny(last, "*?[") && !strings.Contains(last, `\`) {
			pr.lastGlob = true
			pr.lastHead = last[:strings.IndexAny(last, "*?[")]
			pr.lastTail = last[strings.LastIndexAny(last, "*?]")+1:]
		}
		if segs[0] == "**" && len(segs) > 2 && !strings.ContainsAny(segs[1], "*?[") {
			pr.need = segs[1]
		}
		pr.suffix = segs[0] == "**" && !strings.ContainsAny(strings.Join(segs[1:], "/"), "*?[")
		pr.anywhere = segs[0] == "**" && segs[len(segs)-1] != "**"
		out[i] = pr
	}
	return out
}()

// matches reports whether a plain path (lower case, split at "/") is one
// the rule names.
func (r *pathRule) matches(segs []string) bool {
	if r.last != "" && segs[len(segs)-1] != r.last || len(segs) < len(r.prefix) {
		return false
	}
	if name := segs[len(segs)-1]; r.lastGlob && (len(name) < len(r.lastHead)+len(r.lastTail) ||
		!strings.HasPrefix(name, r.lastHead) || !strings.HasSuffix(name, r.lastTail)) {
		return false
	}
	for i, x := range r.prefix {
		if segs[i] != x {
			return false
		}
	}
	if r.need != "" && !slices.Contains(segs, r.need) {
		return false
	}
	if r.suffix {
		tail := r.segs[1:]
		if len(segs) < len(tail) {
			return false
		}
		for i, x := range tail {
			if segs[len(segs)-len(tail)+i] != x {
				return false
			}
		}
		return true
	}
	return matchSegments(r.segs, segs)
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return true
			}
			if !slices.Contains(pat[1:], "**") {
				// The rest matches the last segments, one each.
				i := len(segs) - (len(pat) - 1)
				return i >= 0 && matchSegments(pat[1:], segs[i:])
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// cleanPath is path.Clean that keeps a UNC path's leading "//" and a
// drive letter's root.
func cleanPath(p string) string {
	switch {
	case strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///"):
		return "/" + path.Clean(p[1:])
	case drivePath.MatchString(p):
		return p[:2] + path.Clean("/"+p[2:])
	}
	return path.Clean(p)
}

func isAbsPath(p string) bool { return strings.HasPrefix(p, "/") || drivePath.MatchString(p) }

func outsideWorkspace(clean, ws string) bool {
	switch {
	case strings.HasPrefix(clean, "~"), strings.HasPrefix(clean, "$"), strings.HasPrefix(clean, "%"),
		clean == "..", strings.HasPrefix(clean, "../"):
		return true
	case !isAbsPath(clean):
		return false
	}
	if drivePath.MatchString(clean) || strings.HasPrefix(clean, "//") || drivePath.MatchString(ws) {
		clean, ws = strings.ToLower(clean), strings.ToLower(ws) // Windows names ignore case
	}
	return clean != ws && !strings.HasPrefix(clean, strings.TrimSuffix(ws, "/")+"/")
}

// Limits on the forms of one path that are judged: brace alternatives
// beyond maxPathBraceWords are read as "*" (which covers them all), and at most
// maxPathCandidates forms are matched.
const (
	maxPathBraceWords = 16
	maxPathCandidates = 32
)

// pathCandidates are the forms of a cleaned path that the rules are
// matched against: brace alternatives, the path a /proc/PID/root or
// /proc/PID/cwd link leads to, the path under the workspace, and the
// home-relative form (~/...).
func pathCandidates(clean, workspace string) []string {
	var out []string
	seen := map[string]bool{}
	var add func(p string, depth int)
	add = func(p string, depth int) {
		if seen[p] || len(seen) >= maxPathCandidates {
			return
		}
		seen[p] = true
		out = append(out, p)
		if depth > 8 {
			return
		}
		if alts := expandBraces(p, maxPathBraceWords); len(alts) != 1 || alts[0] != p {
			for _, a := range alts {
				add(cleanPath(a), depth+1)
			}
		}
		if strings.HasPrefix(p, "//") {
			for _, alt := range doubleSlashReadings(p) {
				add(alt, depth+1)
			}
		}
		segs := strings.Split(p, "/")
		// /proc/PID/root/x is /x and /proc/PID/cwd/x is x (proc(5)),
		// also through /proc/PID/task/TID/.
		if len(segs) >= 4 && segs[0] == "" && segs[1] == "proc" {
			i := 3
			if len(segs) >= 6 && segs[3] == "task" {
				i = 5
			}
			if i < len(segs) {
				switch segs[i] {
				case "root":
					add(cleanPath("/"+strings.Join(segs[i+1:], "/")), depth+1)
				case "cwd":
					add(cleanPath(strings.Join(segs[i+1:], "/")), depth+1)
				}
			}
		}
		if workspace != "" && !isAbsPath(p) && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "$") &&
			!strings.HasPrefix(p, "%") && !strings.HasPrefix(p, "**") {
			add(cleanPath(strings.TrimSuffix(strings.ReplaceAll(workspace, `\`, "/"), "/")+"/"+p), depth+1)
		}
		plain := !strings.ContainsAny(p, "*?[")
		for _, h := range homePrefixes {
			if len(segs) <= len(h) {
				continue
			}
			if plain && homeMatch(h, segs) || !plain && globsMeet(strings.Join(h, "/"), strings.Join(segs[:len(h)], "/")) {
				add("~/"+strings.Join(segs[len(h):], "/"), depth+1)
			}
		}
		if len(segs) > 1 {
			if dir, ok := envPrefixes[strings.ToUpper(segs[0])]; ok {
				add(dir+"/"+strings.Join(segs[1:], "/"), depth+1)
			}
		}
		if segs[0] == "**" || len(segs) > 1 && segs[0] == "" && segs[1] == "**" {
			add("~/"+strings.TrimPrefix(p, "/"), depth+1) // ** can be a home directory
		}
	}
	add(clean, 0)
	return out
}

// doubleSlashReadings are the other places a path that starts with "//"
// names. Linux resolves "//etc/shadow" as "/etc/shadow" (POSIX XBD 4.13
// leaves two leading slashes to the implementation; path_resolution(7)
// treats every run of slashes as one), so the UNC reading is only one of
// them. On Windows, "\\?\C:\x" and "\\.\C:\x" are the local path C:\x
// and "\\host\C$\x" is the administrative share of drive C: (Microsoft,
// "File path formats on Windows systems"; "Administrative shares").
func doubleSlashReadings(p string) []string {
	out := []string{path.Clean(p)}
	if drivePath.MatchString(p[2:]) { // \\.\C:\x, cleaned to //C:/x
		return append(out, cleanPath(p[2:]))
	}
	parts := strings.SplitN(p[2:], "/", 3)
	if len(parts) < 2 {
		return out
	}
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	host, share := parts[0], parts[1]
	switch {
	case (host == "?" || host == ".") && drivePath.MatchString(share):
		out = append(out, cleanPath(share+"/"+rest))
	case len(share) == 2 && share[1] == '$' && drivePath.MatchString(share[:1]+":"):
		out = append(out, cleanPath(share[:1]+":/"+rest))
	}
	return out
}

// homeMatch reports whether a plain path starts with a home prefix.
func homeMatch(h, segs []string) bool {
	for i, x := range h {
		if ok, _ := path.Match(strings.ToLower(x), strings.ToLower(segs[i])); !ok {
			return false
		}
	}
	return true
}

// expandBraces expands shell braces ({a,b}, nested) into at most limit
// words; past the limit every brace group becomes "*".
func expandBraces(s string, limit int) []string {
	budget := 8 * limit // calls: nested and repeated groups cannot blow up
	var expand func(s string) ([]string, bool)
	expand = func(s string) ([]string, bool) {
		if budget--; budget < 0 {
			return nil, false
		}
		open := -1
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '{':
				if depth == 0 {
					open = i
				}
				depth++
			case '}':
				if depth == 0 {
					continue
				}
				depth--
				if depth > 0 {
					continue
				}
				var alts []string
				d, last := 0, open+1
				for j := open + 1; j < i; j++ {
					switch s[j] {
					case '{':
						d++
					case '}':
						d--
					case ',':
						if d == 0 {
							alts = append(alts, s[last:j])
							last = j + 1
						}
					}
				}
				if alts == nil {
					open = -1
					continue // {x} without a comma is literal
				}
				alts = append(alts, s[last:i])
				var out []string
				for _, a := range alts {
					rests, ok := expand(a + s[i+1:])
					if !ok {
						return nil, false
					}
					for _, rest := range rests {
						out = append(out, s[:open]+rest)
						if len(out) > limit {
							return nil, false
						}
					}
				}
				return out, true
			}
		}
		return []string{s}, true
	}
	if out, ok := expand(s); ok {
		return out
	}
	return []string{braceStars(s)}
}

var braceGroup = regexp.MustCompile(`\{[^{}]*\}`)

func braceStars(s string) string {
	for braceGroup.MatchString(s) {
		s = braceGroup.ReplaceAllString(s, "*")
	}
	return s
}

// mayMeet is a quick test that rules a pattern out before globsMeet: a
// fixed first segment ("", "~", "?:") must agree, and so must a fixed last
// name.
func mayMeet(pattern, p string) bool {
	pf, _, _ := strings.Cut(pattern, "/")
	cf, _, _ := strings.Cut(p, "/")
	if pf != "**" && cf != "**" && !strings.ContainsAny(cf, "*?[{") {
		switch {
		case pf == "" || pf == "~":
			if cf != pf {
				return false
			}
		case pf == "?:":
			if len(cf) != 2 || cf[1] != ':' {
				return false
			}
		}
	}
	pl := pattern[strings.LastIndexByte(pattern, '/')+1:]
	cl := p[strings.LastIndexByte(p, '/')+1:]
	if !strings.ContainsAny(pl, "*?[") && !strings.ContainsAny(cl, "*?[{") && !strings.HasPrefix(p, "**") &&
		!strings.Contains(p, "/**") {
		return strings.EqualFold(pl, cl) || strings.HasSuffix(pattern, "/**")
	}
	return true
}

// globsMeet reports whether some path matches both a rule pattern and a
// path that may itself hold glob characters: "**" is any number of
// segments, "*" any run within a segment, "?" and [...] one character.
// Case is ignored.
func globsMeet(pattern, p string) bool {
	return segsMeet(strings.Split(strings.ToLower(pattern), "/"), strings.Split(strings.ToLower(p), "/"))
}

// segsMeet is globsMeet on lower-case segments.
func segsMeet(a, b []string) bool {
	n, m := len(a), len(b)
	memo := make([]int8, (n+1)*(m+1)) // 0 unknown, 1 yes, 2 no
	var meet func(i, j int) bool
	meet = func(i, j int) bool {
		k := i*(m+1) + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		var r bool
		switch {
		case i == n && j == m:
			r = true
		case i < n && a[i] == "**":
			r = meet(i+1, j) || j < m && meet(i, j+1)
		case j < m && b[j] == "**":
			r = meet(i, j+1) || i < n && meet(i+1, j)
		case i == n || j == m:
			r = false
		default:
			r = segmentsMeet(a[i], b[j]) && meet(i+1, j+1)
		}
		memo[k] = 2
		if r {
			memo[k] = 1
		}
		return r
	}
	return meet(0, 0)
}

// maxGlobTokens bounds the work on one path segment, a glob longer than
// any file name (NAME_MAX is 255): it is taken to match, since what rein
// cannot afford to read is not harmless.
const maxGlobTokens = 256

// segmentsMeet reports whether one string matches both a rule's segment x
// and a path's segment y, each read as a shell glob (glob.go: a bracket
// expression is any one character, wherever the shell ends it). As in the
// shell (and fnmatch with FNM_PERIOD), a glob in the path matches a leading
// "." only with a "." written as such.
func segmentsMeet(x, y string) bool {
	gx, gy := hasGlob(x), hasGlob(y)
	if !gx && !gy {
		return x == y
	}
	if gy && !strings.HasPrefix(y, ".") && strings.HasPrefix(x, ".") {
		return false // the input's glob cannot produce a leading "."
	}
	if gx && len(x) > maxGlobTokens || gy && len(y) > maxGlobTokens {
		return true // a glob longer than any name: taken to match
	}
	switch {
	case !gx:
		return globToksMatch(globToks(y, true), x)
	case !gy:
		return globToksMatch(globToks(x, true), y)
	}
	return globsIntersect(globToks(x, true), globToks(y, true))
}
