package mail

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/policy"
)

var revisionField = regexp.MustCompile(`name="revision" value="(\d+)"`)

// shownRevision is the revision a link page's form votes on ("": none).
func shownRevision(page string) string {
	if m := revisionField.FindStringSubmatch(page); m != nil {
		return m[1]
	}
	return ""
}

// twoApprovals makes payments need two approvals from finance, so that an
// edit by one (which counts as their approval) leaves the approval pending.
func (f *fixture) twoApprovals(t *testing.T) {
	pol, err := policy.Compile([]byte(`version: 1
rules:
  - {id: pays, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"], quorum: 2, ttl: 1h}}
`))
	if err != nil {
		t.Fatal(err)
	}
	f.pipe.Policies.Set("", pol)
	for _, name := range []string{"gina"} {
		k := &rein.Key{ID: "key_" + name, Name: name, Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}}
		_, k.SecretHash = rein.NewSecret()
		if err := f.store.CreateKey(context.Background(), k, &rein.Entry{TS: f.now, Tenant: "acme", Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID}); err != nil {
			t.Fatal(err)
		}
		f.keys[name] = k
	}
}

// editTo is frank's edit of the payee: revision 2.
func (f *fixture) editTo(t *testing.T, a *rein.Approval, to string) *rein.Approval {
	got, err := f.pipe.Cast(context.Background(), f.keys["frank"], a.ID, approval.Ballot{Kind: approval.Edit,
		Args: json.RawMessage(`{"to":"` + to + `","amount":120}`), Revision: 1})
	if err != nil || got.Revision != 2 || got.Status != rein.StatusPending {
		t.Fatalf("frank's edit: %v %+v", err, got)
	}
	return got
}

func postVote(t *testing.T, c *http.Client, link, token, vote, revision string) (int, string) {
	form := url.Values{"csrf": {token}, "vote": {vote}}
	if revision != "" {
		form.Set("revision", revision)
	}
	res, err := c.PostForm(link, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res.StatusCode, b.String()
}

// TestLinkVotesTheRevisionItShowed: a page opened before an edit votes for
// the version it showed; approving it after the edit is not counted, keeps
// the link, and answers with the current version, which it then approves.
// A page opened after the edit shows the edited version and what changed.
func TestLinkVotesTheRevisionItShowed(t *testing.T) {
	f := setup(t)
	f.twoApprovals(t)
	a := f.ask(t)
	link := f.linkFor(a, "fiona")
	c := browser(t)
	code, before, token := open_(t, c, link)
	if code != 200 || !strings.Contains(before, "ACME Ltd") || shownRevision(before) != "1" || strings.Contains(before, `id="edited"`) {
		t.Fatalf("the page before the edit: %d %s", code, before)
	}
	f.editTo(t, a, "Mallory")

	// The approve of what fiona saw: refused, not counted.
	code, stale := postVote(t, c, link, token, "approve", shownRevision(before))
	if code != http.StatusConflict || !strings.Contains(stale, "The action changed: your vote was not counted") {
		t.Fatalf("a stale approve: %d %s", code, stale)
	}
	got, _ := f.store.Approval(context.Background(), a.ID)
	if got.Status != rein.StatusPending || len(got.Counting()) != 1 {
		t.Fatalf("the stale approve counted: %s, %+v", got.Status, got.Counting())
	}
	// The answer shows the current version, its change first, and votes on it.
	for _, want := range []string{`id="edited"`, "Edited by frank", `to: &#34;ACME Ltd&#34; → &#34;Mallory&#34;`, "Will run (revision 2, as edited)", "Mallory", `name="revision" value="2"`} {
		if !strings.Contains(stale, want) {
			t.Errorf("the stale answer lacks %q:\n%s", want, stale)
		}
	}
	if strings.Index(stale, `id="edited"`) > strings.Index(stale, `id="args"`) {
		t.Error("the stale answer shows the arguments before what changed")
	}
	// No vote without a revision once edited.
	if code, body := postVote(t, c, link, token, "approve", ""); code == 200 {
		t.Fatalf("an approve naming no revision counted on an edited approval: %s", body)
	}
	// The link was kept: a second link now (the first was spent by the
	// vote above, which named no revision and was refused by rein).
	link2 := f.linkFor(got, "fiona")
	code, after, token2 := open_(t, c, link2)
	if code != 200 || !strings.Contains(after, "Mallory") || !strings.Contains(after, `id="edited"`) || shownRevision(after) != "2" {
		t.Fatalf("a link opened after the edit: %d %s", code, after)
	}
	if strings.Contains(strings.SplitN(after, `id="args"`, 2)[1], "ACME Ltd") {
		t.Errorf("the page after the edit shows the agent's payee among the arguments that will run:\n%s", after)
	}
	if code, body := postVote(t, c, link2, token2, "approve", "2"); code != 200 || !strings.Contains(body, "approved") {
		t.Fatalf("approving the current revision: %d %s", code, body)
	}
	got, _ = f.store.Approval(context.Background(), a.ID)
	if got.Status != rein.StatusApproved || !strings.Contains(string(got.CurrentArgs()), "Mallory") {
		t.Fatalf("approval %s with %s", got.Status, got.CurrentArgs())
	}
}

// TestStaleLinkStaysUsable: a stale approve does not spend the link: the
// page it answers with votes on the current version.
func TestStaleLinkStaysUsable(t *testing.T) {
	f := setup(t)
	f.twoApprovals(t)
	a := f.ask(t)
	link := f.linkFor(a, "fiona")
	c := browser(t)
	_, _, token := open_(t, c, link)
	f.editTo(t, a, "Mallory")
	if code, _ := postVote(t, c, link, token, "approve", "1"); code != http.StatusConflict {
		t.Fatalf("stale approve: %d", code)
	}
	if code, body := postVote(t, c, link, token, "approve", "2"); code != 200 || !strings.Contains(body, "approved") {
		t.Fatalf("the same link, on the current revision: %d %s", code, body)
	}
}

// TestEmailShowsVersion: the e-mail of an edited action says it was edited,
// by whom and what changed, before the arguments as they will run; one
// never edited does not.
func TestEmailShowsVersion(t *testing.T) {
	f := setup(t)
	f.twoApprovals(t)
	a := f.ask(t)
	r := recipient{Approver{Address: "fiona@example.com"}, f.keys["fiona"]}
	_, body := f.m.letter(a, r, "Approval needed")
	if strings.Contains(body, "EDITED") || !strings.Contains(body, "Arguments:") {
		t.Errorf("the request's e-mail:\n%s", body)
	}
	// As the dispatcher has it: read back from the event's JSON.
	var fromEvent rein.Approval
	raw, _ := json.Marshal(a)
	json.Unmarshal(raw, &fromEvent)
	if _, body := f.m.letter(&fromEvent, r, "Approval needed"); !strings.Contains(body, "ACME Ltd") {
		t.Errorf("the request's e-mail, from an event:\n%s", body)
	}
	a = f.editTo(t, a, "Mallory")
	subject, body := f.m.letter(a, r, "Edited, approval needed again")
	changed := strings.Index(body, `to: "ACME Ltd" → "Mallory"`)
	run := strings.Index(body, "Will run (revision 2, as edited):")
	if !strings.HasPrefix(subject, "Edited") || !strings.Contains(body, "EDITED by frank") || changed < 0 || run < changed {
		t.Fatalf("the edit's e-mail (%s):\n%s", subject, body)
	}
	if strings.Contains(body[run:], "ACME Ltd") || !strings.Contains(body[run:], "Mallory") {
		t.Errorf("the arguments that will run are not the edited ones:\n%s", body[run:])
	}
}

// TestReviseWritesEveryEligibleApprover: after an edit, every eligible
// approver who has not voted on the new revision gets a new e-mail with a
// link; the editor does not.
func TestReviseWritesEveryEligibleApprover(t *testing.T) {
	f := setup(t)
	f.twoApprovals(t)
	box, addr := startSink(t)
	f.m.Config.SMTP = addr
	f.m.Config.Approvers = []Approver{
		{Tenant: "acme", Key: "fiona", Address: "fiona@example.com"},
		{Tenant: "acme", Key: "frank", Address: "frank@example.com"},
		{Tenant: "acme", Key: "gina", Address: "gina@example.com"},
	}
	a := f.ask(t)
	// gina approved the request; the edit makes that count no more.
	if _, err := f.pipe.Cast(context.Background(), f.keys["gina"], a.ID, approval.Ballot{Kind: approval.Approve, Revision: 1}); err != nil {
		t.Fatal(err)
	}
	a = f.editTo(t, a, "Mallory")
	if err := f.m.Revise(context.Background(), a, nil); err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]int{"fiona@example.com": 1, "gina@example.com": 1, "frank@example.com": 0} {
		got := box.to(addr)
		if len(got) != want {
			t.Errorf("%s got %d e-mails, want %d", addr, len(got), want)
			continue
		}
		if want == 1 && (!strings.Contains(got[0], "Edited, approval needed again") || !strings.Contains(got[0], `to: "ACME Ltd" → "Mallory"`) || !strings.Contains(got[0], "/approve/")) {
			t.Errorf("%s's e-mail:\n%s", addr, got[0])
		}
	}
}
