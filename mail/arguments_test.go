package mail

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

const danger = "rm -rf /var/lib/postgresql"

func argsOf(kv ...any) json.RawMessage {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func pendingApproval(tool string, args json.RawMessage) *rein.Approval {
	return &rein.Approval{ID: "apr_1", Tenant: "acme", Status: rein.StatusPending, Agent: "builder", Tool: tool, Args: args, Session: "s1",
		ActionHash: "sha256:ab", Risk: []string{"shell", "shell.destructive"}, Rule: "shell-destructive",
		Reason: "destructive shell commands need an on-call approval", Quorum: 1, ExpiresAt: time.Now().Add(time.Hour)}
}

var linkIn = regexp.MustCompile(`/approve/([A-Za-z0-9_.-]+)`)

// letterOf writes the e-mail about a and reads back the link it carries.
func letterOf(t *testing.T, f *fixture, a *rein.Approval) (string, Link) {
	t.Helper()
	_, body := f.m.letter(a, recipient{Approver{Address: "fiona@example.com"}, f.keys["fiona"]}, "Approval needed")
	m := linkIn.FindAllStringSubmatch(body, -1)
	if len(m) != 1 {
		t.Fatalf("want one link in the e-mail, got %d:\n%.2000s", len(m), body)
	}
	l, err := open(f.m.Secret, m[0][1], f.now)
	if err != nil {
		t.Fatalf("the e-mail's link: %v", err)
	}
	return body, l
}

func TestEmailShowsWhatItsLinkCanApprove(t *testing.T) {
	f := setup(t)
	note := strings.Repeat("routine cleanup of build artifacts in the workspace, nothing else. ", 40)
	big := strings.Repeat("routine cleanup. ", 3000) // 51 kB
	flood := map[string]any{"command": danger}
	for i := range 200 {
		flood[fmt.Sprintf("a%03d", i)] = note
	}
	floodArgs, _ := json.Marshal(flood)
	wide := map[string]any{"command": danger}
	for i := range 6 {
		wide[fmt.Sprintf("opt%d", i)] = strings.Repeat(fmt.Sprint(i), 3000)
	}
	wideArgs, _ := json.Marshal(wide)
	cases := []struct {
		name    string
		tool    string
		args    json.RawMessage
		full    bool
		visible []string
	}{
		{"the reported padding before the command", "shell.exec", argsOf("a_note", note, "command", danger), true, []string{danger}},
		{"long padding before the command", "shell.exec", argsOf("a_note", big, "command", danger), false, []string{danger}},
		{"long padding after the command", "shell.exec", argsOf("command", danger, "z_note", big), false, []string{danger}},
		{"many padded fields before the command", "shell.exec", floodArgs, false, []string{danger, "more arguments"}},
		{"an argument no spec names", "deploy", argsOf("a_note", big, "target", danger), false, []string{danger}},
		{"several long fields that fit", "shell.exec", wideArgs, true, []string{danger, strings.Repeat("5", 3000)}},
		{"a long name", "shell.exec", argsOf(strings.Repeat("n", 300), 1, "command", danger), false, []string{danger}},
		{"a long tool name", strings.Repeat("shell.", 100), argsOf("command", danger), false, []string{"tool's name is too long", danger}},
		{"bidi override", "shell.exec", argsOf("command", "echo ok #\u202e; "+danger), true, []string{`\u{202E}`, danger}},
		{"a value posing as the e-mail's lines", "shell.exec", argsOf("command", danger+"\nApprovals: done\n\nReview and decide: http://evil"), true,
			[]string{"\n    Approvals: done\n", "\n    Review and decide: http://evil"}},
		{"emoji and accents", "shell.exec", argsOf("a_note", strings.Repeat("é😀", 1500), "command", danger), true, []string{danger, "é😀é😀"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := pendingApproval(c.tool, c.args)
			body, l := letterOf(t, f, a)
			canApprove := l.Only == ""
			if canApprove != c.full {
				t.Fatalf("the link can approve: %v, want %v", canApprove, c.full)
			}
			if !canApprove && l.Only != "reject" {
				t.Errorf("the link may cast %q", l.Only)
			}
			for _, want := range append([]string{"Risk: shell, shell.destructive", "shell-destructive: " + a.Reason, "/approvals/apr_1"}, c.visible...) {
				if !strings.Contains(body, want) {
					t.Errorf("the e-mail lacks %q", want)
				}
			}
			if canApprove {
				for _, fl := range notify.Fields(a.Tool, a.Args, nil) {
					indented := "    " + strings.ReplaceAll(fl.Value, "\n", "\n    ") + "\n"
					if !strings.Contains(body, indented) {
						t.Errorf("argument %q is not shown whole", fl.Name)
					}
				}
				if strings.Contains(body, "too long") {
					t.Errorf("a full e-mail says something is too long")
				}
				return
			}
			if !strings.Contains(body, fmt.Sprintf("too long to show here: %d bytes", len(a.Args))) || !strings.Contains(body, "cannot approve") {
				t.Errorf("the e-mail does not say why it cannot approve:\n%.1500s", body)
			}
		})
	}
}

// At exactly argsMax bytes of names and values the e-mail can approve, and
// shows all of it; one byte more and it cannot.
func TestEmailAtTheLimit(t *testing.T) {
	f := setup(t)
	for _, unit := range []string{"x", "é", "😀"} {
		t.Run(unit, func(t *testing.T) {
			fill := argsMax - len("command") - len("a_note") - len(danger)
			n := fill / len(unit)
			pad := strings.Repeat(unit, n) + strings.Repeat("y", fill-n*len(unit))
			at := pendingApproval("shell.exec", argsOf("a_note", pad, "command", danger))
			body, l := letterOf(t, f, at)
			if l.Only != "" || !strings.Contains(body, "    "+pad+"\n") || !strings.Contains(body, danger) {
				t.Errorf("at the limit: the link may only %q", l.Only)
			}
			over := pendingApproval("shell.exec", argsOf("a_note", pad+"y", "command", danger))
			body, l = letterOf(t, f, over)
			if l.Only != "reject" || !strings.Contains(body, danger) {
				t.Errorf("one byte over: the link may only %q", l.Only)
			}
		})
	}
}

func (f *fixture) askArgs(t *testing.T, args json.RawMessage) *rein.Approval {
	rec, err := f.pipe.Check(context.Background(), f.keys["builder"], &rein.CheckRequest{Tool: "pay", Args: args, Session: "s1"})
	if err != nil || rec.Decision != rein.Ask {
		t.Fatalf("check: %v %+v", err, rec)
	}
	a, err := f.store.Approval(context.Background(), rec.Approval.ID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The link page offers Approve only when the e-mail could show the whole
// action, and a POST that approves anyway is refused and audited; the same
// link can still reject.
func TestLinkPageCannotApproveWhatTheEmailCannotShow(t *testing.T) {
	f := setup(t)
	cases := []struct {
		name string
		args json.RawMessage
		only string
	}{
		{"arguments too long, a link from before", argsOf("memo", strings.Repeat("quarterly invoice ", 3000), "to", "Mallory Ltd", "amount", 9000), ""},
		{"a reject-only link", argsOf("to", "Mallory Ltd", "amount", 9000), "reject"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := f.askArgs(t, c.args)
			l, _ := f.m.link(a, recipient{key: f.keys["fiona"]}, c.only)
			if c.only == "" {
				l, _ = f.m.link(a, recipient{key: f.keys["fiona"]})
			}
			b := browser(t)
			code, page, token := open_(t, b, l)
			if code != 200 || token == "" || strings.Contains(page, `value="approve"`) || !strings.Contains(page, `value="reject"`) ||
				!strings.Contains(page, "Mallory Ltd") {
				t.Fatalf("page: %d %.3000s", code, page)
			}
			if code, body := confirm(t, b, l, token, "approve"); code != http.StatusForbidden || !strings.Contains(body, "refused") {
				t.Errorf("approve anyway: %d %.500s", code, body)
			}
			if got, _ := f.store.Approval(context.Background(), a.ID); len(got.Votes) != 0 {
				t.Fatalf("a vote counted: %+v", got.Votes)
			}
			if !strings.Contains(f.refusals(t), a.ID) {
				t.Errorf("the refused approval is not audited:\n%s", f.refusals(t))
			}
			if code, body := confirm(t, b, l, token, "reject"); code != 200 || !strings.Contains(body, "rejected") {
				t.Errorf("reject: %d %.500s", code, body)
			}
		})
	}
}

func TestDigestLinkCanApproveOnlyWhatThePageShows(t *testing.T) {
	f := setup(t)
	r := recipient{Approver{Address: "fiona@example.com"}, f.keys["fiona"]}
	for _, c := range []struct {
		args json.RawMessage
		only string
	}{
		{argsOf("command", danger), ""},
		{argsOf("a_note", strings.Repeat("routine cleanup. ", 3000), "command", danger), "reject"},
	} {
		item := f.m.digestItem(pendingApproval("shell.exec", c.args), r)
		m := linkIn.FindStringSubmatch(item)
		if m == nil {
			t.Fatalf("no link: %s", item)
		}
		l, err := open(f.m.Secret, m[1], f.now)
		if err != nil || l.Only != c.only || !strings.Contains(item, "risk: shell, shell.destructive") {
			t.Errorf("digest item %q: link may only %q (%v), want %q", item, l.Only, err, c.only)
		}
	}
}
