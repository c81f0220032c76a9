package http_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/console"
)

const testConsoleSecret = "a test console secret of at least 32 characters"

// signIn posts the sign-in form with secret and returns the session
// cookie's value ("" when none was set) and where the answer redirects.
func (e *env) signIn(secret string, header http.Header) (cookie, location string, status int) {
	e.t.Helper()
	form := url.Values{"key": {secret}, "next": {"/inbox"}}
	req, _ := http.NewRequest("POST", e.srv.URL+"/sign-in", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("sign in: %v", err)
	}
	defer res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == console.CookieName {
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.MaxAge <= 0 {
				e.t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/ and a Max-Age", ck)
			}
			cookie = ck.Value
		}
	}
	return cookie, res.Header.Get("Location"), res.StatusCode
}

// withCookie makes a request authenticated by a console session cookie,
// with the given CSRF token ("" sends none).
func (e *env) withCookie(method, path, cookie, csrf string, body any) *apiResp {
	e.t.Helper()
	h := http.Header{}
	h.Set("Cookie", console.CookieName+"="+cookie)
	if csrf != "" {
		h.Set(console.CSRFHeader, csrf)
	}
	return e.send(method, path, h, body)
}

// me reads GET /me with a session cookie.
func (e *env) me(cookie string) map[string]any {
	e.t.Helper()
	r := e.withCookie("GET", "/me", cookie, "", nil)
	wantStatus(e.t, r, 200)
	return decodeObject(e.t, r.Body)
}

func TestConsoleSignIn(t *testing.T) {
	e := newEnv(t, globalPolicy)
	both := e.addKey("acme-both", "acme", rein.RoleAgent, rein.RoleApprover)
	cases := []struct {
		name, secret string
		header       http.Header
		wantCookie   bool
		wantLocation string
	}{
		{"approver", e.key("acme-approver").Secret, nil, true, "/inbox"},
		{"auditor", e.key("acme-auditor").Secret, nil, true, "/inbox"},
		{"admin of every tenant", e.key("root").Secret, nil, true, "/inbox"},
		{"agent and approver", both.Secret, nil, true, "/inbox"},
		{"agent", e.key("acme-agent").Secret, nil, false, "/sign-in?error=role&next=%2Finbox"},
		{"wrong key", "rein_notakey", nil, false, "/sign-in?error=unknown&next=%2Finbox"},
		{"no key", "", nil, false, "/sign-in?error=missing&next=%2Finbox"},
		{"cross-site form", e.key("acme-approver").Secret, http.Header{"Origin": {"https://evil.example"}}, false, ""},
		{"cross-site fetch", e.key("acme-approver").Secret, http.Header{"Sec-Fetch-Site": {"cross-site"}}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cookie, loc, status := e.signIn(c.secret, c.header)
			if (cookie != "") != c.wantCookie {
				t.Fatalf("session cookie set: %v, want %v (status %d, location %q)", cookie != "", c.wantCookie, status, loc)
			}
			if c.wantLocation == "" {
				if status != 403 {
					t.Fatalf("status %d, want 403", status)
				}
				return
			}
			if status != 303 || loc != c.wantLocation {
				t.Fatalf("status %d location %q, want 303 %q", status, loc, c.wantLocation)
			}
		})
	}

	t.Run("a session never acts as an agent", func(t *testing.T) {
		cookie, _, _ := e.signIn(both.Secret, nil)
		me := e.me(cookie)
		if roles, _ := json.Marshal(me["roles"]); string(roles) != `["approver"]` {
			t.Fatalf("roles of the session: %s, want only approver", roles)
		}
		r := e.withCookie("POST", "/v1/check", cookie, me["csrf"].(string), map[string]any{"tool": "fs.read"})
		wantError(t, r, 403, rein.ECodeForbidden)
	})

	t.Run("next must stay on this server", func(t *testing.T) {
		for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example"} {
			form := url.Values{"key": {e.key("acme-approver").Secret}, "next": {next}}
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := c.PostForm(e.srv.URL+"/sign-in", form)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if loc := res.Header.Get("Location"); loc != "/inbox" {
				t.Errorf("next %q redirected to %q, want /inbox", next, loc)
			}
		}
	})
}

func TestConsoleSessionAuthenticatesAPI(t *testing.T) {
	e := newEnv(t, globalPolicy)
	cookie, _, _ := e.signIn(e.key("acme-approver").Secret, nil)
	if cookie == "" {
		t.Fatal("no session cookie")
	}
	csrf := e.me(cookie)["csrf"].(string)
	ask := e.check("acme-agent", map[string]any{"tool": "deploy", "args": map[string]any{"v": 1}})
	id := ask["approval"].(map[string]any)["id"].(string)
	votes := "/v1/approvals/" + id + "/votes"

	// Reads need no token.
	wantStatus(t, e.withCookie("GET", "/v1/approvals?status=pending", cookie, "", nil), 200)
	wantStatus(t, e.withCookie("GET", "/v1/checks", cookie, "", nil), 200)

	// Changes need the session's CSRF token; without it nothing changes.
	before := e.entryCount()
	for _, token := range []string{"", "forged", strings.ToUpper(csrf)} {
		r := e.withCookie("POST", votes, cookie, token, map[string]any{"vote": "approve"})
		msg := wantError(t, r, 403, rein.ECodeForbidden)
		if !strings.Contains(msg, "CSRF") {
			t.Errorf("the refusal does not say why: %s", msg)
		}
	}
	if got := e.entryCount(); got != before {
		t.Fatalf("refused votes wrote %d audit entries", got-before)
	}
	r := e.do("GET", "/v1/approvals/"+id, "acme-approver", nil)
	if a := decodeObject(t, r.Body); a["status"] != "pending" || len(a["votes"].([]any)) != 0 {
		t.Fatalf("after refused votes the approval is %v with votes %v", a["status"], a["votes"])
	}
	// Another session's token is no good either.
	other, _, _ := e.signIn(e.key("acme-approver").Secret, nil)
	if otherCSRF := e.me(other)["csrf"].(string); otherCSRF == csrf {
		t.Fatal("two sessions share a CSRF token")
	} else {
		wantError(t, e.withCookie("POST", votes, cookie, otherCSRF, map[string]any{"vote": "approve"}), 403, rein.ECodeForbidden)
	}

	// With the token the vote counts, as the session's key.
	r = e.withCookie("POST", votes, cookie, csrf, map[string]any{"vote": "approve"})
	wantStatus(t, r, 200)
	a := decodeObject(t, r.Body)
	if v := a["votes"].([]any); len(v) != 1 || v[0].(map[string]any)["by"] != "acme-approver" {
		t.Fatalf("votes %v, want one by acme-approver", v)
	}

	// Tenants stay apart: a globex session sees nothing of acme.
	gx, _, _ := e.signIn(e.key("globex-approver").Secret, nil)
	wantError(t, e.withCookie("GET", "/v1/approvals/"+id, gx, "", nil), 404, rein.ECodeNotFound)
	var list []any
	json.Unmarshal(e.withCookie("GET", "/v1/approvals", gx, "", nil).Body, &list)
	if len(list) != 0 {
		t.Fatalf("a globex session lists %d acme approvals", len(list))
	}

	// A forged or altered cookie is refused; a bearer key still wins.
	parts := strings.Split(cookie, ".")
	forged := []string{
		strings.Join(append([]string{e.key("acme-admin").ID}, parts[1:]...), "."),              // another key's id
		strings.Join(append(parts[:1:1], "4102444800", "4102444800", parts[3], parts[4]), "."), // later times
		cookie[:len(cookie)-2] + "xx",
		"garbage",
	}
	for _, f := range forged {
		wantError(t, e.withCookie("GET", "/v1/approvals", f, "", nil), 401, rein.ECodeUnauthenticated)
	}
	h := http.Header{"Authorization": {"Bearer " + e.key("acme-auditor").Secret}, "Cookie": {console.CookieName + "=garbage"}}
	wantStatus(t, e.send("GET", "/v1/approvals", h, nil), 200)

	// Sign-out needs the token; revoking the key ends every session of it.
	res := e.withCookie("POST", "/sign-out", cookie, "", nil)
	if res.Status != 403 {
		t.Fatalf("sign-out without the token: %d, want 403", res.Status)
	}
	wantStatus(t, e.withCookie("GET", "/v1/approvals", cookie, "", nil), 200)

	// Signing out ends the session on the server: a copy of its cookie
	// (another tab, a stolen one) is refused, while another session of
	// the same key goes on.
	third, _, _ := e.signIn(e.key("acme-approver").Secret, nil)
	copied := third
	res = e.withCookie("POST", "/sign-out", third, e.me(third)["csrf"].(string), nil)
	if res.Status >= 400 {
		t.Fatalf("sign-out with the token: %d", res.Status)
	}
	wantError(t, e.withCookie("GET", "/v1/approvals", copied, "", nil), 401, rein.ECodeUnauthenticated)
	if r := e.withCookie("GET", "/me", copied, "", nil); r.Status != 401 {
		t.Fatalf("/me with a signed-out cookie: %d", r.Status)
	}
	wantStatus(t, e.withCookie("GET", "/v1/approvals", cookie, "", nil), 200)

	wantStatus(t, e.do("DELETE", "/v1/keys/"+e.key("acme-approver").ID, "acme-admin", nil), 204)
	wantError(t, e.withCookie("GET", "/v1/approvals", cookie, "", nil), 401, rein.ECodeUnauthenticated)
	wantError(t, e.withCookie("GET", "/v1/approvals", other, "", nil), 401, rein.ECodeUnauthenticated)
}

func TestConsolePages(t *testing.T) {
	e := newEnv(t, globalPolicy)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, cookie string) *http.Response {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		if cookie != "" {
			req.Header.Set("Cookie", console.CookieName+"="+cookie)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for _, p := range []string{"/inbox", "/activity", "/sessions/run-1", "/approvals/apr_x", "/audit", "/policy", "/admin"} {
		res := get(p, "")
		if res.StatusCode != 303 || res.Header.Get("Location") != "/sign-in?next="+url.QueryEscape(p) {
			t.Errorf("GET %s signed out: %d %s, want 303 to sign-in", p, res.StatusCode, res.Header.Get("Location"))
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q", p, csp)
		}
	}
	cookie, _, _ := e.signIn(e.key("acme-approver").Secret, nil)
	if res := get("/inbox", cookie); res.StatusCode != 200 || res.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("GET /inbox signed in: %d, X-Frame-Options %q", res.StatusCode, res.Header.Get("X-Frame-Options"))
	}
	if res := get("/", cookie); res.StatusCode != 303 || res.Header.Get("Location") != "/inbox" {
		t.Errorf("GET /: %d %s, want 303 /inbox", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/sign-in", "/assets/app.js", "/assets/console.css"} {
		if res := get(p, ""); res.StatusCode != 200 || res.Header.Get("ETag") == "" {
			t.Errorf("GET %s: %d, ETag %q", p, res.StatusCode, res.Header.Get("ETag"))
		}
	}
	if res := get("/assets/nope.js", ""); res.StatusCode != 404 {
		t.Errorf("GET /assets/nope.js: %d", res.StatusCode)
	}
	// The API keeps its JSON errors next to the console.
	wantError(t, e.do("POST", "/v2/check", "acme-agent", nil), 404, rein.ECodeNotFound)
	wantError(t, e.do("GET", "/v1/nope", "", nil), 404, rein.ECodeNotFound)
}

func TestListChecks(t *testing.T) {
	e := newEnv(t, globalPolicy)
	start := time.Now().UTC()
	read := e.check("acme-agent", map[string]any{"tool": "fs.read", "session": "s1"})
	e.check("acme-agent", map[string]any{"tool": "danger", "session": "s1", "agent": "acme-agent/sub"})
	e.check("acme-agent2", map[string]any{"tool": "fs.read", "session": "s2"})
	e.check("globex-agent", map[string]any{"tool": "fs.read", "session": "s1"})
	wantStatus(t, e.do("POST", "/v1/checks/"+read["id"].(string)+"/result", "acme-agent",
		map[string]any{"status": "succeeded", "summary": "ok"}), 204)

	list := func(key, query string) []map[string]any {
		t.Helper()
		r := e.do("GET", "/v1/checks"+query, key, nil)
		wantStatus(t, r, 200)
		var out []map[string]any
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	tools := func(l []map[string]any) string {
		var s []string
		for _, c := range l {
			s = append(s, c["check"].(map[string]any)["tool"].(string)+"/"+c["check"].(map[string]any)["agent"].(string))
		}
		return strings.Join(s, " ")
	}
	cases := []struct{ key, query, want string }{
		{"acme-approver", "", "fs.read/acme-agent2 danger/acme-agent/sub fs.read/acme-agent"},
		{"acme-auditor", "?decision=deny", "danger/acme-agent/sub"},
		{"acme-admin", "?tool=fs.read&session=s1", "fs.read/acme-agent"},
		{"acme-approver", "?agent=acme-agent", "danger/acme-agent/sub fs.read/acme-agent"},
		{"acme-approver", "?agent=acme-agent/sub", "danger/acme-agent/sub"},
		{"acme-approver", "?since=" + url.QueryEscape(start.Format(time.RFC3339Nano)), "fs.read/acme-agent2 danger/acme-agent/sub fs.read/acme-agent"},
		{"acme-approver", "?until=" + url.QueryEscape(start.Format(time.RFC3339Nano)), ""},
		{"globex-approver", "", "fs.read/globex-agent"},
		{"root", "", "fs.read/globex-agent fs.read/acme-agent2 danger/acme-agent/sub fs.read/acme-agent"},
		{"root", "?tenant=globex", "fs.read/globex-agent"},
	}
	for _, c := range cases {
		if got := tools(list(c.key, c.query)); got != c.want {
			t.Errorf("%s GET /v1/checks%s: %q, want %q", c.key, c.query, got, c.want)
		}
	}

	// Pages: the cursor continues where the last page ended.
	r := e.do("GET", "/v1/checks?limit=2", "acme-approver", nil)
	next := r.Header.Get("X-Next-Cursor")
	if next == "" || !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("a full page has no next cursor: %v", r.Header)
	}
	if got := tools(list("acme-approver", "?limit=2&cursor="+next)); got != "fs.read/acme-agent" {
		t.Errorf("second page: %q", got)
	}

	// The reported result travels with the check.
	l := list("acme-approver", "?tool=fs.read&session=s1")
	if res, _ := l[0]["result"].(map[string]any); res["status"] != "succeeded" || res["summary"] != "ok" {
		t.Errorf("result %v, want succeeded/ok", l[0]["result"])
	}

	for _, c := range []struct {
		key, query string
		status     int
		code       string
	}{
		{"acme-agent", "", 403, rein.ECodeForbidden},
		{"acme-approver", "?decision=maybe", 400, rein.ECodeBadRequest},
		{"acme-approver", "?since=yesterday", 400, rein.ECodeBadRequest},
		{"acme-approver", "?limit=0", 400, rein.ECodeBadRequest},
		{"acme-approver", "?tenant=globex", 403, rein.ECodeForbidden},
	} {
		wantError(t, e.do("GET", "/v1/checks"+c.query, c.key, nil), c.status, c.code)
	}
}

func TestGlobalPolicyTier(t *testing.T) {
	e := newEnv(t, globalPolicy)
	wantError(t, e.do("GET", "/v1/policy", "acme-auditor", nil), 404, rein.ECodeNotFound)
	r := e.do("GET", "/v1/policy?tier=global", "acme-auditor", nil)
	wantStatus(t, r, 200)
	if p := decodeObject(t, r.Body); p["tier"] != "global" || !strings.Contains(p["source"].(string), "deploy-review") {
		t.Fatalf("global tier: %v", p)
	}
	wantError(t, e.send("PUT", "/v1/policy?tier=global", http.Header{"Authorization": {"Bearer " + e.key("acme-admin").Secret}}, yamlBody(globalPolicy)), 403, rein.ECodeForbidden)
	wantError(t, e.do("GET", "/v1/policy?tier=everything", "acme-auditor", nil), 400, rein.ECodeBadRequest)
}

// TestStreamsEndWhenTheKeyIsRevoked: an event stream, opened with a bearer
// key or a console session, ends at the next heartbeat after its key is
// revoked; others stay open.
func TestStreamsEndWhenTheKeyIsRevoked(t *testing.T) {
	e := newEnv(t, globalPolicy)
	e.api.Heartbeat = 50 * time.Millisecond
	cookie, _, _ := e.signIn(e.key("acme-auditor").Secret, nil)
	open := func(h http.Header) chan error {
		req, _ := http.NewRequest("GET", e.srv.URL+"/v1/events", nil)
		req.Header = h
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("open stream: %v %v", err, res)
		}
		ended := make(chan error, 1)
		go func() {
			defer res.Body.Close()
			_, err := io.Copy(io.Discard, res.Body)
			ended <- err
		}()
		return ended
	}
	bearer := open(http.Header{"Authorization": {"Bearer " + e.key("acme-approver").Secret}})
	session := open(http.Header{"Cookie": {console.CookieName + "=" + cookie}})
	other := open(http.Header{"Authorization": {"Bearer " + e.key("globex-approver").Secret}})
	time.Sleep(200 * time.Millisecond)
	for name, ch := range map[string]chan error{"bearer": bearer, "session": session, "other": other} {
		select {
		case err := <-ch:
			t.Fatalf("the %s stream ended before any revocation: %v", name, err)
		default:
		}
	}
	for _, k := range []string{"acme-approver", "acme-auditor"} {
		wantStatus(t, e.do("DELETE", "/v1/keys/"+e.key(k).ID, "acme-admin", nil), 204)
	}
	for name, ch := range map[string]chan error{"bearer": bearer, "session": session} {
		select {
		case <-ch:
		case <-time.After(3 * time.Second):
			t.Errorf("the %s stream of a revoked key is still open", name)
		}
	}
	select {
	case err := <-other:
		t.Errorf("another key's stream ended: %v", err)
	default:
	}
}
