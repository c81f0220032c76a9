package risk

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// SecretFact names an argument that holds a credential: where it is (a dotted
// path into args, "headers.Authorization", "items.0.token") and what kind of
// credential it looks like. The value itself is never part of the facts.
type SecretFact struct {
	Arg  string `json:"arg"`
	Kind string `json:"kind"`
}

// secretPatterns recognise credentials by their shape, wherever they are.
// A pattern's regular expression runs only on values that contain one of
// its markers (a cheap substring search), which keeps long ordinary text
// fast.
var secretPatterns = []struct {
	kind    string
	markers []string
	re      *regexp.Regexp
}{
	{"private_key", []string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
	{"aws_access_key", []string{"AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA"}, regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b`)},
	{"github_token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{"slack_token", []string{"xox", "hooks.slack.com"}, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+`)},
	{"anthropic_key", []string{"sk-ant-"}, regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{"openai_key", []string{"sk-"}, regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},
	{"stripe_key", []string{"_live_"}, regexp.MustCompile(`\b(?:sk|rk)_live_[A-Za-z0-9]{16,}`)},
	{"google_api_key", []string{"AIza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"jwt", []string{"eyJ"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
}

// shapeMatches counts the credentials s holds by their shape.
func shapeMatches(s string) (n int, kind string) {
	for _, p := range secretPatterns {
		for _, m := range p.markers {
			if strings.Contains(s, m) {
				if k := len(p.re.FindAllStringIndex(s, -1)); k > 0 {
					n += k
					if kind == "" {
						kind = p.kind
					}
				}
				break
			}
		}
	}
	return n, kind
}

var unquoter = strings.NewReplacer(`"`, "", `'`, "", `\`, "")

// splitByQuoting reports the kind of a credential that shell quoting
// splits in s (gh""p_…, gh\p_…, 'AKIA'QW…), so that its shape is not in s
// as written though a shell runs the command with it whole: s without its
// quotes and backslashes holds more credentials than s.
func splitByQuoting(s string) string {
	if !strings.ContainsAny(s, `"'\`) {
		return ""
	}
	n, kind := shapeMatches(unquoter.Replace(s))
	if m, _ := shapeMatches(s); n > m {
		return kind
	}
	return ""
}

// urlPasswordRE finds the password of a URL's userinfo
// (scheme://user:password@host, RFC 3986 3.2.1), its first submatch. A
// variable ($PASS) in its place is no secret.
var urlPasswordRE = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:'"]*:([^\s/?#@'"$]+)@`)

// hasURLPassword reports whether s holds a URL with a password.
func hasURLPassword(s string) bool {
	return strings.Contains(s, "://") && urlPasswordRE.MatchString(s)
}

// secretNames are argument names whose high-entropy values are credentials.
var secretNames = []string{"token", "secret", "password", "passwd", "passphrase", "apikey", "api_key", "api-key",
	"credential", "private_key", "privatekey", "access_key", "auth"}

// moneyNames are argument names whose numeric values are amounts of money.
var moneyNames = []string{"amount", "total", "price"}

// Limits on the walk through args: deeper or longer values are not read
// further, and the walk says so with secrets (it cannot rule them out).
const (
	maxSecretDepth  = 32
	maxSecretValues = 10000
)

// ScanArgs looks everywhere in args for credentials and amounts of money
// (risk.md, "Anywhere in args"). It returns the secrets found, the tags
// (secrets, money), and never the secret values themselves.
func ScanArgs(args map[string]any) ([]SecretFact, []string) {
	w := argWalk{tags: map[string]bool{}}
	w.walk("", "", args, 0)
	sort.Slice(w.found, func(i, j int) bool { return w.found[i].Arg < w.found[j].Arg })
	return w.found, sortedTags(w.tags)
}

type argWalk struct {
	found  []SecretFact
	tags   map[string]bool
	values int
}

func (w *argWalk) walk(at, key string, v any, depth int) {
	w.values++
	if depth > maxSecretDepth || w.values > maxSecretValues {
		w.tags["secrets"] = true
		w.found = append(w.found, SecretFact{Arg: at, Kind: "unscanned"})
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			w.walk(join(at, k), k, x, depth+1)
		}
	case []any:
		for i, x := range v {
			w.walk(join(at, strconv.Itoa(i)), key, x, depth+1)
		}
	case string:
		if kind := secretKind(key, v); kind != "" {
			w.tags["secrets"] = true
			w.found = append(w.found, SecretFact{Arg: at, Kind: kind})
		}
		if namedLike(key, moneyNames) {
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				w.tags["money"] = true
			}
		}
	case int64, float64, int, uint64:
		if namedLike(key, moneyNames) {
			w.tags["money"] = true
		}
	}
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// secretKind names the kind of credential s looks like, or "".
func secretKind(key, s string) string {
	if kind, ok := credentialHeaders[strings.ToLower(strings.TrimSpace(key))]; ok && strings.TrimSpace(s) != "" {
		return kind
	}
	if len(s) < 8 {
		if sp := namedSpans(s); len(sp) > 0 {
			return sp[0].kind
		}
		if namedValue(key, s) {
			return namedKind(key)
		}
		return ""
	}
	for _, p := range secretPatterns {
		for _, m := range p.markers {
			if strings.Contains(s, m) {
				if p.re.MatchString(s) {
					return p.kind
				}
				break
			}
		}
	}
	if hasURLPassword(s) {
		return "url_password"
	}
	if kind := splitByQuoting(s); kind != "" {
		return kind
	}
	if sp := namedSpans(s); len(sp) > 0 {
		return sp[0].kind
	}
	if namedValue(key, s) || namedLike(key, secretNames) && entropy(s) >= 3.0 && !strings.ContainsAny(s, " \n") {
		return namedKind(key)
	}
	return ""
}

// namedKind is the kind of a credential named by its argument's key:
// "named_" and the key in lower case, its characters a typed redaction
// cannot hold replaced by _.
func namedKind(key string) string {
	b := []byte("named_" + strings.ToLower(key))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// credentialHeaders are HTTP header names whose every value is a credential,
// in any case of the name and any scheme (RFC 9110, 5.1: field names ignore
// case; 11.1: so do scheme names; 11.6.2 Authorization, 11.7.2
// Proxy-Authorization; RFC 6265, 5.4 Cookie holds session tokens).
var credentialHeaders = map[string]string{"authorization": "authorization",
	"proxy-authorization": "authorization", "cookie": "cookie"}

// namedLike reports whether an argument name contains one of words as a word
// of its own: "api_token", "apiToken", "X-Api-Token" all contain "token".
func namedLike(key string, words []string) bool {
	if key == "" {
		return false
	}
	k := strings.ToLower(key)
	for _, w := range words {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	e := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		e -= p * math.Log2(p)
	}
	return e
}
