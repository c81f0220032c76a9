package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/risk"
)

// Field is one argument of an approval as a person reads it.
type Field struct {
	// Name is the argument's name; "" when the arguments are not a JSON
	// object and the whole of them is one field.
	Name string
	// Value is a string argument as it is and anything else as JSON, with
	// the characters that do not show written out (Visible).
	Value string
	// Risky is true for an argument that a tool spec names as carrying a
	// shell command, a URL, a path or SQL (policy.md, tools:).
	Risky bool
}

// Fields returns an approval's arguments one by one, in the order an
// approver should read them: first the arguments the tool specs matching
// the tool name as a command, URL, path or SQL (the policy's tools: map,
// then risk.BuiltinTools), then arguments of those names that other tools
// use that way, then the rest by name. A channel that has to cut lays out
// each field on its own, so that a long argument cannot push the one that
// carries the risk out of sight.
func Fields(tool string, args json.RawMessage, tools []risk.ToolSpec) []Field {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return []Field{{Value: valueText(args)}}
	}
	specs := slices.Concat(tools, risk.BuiltinTools)
	rank := map[string]int{} // 0: named for this tool, 1: named for any tool
	var first []string
	for _, s := range specs {
		mine := risk.Glob(s.Pattern, tool)
		for _, n := range slices.Concat(s.Shell, s.URL, s.Path, s.SQL) {
			if _, ok := obj[n]; !ok {
				continue
			}
			r, seen := rank[n]
			switch {
			case mine && (!seen || r == 1):
				rank[n] = 0
				first = append(first, n)
			case !seen:
				rank[n] = 1
			}
		}
	}
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ra, oka := rank[a]
		rb, okb := rank[b]
		if !oka {
			ra = 2
		}
		if !okb {
			rb = 2
		}
		if ra != rb {
			return ra - rb
		}
		if ra == 0 { // in the order the specs name them
			return slices.Index(first, a) - slices.Index(first, b)
		}
		return strings.Compare(a, b)
	})
	out := make([]Field, len(names))
	for i, n := range names {
		r, ok := rank[n]
		out[i] = Field{Name: Visible(n), Value: valueText(obj[n]), Risky: ok && r == 0}
	}
	return out
}

// valueText is a string as it is and any other JSON value as compact JSON
// (without HTML escaping, which would only make it harder to read).
func valueText(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return Visible(string(raw))
	}
	if s, ok := v.(string); ok {
		return Visible(s)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return Visible(strings.TrimSuffix(b.String(), "\n"))
}

// hidden are characters that look like nothing, or like a plain space, in a
// message: they could make an argument read differently from what it is
// (bidirectional overrides reorder text, "Trojan Source", CVE-2021-42574;
// zero-width and filler characters hide between letters; a no-break space
// looks like the space that separates a command's words). Sources: Unicode
// general categories Cc, Cf, Co, Cs, Zl, Zp and Zs, and the Hangul fillers
// and variation selectors that render blank (Unicode TR #36, "Unicode
// Security Considerations").
var hidden = []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp, unicode.Zs,
	unicode.Variation_Selector,
	{R16: []unicode.Range16{{Lo: 0x115f, Hi: 0x1160, Stride: 1}, {Lo: 0x3164, Hi: 0x3164, Stride: 1}, {Lo: 0xffa0, Hi: 0xffa0, Stride: 1}}}}

// Visible writes the characters of s that would not show as themselves as
// \u{XXXX}: control and format characters, every space but U+0020, and
// invalid UTF-8 (as \u{FFFD}). Newlines and tabs stay; a script is easier
// to read on its lines.
func Visible(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == ' ':
			b.WriteRune(r)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd"):
			b.WriteString(`\u{FFFD}`)
		case unicode.In(r, hidden...):
			fmt.Fprintf(&b, `\u{%04X}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
