// Package canonjson writes and recognises canonical JSON (RFC 8785, JCS), and
// tells quickly whether a JSON text is one clean value that rein's strict
// checks would accept. It is encoding machinery the domain uses for action
// hashes, audit entries and request bodies; it knows nothing of checks.
package canonjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Canonical JSON (RFC 8785, JCS) without a round trip through a generic
// parser for the values rein writes most: objects with ASCII keys, strings,
// integers, booleans and null. Anything else (fractions, exponents, integers
// beyond 2^53, non-ASCII keys, \u escapes of surrogates, invalid UTF-8,
// deep nesting) is handed to the reference implementation
// (github.com/gowebpki/jcs) for that value, so the output is always what the
// reference gives; a fuzz test holds the two to that.

const maxCanonicalDepth = 64

// appendCanonical appends the canonical JSON of a Go value, as
// json.Marshal followed by jcs.Transform would give it.
func appendCanonical(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxCanonicalDepth {
		return appendReference(dst, v)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		if !utf8.ValidString(x) {
			return appendReference(dst, x) // json.Marshal replaces invalid bytes
		}
		return appendCanonicalString(dst, x), nil
	case int:
		return appendCanonicalInt(dst, int64(x), v)
	case int64:
		return appendCanonicalInt(dst, x, v)
	case int32:
		return appendCanonicalInt(dst, int64(x), v)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return strconv.AppendInt(dst, int64(x), 10), nil // -0 is 0, as in JCS
		}
		return appendReference(dst, x)
	case json.RawMessage:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return Append(dst, x)
	case []string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, s := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, s, depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		return appendObject(dst, x, depth)
	case map[string]string:
		return appendObject(dst, x, depth)
	case time.Time:
		return appendReference(dst, x)
	case json.Marshaler, encoding.TextMarshaler:
		return appendReference(dst, v)
	}
	// Named strings (a decision, a status) and empty or nil slices, as
	// json.Marshal writes them, without a round trip through the reference.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.String:
		return appendCanonical(dst, rv.String(), depth)
	case reflect.Slice:
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		if rv.Len() == 0 && rv.Type().Elem().Kind() != reflect.Uint8 { // []byte is base64
			return append(dst, "[]"...), nil
		}
	}
	return appendReference(dst, v)
}

func appendCanonicalInt(dst []byte, n int64, v any) ([]byte, error) {
	if n > 1<<53 || n < -(1<<53) {
		return appendReference(dst, v) // as JCS reads it: the nearest double
	}
	return strconv.AppendInt(dst, n, 10), nil
}

// appendReference canonicalises one value with the reference implementation.
func appendReference(dst []byte, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, err
	}
	return append(dst, out...), nil
}

// appendObject writes a map with plain keys in key order; other maps go
// through the reference.
func appendObject[V any](dst []byte, m map[string]V, depth int) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys, ok := plainKeys(m)
	if !ok {
		return appendReference(dst, m)
	}
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCanonicalString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendCanonical(dst, m[k], depth+1); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// plainKeys returns m's keys sorted, or false when one is not plain (then
// byte order may not be the canonical UTF-16 order, or a key needs
// escaping).
func plainKeys[V any](m map[string]V) ([]string, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !plainKey(k) {
			return nil, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys) // ASCII: byte order is UTF-16 order
	return keys, true
}

// plainKey: printable ASCII without quote or backslash, where byte order,
// code point order and UTF-16 order agree and nothing needs escaping.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendCanonicalString writes a valid UTF-8 string as JCS does: only the
// quote, the backslash and control characters are escaped.
func appendCanonicalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, `\"`...)
		case '\\':
			dst = append(dst, `\\`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Append appends the canonical form of JSON text. Text outside
// the fast path's reach is canonicalised by the reference implementation,
// which also reports what is not valid JSON.
func Append(dst, raw []byte) ([]byte, error) {
	p := canonParser{in: raw}
	p.space()
	out, ok := p.value(dst, 0)
	if p.space(); ok && p.pos == len(raw) {
		return out, nil
	}
	ref, err := jcs.Transform(raw)
	if err != nil {
		return nil, err
	}
	return append(dst, ref...), nil
}

// canonParser is the fast path of Append: it reports !ok for
// anything it does not handle exactly as the reference does.
type canonParser struct {
	in  []byte
	pos int
}

func (p *canonParser) space() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *canonParser) value(dst []byte, depth int) ([]byte, bool) {
	if p.pos >= len(p.in) || depth > maxCanonicalDepth {
		return dst, false
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(dst, depth)
	case c == '[':
		p.pos++
		dst = append(dst, '[')
		p.space()
		if p.pos < len(p.in) && p.in[p.pos] == ']' {
			p.pos++
			return append(dst, ']'), true
		}
		for {
			var ok bool
			p.space()
			if dst, ok = p.value(dst, depth+1); !ok {
				return dst, false
			}
			p.space()
			if p.pos >= len(p.in) {
				return dst, false
			}
			switch p.in[p.pos] {
			case ',':
				p.pos++
				dst = append(dst, ',')
			case ']':
				p.pos++
				return append(dst, ']'), true
			default:
				return dst, false
			}
		}
	case c == '"':
		s, ok := p.str()
		if !ok {
			return dst, false
		}
		return appendCanonicalString(dst, s), true
	case c == '-' || (c >= '0' && c <= '9'):
		return p.integer(dst)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.in[p.pos:], []byte(lit)) {
				p.pos += len(lit)
				return append(dst, lit...), true
			}
		}
		return dst, false
	}
}

type member struct {
	key string
	val []byte
}

func (p *canonParser) object(dst []byte, depth int) ([]byte, bool) {
	p.pos++ // {
	var members []member
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		return append(dst, "{}"...), true
	}
	for {
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return dst, false
		}
		k, ok := p.str()
		if !ok || !plainKey(k) {
			return dst, false
		}
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return dst, false
		}
		p.pos++
		p.space()
		var v []byte
		if v, ok = p.value(nil, depth+1); !ok {
			return dst, false
		}
		members = append(members, member{k, v})
		p.space()
		if p.pos >= len(p.in) {
			return dst, false
		}
		if p.in[p.pos] == '}' {
			p.pos++
			break
		}
		if p.in[p.pos] != ',' {
			return dst, false
		}
		p.pos++
	}
	slices.SortFunc(members, func(a, b member) int { return compareStrings(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			if m.key == members[i-1].key {
				return dst, false // duplicate keys: the reference reports them
			}
			dst = append(dst, ',')
		}
		dst = appendCanonicalString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}'), true
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// str reads a string; escapes other than \uXXXX of a surrogate are decoded,
// and invalid UTF-8 or raw control characters end the fast path.
func (p *canonParser) str() (string, bool) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			s := p.in[start:p.pos]
			p.pos++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", false
		}
		p.pos++
	}
	return "", false
}

func (p *canonParser) escapedStr(start int) (string, bool) {
	buf := append([]byte(nil), p.in[start:p.pos]...)
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !utf8.Valid(buf) {
				return "", false
			}
			return string(buf), true
		case c < 0x20:
			return "", false
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.in) {
			return "", false
		}
		e := p.in[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if p.pos+4 > len(p.in) {
				return "", false
			}
			n, err := strconv.ParseUint(string(p.in[p.pos:p.pos+4]), 16, 16)
			if err != nil || (n >= 0xD800 && n <= 0xDFFF) {
				return "", false
			}
			p.pos += 4
			buf = utf8.AppendRune(buf, rune(n))
		default:
			return "", false
		}
	}
	return "", false
}

// integer reads a plain integer (no fraction, no exponent, no leading
// zero) of at most 15 digits, written as it is (-0 as 0).
func (p *canonParser) integer(dst []byte) ([]byte, bool) {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
		p.pos++
	}
	n := p.pos - digits
	if n == 0 || n > 15 || (p.in[digits] == '0' && n > 1) {
		return dst, false
	}
	if p.pos < len(p.in) {
		switch p.in[p.pos] {
		case '.', 'e', 'E':
			return dst, false
		}
	}
	if n == 1 && p.in[digits] == '0' {
		return append(dst, '0'), true
	}
	return append(dst, p.in[start:p.pos]...), true
}

// IsCanonical reports whether b is exactly the canonical (RFC 8785) form
// of the JSON value it holds. The common case is decided in place without
// allocating; anything else is compared with its canonicalisation.
func IsCanonical(b []byte) bool {
	c := canonCheck{in: b}
	ok, sure := c.value(0)
	if sure && ok && c.pos != len(b) {
		ok = false
	}
	if sure {
		return ok
	}
	out, err := Append(nil, b)
	return err == nil && bytes.Equal(out, b)
}

// canonCheck walks canonical JSON. Each step returns (ok, sure): sure
// false means the fast path cannot decide (fractions, exponents, long
// numbers, escaped or non-ASCII keys, non-ASCII text).
type canonCheck struct {
	in  []byte
	pos int
}

func (c *canonCheck) value(depth int) (bool, bool) {
	if c.pos >= len(c.in) || depth > maxCanonicalDepth {
		return false, false
	}
	switch ch := c.in[c.pos]; {
	case ch == '{':
		c.pos++
		if c.pos < len(c.in) && c.in[c.pos] == '}' {
			c.pos++
			return true, true
		}
		var prev []byte
		for {
			if c.pos >= len(c.in) || c.in[c.pos] != '"' {
				return false, true
			}
			start := c.pos + 1
			for c.pos++; c.pos < len(c.in) && c.in[c.pos] != '"'; c.pos++ {
				if x := c.in[c.pos]; x == '\\' || x < 0x20 || x >= 0x80 {
					return false, false
				}
			}
			if c.pos >= len(c.in) {
				return false, true
			}
			key := c.in[start:c.pos]
			if prev != nil && bytes.Compare(key, prev) <= 0 {
				return false, true // out of order, or a duplicate
			}
			prev = key
			c.pos++
			if c.pos >= len(c.in) || c.in[c.pos] != ':' {
				return false, true
			}
			c.pos++
			if ok, sure := c.value(depth + 1); !ok || !sure {
				return ok, sure
			}
			if more, ok := c.after('}'); !more {
				return ok, true
			}
		}
	case ch == '[':
		c.pos++
		if c.pos < len(c.in) && c.in[c.pos] == ']' {
			c.pos++
			return true, true
		}
		for {
			if ok, sure := c.value(depth + 1); !ok || !sure {
				return ok, sure
			}
			if more, ok := c.after(']'); !more {
				return ok, true
			}
		}
	case ch == '"':
		return c.str()
	case ch == '-' || (ch >= '0' && ch <= '9'):
		start := c.pos
		if ch == '-' {
			c.pos++
		}
		digits := c.pos
		for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
			c.pos++
		}
		n := c.pos - digits
		if c.pos < len(c.in) && (c.in[c.pos] == '.' || c.in[c.pos] == 'e' || c.in[c.pos] == 'E') || n > 15 {
			return false, false
		}
		if n == 0 || (c.in[digits] == '0' && (n > 1 || digits > start)) {
			return false, true // "-", leading zeros, "-0"
		}
		return true, true
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(c.in[c.pos:], []byte(lit)) {
				c.pos += len(lit)
				return true, true
			}
		}
		return false, true
	}
}

// str checks a string in its canonical form: only \" \\ \b \f \n \r \t and
// \u00xx (lower-case hex, for other control characters) as escapes.
// after reads what follows a member or an element: ',' (more follow:
// true) or closer (the container ends: false, ok); anything else, or the
// end of the input, is not canonical (false, false).
func (c *canonCheck) after(closer byte) (more, ok bool) {
	if c.pos >= len(c.in) {
		return false, false
	}
	switch c.in[c.pos] {
	case ',':
		c.pos++
		return true, false
	case closer:
		c.pos++
		return false, true
	}
	return false, false
}

func (c *canonCheck) str() (bool, bool) {
	for c.pos++; c.pos < len(c.in); c.pos++ {
		switch x := c.in[c.pos]; {
		case x == '"':
			c.pos++
			return true, true
		case x < 0x20:
			return false, true
		case x >= 0x80:
			return false, false
		case x == '\\':
			if c.pos+1 >= len(c.in) {
				return false, true
			}
			c.pos++
			switch c.in[c.pos] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if c.pos+4 >= len(c.in) || c.in[c.pos+1] != '0' || c.in[c.pos+2] != '0' {
					return false, true
				}
				h, l := c.in[c.pos+3], c.in[c.pos+4]
				if h != '0' && h != '1' || !(l >= '0' && l <= '9' || l >= 'a' && l <= 'f') {
					return false, true
				}
				switch v := (h-'0')<<4 | hexVal(l); v {
				case '\b', '\f', '\n', '\r', '\t':
					return false, true // these have short forms
				}
				c.pos += 4
			default:
				return false, true
			}
		}
	}
	return false, true
}

func hexVal(b byte) byte {
	if b <= '9' {
		return b - '0'
	}
	return b - 'a' + 10
}

// AppendValue appends the canonical JSON of a Go value, as json.Marshal
// followed by the reference's transform would give it.
func AppendValue(dst []byte, v any) ([]byte, error) { return appendCanonical(dst, v, 0) }
