package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/risk"
)

func TestFieldsRiskFirst(t *testing.T) {
	ops := []risk.ToolSpec{{Pattern: "ops.*", Shell: []string{"script"}, Path: []string{"target"}}}
	cases := []struct {
		name, tool, args string
		tools            []risk.ToolSpec
		want             string // name=value|... with * for risky
	}{
		{"builtin spec before padding", "shell.exec", `{"a_note":"routine","command":"rm -rf /"}`, nil, "*command=rm -rf /|a_note=routine"},
		{"policy spec, in its order", "ops.run", `{"a":1,"target":"/etc","script":"ls"}`, ops, "*script=ls|*target=/etc|a=1"},
		{"a name other tools use comes next", "deploy", `{"a":1,"url":"http://x","b":"y"}`, nil, "url=http://x|a=1|b=y"},
		{"the spec of another tool does not count as this one's", "deploy", `{"script":"ls","command":"id"}`, nil, "command=id|script=ls"},
		{"JSON values", "x", `{"n":1.5,"o":{"k":"<v>"},"l":[1,"a"],"z":null,"t":true}`, nil, `l=[1,"a"]|n=1.5|o={"k":"<v>"}|t=true|z=null`},
		{"not an object", "shell.exec", `["sh","-c","id"]`, nil, `=["sh","-c","id"]`},
		{"a string", "shell.exec", `"id"`, nil, `=id`},
		{"hidden characters in a name", "x", `{"comm\u200band":"id"}`, nil, `comm\u{200B}and=id`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range Fields(c.tool, json.RawMessage(c.args), c.tools) {
				s := f.Name + "=" + f.Value
				if f.Risky {
					s = "*" + s
				}
				got = append(got, s)
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Errorf("got  %s\nwant %s", g, c.want)
			}
		})
	}
}

func TestVisible(t *testing.T) {
	cases := []struct{ in, want string }{
		{"rm -rf /\nls\tx", "rm -rf /\nls\tx"},
		{"echo ok #\u202e; rm -rf /", `echo ok #\u{202E}; rm -rf /`},            // right-to-left override
		{"a\u2066b\u2069c", `a\u{2066}b\u{2069}c`},                              // isolates
		{"r\u200bm \u200d\ufeff", `r\u{200B}m \u{200D}\u{FEFF}`},                // zero width
		{"rm\u00a0-rf\u3000/", `rm\u{00A0}-rf\u{3000}/`},                        // spaces that are not U+0020
		{"a\u3164b\u115fc", `a\u{3164}b\u{115F}c`},                              // Hangul fillers
		{"x\ufe0fy", `x\u{FE0F}y`},                                              // variation selector
		{"\x00\x1b[2J\r", `\u{0000}\u{001B}[2J\u{000D}`},                        // control characters
		{"bad \xff utf-8, good \ufffd", `bad \u{FFFD} utf-8, good ` + "\ufffd"}, // invalid bytes
		{"line\u2028sep", `line\u{2028}sep`},
		{"é😀中文", "é😀中文"},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
