package canonjson

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The quick test takes the common request and every argument shape seen on
// the check path; what it does not take, rein.CheckJSON judges in full
// (rein.FuzzCleanJSON holds the two to agree).
func TestCleanJSON(t *testing.T) {
	deep := strings.Repeat("[", maxCleanDepth+1) + strings.Repeat("]", maxCleanDepth+1)
	var many []string
	for i := range maxCleanKeys + 1 {
		many = append(many, `"k`+string(rune('a'+i%26))+string(rune('a'+i/26))+`":1`)
	}
	for _, c := range []struct {
		body  string
		clean bool
	}{
		{`{"tool":"payments.transfer","args":{"amount":5000,"to":"acme","memo":"Q3 \"final\" \u00e9\n"},"session":"s-1","labels":{"env":"prod"}}`, true},
		{` {"a":[1,-2,3.5,1e3,true,false,null,{},[]]} `, true},
		{`{"path":"C:\\Users\\x","n":-0.5,"big":123456789012345}`, true},
		{`"text"`, true},
		{`{"a":1,"b":2,"A":3}`, false},         // case clash: CheckJSON names it
		{`{"a":1,"a":1}`, false},               // duplicate
		{`{"\u0061":1}`, false},                // escaped key
		{`{"é":1}`, false},                     // key outside ASCII
		{`{"a":9007199254740993}`, false},      // not exact as a double
		{`{"a":1234567890123456}`, true},       // 16 digits: parseNumber decides (exact)
		{`{"a":-0}`, false},                    // negative zero
		{`{"a":1.0000000000000000001}`, false}, // rounds
		{`{"a":01}`, false},                    // leading zero
		{`{"a":1.}`, false},
		{`{"a":"x\q"}`, false}, // bad escape
		{"{\"a\":\"x\ty\"}", false},
		{`{"a":1}{"b":2}`, false}, // two values
		{`{"a":1,}`, false},
		{`[1,2`, false},
		{``, false},
		{`nul`, false},
		{deep, false},
		{`{` + strings.Join(many, ",") + `}`, false},
	} {
		got := Clean([]byte(c.body), nil)
		if got != c.clean {
			t.Errorf("Clean(%.60s) = %v, want %v", c.body, got, c.clean)
		}
		if got && !json.Valid([]byte(c.body)) {
			t.Errorf("Clean(%.60s) is true, but encoding/json refuses it", c.body)
		}
	}
}

// The top-level keys the quick test reports are the object's keys as
// encoding/json reads them.
func TestCleanJSONTopKeys(t *testing.T) {
	body := `{"tool":"x","args":{"inner":1,"deeper":{"no":2}},"session":"s"}`
	var got []string
	if !Clean([]byte(body), func(k []byte) { got = append(got, string(k)) }) {
		t.Fatal("not clean")
	}
	if want := []string{"tool", "args", "session"}; !slices.Equal(got, want) {
		t.Fatalf("top-level keys %v, want %v", got, want)
	}
}
