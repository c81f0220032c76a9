package mail

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/sqlite"
)

type fixture struct {
	m     *Mailer
	srv   *httptest.Server
	store *sqlite.DB
	pipe  *pipeline.Pipeline
	keys  map[string]*rein.Key
	now   time.Time
}

func setup(t *testing.T) *fixture {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pol, err := policy.Compile([]byte(`version: 1
rules:
  - {id: pays, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"], quorum: 1, ttl: 1h}}
`))
	if err != nil {
		t.Fatal(err)
	}
	active := &policy.Active{}
	active.Set("", pol)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pipe := &pipeline.Pipeline{Store: store, Policies: active, Log: log}
	f := &fixture{store: store, pipe: pipe, keys: map[string]*rein.Key{}, now: time.Now()}
	for _, k := range []*rein.Key{
		{ID: "key_agent", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}},
		{ID: "key_fin", Name: "fiona", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_fin2", Name: "frank", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
	} {
		k.CreatedAt = time.Now()
		_, k.SecretHash = rein.NewSecret()
		if err := store.CreateKey(ctx, k, &rein.Entry{TS: time.Now(), Tenant: k.Tenant, Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID}); err != nil {
			t.Fatal(err)
		}
		f.keys[k.Name] = k
	}
	f.m = &Mailer{Config: Config{SMTP: "127.0.0.1:1", From: "rein@example.com", LinkTTL: 10 * time.Minute},
		Secret: []byte("0123456789abcdef0123456789abcdef"), Store: store, Pipeline: pipe, Log: log,
		Now: func() time.Time { return f.now }}
	mux := http.NewServeMux()
	mux.Handle("/approve/", f.m)
	f.srv = httptest.NewServer(mux)
	f.m.BaseURL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) ask(t *testing.T) *rein.Approval {
	rec, err := f.pipe.Check(context.Background(), f.keys["builder"], &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"to":"ACME Ltd","amount":120}`), Session: "s1"})
	if err != nil || rec.Decision != rein.Ask {
		t.Fatalf("check: %v %+v", err, rec)
	}
	a, err := f.store.Approval(context.Background(), rec.Approval.ID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *fixture) linkFor(a *rein.Approval, name string) string {
	l, _ := f.m.link(a, recipient{key: f.keys[name]})
	return l
}

func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// open GETs the link and returns the page and its CSRF token.
func open_(t *testing.T, c *http.Client, link string) (int, string, string) {
	res, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindStringSubmatch(string(b))
	if len(m) == 2 {
		return res.StatusCode, string(b), m[1]
	}
	return res.StatusCode, string(b), ""
}

func confirm(t *testing.T, c *http.Client, link, token, vote string) (int, string) {
	res, err := c.PostForm(link, url.Values{"csrf": {token}, "vote": {vote}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(b)
}

func (f *fixture) refusals(t *testing.T) string {
	es, _ := f.store.Entries(context.Background(), 0, 1000)
	var out []string
	for _, e := range es {
		if e.Kind == notify.KindVoteRefused {
			out = append(out, string(e.Bytes))
		}
	}
	return strings.Join(out, "\n")
}

func TestLinkShowsThenVotesOnConfirm(t *testing.T) {
	f := setup(t)
	a := f.ask(t)
	link := f.linkFor(a, "fiona")
	c := browser(t)
	code, body, token := open_(t, c, link)
	if code != 200 || token == "" || !strings.Contains(body, "ACME Ltd") || !strings.Contains(body, "You decide as fiona") {
		t.Fatalf("GET: %d %s", code, body)
	}
	// Opening (twice, as mail scanners do) casts nothing.
	open_(t, c, link)
	if got, _ := f.store.Approval(context.Background(), a.ID); len(got.Votes) != 0 {
		t.Fatalf("a GET voted: %+v", got.Votes)
	}
	if code, body := confirm(t, c, link, token, "approve"); code != 200 || !strings.Contains(body, "approved") {
		t.Fatalf("POST: %d %s", code, body)
	}
	got, _ := f.store.Approval(context.Background(), a.ID)
	if got.Status != rein.StatusApproved || got.Votes[0].ByKey != "key_fin" {
		t.Fatalf("approval %+v", got)
	}
}

func TestLinkRefusals(t *testing.T) {
	f := setup(t)
	a := f.ask(t)
	link := f.linkFor(a, "fiona")
	c := browser(t)
	_, _, token := open_(t, c, link)

	// CSRF: no cookie (another browser), a token for another link, a
	// foreign Origin.
	if code, _ := confirm(t, browser(t), link, token, "approve"); code != http.StatusForbidden {
		t.Errorf("POST without the page's cookie: %d", code)
	}
	if code, _ := confirm(t, c, link, "x"+token, "approve"); code != http.StatusForbidden {
		t.Errorf("POST with a wrong csrf token: %d", code)
	}
	req, _ := http.NewRequest("POST", link, strings.NewReader(url.Values{"csrf": {token}, "vote": {"approve"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("POST from another origin: %v %v", res.StatusCode, err)
	}
	// A link for another approver: frank's claims under fiona's MAC.
	frank := f.linkFor(a, "frank")
	fionaBody, fionaMAC, _ := strings.Cut(strings.TrimPrefix(link, f.srv.URL+"/approve/"), ".")
	frankBody, _, _ := strings.Cut(strings.TrimPrefix(frank, f.srv.URL+"/approve/"), ".")
	_ = fionaBody
	if code, _, _ := open_(t, c, f.srv.URL+"/approve/"+frankBody+"."+fionaMAC); code != http.StatusForbidden {
		t.Errorf("another approver's claims: %d", code)
	}
	// A link for another approver, opened by a signed-in approver.
	f.m.Session = func(w http.ResponseWriter, r *http.Request) (*rein.Key, bool) { return f.keys["frank"], true }
	if code, body, _ := open_(t, c, link); code != http.StatusForbidden || !strings.Contains(body, "another approver") {
		t.Errorf("fiona's link in frank's browser: %d %s", code, body)
	}
	f.m.Session = nil
	// A genuine vote, then the same link again: replayed.
	if code, _ := confirm(t, c, link, token, "approve"); code != 200 {
		t.Fatalf("the genuine vote: %d", code)
	}
	if code, _ := confirm(t, c, link, token, "approve"); code != http.StatusGone {
		t.Errorf("replayed POST: %d", code)
	}
	if code, _, _ := open_(t, c, link); code != http.StatusGone {
		t.Errorf("replayed GET: %d", code)
	}
	// An expired link.
	b := f.ask2(t)
	late := f.linkFor(b, "frank")
	f.now = f.now.Add(11 * time.Minute)
	if code, body, _ := open_(t, c, late); code != http.StatusGone || !strings.Contains(body, "expired") {
		t.Errorf("expired link: %d", code)
	}
	got := f.refusals(t)
	for _, want := range []string{"CSRF check failed", "signature does not match", "is for another approver", "used already", "has expired"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %q:\n%s", want, got)
		}
	}
	if a2, _ := f.store.Approval(context.Background(), a.ID); len(a2.Votes) != 1 {
		t.Errorf("votes: %+v", a2.Votes)
	}
}

// ask2 asks for a second payment (a different action).
func (f *fixture) ask2(t *testing.T) *rein.Approval {
	rec, err := f.pipe.Check(context.Background(), f.keys["builder"], &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(`{"to":"Globex","amount":5}`), Session: "s1"})
	if err != nil || rec.Approval == nil {
		t.Fatalf("check: %v", err)
	}
	a, _ := f.store.Approval(context.Background(), rec.Approval.ID)
	return a
}
