package rein

import (
	"testing"
)

// FuzzDecodeCheck: decoding never panics, and whatever it accepts has a tool,
// object args that parse, and a stable canonical form and action hash.
func FuzzDecodeCheck(f *testing.F) {
	for _, s := range []string{
		`{"tool":"fs.read"}`,
		`{"tool":"shell.exec","args":{"command":"rm -rf /"},"session":"s","labels":{"a":"b"},"cost":1.5}`,
		`{"tool":"x","args":{"a":[1,2.5,{"b":null}],"c":"\u00e9"}}`,
		`{"tool":"x","args":{"a":1,"a":2}}`,
		`{"tool":"x","args":{"n":1e308}}`,
		`{"tool":"","wait_ms":-1}`,
		`[]`, `null`, `{"tool":"x"}garbage`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeCheck(body)
		if err != nil {
			if ErrorCode(err) != ECodeBadRequest {
				t.Fatalf("rejection with code %s: %v", ErrorCode(err), err)
			}
			return
		}
		if req.Tool == "" || len(req.Args) == 0 || req.Args[0] != '{' {
			t.Fatalf("accepted an invalid check: %+v", req)
		}
		if _, err := ParseArgs(req.Args); err != nil {
			t.Fatalf("accepted args that do not parse: %v", err)
		}
		c1, err := Canonical(req.Args)
		if err != nil {
			t.Fatalf("accepted args that cannot be canonicalised: %v", err)
		}
		c2, err := Canonical(c1)
		if err != nil || string(c1) != string(c2) {
			t.Fatalf("canonical form is not stable: %s vs %s (%v)", c1, c2, err)
		}
	})
}
