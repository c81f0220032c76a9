package slack

import (
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/slack-go/slack"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/risk"
)

// Limits of an approval message (Block Kit reference: a section's text is
// at most 3,000 characters; a message at most 50 blocks). Lengths are
// counted in UTF-16 code units, which is never less than Slack's count of
// characters.
const (
	sectionMax = 3000
	// argBlocksMax is how many sections the arguments may take: with the
	// summary, risk, notice, status and buttons the message stays far below
	// 50 blocks, and an approver can still read it through.
	argBlocksMax = 12
	// toolMax and nameMax bound the tool's and an argument's name as shown;
	// a longer one is cut, and then the action is not shown in full.
	toolMax = 500
	nameMax = 300
	// editMax is the most a plain_text_input holds (Block Kit reference:
	// max_length 3000): arguments longer than that cannot be edited in Slack.
	editMax = 3000
)

// units is the length of s as Slack may count it.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// codeText writes a value for a code block: escaped like any other text the
// agent chose, and with backquotes as look-alikes (U+02CB) so that the value
// cannot end its block early.
func codeText(s string) string {
	return strings.ReplaceAll(Text(s), "`", "\u02cb")
}

// shown is how an approval message shows an action.
type shown struct {
	// Blocks are the sections of the arguments (and, when they do not fit,
	// the notice that says so first).
	Blocks []slack.Block
	// Full is true when the tool and every argument are in the message,
	// whole: only then does the message offer Approve.
	Full bool
	// Size is the arguments' size in bytes.
	Size int
}

// layout lays out the tool and arguments of a. Each argument is shown on its
// own, the ones that carry risk first (notify.Fields); short ones share a
// section, a long one goes on over as many sections as it needs. When they
// do not all fit whole, the message says so first and shows the start of
// each argument, so that a long argument cannot push another out of sight.
//
// The arguments are those of the approval's current revision, as they will
// run (an edit's, else the agent's request).
func layout(a *rein.Approval, tools []risk.ToolSpec) shown {
	return arrange(a.Tool, notify.Args(a), tools, approvalNotices)
}

// notices say, first in a message whose action is not shown whole, what is
// missing and where to read it all: %d is the arguments' size (args) or
// the tool name's (tool).
type notices struct{ args, tool string }

var approvalNotices = notices{
	args: ":warning: *The arguments are too long to show here: %d bytes.* Approve is not offered: open the approval in the rein console to read them in full and decide there. Below is the start of each argument, the ones that carry risk first.",
	tool: ":warning: *The tool name is too long to show here: %d bytes.* Approve is not offered: open the approval in the rein console to read it in full and decide there.",
}

// arrange lays out a tool and its arguments (see layout).
func arrange(tool string, args []byte, tools []risk.ToolSpec, say notices) shown {
	a := &rein.Approval{Tool: tool, Args: args}
	fields := notify.Fields(a.Tool, a.Args, tools)
	s := shown{Size: len(a.Args), Full: units(Code(notify.Visible(a.Tool))) <= toolMax}
	var whole sections
	for _, f := range fields {
		if f.Name != "" && units(Code(f.Name)) > nameMax {
			s.Full = false
		}
		whole.field(f, -1)
	}
	if s.Full && len(whole.blocks()) <= argBlocksMax {
		s.Blocks = whole.blocks()
		return s
	}
	s.Full = false
	notice := fmt.Sprintf(say.args, s.Size)
	if units(Code(notify.Visible(a.Tool))) > toolMax {
		notice = fmt.Sprintf(say.tool, len(a.Tool))
	}
	cut := sections{texts: []string{notice}}
	for i, f := range fields {
		room := previewMax
		if f.Risky {
			room = sectionMax
		}
		if !cut.fits(f, room, argBlocksMax-1) {
			cut.flush()
			cut.texts = append(cut.texts, fmt.Sprintf("… and %d more arguments, not shown here.", len(fields)-i))
			break
		}
		cut.field(f, room)
	}
	s.Blocks = cut.blocks()
	return s
}

// previewMax is how much of an argument that carries no risk is shown when
// the arguments do not fit.
const previewMax = 600

// sections packs fields into section texts of at most sectionMax units.
type sections struct {
	texts []string
	cur   string
}

func (p *sections) flush() {
	if p.cur != "" {
		p.texts = append(p.texts, p.cur)
		p.cur = ""
	}
}

// add puts a piece of at most sectionMax units after the others, in the
// current section when there is room.
func (p *sections) add(piece string) {
	if p.cur != "" && units(p.cur)+1+units(piece) <= sectionMax {
		p.cur += "\n" + piece
		return
	}
	p.flush()
	p.cur = piece
}

// field adds f whole (max < 0), over as many sections as it needs, or only
// the start of it that fits in max units, with a note of what was cut.
func (p *sections) field(f notify.Field, max int) {
	h := header(f)
	if max >= 0 {
		room := min(max, sectionMax-units(h)-len("\n``````")-60)
		chunk, left := take(f.Value, room)
		note := ""
		if left != "" {
			note = fmt.Sprintf("\n_cut here: %d more bytes_", len(left))
		}
		p.add(h + "\n```" + orSpace(codeText(chunk)) + "```" + note)
		return
	}
	rest := f.Value
	for part := 1; ; part++ {
		head := h
		if part > 1 {
			head = h + " (continued)"
		}
		chunk, left := take(rest, sectionMax-units(head)-len("\n``````"))
		if part == 1 && left != "" {
			p.flush() // a long value starts a section of its own
		}
		p.add(head + "\n```" + orSpace(codeText(chunk)) + "```")
		if rest = left; rest == "" {
			return
		}
		p.flush()
	}
}

// fits reports whether a preview of f leaves the sections within n.
func (p *sections) fits(f notify.Field, max, n int) bool {
	q := sections{texts: append([]string(nil), p.texts...), cur: p.cur}
	q.field(f, max)
	return len(q.blocks()) <= n
}

func (p *sections) blocks() []slack.Block {
	texts := p.texts
	if p.cur != "" {
		texts = append(texts[:len(texts):len(texts)], p.cur)
	}
	out := make([]slack.Block, len(texts))
	for i, t := range texts {
		out[i] = section(fmt.Sprintf("arg%d", i), t)
	}
	return out
}

func section(id, text string) slack.Block {
	return slack.NewSectionBlock(&slack.TextBlockObject{Type: slack.MarkdownType, Text: text, Verbatim: true}, nil, nil, slack.SectionBlockOptionBlockID(id))
}

// header names a field above its value.
func header(f notify.Field) string {
	if f.Name == "" {
		return "*arguments*"
	}
	h := Code(f.Name)
	if units(h) > nameMax {
		h = Code(cut(f.Name, nameMax-20)) + " (name cut)"
	}
	if f.Risky {
		h += " · carries risk"
	}
	return h
}

// take returns the longest start of s whose code text fits in room units,
// and the rest; it never splits a character, and prefers to end a part at
// a line's end when one is near.
func take(s string, room int) (string, string) {
	used, end, lastLine := 0, 0, -1
	for i, r := range s {
		u := units(codeText(string(r)))
		if r == '@' { // Text may add a word joiner after it
			u++
		}
		if used+u > room {
			if lastLine > 0 && used-lastLine < 300 {
				return s[:lastLine], s[lastLine:]
			}
			return s[:i], s[i:]
		}
		used += u
		end = i + len(string(r))
		if r == '\n' {
			lastLine = end
		}
	}
	return s[:end], ""
}

// orSpace keeps an empty value's code block from being an empty block.
func orSpace(s string) string {
	if s == "" {
		return " "
	}
	return s
}

// cut shortens s to at most n units of code text, marking the cut.
func cut(s string, n int) string {
	if units(codeText(s)) <= n {
		return s
	}
	c, left := take(s, n-1)
	if left != "" {
		return c + "…"
	}
	return c
}
