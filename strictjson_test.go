package rein

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/canonjson"
)

// TestArgNumbersAreExactOrRefused: a number in a check's arguments is either
// kept at its exact value through decoding, canonicalisation and hashing, or
// refused with a 400 that says why. Two different values never share an
// action hash.
func TestArgNumbersAreExactOrRefused(t *testing.T) {
	cases := []struct {
		in     string
		canon  string // the canonical form when accepted
		refuse string // part of the message when refused
	}{
		{"0", "0", ""},
		{"-1", "-1", ""},
		{"9007199254740992", "9007199254740992", ""},
		{"-9007199254740992", "-9007199254740992", ""},
		{"9007199254740993", "", "too large to be exact"},
		{"-9007199254740993", "", "too large to be exact"},
		{"18446744073709551616", "", "too large to be exact"},
		// Beyond 2^53 written as a decimal: the double is ...992.
		{"9007199254740993.0", "", "reads as 9.007199254740992e+15"},
		{"9007199254740992.0", "9007199254740992", ""},
		{"9.007199254740993e15", "", "cannot be kept exactly"},
		{"1e400", "", "out of range"},
		{"-1e400", "", "out of range"},
		{"1e-400", "", "reads as 0"},
		{"4.9e-324", "", "reads as 5e-324"},
		{"5e-324", "5e-324", ""},
		{"1.7976931348623157e308", "1.7976931348623157e+308", ""},
		// Decimals: the shortest form that reads back is what counts.
		{"0.1", "0.1", ""},
		{"0.10", "0.1", ""},
		{"0.1000000000000000055511151231257827", "", "reads as 0.1"},
		{"0.30000000000000004", "0.30000000000000004", ""},
		{"3.141592653589793238462643383279", "", "reads as 3.141592653589793"},
		{"123456789.123456789", "", "reads as 1.2345678912345679e+08"},
		{"1.5", "1.5", ""},
		{"1e2", "100", ""},
		{"1E2", "100", ""},
		{"1.0", "1", ""},
		{"12345678901234567890e-5", "", "cannot be kept exactly"},
		{"1e21", "1e+21", ""},
		{"2.5e-7", "2.5e-7", ""},
		{"1e999999999999999999999", "", "out of range"},
		// Negative zero: canonical JSON writes 0, so it is refused.
		{"-0", "", "negative zero"},
		{"-0.0", "", "negative zero"},
		{"-0e10", "", "negative zero"},
		{"-0.000e-3", "", "negative zero"},
		{"0.0", "0", ""},
	}
	hashes := map[string]string{}
	for _, c := range cases {
		body := `{"tool":"t","args":{"n":` + c.in + `}}`
		req, err := DecodeCheck([]byte(body))
		if err == nil {
			_, err = ParseArgs(req.Args)
		}
		if c.refuse != "" {
			if err == nil || ErrorCode(err) != ECodeBadRequest || !strings.Contains(err.Error(), c.refuse) {
				t.Errorf("%s: %v, want a 400 saying %q", c.in, err, c.refuse)
			}
			// The argument parser refuses it on its own too (entry points
			// other than POST /v1/check).
			if _, perr := ParseArgs(json.RawMessage(`{"n":` + c.in + `}`)); perr == nil {
				t.Errorf("ParseArgs accepted %s", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: refused: %v", c.in, err)
			continue
		}
		canon, err := Canonical(req.Args)
		if err != nil || string(canon) != `{"n":`+c.canon+`}` {
			t.Errorf("%s: canonical %s (%v), want {\"n\":%s}", c.in, canon, err, c.canon)
		}
		h, _ := ActionHash("acme", "a", "", "t", canon)
		if other, ok := hashes[h]; ok && !canonjson.SameDecimal(other, c.in) {
			t.Errorf("%s and %s share an action hash", other, c.in)
		}
		hashes[h] = c.in
	}
}

// FuzzCleanJSON: whatever the quick test calls clean, the full check and
// encoding/json accept, and the keys it reports are the top-level object's.
func FuzzCleanJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"A":2}`, `{"a":[1,2.5e3,"x\u00e9"]}`, `-0`, `1e400`, `{"k":"\\"}`,
		`{"a":{"b":{"c":[null,true,false]}}}`, `"\ud800"`, `[1,]`, `{"a":123456789012345678}`, `0.1`, `{"":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var keys []string
		if !canonjson.Clean(b, func(k []byte) { keys = append(keys, string(k)) }) {
			return
		}
		if err := checkJSONFull(b); err != nil {
			t.Fatalf("clean, but CheckJSON says %v: %q", err, b)
		}
		if !json.Valid(b) {
			t.Fatalf("clean, but not valid JSON: %q", b)
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(b, &top) == nil && top != nil {
			if len(top) != len(keys) {
				t.Fatalf("keys %v, encoding/json reads %d: %q", keys, len(top), b)
			}
			for _, k := range keys {
				if _, ok := top[k]; !ok {
					t.Fatalf("key %q not read by encoding/json: %q", k, b)
				}
			}
		} else if len(keys) != 0 {
			t.Fatalf("keys %v of a value that is not an object: %q", keys, b)
		}
	})
}

// BenchmarkDecodeCheck: the strict decoding of a typical request body.
func BenchmarkDecodeCheck(b *testing.B) {
	body := []byte(`{"tool":"payments.transfer","args":{"amount":5000,"to":"acme","invoice":"INV-4541"},"session":"bench-1795712050-36","agent":"bench"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeCheck(body); err != nil {
			b.Fatal(err)
		}
	}
}
