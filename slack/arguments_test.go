package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/risk"
)

// argsOf builds canonical JSON arguments from name/value pairs.
func argsOf(kv ...any) json.RawMessage {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func pending(tool string, args json.RawMessage) *rein.Approval {
	return &rein.Approval{ID: "apr_1", Tenant: "acme", Status: rein.StatusPending, Agent: "builder", Tool: tool, Args: args, Session: "s1",
		Risk: []string{"shell", "shell.destructive"}, Rule: "shell-destructive", Reason: "destructive shell commands need an on-call approval", Quorum: 1}
}

// rendered is an approval message as Slack would receive it.
type rendered struct {
	blocks  []map[string]any
	approve bool
	edit    bool
	reject  bool
	console bool
	// values are the arguments as the message writes them, by the header
	// that names them; continued sections are joined.
	values map[string]string
	all    string // every text of the message, entities undone
}

func render(t *testing.T, a *rein.Approval, tools []risk.ToolSpec) rendered {
	t.Helper()
	s := &App{BaseURL: "https://rein.example"}
	_, blocks := s.message(a, true)
	raw, _ := json.Marshal(blocks)
	var r rendered
	json.Unmarshal(raw, &r.blocks)
	if err := checkBlocks(r.blocks, 50); err != nil {
		t.Fatalf("Slack would refuse the message: %v", err)
	}
	r.values = map[string]string{}
	var all []string
	for _, b := range r.blocks {
		if b["type"] == "actions" {
			for _, e := range b["elements"].([]any) {
				switch e.(map[string]any)["action_id"] {
				case actionApprove:
					r.approve = true
				case actionEdit:
					r.edit = true
				case actionReject:
					r.reject = true
				case actionOpen:
					r.console = e.(map[string]any)["url"] == "https://rein.example/approvals/apr_1"
				}
			}
			continue
		}
		txt, _ := b["text"].(map[string]any)
		s, _ := txt["text"].(string)
		if b["type"] == "context" {
			s = b["elements"].([]any)[0].(map[string]any)["text"].(string)
		}
		all = append(all, html.UnescapeString(s))
		if id, _ := b["block_id"].(string); !strings.HasPrefix(id, "arg") {
			continue
		}
		// A section holds "header\n```value```" pieces, one per line start.
		for rest := s; ; {
			i := strings.Index(rest, "\n```")
			if i < 0 {
				break
			}
			head := rest[:i]
			head = head[strings.LastIndex(head, "\n")+1:]
			head = strings.TrimSuffix(strings.TrimSuffix(head, " (continued)"), " · carries risk")
			body := rest[i+4:]
			j := strings.Index(body, "```")
			r.values[head] += body[:j]
			rest = body[j+3:]
		}
	}
	r.all = strings.Join(all, "\n")
	return r
}

// shows reports whether the message shows the whole value of the named
// argument, as notify.Fields gives it (with mentions disarmed and
// backquotes as look-alikes, as every value in a message is).
func (r rendered) shows(name, value string) bool {
	return shownAs(r.values["`"+name+"`"]) == shownAs(orSpace(codeText(value)))
}

// shownAs is what a person reads: entities undone, and without the word
// joiners that disarm mentions (a value cut between sections may lose one
// where no mention is left to disarm).
func shownAs(s string) string {
	return strings.ReplaceAll(html.UnescapeString(s), "\u2060", "")
}

const danger = "rm -rf /var/lib/postgresql"

var note = strings.Repeat("routine cleanup of build artifacts in the workspace, nothing else. ", 40) // the reported padding, 2.6 kB

func TestApprovalMessageShowsWhatItOffersToApprove(t *testing.T) {
	big := strings.Repeat("routine cleanup. ", 4000) // 68 kB
	fields := map[string]any{}
	for i := range 8 {
		fields[fmt.Sprintf("opt%02d", i)] = strings.Repeat(fmt.Sprint(i), 2000)
	}
	var many json.RawMessage
	{
		m := map[string]any{"command": danger}
		for i := range 60 {
			m[fmt.Sprintf("flag%02d", i)] = i
		}
		many, _ = json.Marshal(m)
	}
	flood := map[string]any{"command": danger}
	for i := range 200 {
		flood[fmt.Sprintf("a%03d", i)] = note
	}
	floodArgs, _ := json.Marshal(flood)
	wide := map[string]any{"command": danger}
	for k, v := range fields {
		wide[k] = v
	}
	wideArgs, _ := json.Marshal(wide)
	cases := []struct {
		name    string
		tool    string
		args    json.RawMessage
		tools   []risk.ToolSpec
		full    bool
		visible []string // must be in the message whether or not it is full
	}{
		{"the reported padding before the command", "shell.exec", argsOf("a_note", note, "command", danger), nil, true, []string{danger}},
		{"long padding before the command", "shell.exec", argsOf("a_note", big, "command", danger), nil, false, []string{danger}},
		{"many padded fields before the command", "shell.exec", floodArgs, nil, false, []string{danger, "and 1"}},
		{"long padding after the command", "shell.exec", argsOf("command", danger, "z_note", big), nil, false, []string{danger}},
		{"padding in a name", "shell.exec", argsOf(strings.Repeat("a", 400), 1, "command", danger), nil, false, []string{danger}},
		{"a long command", "shell.exec", argsOf("command", big+danger), nil, false, []string{"routine cleanup."}},
		{"a command over several sections", "shell.exec", argsOf("command", strings.Repeat("echo ok; ", 900)+danger), nil, true, []string{danger}},
		{"a command of a policy's own tool", "ops.run", argsOf("a_note", big, "script", danger), []risk.ToolSpec{{Pattern: "ops.*", Shell: []string{"script"}}}, false, []string{danger}},
		{"an argument no spec names", "deploy", argsOf("a_note", big, "target", danger), nil, false, []string{danger}},
		{"several long fields that fit", "shell.exec", wideArgs, nil, true, []string{danger, strings.Repeat("7", 2000)}},
		{"many small fields", "shell.exec", many, nil, true, []string{danger, "`flag59`"}},
		{"not an object", "shell.exec", json.RawMessage(`["sh","-c","` + danger + `"]`), nil, true, []string{danger}},
		{"bidi override in the command", "shell.exec", argsOf("command", "echo ok #\u202e; "+danger), nil, true, []string{`\u{202E}`, danger}},
		{"zero width joiners in the padding", "shell.exec", argsOf("a_note", strings.Repeat("\u200b", 30000), "command", danger), nil, false, []string{danger, `\u{200B}`}},
		{"no-break space posing as a space", "shell.exec", argsOf("command", "rm\u00a0-rf /"), nil, true, []string{`rm\u{00A0}-rf /`}},
		{"emoji and accents", "shell.exec", argsOf("a_note", strings.Repeat("é😀", 1400), "command", danger), nil, true, []string{danger, "é😀é😀"}},
		{"markup in the arguments", "shell.exec", argsOf("command", "echo <!channel> &lt; @here ``` & "+danger), nil, true, []string{"<!channel>", danger}},
		{"a long tool name", "shell.exec" + strings.Repeat(".x", 400), argsOf("command", danger), nil, false, []string{"tool name is too long"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := pending(c.tool, c.args)
			r := render(t, a, c.tools)
			if r.approve != c.full {
				t.Fatalf("Approve offered: %v, want %v", r.approve, c.full)
			}
			if !r.reject || !r.console {
				t.Errorf("Reject (%v) and the console link (%v) are always offered", r.reject, r.console)
			}
			if r.edit && !r.approve {
				t.Errorf("Edit offered without Approve")
			}
			for _, tag := range []string{"`shell.destructive`", "`shell-destructive`", a.Reason} {
				if !strings.Contains(r.all, tag) {
					t.Errorf("the risk and rule are not shown: %q missing", tag)
				}
			}
			for _, v := range c.visible {
				if !strings.Contains(r.all, v) {
					t.Errorf("%q is not in the message", v)
				}
			}
			fields := notify.Fields(a.Tool, a.Args, c.tools)
			if r.approve {
				// Whatever offers Approve shows every argument whole.
				for _, f := range fields {
					name := f.Name
					if name == "" {
						name = "*arguments*"
						if shownAs(r.values[name]) != shownAs(orSpace(codeText(f.Value))) {
							t.Errorf("the arguments are not shown whole")
						}
						continue
					}
					if !r.shows(name, f.Value) {
						t.Errorf("argument %q is not shown whole: %d of %d bytes", name, len(r.values["`"+name+"`"]), len(f.Value))
					}
				}
				if strings.Contains(r.all, "too long") {
					t.Errorf("a full message says the arguments are too long")
				}
				return
			}
			if !strings.Contains(r.all, fmt.Sprintf("too long to show here: %d bytes", len(a.Args))) && !strings.Contains(r.all, "tool name is too long") {
				t.Errorf("the message does not say the arguments are too long: %s", r.all[:min(len(r.all), 400)])
			}
		})
	}
}

// The limit is exact: the longest value that fits offers Approve and shows
// all of it, the dangerous end included; one more character does not.
func TestApprovalMessageAtTheLimit(t *testing.T) {
	for _, unit := range []string{"x", "&", "é", "😀", "@here ", "\u202e", "ab\n"} {
		t.Run(fmt.Sprintf("%q", unit), func(t *testing.T) {
			full := func(n int) bool {
				return layout(pending("shell.exec", argsOf("command", strings.Repeat(unit, n)+danger)), nil).Full
			}
			lo, hi := 0, 1
			for full(hi) {
				if lo, hi = hi, hi*2; hi > 1<<20 {
					t.Fatalf("a megabyte of arguments is offered for approval")
				}
			}
			for hi-lo > 1 {
				if m := (lo + hi) / 2; full(m) {
					lo = m
				} else {
					hi = m
				}
			}
			if lo == 0 {
				t.Fatalf("nothing fits")
			}
			value := strings.Repeat(unit, lo) + danger
			r := render(t, pending("shell.exec", argsOf("command", value)), nil)
			if !r.approve || !r.shows("command", notify.Visible(value)) {
				t.Fatalf("at the limit (%d): Approve %v, shown whole %v", lo, r.approve, r.shows("command", notify.Visible(value)))
			}
			over := render(t, pending("shell.exec", argsOf("command", strings.Repeat(unit, lo+1)+danger)), nil)
			if over.approve || over.edit || !over.reject {
				t.Errorf("one past the limit: Approve %v Edit %v Reject %v", over.approve, over.edit, over.reject)
			}
			// The limit is what the message can hold, not less: the
			// arguments take most of the sections it has for them.
			if n := units(codeText(notify.Visible(value))); n < (argBlocksMax-1)*(sectionMax-100) {
				t.Errorf("only %d units fit", n)
			}
		})
	}
}

func TestEditOfferedOnlyWhenTheModalHoldsTheArguments(t *testing.T) {
	small := render(t, pending("shell.exec", argsOf("command", danger)), nil)
	if !small.edit || !small.approve {
		t.Errorf("small arguments: Edit %v Approve %v", small.edit, small.approve)
	}
	long := render(t, pending("shell.exec", argsOf("command", strings.Repeat("x", editMax)+danger)), nil)
	if long.edit || !long.approve {
		t.Errorf("arguments longer than the modal holds: Edit %v Approve %v", long.edit, long.approve)
	}
}

func TestDecidedMessageHasNoButtons(t *testing.T) {
	a := pending("shell.exec", argsOf("command", danger))
	a.Status = rein.StatusRejected
	_, blocks := (&App{}).message(a, false)
	raw, _ := json.Marshal(blocks)
	if strings.Contains(string(raw), `"actions"`) || !strings.Contains(string(raw), danger) {
		t.Errorf("decided message: %s", raw)
	}
}

// A press of Approve or Edit on an approval whose message cannot show the
// whole action is refused, audited and answered privately, whatever the
// message it came from; Reject still counts.
func TestSlackRefusesApprovalOfWhatItCannotShow(t *testing.T) {
	f := setup(t)
	args := string(argsOf("a_note", strings.Repeat("routine cleanup. ", 3000), "command", danger))
	rec := f.ask(t, args)
	id := rec.Approval.ID
	post := f.api.of("chat.postMessage")[0].Form.Get("blocks")
	if strings.Contains(post, actionApprove) || strings.Contains(post, actionEdit) || !strings.Contains(post, actionReject) ||
		!strings.Contains(post, "too long to show here") || !strings.Contains(post, danger) {
		t.Fatalf("message for arguments it cannot show: %.600s", post)
	}
	f.press(t, "UALICE", actionApprove, id)
	f.press(t, "UCAROL", actionEdit, id)
	meta, _ := json.Marshal(string(mustJSON(editMeta{Approval: id})))
	value, _ := json.Marshal(`{"command":"true"}`)
	body := payload(t, "view_submission.json", map[string]string{"USER": "UCAROL", "META": string(meta), "VALUE": string(value)})
	now := time.Now().Unix()
	if code, out := f.post(t, body, now, sign(secret, now, body)); code != 200 || !strings.Contains(out, "refused") {
		t.Errorf("edit submission: %d %s", code, out)
	}
	if n := len(f.api.of("views.open")); n != 0 {
		t.Errorf("the edit modal was opened %d times", n)
	}
	a, _ := f.store.Approval(context.Background(), id)
	if len(a.Votes) != 0 || a.Status != rein.StatusPending {
		t.Fatalf("votes counted on an approval Slack cannot show: %+v", a.Votes)
	}
	got := strings.Join(f.refusals(t), "\n")
	if n := strings.Count(got, "cannot show the whole action"); n != 3 {
		t.Errorf("want 3 audited refusals (approve, edit, edit submission), got:\n%s", got)
	}
	if e := f.api.of("chat.postEphemeral"); len(e) < 2 || !strings.Contains(e[0].Form.Get("text"), "rein console") {
		t.Errorf("the refused users are not told why: %v", e)
	}
	f.press(t, "UALICE", actionReject, id)
	if a, _ := f.store.Approval(context.Background(), id); a.Status != rein.StatusRejected {
		t.Errorf("Reject is always safe and counts: %s", a.Status)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
