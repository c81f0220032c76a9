package signin_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/internal/testidp"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/signin"
	"github.com/reinhq/rein/sqlite"
)

// env is the console with OpenID Connect sign-in, in front of a real
// provider on loopback.
type env struct {
	t     *testing.T
	url   string
	idp   *testidp.Provider
	store *sqlite.DB
	web   *console.Console
}

var people = []testidp.User{
	{ID: "u-carol", Username: "carol", Password: "carol-pw", Email: "Carol@Example.com", EmailVerified: true, Groups: []string{"finance-approvers", "staff"}},
	{ID: "u-dave", Username: "dave", Password: "dave-pw", Email: "dave@example.com", EmailVerified: true, Groups: []string{"staff"}},
	{ID: "u-mallory", Username: "mallory", Password: "mallory-pw", Email: "ops@example.com", EmailVerified: false, Groups: []string{"finance-approvers"}},
	{ID: "u-olga", Username: "olga", Password: "olga-pw", Email: "olga@example.com", EmailVerified: true},
	{ID: "u-root", Username: "root", Password: "root-pw", Email: "admin@example.com", EmailVerified: true, Groups: []string{"finance-approvers"}},
}

func newEnv(t *testing.T, mutate func(*signin.Config)) *env {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	web := &console.Console{Keys: store, Sealer: &console.Sealer{Secret: []byte("0123456789abcdef0123456789abcdef")}}
	return serveSignIn(t, store, web, mutate)
}

// serveSignIn serves a console with sign-in configured by mutate, in front
// of a provider of its own, on store: two calls on one store are a restart
// with a changed oidc section.
func serveSignIn(t *testing.T, store *sqlite.DB, web *console.Console, mutate func(*signin.Config)) *env {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp := testidp.Start(t, []string{base + signin.PathCallback}, people...)
	cfg := signin.Config{Issuer: idp.Issuer, ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
		Scopes: []string{"openid", "email", "groups"}, Tenant: "acme",
		Groups: map[string]signin.Access{"finance-approvers": {Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}}},
		Users:  map[string]notify.Identity{"olga@example.com": {Tenant: "acme", Key: "olga"}}}
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	s := &signin.SignIn{Config: cfg, BaseURL: base, Secret: web.Sealer.Secret, Store: store, Sessions: web}
	h := web.Handler()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, signin.PathStart) {
			s.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &env{t: t, url: base, idp: idp, store: store, web: web}
}

// browser is a cookie-keeping HTTP client that follows redirects, as a
// browser does, and remembers where it ended.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar}}
}

func (b *browser) get(u string) (*http.Response, string) {
	res, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

var authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// signIn starts at the console's start path and signs in at the provider's
// login page; it returns the last response (the page after the callback).
func (b *browser) signIn(e *env, next, user, password string) (*http.Response, string) {
	res, page := b.get(e.url + signin.PathStart + "?next=" + url.QueryEscape(next))
	if !strings.HasPrefix(res.Request.URL.String(), e.idp.Issuer+"/login/") {
		b.t.Fatalf("the start did not lead to the provider's login page: %s\n%s", res.Request.URL, page)
	}
	m := authRequestID.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no auth request id in the login page:\n%s", page)
	}
	res, err := b.c.PostForm(e.idp.Issuer+"/login/username", url.Values{"id": {m[1]}, "username": {user}, "password": {password}})
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

func (b *browser) me(e *env) (int, map[string]any) {
	res, body := b.get(e.url + "/me")
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	return res.StatusCode, m
}

func (e *env) createKey(name string, roles []rein.Role, groups []string) *rein.Key {
	_, hash := rein.NewSecret()
	k := &rein.Key{ID: rein.NewID("key"), Name: name, Tenant: "acme", Roles: roles, Groups: groups, CreatedAt: time.Now().UTC(), SecretHash: hash}
	if err := e.store.CreateKey(context.Background(), k, &rein.Entry{TS: k.CreatedAt, Tenant: "acme", Kind: rein.KindKeyCreated, Actor: "t", Subject: k.ID}); err != nil {
		e.t.Fatal(err)
	}
	return k
}

func (e *env) activeKeys(name string) []*rein.Key {
	keys, err := e.store.Keys(context.Background(), "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*rein.Key
	for _, k := range keys {
		if k.Name == name && k.RevokedAt == nil {
			out = append(out, k)
		}
	}
	return out
}

// TestSignInWithProvider: a person in a mapped group at the provider signs
// in, gets a key of their own with the mapped roles and groups, and lands
// on the console page they asked for, with a session cookie that is
// HttpOnly and SameSite=Strict.
func TestSignInWithProvider(t *testing.T) {
	e := newEnv(t, nil)
	b := newBrowser(t)
	res, page := b.signIn(e, "/approvals/apr_1", "carol", "carol-pw")
	if res.StatusCode != 200 || res.Request.URL.Path != signin.PathCallback || !strings.Contains(page, `content="0;url=/approvals/apr_1"`) {
		t.Fatalf("after the callback: %d %s\n%s", res.StatusCode, res.Request.URL, page)
	}
	code, me := b.me(e)
	if code != 200 || me["name"] != "carol@example.com" || me["tenant"] != "acme" {
		t.Fatalf("/me: %d %v", code, me)
	}
	if r, _ := json.Marshal(me["roles"]); string(r) != `["approver"]` {
		t.Errorf("roles %s, want approver", r)
	}
	if g, _ := json.Marshal(me["groups"]); string(g) != `["finance"]` {
		t.Errorf("groups %s, want finance (staff is not mapped)", g)
	}
	keys := e.activeKeys("carol@example.com")
	if len(keys) != 1 || !signin.Managed(keys[0]) {
		t.Fatalf("keys of carol: %+v", keys)
	}
	var session *http.Cookie
	u, _ := url.Parse(e.url)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == console.CookieName {
			session = c
		}
	}
	if session == nil {
		t.Fatal("no session cookie")
	}

	// The session cookie as set: look at the raw Set-Cookie of a fresh sign-in.
	b2 := newBrowser(t)
	var setCookie []string
	b2.c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if r := req.Response; r != nil && r.Request.URL.Path == signin.PathCallback {
			setCookie = append(setCookie, r.Header.Values("Set-Cookie")...)
		}
		return nil
	}
	res, _ = b2.signIn(e, "/inbox", "carol", "carol-pw")
	setCookie = append(setCookie, res.Header.Values("Set-Cookie")...)
	joined := strings.Join(setCookie, "\n")
	if !regexp.MustCompile(`rein_session=[^;]+;.*HttpOnly.*SameSite=Strict`).MatchString(joined) {
		t.Errorf("session cookie attributes: %s", joined)
	}
	// The second sign-in keeps the same key: nothing changed at the provider.
	if k := e.activeKeys("carol@example.com"); len(k) != 1 || k[0].ID != keys[0].ID {
		t.Errorf("second sign-in: keys %+v", k)
	}
}

// TestSignInMapsUsersAndGroups: a person named in users signs in as that
// existing key; a person in no mapped group is refused (and, with
// everyone, admitted with what it gives); an unverified address is
// refused; a name held by a key that sign-in does not keep is never
// taken over; a change of groups re-issues the key and ends the old
// sessions.
func TestSignInMapsUsersAndGroups(t *testing.T) {
	e := newEnv(t, nil)
	olga := e.createKey("olga", []rein.Role{rein.RoleApprover, rein.RoleAdmin}, []string{"oncall"})
	b := newBrowser(t)
	b.signIn(e, "/inbox", "olga", "olga-pw")
	if code, me := b.me(e); code != 200 || me["key_id"] != olga.ID {
		t.Fatalf("olga: %d %v, want her key %s", code, me, olga.ID)
	}

	for _, c := range []struct{ user, pw, code string }{
		{"dave", "dave-pw", "unknown"},          // in no mapped group
		{"mallory", "mallory-pw", "unverified"}, // e-mail address not verified
	} {
		b := newBrowser(t)
		res, _ := b.signIn(e, "/inbox", c.user, c.pw)
		if res.Request.URL.Path != "/sign-in" || res.Request.URL.Query().Get("error") != "oidc_"+c.code {
			t.Errorf("%s: ended at %s, want /sign-in?error=oidc_%s", c.user, res.Request.URL, c.code)
		}
		if code, _ := b.me(e); code != 401 {
			t.Errorf("%s has a session: %d", c.user, code)
		}
	}

	// admin@example.com is an admin's API key: the provider's person of
	// that address does not become it.
	adminKey := e.createKey("admin@example.com", []rein.Role{rein.RoleAdmin}, nil)
	b = newBrowser(t)
	res, _ := b.signIn(e, "/inbox", "root", "root-pw")
	if res.Request.URL.Query().Get("error") != "oidc_taken" {
		t.Errorf("root: ended at %s, want oidc_taken", res.Request.URL)
	}
	if k := e.activeKeys("admin@example.com"); len(k) != 1 || k[0].ID != adminKey.ID {
		t.Errorf("the admin key was touched: %+v", k)
	}

	// carol signs in; her groups change at the provider (the mapping
	// here); her next sign-in re-issues the key and her old session ends.
	carol := newBrowser(t)
	carol.signIn(e, "/inbox", "carol", "carol-pw")
	first := e.activeKeys("carol@example.com")
	if len(first) != 1 {
		t.Fatalf("carol's keys: %+v", first)
	}
	e3 := serveSignIn(t, e.store, e.web, func(c *signin.Config) {
		c.Groups["finance-approvers"] = signin.Access{Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance", "payments"}}
	})
	again := newBrowser(t)
	again.signIn(e3, "/inbox", "carol", "carol-pw")
	second := e.activeKeys("carol@example.com")
	if len(second) != 1 || second[0].ID == first[0].ID || strings.Join(second[0].Groups, ",") != "finance,payments" {
		t.Fatalf("after the change: %+v", second)
	}
	if code, _ := carol.me(e); code != 401 {
		t.Errorf("carol's session on the old key still works: %d", code)
	}
	// Access gone at the provider: she is refused, and her kept key revoked.
	e4 := serveSignIn(t, e.store, e.web, func(c *signin.Config) { delete(c.Groups, "finance-approvers") })
	res, _ = newBrowser(t).signIn(e4, "/inbox", "carol", "carol-pw")
	if res.Request.URL.Query().Get("error") != "oidc_unknown" {
		t.Errorf("carol without access: %s", res.Request.URL)
	}
	if k := e.activeKeys("carol@example.com"); len(k) != 0 {
		t.Errorf("carol keeps a key without access: %+v", k)
	}
	if code, _ := again.me(e); code != 401 {
		t.Errorf("carol's session survived the loss of access: %d", code)
	}

	// everyone: anyone else the provider signs in gets what it gives.
	e5 := serveSignIn(t, e.store, e.web, func(c *signin.Config) {
		c.Everyone = &signin.Access{Roles: []rein.Role{rein.RoleAuditor}}
	})
	dave := newBrowser(t)
	dave.signIn(e5, "/inbox", "dave", "dave-pw")
	if code, me := dave.me(e5); code != 200 || me["name"] != "dave@example.com" || !strings.Contains(mustJSON(me["roles"]), "auditor") {
		t.Errorf("dave with everyone: %d %v", code, me)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestSignInRefusesForgeries: a callback with another state, without the
// flow cookie, replayed, or carrying the provider's error never signs in;
// next never leaves rein.
func TestSignInRefusesForgeries(t *testing.T) {
	e := newEnv(t, nil)

	// Stop at the callback to tamper with it.
	b := newBrowser(t)
	var callback *url.URL
	b.c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == signin.PathCallback && callback == nil {
			callback = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	b.signIn(e, "//evil.example/x", "carol", "carol-pw")
	if callback == nil || callback.Query().Get("code") == "" {
		t.Fatalf("no callback with a code: %v", callback)
	}
	q := callback.Query()
	if q.Get("state") == "" {
		t.Fatal("no state")
	}
	b.c.CheckRedirect = nil

	cases := []struct {
		name string
		who  *browser
		url  string
	}{
		{"another state", b, e.url + signin.PathCallback + "?code=" + url.QueryEscape(q.Get("code")) + "&state=" + strings.Repeat("A", 43)},
		{"no flow cookie (another browser: login CSRF)", newBrowser(t), callback.String()},
		{"the provider's error", b, e.url + signin.PathCallback + "?error=access_denied&state=" + url.QueryEscape(q.Get("state"))},
	}
	for _, c := range cases {
		res, _ := c.who.get(c.url)
		if res.Request.URL.Path != "/sign-in" || !strings.HasPrefix(res.Request.URL.Query().Get("error"), "oidc_") {
			t.Errorf("%s: ended at %s, want the sign-in page with an error", c.name, res.Request.URL)
		}
		if code, _ := c.who.me(e); code != 401 {
			t.Errorf("%s: signed in (%d)", c.name, code)
		}
	}
	// The provider's error used the flow: the genuine callback now fails too.
	res, _ := b.get(callback.String())
	if res.Request.URL.Query().Get("error") != "oidc_expired" {
		t.Errorf("the callback after its flow was used: %s", res.Request.URL)
	}

	// A genuine sign-in with next pointing elsewhere lands on /inbox.
	b = newBrowser(t)
	res, page := b.signIn(e, "//evil.example/x", "carol", "carol-pw")
	if !strings.Contains(page, `content="0;url=/inbox"`) {
		t.Errorf("next //evil.example/x: %s\n%s", res.Request.URL, page)
	}
	// The code once used cannot be used again, even with a fresh flow.
	if code, _ := b.me(e); code != 200 {
		t.Fatalf("genuine sign-in failed: %d", code)
	}
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/approvals/apr_1":              "/approvals/apr_1",
		"/inbox?x=1#y":                  "/inbox?x=1#y",
		"":                              "/inbox",
		"//evil.example":                "/inbox",
		"/\\evil.example":               "/inbox",
		"/\t/evil.example":              "/inbox",
		"https://evil.example/":         "/inbox",
		"javascript:alert(1)":           "/inbox",
		"approvals":                     "/inbox",
		"/%2F%2Fevil.example":           "/inbox",
		"/inbox\u202e":                  "/inbox",
		"/a b":                          "/inbox",
		"/x\r\nSet-Cookie: a=b":         "/inbox",
		"/" + strings.Repeat("a", 3000): "/inbox",
	} {
		if got := signin.LocalPath(in); got != want {
			t.Errorf("LocalPath(%q) = %q, want %q", in, got, want)
		}
	}
}
