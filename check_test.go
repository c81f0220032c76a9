package rein

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

func TestDecodeCheck(t *testing.T) {
	cases := []struct {
		name, body, wantErr string
	}{
		{"minimal", `{"tool":"fs.read"}`, ""},
		{"full", `{"tool":"shell.exec","args":{"command":"ls"},"session":"s","agent":"a","intent":"i","labels":{"env":"prod"},"cost":0.5,"request_id":"r","wait_ms":1000}`, ""},
		{"null args", `{"tool":"x","args":null}`, ""},
		{"empty body", ``, "body is empty"},
		{"not an object", `[1,2]`, "must be a JSON object"},
		{"malformed", `{"tool":`, "malformed JSON"},
		{"unknown field", `{"tool":"x","toool":"y"}`, `unknown field "toool"; known fields: tool, args`},
		{"trailing data", `{"tool":"x"} {"tool":"y"}`, "data after the JSON object"},
		{"missing tool", `{"args":{}}`, `"tool" is required`},
		{"long tool", `{"tool":"` + strings.Repeat("t", 257) + `"}`, `"tool" is 257 characters`},
		{"256 characters of two bytes each", `{"tool":"` + strings.Repeat("é", 256) + `"}`, ""},
		{"field name in another case", `{"tool":"fs.read","Tool":"deploy"}`, `keys "tool" and "Tool"`},
		{"upper-case field", `{"TOOL":"fs.read"}`, `unknown field "TOOL"`},
		{"control char", `{"tool":"a\u0007b"}`, "control character"},
		{"args string", `{"tool":"x","args":"ls"}`, `"args" must be a JSON object`},
		{"args list", `{"tool":"x","args":[1]}`, `"args" must be a JSON object`},
		{"wrong type", `{"tool":5}`, `field "tool" must be a string`},
		{"negative cost", `{"tool":"x","cost":-1}`, `"cost" must be a non-negative`},
		{"wait too long", `{"tool":"x","wait_ms":300001}`, `"wait_ms" must be between 0 and 300000`},
		{"fraction for a whole number", `{"tool":"x","wait_ms":1.0}`, `field "wait_ms" must be a whole number (no fraction, no exponent), not 1.0`},
		{"exponent for a whole number", `{"tool":"x","wait_ms":1e3}`, `not 1e3`},
		{"string for a number", `{"tool":"x","cost":"1"}`, `field "cost" must be a number, not string`},
		{"duplicate top-level key", `{"tool":"x","tool":"y"}`, `duplicate key "tool"`},
		{"duplicate nested key", `{"tool":"x","args":{"a":{"b":1,"b":2}}}`, `duplicate key "b"`},
		{"same key in sibling objects is fine", `{"tool":"x","args":{"a":{"b":1},"c":{"b":2}}}`, ""},
		{"keys differing in case", `{"tool":"x","args":{"command":"ls","Command":"rm -rf /"}}`, `keys "command" and "Command"`},
		{"keys differing in Unicode form", `{"tool":"x","args":{"command":"ls","ｃommand":"rm -rf /"}}`, "differ only in case or Unicode form"},
		{"nested keys differing in case", `{"tool":"x","args":{"env":{"PATH":"/bin","path":"/tmp"}}}`, "differ only in case"},
		{"unsafe integer", `{"tool":"x","args":{"n":9007199254740993}}`, "too large to be exact"},
		{"safe integer", `{"tool":"x","args":{"n":9007199254740992}}`, ""},
		{"huge float", `{"tool":"x","args":{"n":1e400}}`, "out of range"},
		{"invalid utf8", "{\"tool\":\"\xff\"}", "not valid UTF-8"},
	}
	for _, c := range cases {
		_, err := DecodeCheck([]byte(c.body))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.wantErr != "" && err == nil:
			t.Errorf("%s: accepted", c.name)
		case c.wantErr != "" && (!strings.Contains(err.Error(), c.wantErr) || ErrorCode(err) != ECodeBadRequest):
			t.Errorf("%s: error %q (code %s), want %q", c.name, err, ErrorCode(err), c.wantErr)
		}
	}
}

func TestActionHashIsCanonical(t *testing.T) {
	a, err := Canonical(json.RawMessage(`{"b": 1.0, "a": [1e2, "x"], "c": {"z": 0.5, "y": -0}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Canonical(json.RawMessage(`{"a":[100,"x"],"c":{"y":0,"z":0.5},"b":1}`))
	if string(a) != string(b) || string(a) != `{"a":[100,"x"],"b":1,"c":{"y":0,"z":0.5}}` {
		t.Fatalf("canonical forms differ: %s vs %s", a, b)
	}
	h1, _ := ActionHash("acme", "builder", "s1", "shell.exec", a)
	h2, _ := ActionHash("acme", "builder", "s1", "shell.exec", b)
	if h1 != h2 || !strings.HasPrefix(h1, "sha256:") || len(h1) != 71 {
		t.Errorf("hashes %s %s", h1, h2)
	}
	// Every bound field changes the hash.
	for _, h := range []string{
		must(ActionHash("globex", "builder", "s1", "shell.exec", a)),
		must(ActionHash("acme", "builder/sub", "s1", "shell.exec", a)),
		must(ActionHash("acme", "builder", "s2", "shell.exec", a)),
		must(ActionHash("acme", "builder", "s1", "shell.exec2", a)),
		must(ActionHash("acme", "builder", "s1", "shell.exec", json.RawMessage(`{"a":[100,"x"],"b":2,"c":{"y":0,"z":0.5}}`))),
	} {
		if h == h1 {
			t.Errorf("hash did not change: %s", h)
		}
	}
	// Known answer: sha256 of {"agent":"a","args":{},"session":"","tenant":"t","tool":"x"}.
	if h := must(ActionHash("t", "a", "", "x", json.RawMessage(`{}`))); h != "sha256:"+knownHash {
		t.Errorf("known answer: %s", h)
	}
}

// knownHash = sha256(`{"agent":"a","args":{},"session":"","tenant":"t","tool":"x"}`), computed with sha256sum.
const knownHash = "5cfdba8987a804b6495237d6364fa31c96994cbe5b6c90ebbc2695bd3b355711"

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

func TestAgentFor(t *testing.T) {
	cases := []struct {
		key, asked, want string
		ok               bool
	}{
		{"builder", "", "builder", true},
		{"builder", "builder", "builder", true},
		{"builder", "builder/sub-1", "builder/sub-1", true},
		{"builder", "builder/a/b", "builder/a/b", true},
		{"builder", "builder/", "", false},
		{"builder", "builderx", "", false},
		{"builder", "admin", "", false},
		{"builder", "other/builder", "", false},
	}
	for _, c := range cases {
		got, err := AgentFor(c.key, c.asked)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("AgentFor(%q, %q) = %q, %v", c.key, c.asked, got, err)
		}
		if err != nil && ErrorCode(err) != ECodeForbidden {
			t.Errorf("AgentFor(%q, %q): code %s, want forbidden", c.key, c.asked, ErrorCode(err))
		}
	}
}

func TestParseArgsNumbers(t *testing.T) {
	m, err := ParseArgs(json.RawMessage(`{"i": 3, "f": 2.5, "e": 1e2, "l": [1, 2.0], "o": {"n": -7}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m["i"] != int64(3) || m["f"] != 2.5 || m["e"] != 100.0 || m["l"].([]any)[0] != int64(1) || m["o"].(map[string]any)["n"] != int64(-7) {
		t.Errorf("numbers: %#v", m)
	}
}

func TestNewIDSortsAndDiffers(t *testing.T) {
	a, b := NewID("chk"), NewID("chk")
	if a == b || len(a) != 30 || !strings.HasPrefix(a, "chk_") {
		t.Errorf("ids %s %s", a, b)
	}
	// Many ids in the same millisecond still sort in the order they were made.
	prev := NewID("chk")
	for range 10000 {
		next := NewID("chk")
		if next <= prev {
			t.Fatalf("id %s made after %s sorts before it", next, prev)
		}
		prev = next
	}
}

func TestEntryEncodeIsCanonical(t *testing.T) {
	e := &Entry{Tenant: "acme", Kind: KindCheck, Actor: "builder", Subject: "chk_1", Data: map[string]any{"z": 1, "a": "x", "cost": Decimal(0.25)}}
	b, err := e.Encode(7)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"actor":"builder","data":{"a":"x","cost":"0.25","z":1},"index":7,"kind":"check","policy_version":"","subject":"chk_1","tenant":"acme","ts":"0001-01-01T00:00:00.000000Z","v":1}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestNamesRefuseHiddenCharacters: control, bidirectional, zero-width and
// other format characters are refused in every name of a check, with a 400
// that names the field and the code point.
func TestNamesRefuseHiddenCharacters(t *testing.T) {
	hidden := []struct {
		r    rune
		what string
	}{
		{0x0007, "control character"}, {0x007F, "control character"},
		{0x0085, "control character"}, {0x009B, "control character"}, // NEXT LINE, C1 CSI
		{0x202E, "bidirectional"}, {0x202A, "bidirectional"}, {0x202D, "bidirectional"},
		{0x2066, "bidirectional"}, {0x2067, "bidirectional"}, {0x2068, "bidirectional"}, {0x2069, "bidirectional"},
		{0x200E, "bidirectional"}, {0x200F, "bidirectional"}, {0x061C, "bidirectional"},
		{0x200B, "zero-width"}, {0x200C, "zero-width"}, {0x200D, "zero-width"}, {0x2060, "zero-width"}, {0xFEFF, "zero-width"},
		{0x00AD, "format character"}, {0x180E, "format character"}, {0xE0001, "format character"}, // soft hyphen, Mongolian vowel separator, language tag
		{0x2028, "line or paragraph separator"}, {0x2029, "line or paragraph separator"},
		{0xFFFD, "replacement character"},
	}
	fields := []struct {
		name string
		body func(v string) map[string]any
	}{
		{"tool", func(v string) map[string]any { return map[string]any{"tool": v} }},
		{"session", func(v string) map[string]any { return map[string]any{"tool": "x", "session": v} }},
		{"agent", func(v string) map[string]any { return map[string]any{"tool": "x", "agent": v} }},
		{"request_id", func(v string) map[string]any { return map[string]any{"tool": "x", "request_id": v} }},
		{"labels", func(v string) map[string]any { return map[string]any{"tool": "x", "labels": map[string]string{v: "x"}} }},
		{"labels.env", func(v string) map[string]any {
			return map[string]any{"tool": "x", "labels": map[string]string{"env": v}}
		}},
	}
	for _, h := range hidden {
		for _, f := range fields {
			raw, _ := json.Marshal(f.body("a" + string(h.r) + "b"))
			_, err := DecodeCheck(raw)
			code := fmt.Sprintf("U+%04X", h.r)
			if err == nil || ErrorCode(err) != ECodeBadRequest || !strings.Contains(err.Error(), `"`+f.name+`"`) ||
				!strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), h.what) {
				t.Errorf("%s with %s: %v, want a 400 naming the field, %s and %q", f.name, code, err, code, h.what)
			}
		}
	}
	// A lone surrogate escape arrives as U+FFFD: refused, not merged with
	// another lone surrogate.
	if _, err := DecodeCheck([]byte(`{"tool":"x","session":"a\ud800"}`)); err == nil || !strings.Contains(err.Error(), "U+FFFD") {
		t.Errorf("lone surrogate in session: %v", err)
	}
	// Printable text of any script stays accepted, as do emoji without joiners.
	for _, ok := range []string{"déploiement", "部署", "نشر", "развёртывание", "build 🚀", "a b", "tab-free.name_1:2/3@x"} {
		for _, f := range fields {
			raw, _ := json.Marshal(f.body(ok))
			if _, err := DecodeCheck(raw); err != nil {
				t.Errorf("%s %q: %v", f.name, ok, err)
			}
		}
	}
}

// CheckName's shortcut for printable ASCII refuses and accepts exactly
// what the hiddenRunes table does, for every code point.
func TestCheckNameShortcutAgreesWithTable(t *testing.T) {
	for c := rune(0); c <= unicode.MaxRune; c++ {
		if c >= 0xD800 && c <= 0xDFFF {
			continue // not encodable in a Go string
		}
		hidden := false
		for _, h := range hiddenRunes {
			hidden = hidden || h.is(c)
		}
		if got := CheckName("tool", "a"+string(c)+"b") != nil; got != hidden {
			t.Fatalf("U+%04X: refused %v, the table says %v", c, got, hidden)
		}
	}
}

// TestDecodeStrictEmbedded: the fields of an embedded struct are known
// fields, as encoding/json reads them; others are still refused.
func TestDecodeStrictEmbedded(t *testing.T) {
	var v struct {
		Event string `json:"event"`
		SandboxStart
		SandboxEnd
	}
	if err := DecodeStrict([]byte(`{"event":"started","profile":"coding","exit_status":2}`), &v, ""); err != nil || v.Profile != "coding" || v.ExitStatus != 2 {
		t.Fatalf("embedded fields: %v %+v", err, v)
	}
	if err := DecodeStrict([]byte(`{"event":"started","profle":"coding"}`), &v, ""); err == nil {
		t.Fatal("a misspelled field was accepted")
	}
}
