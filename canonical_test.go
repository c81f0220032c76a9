package rein

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

var canonicalCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1`, `-12`, `007`, `1.0`, `1.5`, `1e3`, `-1E-7`, `123456789012345`, `1234567890123456`,
	`9007199254740993`, `true`, `false`, `null`, `nul`, `tru`, ` {"a" : 1 } `, `{"b":1,"a":2}`, `{"a":1,"a":2}`,
	`{"a":{"c":[1,{"z":null,"y":"x"}],"b":true}}`, `{"é":1,"e":2}`, `{"\u00e9":1}`, `{"\ud83d\ude00":1,"\ufb33":2}`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"a\/b"`, `"\u0000\u001f\u007f"`, `"<&>"`, "\"\u2028\"", `"\b\f\n\r\t\"\\"`,
	`"\x"`, "\"\xff\"", "\"tab\there\"", `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `"unterminated`,
	`{"k\"ey":1}`, `{"a\\b":1}`, `[` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `]`, `{"a":1} x`, ``,
	`{"command":"rm -rf ./build","env":{"PATH":"/usr/bin"},"n":[1,-2,3]}`, `{"a":1,"b":[true,null,"x\u001f"]}`,
	`"\u001F"`, `"\u000a"`, `"\u0041"`, `{"b":1,"a":2}`, `[1,2]`, `[1, 2]`, `{"a":"\/"}`, `"é"`, `"\u00e9"`, `-0`, `-1`, `01`,
}

// TestCanonicalJSONMatchesReference: the fast path gives exactly what the
// reference implementation gives, and fails where it fails.
func TestCanonicalJSONMatchesReference(t *testing.T) {
	for _, in := range canonicalCases {
		compareCanonicalJSON(t, []byte(in))
	}
}

func compareCanonicalJSON(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := jcs.Transform(in)
	got, gotErr := AppendCanonicalJSON(nil, in)
	if (wantErr != nil) != (gotErr != nil) || string(got) != string(want) {
		t.Errorf("canonical %q:\n got %q (%v)\nwant %q (%v)", in, got, gotErr, want, wantErr)
	}
	isCanon := wantErr == nil && string(want) == string(in)
	if IsCanonicalJSON(in) != isCanon {
		t.Errorf("IsCanonicalJSON(%q) = %v, want %v", in, !isCanon, isCanon)
	}
	if wantErr == nil && !IsCanonicalJSON(want) {
		t.Errorf("IsCanonicalJSON(%q) = false for the reference's own output", want)
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, c := range canonicalCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) { compareCanonicalJSON(t, in) })
}

// TestCanonicalValuesMatchReference compares Go values, as rein builds
// audit entries, against json.Marshal followed by the reference.
func TestCanonicalValuesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		v := randomValue(r, 0)
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := jcs.Transform(raw)
		got, gotErr := appendCanonical(nil, v, 0)
		if (wantErr != nil) != (gotErr != nil) || string(got) != string(want) {
			t.Fatalf("value %#v:\n got %s (%v)\nwant %s (%v)", v, got, gotErr, want, wantErr)
		}
	}
}

func randomString(r *rand.Rand) string {
	parts := []string{"a", "Z", "é", "😀", "\x00", "\n", "\"", "\\", "<", "&", "\u2028", "\xff", "דּ", " ", "/", "\x7f"}
	var b strings.Builder
	for n := r.IntN(6); n > 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(12)
	if depth > 3 {
		k = r.IntN(7)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return randomString(r)
	case 3:
		return r.Int64N(1<<60) - 1<<59
	case 4:
		return []float64{0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, 123, 1 << 53, 1<<53 + 2, 0.1}[r.IntN(9)]
	case 5:
		return r.IntN(1000) - 500
	case 6:
		for {
			if c := canonicalCases[r.IntN(len(canonicalCases))]; json.Valid([]byte(c)) {
				return json.RawMessage(c)
			}
		}
	case 7, 8:
		m := map[string]any{}
		for n := r.IntN(5); n > 0; n-- {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	case 9:
		return []string{randomString(r), randomString(r)}
	default:
		var a []any
		for n := r.IntN(4); n > 0; n-- {
			a = append(a, randomValue(r, depth+1))
		}
		return a
	}
}

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
		if other, ok := hashes[h]; ok && !sameDecimal(other, c.in) {
			t.Errorf("%s and %s share an action hash", other, c.in)
		}
		hashes[h] = c.in
	}
}

func TestSameDecimal(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1", "1.0", true}, {"100", "1e2", true}, {"0.1", "1e-1", true}, {"0", "-0.0", true}, {"0", "0e5", true},
		{"1", "-1", false}, {"1", "10", false}, {"0.1", "0.01", false}, {"9007199254740993", "9.007199254740992e+15", false},
		{"1e99999999999", "1e99999999999", false}, // exponents that large are not compared: refused
	} {
		if got := sameDecimal(c.a, c.b); got != c.want {
			t.Errorf("sameDecimal(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// FuzzArgNumbers: a number parseNumber accepts keeps its exact value in the
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
		if _, err := parseNumber(json.Number(s)); err != nil {
			return
		}
		canon, err := AppendCanonicalJSON(nil, []byte(s))
		if err != nil {
			t.Fatalf("%s accepted but not canonicalised: %v", s, err)
		}
		if !sameDecimal(s, string(canon)) {
			t.Fatalf("%s accepted but canonicalised as %s", s, canon)
		}
	})
}

// Values of named types, string maps and empty slices take the quick path
// and are written exactly as the reference writes them.
func TestCanonicalQuickPathMatchesReference(t *testing.T) {
	type shade string
	type item struct{ A int }
	for _, v := range []any{
		Decision("allow"), shade("<ü>\u2028"), map[string]string{"b": "2", "a": "é\"", "Z": ""}, map[string]string{},
		map[string]string(nil), []item{}, []item(nil), []ShadowMatch{}, []byte{}, []byte(nil), map[string]any{"d": Deny, "l": map[string]string{"k": "v"}, "s": []item{}},
		map[string]string{"ключ": "v"}, map[string]string{"k": "\xff"},
	} {
		got, err := appendCanonical(nil, v, 0)
		want, err2 := appendReference(nil, v)
		if err != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("%#v: got %s (%v), reference %s (%v)", v, got, err, want, err2)
		}
	}
}
