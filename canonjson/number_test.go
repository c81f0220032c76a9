package canonjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSameDecimal(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1", "1.0", true}, {"100", "1e2", true}, {"0.1", "1e-1", true}, {"0", "-0.0", true}, {"0", "0e5", true},
		{"1", "-1", false}, {"1", "10", false}, {"0.1", "0.01", false}, {"9007199254740993", "9.007199254740992e+15", false},
		{"1e99999999999", "1e99999999999", false}, // exponents that large are not compared: refused
	} {
		if got := SameDecimal(c.a, c.b); got != c.want {
			t.Errorf("SameDecimal(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// FuzzArgNumbers: a number ParseNumber accepts keeps its exact value in the
// canonical form, so no two different accepted numbers can share a hash.
func FuzzArgNumbers(f *testing.F) {
	for _, s := range []string{"0", "1.5", "9007199254740993.0", "0.1", "1e21", "5e-324", "-2.5e-7", "123456789.123456789", "1e-400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || !strings.ContainsAny(s, "0123456789") || strings.ContainsAny(s, `"[]{}tfn`) {
			return
		}
		s = strings.TrimSpace(s)
		if _, err := ParseNumber(json.Number(s)); err != nil {
			return
		}
		canon, err := Append(nil, []byte(s))
		if err != nil {
			t.Fatalf("%s accepted but not canonicalised: %v", s, err)
		}
		if !SameDecimal(s, string(canon)) {
			t.Fatalf("%s accepted but canonicalised as %s", s, canon)
		}
	})
}
