package risk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Concealed is one credential that Conceal replaced: where it was (a dotted
// path into args, as ScanArgs names it), its kind, the typed redaction that
// now stands in its place, and the value itself, which is only ever held in
// memory to give an agent back the arguments it sent.
type Concealed struct {
	Arg    string
	Kind   string
	Marker string
	Value  json.RawMessage // the JSON value the marker replaced (a string's text for a part of a string)
	Whole  bool            // the marker replaced the whole value at Arg, not a part of a string
}

// markerRE matches a typed redaction anywhere in a string.
var markerRE = regexp.MustCompile(`\[[a-z0-9_.-]+ sha256:[0-9a-f]{64}\]`)

// Marker is the typed redaction of a secret of kind: "[kind sha256:<hex>]",
// the hex SHA-256 of the secret's text (of its JSON for a value that is not
// a string).
func Marker(kind, text string) string {
	sum := sha256.Sum256([]byte(text))
	return "[" + kind + " sha256:" + hex.EncodeToString(sum[:]) + "]"
}

// HasMarker reports whether s holds a typed redaction.
func HasMarker(s string) bool { return strings.Contains(s, " sha256:") && markerRE.MatchString(s) }

// Conceal returns args with every credential ScanArgs finds replaced by its
// typed redaction, and what it replaced. A credential recognised by its
// shape inside a longer text (a token in a command line) is replaced where
// it stands, so the rest of the text stays readable; a value that is a
// credential because of its name (an Authorization header, a high-entropy
// "password") is replaced whole, and so is a part of args too deep or too
// large to scan. args is changed in place.
func Conceal(args map[string]any) (map[string]any, []Concealed) {
	w := concealWalk{values: 1} // the root object counts, as in ScanArgs
	for k, v := range args {
		args[k] = w.walk(k, k, v, 1)
	}
	sort.SliceStable(w.found, func(i, j int) bool { return w.found[i].Arg < w.found[j].Arg })
	return args, w.found
}

type concealWalk struct {
	found  []Concealed
	values int
}

func (w *concealWalk) walk(at, key string, v any, depth int) any {
	w.values++
	if depth > maxSecretDepth || w.values > maxSecretValues {
		return w.whole(at, "unscanned", v)
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = w.walk(join(at, k), k, e, depth+1)
		}
	case []any:
		for i, e := range x {
			x[i] = w.walk(join(at, strconv.Itoa(i)), key, e, depth+1)
		}
	case string:
		return w.text(at, key, x)
	}
	return v
}

// whole replaces the value at at by its marker.
func (w *concealWalk) whole(at, kind string, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	text := string(b)
	if s, ok := v.(string); ok {
		text = s
	}
	m := Marker(kind, text)
	w.found = append(w.found, Concealed{Arg: at, Kind: kind, Marker: m, Value: b, Whole: true})
	return m
}

// text conceals the credentials of one string, as secretKind judges it. A
// string that is a typed redaction already is left as it is, so concealing
// twice changes nothing.
func (w *concealWalk) text(at, key, s string) any {
	if len(s) < 200 && strings.HasPrefix(s, "[") && markerRE.FindString(s) == s {
		return s
	}
	if kind, ok := credentialHeaders[strings.ToLower(strings.TrimSpace(key))]; ok && strings.TrimSpace(s) != "" {
		return w.whole(at, kind, s)
	}
	if len(s) < 8 {
		if out, ok := w.named(at, s); ok {
			return out
		}
		if namedValue(key, s) {
			return w.whole(at, namedKind(key), s)
		}
		return s
	}
	if kind := splitByQuoting(s); kind != "" {
		return w.whole(at, kind, s) // where the token stands cannot be cut out
	}
	out, parts := s, 0
	for _, p := range secretPatterns {
		for _, m := range p.markers {
			if strings.Contains(out, m) {
				out = p.re.ReplaceAllStringFunc(out, func(secret string) string {
					parts++
					b, _ := json.Marshal(secret)
					mk := Marker(p.kind, secret)
					w.found = append(w.found, Concealed{Arg: at, Kind: p.kind, Marker: mk, Value: b})
					return mk
				})
				break
			}
		}
	}
	if hasURLPassword(out) {
		// Only the password is concealed: the scheme, user and host stay
		// readable.
		var b strings.Builder
		last := 0
		for _, m := range urlPasswordRE.FindAllStringSubmatchIndex(out, -1) {
			secret := out[m[2]:m[3]]
			parts++
			v, _ := json.Marshal(secret)
			mk := Marker("url_password", secret)
			w.found = append(w.found, Concealed{Arg: at, Kind: "url_password", Marker: mk, Value: v})
			b.WriteString(out[last:m[2]])
			b.WriteString(mk)
			last = m[3]
		}
		b.WriteString(out[last:])
		out = b.String()
	}
	if named, ok := w.named(at, out); ok {
		out, parts = named, parts+1
	}
	if parts > 0 {
		return out
	}
	if namedValue(key, s) || namedLike(key, secretNames) && entropy(s) >= 3.0 && !strings.ContainsAny(s, " \n") {
		return w.whole(at, namedKind(key), s)
	}
	return s
}

// named conceals, where they stand, the credentials of s that the text
// around them names (namedSpans), leaving the typed redactions s holds
// already as they are; false when there is none.
func (w *concealWalk) named(at, s string) (string, bool) {
	spans := namedSpans(s)
	if len(spans) == 0 {
		return s, false
	}
	var b strings.Builder
	last, n := 0, 0
	for _, sp := range spans {
		if sp.start < last {
			continue
		}
		secret := s[sp.start:sp.end]
		v, _ := json.Marshal(secret)
		mk := Marker(sp.kind, secret)
		w.found = append(w.found, Concealed{Arg: at, Kind: sp.kind, Marker: mk, Value: v})
		b.WriteString(s[last:sp.start])
		b.WriteString(mk)
		last, n = sp.end, n+1
	}
	if n == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// overlaps reports whether sp overlaps one of the ranges.
func overlaps(sp span, ranges [][]int) bool {
	for _, r := range ranges {
		if sp.start < r[1] && r[0] < sp.end {
			return true
		}
	}
	return false
}

// ConcealShapes returns s with every credential recognised by its shape (a
// token, a key, a URL's password) replaced by its typed redaction, as
// Conceal replaces them inside a longer text. It is for text derived from
// arguments (a shell command's words once unquoted), which Conceal of the
// arguments cannot reach.
func ConcealShapes(s string) string {
	if len(s) < 3 {
		return s
	}
	var w concealWalk
	out := w.text("", "", s)
	if t, ok := out.(string); ok {
		return t
	}
	return s
}

// Reveal puts back into args (changed in place) the secrets that concealing
// the agent's own request found, each only where it was: a typed redaction
// at the path it was concealed from is replaced by the value it stands for.
// A redaction left anywhere else (an edit that moved it, or one that names a
// secret the request does not carry) is an error that names its path: the
// arguments cannot be run as approved.
func Reveal(args map[string]any, from []Concealed) (map[string]any, error) {
	at := map[string][]Concealed{}
	for _, c := range from {
		at[c.Arg] = append(at[c.Arg], c)
	}
	var bad string
	var walk func(path string, v any) any
	walk = func(path string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(join(path, k), e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(join(path, strconv.Itoa(i)), e)
			}
		case string:
			for _, c := range at[path] {
				if c.Whole && x == c.Marker {
					var orig any
					if json.Unmarshal(c.Value, &orig) == nil {
						return orig
					}
				}
				if !c.Whole {
					var secret string
					if json.Unmarshal(c.Value, &secret) == nil {
						x = strings.ReplaceAll(x, c.Marker, secret)
					}
				}
			}
			if bad == "" && HasMarker(x) {
				bad = path
			}
			return x
		}
		return v
	}
	for k, v := range args {
		args[k] = walk(k, v)
	}
	if bad != "" {
		return nil, fmt.Errorf("argument %q holds a redacted secret that the request does not carry there", bad)
	}
	return args, nil
}
