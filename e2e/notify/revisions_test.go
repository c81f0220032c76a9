package notify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// editRacePolicy: a payment needs two approvals from finance.
const editRacePolicy = `version: 1
default: deny
rules:
  - id: pay-two
    when: 'tool == "pay"'
    decision: ask
    reason: "payments need two of finance"
    approval: {approvers: ["group:finance"], quorum: 2, ttl: 15m, grant_ttl: 10m}
`

// editRace is one server with every approver surface but the console
// configured: e-mail to Mailpit, Slack to a stand-in of its Web API, Web
// Push to a push service of the test's own.
type editRace struct {
	*harness.ApprovalEnv
	mail  *mailpit
	slack *slackAPI
	push  *harness.PushService
}

func startEditRace(t *testing.T) *editRace {
	r := &editRace{mail: startMailpit(t), slack: &slackAPI{t: t}, push: harness.NewPushService(t)}
	fake := httptest.NewServer(r.slack)
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	pol := filepath.Join(dir, "policy.yaml")
	harness.WriteFile(t, pol, editRacePolicy)
	cfg := filepath.Join(dir, "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf(`base_url: http://%s
email:
  smtp: %s
  from: "rein <rein@example.com>"
  link_ttl: 10m
  approvers:
    - {tenant: acme, key: carol, address: carol@example.com}
    - {tenant: acme, key: dave, address: dave@example.com}
    - {tenant: acme, key: erin, address: erin@example.com}
slack:
  bot_token: %s
  signing_secret: %s
  channel: C0FINANCE
  api_url: %s/api/
  users:
    UCAROL: {tenant: acme, key: carol}
    UDAVE: {tenant: acme, key: dave}
    UERIN: {tenant: acme, key: erin}
push:
  subject: mailto:ops@example.com
  services: [%q]
`, addr, r.mail.smtp, slackBotToken, slackSecret, fake.URL, r.push.HTTP.URL+"/push/"))
	s := harness.StartServer(t, filepath.Join(dir, "data"), nil, "--policy", pol, "--config", cfg, "--listen", addr)
	r.ApprovalEnv = &harness.ApprovalEnv{T: t, S: s, Keys: map[string]string{}}
	for _, k := range []struct{ name, roles, groups string }{
		{"builder", `"agent"`, ``},
		{"carol", `"approver"`, `"finance"`},
		{"dave", `"approver"`, `"finance"`},
		{"erin", `"approver"`, `"finance"`},
	} {
		code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", s.AdminKey(), []byte(fmt.Sprintf(
			`{"name":%q,"tenant":"acme","roles":[%s],"groups":[%s]}`, k.name, k.roles, k.groups)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", k.name, code, body)
		}
		var created struct{ Key string }
		json.Unmarshal(body, &created)
		r.Keys[k.name] = created.Key
	}
	// carol's phone, subscribed as the console does.
	var info struct {
		PublicKey string `json:"public_key"`
	}
	harness.GetJSON(t, s.URL+"/v1/push", r.Keys["carol"], &info)
	raw, _ := base64.RawURLEncoding.DecodeString(info.PublicKey)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatalf("rein's VAPID key %q: %v", info.PublicKey, err)
	}
	r.push.VAPID = func() *ecdsa.PublicKey { return pub }
	dev := r.push.Device("carol-phone")
	body, _ := json.Marshal(map[string]any{"endpoint": dev["endpoint"], "keys": map[string]string{"p256dh": dev["p256dh"], "auth": dev["auth"]}, "label": "carol's phone"})
	if code, b := harness.HTTPDo(t, "POST", s.URL+"/v1/push/subscriptions", r.Keys["carol"], body, "application/json"); code != 201 {
		t.Fatalf("subscribe carol's phone: %d %s", code, b)
	}
	return r
}

// raceApproval is the approval as the API answers it, with its ETag.
type raceApproval struct {
	Status       string
	Revision     int
	ArgsHash     string `json:"args_hash"`
	Args         map[string]any
	ApprovedArgs map[string]any `json:"approved_args"`
	Changes      []struct {
		Path     string
		From, To any
	}
	Votes []struct {
		By, Vote string
		Revision int
	}
	etag string
}

func (r *editRace) approval(id string) raceApproval {
	r.T.Helper()
	code, body, h := r.do("GET", "/v1/approvals/"+id, "carol", nil, "")
	if code != 200 {
		r.T.Fatalf("GET approval: %d %s", code, body)
	}
	var a raceApproval
	if err := json.Unmarshal(body, &a); err != nil {
		r.T.Fatal(err)
	}
	a.etag = h.Get("ETag")
	return a
}

// counting are the approving votes that count: those of the current
// revision (an edit is its editor's approval).
func (a raceApproval) counting() []string {
	var out []string
	for _, v := range a.Votes {
		if (v.Vote == "approve" || v.Vote == "edit") && v.Revision == a.Revision {
			out = append(out, v.By+":"+v.Vote)
		}
	}
	return out
}

// do sends one API request as who, with If-Match when ifMatch is set, and
// checks the answer against the OpenAPI document.
func (r *editRace) do(method, path, who string, body []byte, ifMatch string) (int, []byte, http.Header) {
	r.T.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, r.S.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+r.Keys[who])
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	res, err := harness.HTTPClient.Do(req)
	if err != nil {
		r.T.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	harness.CheckAPIResponse(r.T, req, res, b)
	return res.StatusCode, b, res.Header
}

// slackPressAs presses a button whose value is value, as user, on the
// approval message (the first message the stand-in was sent).
func (r *editRace) slackPressAs(user, action, value string) int {
	body := slackPress(r.T, user, action, value, "C0FINANCE", "1700000000.000001")
	now := time.Now().Unix()
	return postSlack(r.T, r.S.URL+"/v1/slack/interactivity", body, now, slackSign(slackSecret, now, body))
}

var (
	pageRevision = regexp.MustCompile(`name="revision" value="(\d+)"`)
	pageWillRun  = regexp.MustCompile(`Will run \(revision (\d+)`)
	slackValue   = regexp.MustCompile(`"action_id":"rein_approve"[^}]*"value":"([^"]+)"|"value":"([^"]+)"[^}]*"action_id":"rein_approve"`)
	slackWillRun = regexp.MustCompile(`Will run\*? \(revision (\d+)`)
	cliRevision  = regexp.MustCompile(`apr_\S+\s+pending\s+pay\s+revision (\d+)`)
)

// willRun is the part of a link page or Slack message that shows the
// arguments that will run: after "Will run" up to the status.
func willRun(s string) string {
	i := strings.Index(s, "Will run")
	if i < 0 {
		return ""
	}
	s = s[i:]
	for _, end := range []string{`id="status"`, `"block_id":"status"`} {
		if j := strings.Index(s, end); j >= 0 {
			return s[:j]
		}
	}
	return s
}

func first(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	for _, g := range m[min(1, len(m)):] {
		if g != "" {
			return g
		}
	}
	return ""
}

// TestEditRaceEverySurface: a payment needs two of finance; carol opens the
// approval on every surface but the console (e-mail page, Slack message,
// push notification's target, CLI list, API) before dave edits the payee
// to acct-mallory, then approves on each surface what she saw. Each of her
// approves is refused and the approval stays pending with dave's edit
// alone counting. Every surface opened after the edit shows acct-mallory
// and the change; each shows the revision it votes on. erin then approves
// the edited revision from her e-mail, and the approval is approved with
// acct-mallory. (The console page and inbox card are driven in Chromium by
// TestConsoleRevisions.)
func TestEditRaceEverySurface(t *testing.T) {
	t.Parallel() // mostly waiting on Mailpit and its own server
	r := startEditRace(t)
	a := r.Check("builder", "pay", "s1", `{"amount":50,"to":"acct-a"}`)
	if a.Decision != "ask" || a.Approval == nil {
		t.Fatalf("check: %+v", a)
	}
	id := a.Approval.ID

	// carol opens every surface before the edit: each shows revision 1,
	// acct-a, and votes on revision 1.
	link, msg := r.mail.waitLink("carol@example.com")
	if !strings.Contains(msg.Text, "acct-a") {
		t.Fatalf("carol's e-mail does not show the payee:\n%s", msg.Text)
	}
	carolMail := newLinkBrowser(t)
	code, page, csrf := carolMail.get(link)
	if code != 200 || csrf == "" || !strings.Contains(willRun(page), "acct-a") || first(pageRevision, page) != "1" || first(pageWillRun, page) != "1" {
		t.Fatalf("the link page before the edit (form revision %q, shown %q): %d\n%s", first(pageRevision, page), first(pageWillRun, page), code, page)
	}
	var slackBefore string
	harness.Eventually(t, 10*time.Second, "the approval message in Slack", func() string {
		for _, c := range r.slack.of("chat.postMessage") {
			if strings.Contains(c.form.Get("blocks"), id) {
				slackBefore = c.form.Get("blocks")
				return ""
			}
		}
		return fmt.Sprintf("%d messages", len(r.slack.of("chat.postMessage")))
	})
	slackButton := first(slackValue, slackBefore)
	if slackButton != id+"@1" || first(slackWillRun, slackBefore) != "1" || !strings.Contains(willRun(slackBefore), "acct-a") {
		t.Fatalf("the Slack message before the edit (button %q): %s", slackButton, slackBefore)
	}
	pushed, err := r.push.Next("carol-phone", "approval", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var push struct {
		ID, URL  string
		Revision int
	}
	json.Unmarshal([]byte(pushed), &push)
	target, _ := url.Parse(push.URL)
	if push.ID != id || target == nil || target.Path != "/approvals/"+id || target.Query().Get("revision") != "1" || push.Revision != 1 {
		t.Fatalf("the push before the edit: %s", pushed)
	}
	cli := harness.Rein(t, r.S.ClientEnv(r.Keys["carol"]), "approvals")
	if cli.Code != 0 || first(cliRevision, cli.Stdout) != "1" || !strings.Contains(cli.Stdout, `"to":"acct-a"`) || strings.Contains(cli.Stdout, "edited:") {
		t.Fatalf("rein approvals before the edit: %s", cli)
	}
	before := r.approval(id)
	if before.Revision != 1 || before.etag != `"1"` || before.Args["to"] != "acct-a" || before.ArgsHash == "" {
		t.Fatalf("the API before the edit: %+v", before)
	}

	// dave edits the payee: revision 2, his edit his approval.
	code, body, _ := r.do("POST", "/v1/approvals/"+id+"/votes", "dave",
		[]byte(`{"vote":"edit","args":{"amount":50,"to":"acct-mallory"},"revision":1,"message":"new account"}`), "")
	if code != 200 {
		t.Fatalf("dave's edit: %d %s", code, body)
	}
	edited := r.approval(id)
	if edited.Revision != 2 || edited.Status != "pending" || edited.ArgsHash == before.ArgsHash {
		t.Fatalf("after dave's edit: %+v", edited)
	}
	stillPending := func(surface string) {
		t.Helper()
		got := r.approval(id)
		if got.Status != "pending" || len(got.counting()) != 1 || got.counting()[0] != "dave:edit" {
			t.Fatalf("carol's stale approve from %s counted: %s, counting %v, votes %+v", surface, got.Status, got.counting(), got.Votes)
		}
	}

	// carol approves, on each surface, what she saw.
	code, stale := carolMail.post(link, csrf, "approve", first(pageRevision, page))
	if code != http.StatusConflict || !strings.Contains(stale, "your vote was not counted") {
		t.Errorf("the e-mail page's stale approve: %d\n%s", code, stale)
	}
	stillPending("the e-mail page")
	if run := willRun(stale); !strings.Contains(run, "acct-mallory") || strings.Contains(run, "acct-a") || first(pageRevision, stale) != "2" || first(pageWillRun, stale) != "2" {
		t.Errorf("the stale answer of the e-mail page does not show and vote on revision 2:\n%s", stale)
	}

	if code := r.slackPressAs("UCAROL", "rein_approve", slackButton); code != 200 {
		t.Errorf("carol's Slack press: %d", code)
	}
	stillPending("Slack")
	harness.Eventually(t, 10*time.Second, "Slack telling carol her press was not counted", func() string {
		for _, c := range r.slack.of("chat.postEphemeral") {
			if c.form.Get("user") == "UCAROL" && strings.Contains(c.form.Get("text"), "not counted") && strings.Contains(c.form.Get("text"), "acct-mallory") {
				return ""
			}
		}
		return fmt.Sprintf("%d ephemeral messages", len(r.slack.of("chat.postEphemeral")))
	})

	// The push's target names the approval and revision 1: the vote its
	// page would cast for that revision.
	code, body, _ = r.do("POST", "/v1/approvals/"+id+"/votes", "carol",
		[]byte(`{"vote":"approve","revision":`+target.Query().Get("revision")+`}`), "")
	if code != http.StatusConflict || !strings.Contains(string(body), `"stale_revision"`) {
		t.Errorf("the approve of the push's revision: %d %s", code, body)
	}
	stillPending("the push's target")

	cliVote := harness.Rein(t, r.S.ClientEnv(r.Keys["carol"]), "approve", id, "--revision", first(cliRevision, cli.Stdout), "--yes")
	if cliVote.Code != 1 || !strings.Contains(cliVote.Stderr, "nothing was voted") || !strings.Contains(cliVote.Stderr, "acct-mallory") {
		t.Errorf("rein approve --revision 1 after the edit: %s", cliVote)
	}
	stillPending("the CLI")

	code, body, _ = r.do("POST", "/v1/approvals/"+id+"/votes", "carol", []byte(`{"vote":"approve"}`), before.etag)
	var staleErr struct {
		Error struct {
			Code    string
			Details raceApproval
		}
	}
	json.Unmarshal(body, &staleErr)
	if code != http.StatusConflict || staleErr.Error.Code != "stale_revision" || staleErr.Error.Details.Revision != 2 ||
		staleErr.Error.Details.ApprovedArgs["to"] != "acct-mallory" {
		t.Errorf("the API's approve with If-Match %s: %d %s", before.etag, code, body)
	}
	stillPending("the API (If-Match)")
	if code, body, _ = r.do("POST", "/v1/approvals/"+id+"/votes", "carol", []byte(`{"vote":"approve"}`), ""); code != http.StatusBadRequest {
		t.Errorf("the API's approve naming no revision of an edited approval: %d %s", code, body)
	}
	stillPending("the API (no revision)")

	// Every surface opened after the edit shows acct-mallory and the change.
	var edit mailMessage
	harness.Eventually(t, 15*time.Second, "the e-mail of the edit to carol", func() string {
		for _, m := range r.mail.messages("carol@example.com") {
			if strings.HasPrefix(m.Subject, "Edited") {
				edit = m
				return ""
			}
		}
		return "none yet"
	})
	if !strings.Contains(edit.Text, `to: "acct-a" → "acct-mallory"`) || !strings.Contains(edit.Text, "EDITED by dave") ||
		strings.Index(edit.Text, "EDITED by dave") > strings.Index(edit.Text, "Will run (revision 2") {
		t.Errorf("carol's e-mail of the edit:\n%s", edit.Text)
	}
	if l := r.mail.messages("dave@example.com"); len(l) != 1 {
		t.Errorf("dave, who made the edit, got %d e-mails, want the first only", len(l))
	}
	code, page, _ = newLinkBrowser(t).get(link) // the link of the first e-mail, opened now
	if run := willRun(page); code != 200 || !strings.Contains(run, "acct-mallory") || strings.Contains(run, "acct-a") || !strings.Contains(page, "Edited by dave") ||
		!strings.Contains(page, "to: &#34;acct-a&#34; → &#34;acct-mallory&#34;") || first(pageRevision, page) != "2" || first(pageWillRun, page) != "2" {
		t.Errorf("the first e-mail's link opened after the edit: %d\n%s", code, page)
	}
	var slackAfter string
	harness.Eventually(t, 10*time.Second, "the Slack message rewritten to revision 2", func() string {
		for _, c := range r.slack.of("chat.update") {
			if strings.Contains(c.form.Get("blocks"), id+"@2") {
				slackAfter = c.form.Get("blocks")
				return ""
			}
		}
		return fmt.Sprintf("%d updates", len(r.slack.of("chat.update")))
	})
	if run := willRun(slackAfter); !strings.Contains(run, "acct-mallory") || strings.Contains(run, "acct-a") || first(slackValue, slackAfter) != id+"@2" || first(slackWillRun, slackAfter) != "2" || !strings.Contains(slackAfter, "Edited by dave") ||
		!strings.Contains(slackAfter, `to: \"acct-a\" → \"acct-mallory\"`) || strings.Contains(slackAfter, id+"@1") {
		t.Errorf("the Slack message after the edit: %s", slackAfter)
	}
	var pushAfter struct {
		URL, Body string
		Revision  int
		Renotify  bool
	}
	harness.Eventually(t, 15*time.Second, "the push of the edit", func() string {
		m, err := r.push.Next("carol-phone", "approval", 5*time.Second)
		if err != nil {
			return err.Error()
		}
		json.Unmarshal([]byte(m), &pushAfter)
		if pushAfter.Revision != 2 {
			return "another push: " + m
		}
		return ""
	})
	if u, _ := url.Parse(pushAfter.URL); u == nil || u.Path != "/approvals/"+id || u.Query().Get("revision") != "2" || !pushAfter.Renotify ||
		!strings.Contains(pushAfter.Body, "Edited by dave (revision 2), changed: to") {
		t.Errorf("the push of the edit: %+v", pushAfter)
	}
	cli = harness.Rein(t, r.S.ClientEnv(r.Keys["carol"]), "approvals")
	if cli.Code != 0 || first(cliRevision, cli.Stdout) != "2" || !strings.Contains(cli.Stdout, `to: "acct-a" → "acct-mallory"`) ||
		!strings.Contains(cli.Stdout, `args:     {"amount":50,"to":"acct-mallory"}`) {
		t.Errorf("rein approvals after the edit: %s", cli)
	}
	if edited.etag != `"2"` || edited.ApprovedArgs["to"] != "acct-mallory" || len(edited.Changes) != 1 || edited.Changes[0].Path != "to" ||
		edited.Changes[0].From != "acct-a" || edited.Changes[0].To != "acct-mallory" {
		t.Errorf("the API after the edit: %+v", edited)
	}

	// erin approves the edited revision from her e-mail of the edit.
	waited := make(chan map[string]any, 1)
	go func() { _, m := r.Wait("builder", id, 20000); waited <- m }()
	var erinEdit mailMessage
	harness.Eventually(t, 15*time.Second, "the e-mail of the edit to erin", func() string {
		for _, m := range r.mail.messages("erin@example.com") {
			if strings.HasPrefix(m.Subject, "Edited") {
				erinEdit = m
				return ""
			}
		}
		return "none yet"
	})
	erinLink := linkRE.FindString(erinEdit.Text)
	erin := newLinkBrowser(t)
	code, page, csrf = erin.get(erinLink)
	if run := willRun(page); code != 200 || first(pageRevision, page) != "2" || !strings.Contains(run, "acct-mallory") || strings.Contains(run, "acct-a") {
		t.Fatalf("erin's link page: %d\n%s", code, page)
	}
	if code, done := erin.post(erinLink, csrf, "approve", first(pageRevision, page)); code != 200 || !strings.Contains(done, "approved") {
		t.Fatalf("erin's approve of revision 2: %d\n%s", code, done)
	}
	select {
	case m := <-waited:
		args, _ := m["args"].(map[string]any)
		if m["decision"] != "allow" || args["to"] != "acct-mallory" {
			t.Errorf("the waiting agent got %v, want allow with acct-mallory", m)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting agent was not woken")
	}
	final := r.approval(id)
	if final.ApprovedArgs["to"] != "acct-mallory" || strings.Join(final.counting(), ",") != "dave:edit,erin:approve" {
		t.Errorf("the approval: %s, counting %v, votes %+v", final.Status, final.counting(), final.Votes)
	}
	for _, v := range final.Votes {
		if v.By == "carol" {
			t.Errorf("a vote of carol's was recorded: %+v", v)
		}
	}
}

// post confirms a link page's form as the browser does, with the revision
// the page embeds.
func (b *linkBrowser) post(link, csrf, vote, revision string) (int, string) {
	res, err := b.c.PostForm(link, url.Values{"csrf": {csrf}, "vote": {vote}, "revision": {revision}})
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(body)
}
