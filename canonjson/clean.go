package canonjson

import "encoding/json"

// Clean is the quick test in front of rein.CheckJSON: it reports true only
// when body is exactly one JSON value (whitespace around it allowed) that
// CheckJSON accepts, and keys tells it, when not nil, the keys of the
// top-level object as they are written. It is a single pass over the bytes
// with no allocation for the common case: object keys of printable ASCII
// without escapes, each object with at most maxCleanKeys keys, exact
// numbers and modest nesting.
//
// It never rejects anything: false means "not shown clean here", and the
// caller then runs CheckJSON, which says what is wrong (or finds nothing).
// So a key written with an escape or outside ASCII (where case folding and
// Unicode forms need the full treatment), a large object or a number that
// needs a closer look simply takes the slower path. FuzzCleanJSON holds it
// to that: whatever it calls clean, CheckJSON and encoding/json accept.
func Clean(body []byte, keys func(key []byte)) bool {
	s := cleanScanner{b: body}
	s.space()
	if !s.value(0, keys) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

const (
	maxCleanKeys  = 32  // more keys in one object: CheckJSON compares them
	maxCleanDepth = 256 // deeper: CheckJSON walks it
)

type cleanScanner struct {
	b []byte
	i int
}

func (s *cleanScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *cleanScanner) value(depth int, keys func([]byte)) bool {
	if s.i >= len(s.b) || depth >= maxCleanDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth+1, keys)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		return s.str(false)
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	default:
		return s.literal("true") || s.literal("false") || s.literal("null")
	}
}

func (s *cleanScanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// object reads {"k": v, ...}. Keys must be printable ASCII without escapes
// and differ from each other also when ASCII case is ignored (for such keys
// NFKC and lower-casing, CheckJSON's folding, are ASCII lower-casing).
func (s *cleanScanner) object(depth int, keys func([]byte)) bool {
	s.i++ // {
	var seen [maxCleanKeys][]byte
	n := 0
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		start := s.i + 1
		if !s.str(true) {
			return false
		}
		key := s.b[start : s.i-1]
		if n == maxCleanKeys {
			return false
		}
		for _, k := range seen[:n] {
			if equalFoldASCII(k, key) {
				return false
			}
		}
		seen[n] = key
		n++
		if keys != nil {
			keys(key)
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value(depth, nil) {
			return false
		}
		if more, ok := s.after('}'); !more {
			return ok
		}
	}
}

func (s *cleanScanner) array(depth int) bool {
	s.i++ // [
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth, nil) {
			return false
		}
		if more, ok := s.after(']'); !more {
			return ok
		}
	}
}

// after reads what follows a member or an element: a comma (more follow)
// or the closing bracket (ok, no more).
func (s *cleanScanner) after(closing byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.space()
		return true, true
	case closing:
		s.i++
		return false, true
	}
	return false, false
}

// str reads a string. A key (plain) must be printable ASCII with no escape;
// a value may hold any byte from 0x20 up and the escapes of RFC 8259.
func (s *cleanScanner) str(plain bool) bool {
	s.i++ // "
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case plain && (c == '\\' || c > 0x7e):
			return false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				s.i += 6
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

// number reads a number as RFC 8259 writes it. An integer of at most 15
// digits is exact as a double (and not a negative zero unless it is -0);
// anything else is judged by ParseNumber, as rein.CheckJSON judges it.
func (s *cleanScanner) number() bool {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := s.digits()
	switch {
	case digits == 0:
		return false
	case digits > 1 && s.b[s.i-digits] == '0': // leading zero
		return false
	}
	simple := true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
		simple = false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
		simple = false
	}
	text := s.b[start:s.i]
	if simple && digits <= 15 && string(text) != "-0" {
		return true
	}
	_, err := ParseNumber(json.Number(text))
	return err == nil
}

func (s *cleanScanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
