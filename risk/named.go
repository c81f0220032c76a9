package risk

import (
	"regexp"
	"sort"
	"strings"
)

// Credentials named by their context. A value is a credential, whatever its
// entropy, when the text around it names it so:
//
//   - a shell environment assignment whose name is a credential's
//     (PGPASSWORD=x psql, export GITHUB_TOKEN=x, env API_KEY=x cmd);
//   - a command-line option whose name is a credential's (--password=x,
//     --password x, --token x, --api-key=x, --client-secret x), the
//     password of curl's -u/--user/--proxy-user user:password, and -p where
//     it is a password (mysql -p<x>, sshpass -p x, docker login -p x);
//   - a URL query parameter whose name is a credential's (?token=x,
//     &api_key=x, ?sig=x, X-Amz-Signature=x);
//   - a password in SQL (WITH PASSWORD '…', PASSWORD '…', IDENTIFIED BY '…');
//   - an HTTP header in a command line that is a credential (Authorization,
//     Proxy-Authorization and Cookie, whose value after the scheme is
//     concealed, or one named so: X-Api-Key, X-Auth-Token);
//   - "name": "value" in a text that holds JSON (curl -d '{"password":"…"}').
//
// A name is a credential's by credentialName. Only the value is concealed,
// where it stands, so the program, the option and the rest of the command
// stay readable. A value that is a variable ($PASS, "${TOKEN}") is no secret.

// credentialWords are the words that make a name a credential's wherever
// they stand in it; credentialLast only as its last word (PASS, AUTH, SIG
// are also verbs or prefixes: --pass-fds, --auth-type), credentialPairs as
// two words in a row (API_KEY, AWS_SECRET_ACCESS_KEY).
var (
	credentialWords = map[string]bool{"PASSWORD": true, "PASSWD": true, "PASSPHRASE": true, "SECRET": true,
		"SECRETS": true, "TOKEN": true, "APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true,
		"PRIVATEKEY": true, "ACCESSKEY": true, "SECRETKEY": true, "SIGNATURE": true, "PWD": true}
	credentialLast  = map[string]bool{"PASS": true, "AUTH": true, "SIG": true}
	credentialPairs = map[[2]string]bool{{"API", "KEY"}: true, {"ACCESS", "KEY"}: true, {"PRIVATE", "KEY"}: true,
		{"SIGNING", "KEY"}: true, {"MASTER", "KEY"}: true}
	// credentialSuffixes make one word a credential's (GITHUBTOKEN, DBPASSWORD).
	credentialSuffixes = []string{"PASSWORD", "PASSWD", "TOKEN", "SECRET", "APIKEY"}
	// notCredentialLast are last words that make a credential's name the
	// name of something else: where it is (_FILE, _PATH), how it is read
	// (--password-stdin), what kind it is (--auth-type, TOKEN_TYPE), its
	// identifier (AWS_ACCESS_KEY_ID) or a limit (--token-limit).
	notCredentialLast = map[string]bool{"FILE": true, "FILES": true, "PATH": true, "DIR": true, "STDIN": true,
		"FD": true, "CMD": true, "COMMAND": true, "URL": true, "URI": true, "HOST": true, "PORT": true,
		"USER": true, "USERNAME": true, "NAME": true, "TYPE": true, "ID": true, "METHOD": true, "MODE": true,
		"LENGTH": true, "LEN": true, "SIZE": true, "TTL": true, "EXPIRY": true, "ENABLED": true, "REQUIRED": true,
		"PROMPT": true, "HEADER": true, "FORMAT": true, "ALGORITHM": true, "POLICY": true, "PROVIDER": true,
		"ENDPOINT": true, "REGION": true, "KIND": true, "COUNT": true, "LIMIT": true, "TIMEOUT": true,
		"PROGRAM": true, "HELPER": true, "STORE": true}
)

// credentialName reports whether name (an environment variable, an option,
// a query parameter or a JSON key, in any case, its words separated by _, -,
// . or camelCase) names a credential. PWD alone (and OLDPWD) is the working
// directory, not a password; MYSQL_PWD is one. A name that starts with no
// (--no-password) says there is none.
func credentialName(name string) bool {
	words := nameWords(name)
	if len(words) == 0 || words[0] == "NO" {
		return false
	}
	last := words[len(words)-1]
	if notCredentialLast[last] || (len(words) == 1 && last == "PWD") {
		return false
	}
	if credentialLast[last] {
		return true
	}
	for i, w := range words {
		if credentialWords[w] {
			return true
		}
		if i > 0 && credentialPairs[[2]string{words[i-1], w}] {
			return true
		}
	}
	if len(words) == 1 {
		for _, s := range credentialSuffixes {
			if strings.HasSuffix(last, s) {
				return true
			}
		}
	}
	return false
}

// nameWords splits a name into its upper-cased words.
func nameWords(name string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == '[' || c == ']':
			flush()
		case c >= 'A' && c <= 'Z' && i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z':
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
	}
	flush()
	return words
}

// A shell word's value: bare characters and quoted parts, up to the end of
// the word.
const shellValue = `(?:[^\s;&|()<>'"` + "`" + `]|"[^"]*"|'[^']*')+`

var (
	// envAssignRE: NAME=value at the start of a command word.
	envAssignRE = regexp.MustCompile(`(?:^|[\s;&|('"` + "`" + `])([A-Za-z_][A-Za-z0-9_]*)=(` + shellValue + `)`)
	// optionRE: --name=value, --name value, -name value; a value after a
	// space does not start with - (that is the next option).
	optionRE = regexp.MustCompile(`(?:^|[\s"'])--?([A-Za-z][A-Za-z0-9_.-]*)(?:=(` + shellValue + `)|\s+((?:[^-\s;&|()<>'"` + "`" + `]|"[^"]*"|'[^']*')(?:` + shellValue + `)?))`)
	// curlUserRE: the password of curl's -u/--user/--proxy-user user:password.
	curlUserRE = regexp.MustCompile(`\bcurl\b[^|;&\n]*?\s(?:-u|-U|--user|--proxy-user)(?:=|\s*)['"]?[^\s:'"]*:([^\s'"]+)`)
	// queryParamRE: ?name=value and &name=value.
	queryParamRE = regexp.MustCompile(`[?&]([A-Za-z0-9_.\-\[\]]+)=([^&#\s'"]+)`)
	// shortPasswordRE: the short options that are a password for the
	// programs named: mysql's and mariadb's -p<password> (attached: -p
	// alone asks for it), sshpass -p <password>, docker and podman login
	// -p <password>. Elsewhere -p is a port, a path or a flag.
	shortPasswordRE = regexp.MustCompile(`(?:\b(?:mysql[a-z]*|mariadb(?:-[a-z]+)?)\b[^|;&\n]*?\s-p(` + shellValue + `)` +
		`|\b(?:sshpass(?:\s+-[fde]\s*\S+|\s+-[a-oq-zA-Z]\S*)*|(?:docker|podman)\s+login\b[^|;&\n]*?)\s-p(?:\s+|=)?((?:[^-\s;&|()<>'"` + "`" + `]|"[^"]*"|'[^']*')(?:` + shellValue + `)?))`)
	// headerRE: an HTTP header in a command line (curl -H 'Name: value'):
	// its name, an authorization scheme, and the value.
	headerRE = regexp.MustCompile(`(?:^|[\s'"])([A-Za-z][A-Za-z0-9-]*):[ \t]*(?:(Basic|Bearer|Token|Digest|Negotiate|NTLM|AWS4-HMAC-SHA256|[A-Za-z]+)[ \t]+)?([^\s'";]+(?:[ \t]*;[ \t]*[^\s'";]+)*)`)
	// jsonPairRE: "name": "value" in a text that holds JSON (curl -d '{…}').
	jsonPairRE = regexp.MustCompile(`"([A-Za-z0-9_.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	// sqlPasswordRE: a password in SQL, quoted.
	sqlPasswordRE = regexp.MustCompile(`(?i)\b(?:PASSWORD|IDENTIFIED(?:\s+WITH\s+[A-Za-z0-9_]+)?\s+BY)(?:\s+|\s*=\s*|\s*\(\s*)('(?:[^']|'')*'|"(?:[^"]|"")*")`)
)

// namedMarkers are the texts one of which must be in a string (in any case)
// for it to hold a credential named by its context: the cheap test that
// keeps the regular expressions off ordinary text.
var credentialMarkers = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth", "sig", "cookie"}

var namedMarkers = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth", "sig", "identified", "curl", "cookie", "mysql", "mariadb", "sshpass", "login"}

// span is a part of a string that holds a credential.
type span struct {
	start, end int
	kind       string
}

// namedSpans returns the parts of s that hold credentials named by their
// context, sorted and merged where they overlap.
func namedSpans(s string) []span {
	if len(s) < 3 {
		return nil
	}
	lower := asciiLower(s) // byte for byte as s: its offsets are s's
	if !containsAny(lower, namedMarkers) {
		return nil
	}
	var out []span
	add := func(start, end int, kind string) {
		v := s[start:end]
		if v == "" || isVariable(v) {
			return
		}
		out = append(out, span{start, end, kind})
	}
	// Names are read line by line, on the lines that hold a credential's
	// word, each with what follows it up to namedWindow bytes (a quoted
	// value may go on over lines): a long script pays for its few lines.
	for ls := 0; ls < len(s); {
		le := strings.IndexByte(s[ls:], '\n')
		if le < 0 {
			le = len(s)
		} else {
			le += ls
		}
		if containsAny(lower[ls:le], credentialMarkers) {
			w := s[ls:min(len(s), le+namedWindow)]
			namedInLine(w, le-ls, func(start, end int, kind string) { add(ls+start, ls+end, kind) })
		}
		ls = le + 1
	}
	if strings.Contains(s, " -p") && containsAny(lower, []string{"mysql", "mariadb", "sshpass", "login"}) {
		for _, m := range shortPasswordRE.FindAllStringSubmatchIndex(s, -1) {
			if m[2] >= 0 {
				add(m[2], m[3], "option_credential")
			} else if m[4] >= 0 {
				add(m[4], m[5], "option_credential")
			}
		}
	}
	if strings.Contains(s, "curl") && (strings.Contains(s, " -u") || strings.Contains(s, " -U") || strings.Contains(s, "-user")) {
		for _, m := range curlUserRE.FindAllStringSubmatchIndex(s, -1) {
			add(m[2], m[3], "curl_password")
		}
	}
	if strings.Contains(s, `"`) && strings.Contains(s, ":") && containsAny(lower, credentialMarkers) {
		for _, m := range jsonPairRE.FindAllStringSubmatchIndex(s, -1) {
			if credentialName(s[m[2]:m[3]]) {
				add(m[4], m[5], "json_credential")
			}
		}
	}
	if !containsAny(lower, []string{"password", "identified"}) {
		return mergeSpans(s, out)
	}
	for _, m := range sqlPasswordRE.FindAllStringSubmatchIndex(s, -1) {
		if m[3]-m[2] > 2 {
			add(m[2], m[3], "sql_password")
		}
	}
	return mergeSpans(s, out)
}

// namedWindow is how far past its line a value named on it is read.
const namedWindow = 512

// namedInLine finds in w the values named by an environment assignment, a
// query parameter, an option or a header that start in its first n bytes.
func namedInLine(w string, n int, add func(start, end int, kind string)) {
	if strings.Contains(w, "=") {
		for _, m := range envAssignRE.FindAllStringSubmatchIndex(w, -1) {
			if m[2] < n && w[m[0]] != '&' && credentialName(w[m[2]:m[3]]) { // &name= is a query parameter
				add(m[4], m[5], "env_credential")
			}
		}
		for _, m := range queryParamRE.FindAllStringSubmatchIndex(w, -1) {
			if m[2] < n && credentialName(w[m[2]:m[3]]) {
				add(m[4], m[5], "query_credential")
			}
		}
	}
	if strings.Contains(w, "-") {
		for _, m := range optionRE.FindAllStringSubmatchIndex(w, -1) {
			if m[2] >= n || !credentialName(w[m[2]:m[3]]) {
				continue
			}
			if m[4] >= 0 {
				add(m[4], m[5], "option_credential")
			} else {
				add(m[6], m[7], "option_credential")
			}
		}
	}
	if strings.Contains(w, ":") {
		for _, m := range headerRE.FindAllStringSubmatchIndex(w, -1) {
			if m[2] >= n {
				continue
			}
			name := strings.ToLower(w[m[2]:m[3]])
			_, header := credentialHeaders[name]
			if !header && !credentialName(name) {
				continue
			}
			if m[4] >= 0 && !header { // no scheme for other headers: the word is the value
				add(m[4], m[7], "header_credential")
				continue
			}
			add(m[6], m[7], "header_credential")
		}
	}
}

// containsAny reports whether s contains one of words.
func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// mergeSpans drops the spans of s that overlap a typed redaction s holds
// already, and sorts and merges the others.
func mergeSpans(s string, out []span) []span {
	if len(out) > 0 && strings.Contains(s, " sha256:") { // concealed already: leave its redactions be
		marks := markerRE.FindAllStringIndex(s, -1)
		kept := out[:0]
		for _, sp := range out {
			if !overlaps(sp, marks) {
				kept = append(kept, sp)
			}
		}
		out = kept
	}
	if len(out) < 2 {
		return out
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// isVariable reports whether a value is a shell variable or a command's
// output, as written ($PASS, "${TOKEN}", "$(cat f)"), or a placeholder
// (***): no secret is written there.
func isVariable(v string) bool {
	v = strings.TrimLeft(v, `"`)
	return strings.HasPrefix(v, "$") || strings.Trim(v, "*") == ""
}

// asciiLower is s with its ASCII letters in lower case, of the same length
// (strings.ToLower may change the length of other letters).
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= 'A' && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// namedValue reports whether the value of a JSON key that names a
// credential is one: any text but an empty one, a variable or a
// placeholder, and not a sentence (one with spaces or lines is prose about
// a password rather than one).
func namedValue(key, s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && !isVariable(t) && !strings.ContainsAny(t, " \n\t") && credentialName(key)
}
