package mail

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/risk"
)

// Bounds of an action in an e-mail and on its link page. An e-mail can be
// longer than a Slack message, but one that an approver must scroll
// through for pages hides as well as one that is cut.
const (
	argsMax    = 20000 // bytes of argument values and names
	toolMax    = 300   // bytes of the tool's name
	nameMax    = 200   // bytes of an argument's name
	previewMax = 600   // bytes of the start of an argument without risk, when not all fit
	riskyMax   = 4000  // and of one that carries risk
)

// shownField is one argument as an e-mail shows it.
type shownField struct {
	Name  string
	Value string
	Risky bool
	Cut   int // bytes of the value left out
}

// shown is how an e-mail and its link page show an action: each argument
// on its own, the ones that carry risk first (notify.Fields). Full is true
// when the tool and every argument are shown whole: only then does the
// e-mail carry a link that can approve.
type shown struct {
	Tool    string
	ToolCut bool
	Fields  []shownField
	More    int // arguments left out
	Full    bool
	Size    int // bytes of the arguments
	// Review is set for a review after the fact: nothing is approved from
	// its e-mail, so a cut says only where to read the whole.
	Review bool
}

// layout lays out the action of a's current revision: the arguments as they
// will run (an edit's, else the agent's request).
func layout(a *rein.Approval, tools []risk.ToolSpec) shown {
	args := notify.Args(a)
	fields := notify.Fields(a.Tool, args, tools)
	tool := notify.Visible(a.Tool)
	s := shown{Tool: clipUTF8(tool, toolMax), ToolCut: len(tool) > toolMax, Size: len(args), Full: len(tool) <= toolMax}
	total := 0
	for _, f := range fields {
		total += len(f.Name) + len(f.Value)
		if len(f.Name) > nameMax {
			s.Full = false
		}
	}
	if total > argsMax {
		s.Full = false
	}
	used := 0
	for i, f := range fields {
		sf := shownField{Name: clipUTF8(f.Name, nameMax), Value: f.Value, Risky: f.Risky}
		if !s.Full {
			max := previewMax
			if f.Risky {
				max = riskyMax
			}
			sf.Value = clipUTF8(f.Value, max)
			sf.Cut = len(f.Value) - len(sf.Value)
			if used+len(sf.Name)+len(sf.Value) > argsMax {
				s.More = len(fields) - i
				break
			}
		}
		used += len(sf.Name) + len(sf.Value)
		s.Fields = append(s.Fields, sf)
	}
	return s
}

// clipUTF8 is the longest start of s of at most n bytes that does not
// split a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// text writes the arguments for a text/plain e-mail. Every line of a value
// is indented, so that a value cannot pass for a line of the e-mail itself.
func (s shown) text() string {
	var b strings.Builder
	if !s.Full {
		if s.ToolCut {
			fmt.Fprintf(&b, "The tool's name is too long to show here. ")
		}
		if s.Review {
			fmt.Fprintf(&b, "The arguments are too long to show here: %d bytes. `rein review` and the API show them in full. Below is the start of each argument, the ones that carry risk first.\n\n", s.Size)
		} else {
			fmt.Fprintf(&b, "The arguments are too long to show here: %d bytes. This e-mail cannot approve them: open the approval in the rein console to read them in full and decide there. Below is the start of each argument, the ones that carry risk first.\n\n", s.Size)
		}
	}
	for _, f := range s.Fields {
		name := f.Name
		if name == "" {
			name = "(arguments)"
		}
		if f.Risky {
			name += " (carries risk)"
		}
		fmt.Fprintf(&b, "  %s:\n", oneLine(name))
		for _, line := range strings.Split(f.Value, "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
		if f.Cut > 0 {
			fmt.Fprintf(&b, "    [cut here: %d more bytes]\n", f.Cut)
		}
	}
	if s.More > 0 {
		fmt.Fprintf(&b, "  … and %d more arguments, not shown here.\n", s.More)
	}
	return b.String()
}

// versionText says, first, which version of the action an e-mail shows: for
// an edited action who edited it and what changed from the agent's request,
// then the heading of the arguments as they will run.
func versionText(a *rein.Approval) string {
	if a.Revision < 2 {
		return "Arguments:\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "EDITED by %s: this is revision %d of the action, not the agent's request. Changed from the agent's request:\n",
		oneLine(editor(a)), a.Revision)
	lines := notify.ChangeLines(a)
	if len(lines) == 0 {
		lines = []string{"nothing: the edit is the agent's request again"}
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", oneLine(l))
	}
	fmt.Fprintf(&b, "\nWill run (revision %d, as edited):\n", a.Revision)
	return b.String()
}

func editor(a *rein.Approval) string {
	if by := notify.Editor(a); by != "" {
		return by
	}
	return "an approver"
}

// riskText says what rein derived about the action and which rule asks.
func riskText(a *rein.Approval) string {
	tags := "none derived from the arguments"
	if len(a.Risk) > 0 {
		tags = strings.Join(a.Risk, ", ")
	}
	return fmt.Sprintf("Risk: %s\nRule: %s: %s\n", oneLine(tags), oneLine(a.Rule), oneLine(a.Reason))
}

// tools are the tool specs of the approval's tenant (nil without a policy).
func (m *Mailer) tools(a *rein.Approval) []risk.ToolSpec {
	if m.Pipeline == nil || m.Pipeline.Policies == nil {
		return nil
	}
	return m.Pipeline.Policies.For(a.Tenant).Tools()
}
