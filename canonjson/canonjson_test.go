package canonjson

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
	got, gotErr := Append(nil, in)
	if (wantErr != nil) != (gotErr != nil) || string(got) != string(want) {
		t.Errorf("canonical %q:\n got %q (%v)\nwant %q (%v)", in, got, gotErr, want, wantErr)
	}
	isCanon := wantErr == nil && string(want) == string(in)
	if IsCanonical(in) != isCanon {
		t.Errorf("IsCanonical(%q) = %v, want %v", in, !isCanon, isCanon)
	}
	if wantErr == nil && !IsCanonical(want) {
		t.Errorf("IsCanonical(%q) = false for the reference's own output", want)
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

// Values of named types, string maps and empty slices take the quick path
// and are written exactly as the reference writes them.
func TestCanonicalQuickPathMatchesReference(t *testing.T) {
	type shade string
	type decision string
	type item struct{ A int }
	type match struct {
		Rule  string `json:"rule"`
		Error string `json:"error,omitempty"`
	}
	for _, v := range []any{
		decision("allow"), shade("<ü>\u2028"), map[string]string{"b": "2", "a": "é\"", "Z": ""}, map[string]string{},
		map[string]string(nil), []item{}, []item(nil), []match{}, []byte{}, []byte(nil), map[string]any{"d": decision("deny"), "l": map[string]string{"k": "v"}, "s": []item{}},
		map[string]string{"ключ": "v"}, map[string]string{"k": "\xff"},
	} {
		got, err := appendCanonical(nil, v, 0)
		want, err2 := appendReference(nil, v)
		if err != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("%#v: got %s (%v), reference %s (%v)", v, got, err, want, err2)
		}
	}
}
