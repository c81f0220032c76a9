package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/internal/testidp"
)

// The people of the OpenID provider the sign-in tests run against.
var idpPeople = []testidp.User{
	{ID: "u-carol", Username: "carol", Password: "carol-pw", Email: "carol@example.com", EmailVerified: true, Groups: []string{"finance-approvers"}},
	{ID: "u-dave", Username: "dave", Password: "dave-pw", Email: "dave@example.com", EmailVerified: true, Groups: []string{"sre"}},
	{ID: "u-erin", Username: "erin", Password: "erin-pw", Email: "erin@example.com", EmailVerified: true, Groups: []string{"marketing"}},
}

// signInServer starts rein with OpenID Connect sign-in at a real provider
// running in the test (zitadel/oidc's provider on loopback).
func signInServer(t *testing.T, extraConfig string) (*harness.ApprovalEnv, *testidp.Provider) {
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	idp := testidp.Start(t, []string{"http://" + addr + "/sign-in/oidc/callback"}, idpPeople...)
	pol := filepath.Join(dir, "policy.yaml")
	harness.WriteFile(t, pol, signInPolicy)
	cfg := filepath.Join(dir, "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf(`base_url: http://%s
oidc:
  issuer: %s
  client_id: %s
  scopes: [openid, email, groups]
  label: Example SSO
  tenant: acme
  groups:
    finance-approvers: {roles: [approver], groups: [finance]}
    sre: {roles: [approver], groups: [oncall]}
%s`, addr, idp.Issuer, idp.ClientID, extraConfig))
	s := harness.StartServer(t, filepath.Join(dir, "data"), []string{"REIN_OIDC_CLIENT_SECRET=" + idp.ClientSecret},
		"--policy", pol, "--config", cfg, "--listen", addr)
	e := &harness.ApprovalEnv{T: t, S: s, Keys: map[string]string{}}
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", s.AdminKey(), []byte(`{"name":"builder","tenant":"acme","roles":["agent"]}`), "application/json")
	if code != 201 {
		t.Fatalf("create key: %d %s", code, body)
	}
	var created struct{ Key string }
	json.Unmarshal(body, &created)
	e.Keys["builder"] = created.Key
	return e, idp
}

const signInPolicy = `version: 1
default: deny
rules:
  - id: pay
    when: 'tool == "pay"'
    decision: ask
    reason: "payments need finance"
    approval: {approvers: ["group:finance"], quorum: 1, ttl: 15m, grant_ttl: 10m}
`

// ssoBrowser is a cookie-keeping HTTP client that follows redirects as a
// browser does.
type ssoBrowser struct {
	t    *testing.T
	c    *http.Client
	base string
	csrf string
}

var ssoAuthRequest = regexp.MustCompile(`name="id" value="([^"]+)"`)

// ssoSignIn signs in at the provider's login page, starting at the
// console's button, and returns where the browser ended.
func ssoSignIn(t *testing.T, base string, idp *testidp.Provider, user, password, next string) (*ssoBrowser, *url.URL) {
	jar, _ := cookiejar.New(nil)
	b := &ssoBrowser{t: t, c: &http.Client{Jar: jar}, base: base}
	res, page := b.get(base + "/sign-in/oidc?next=" + url.QueryEscape(next))
	m := ssoAuthRequest.FindStringSubmatch(page)
	if m == nil || !strings.HasPrefix(res.Request.URL.String(), idp.Issuer) {
		t.Fatalf("no login page at the provider: %s\n%s", res.Request.URL, page)
	}
	res, err := b.c.PostForm(idp.Issuer+"/login/username", url.Values{"id": {m[1]}, "username": {user}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// The page after the callback moves on by itself (meta refresh).
	if r := regexp.MustCompile(`content="0;url=([^"]+)"`).FindStringSubmatch(string(body)); r != nil {
		res, _ = b.get(base + r[1])
	}
	var me struct{ CSRF string }
	if code, body := b.get(base + "/me"); code.StatusCode == 200 {
		json.Unmarshal([]byte(body), &me)
		b.csrf = me.CSRF
	}
	return b, res.Request.URL
}

func (b *ssoBrowser) get(u string) (*http.Response, string) {
	res, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

// vote votes as the console does: the session cookie and its CSRF token.
func (b *ssoBrowser) vote(id, vote string) (int, string) {
	req, _ := http.NewRequest("POST", b.base+"/v1/approvals/"+id+"/votes", strings.NewReader(`{"vote":"`+vote+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Rein-CSRF", b.csrf)
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(body)
}

// TestSignInWithProviderAndVote: an agent's ask waits; an approver signs
// in with the company's identity provider (a real OpenID provider on
// loopback), lands on the approval's console page and approves; the
// waiting agent gets allow. Her vote is cast by the key sign-in keeps for
// her, so eligibility and the audit log are those of any key: a person of
// another group is refused, and someone without access cannot sign in.
func TestSignInWithProviderAndVote(t *testing.T) {
	e, idp := signInServer(t, "")
	a := e.Check("builder", "pay", "s1", `{"to":"ACME Ltd","amount":120}`)
	if a.Decision != "ask" || a.Approval == nil {
		t.Fatalf("check: %+v", a)
	}
	page := "/approvals/" + a.Approval.ID

	// The sign-in page offers the provider.
	if res, body := (&ssoBrowser{t: t, c: http.DefaultClient}).get(e.S.URL + "/sign-in/oidc/options"); res.StatusCode != 200 || !strings.Contains(body, "Example SSO") {
		t.Fatalf("options: %d %s", res.StatusCode, body)
	}

	// dave is in sre (oncall approvers): signed in, but not a finance approver.
	dave, at := ssoSignIn(t, e.S.URL, idp, "dave", "dave-pw", page)
	if at.Path != page || dave.csrf == "" {
		t.Fatalf("dave ended at %s (csrf %q), want %s", at, dave.csrf, page)
	}
	if code, body := dave.vote(a.Approval.ID, "approve"); code != http.StatusForbidden || !strings.Contains(body, "approvers") {
		t.Errorf("dave (oncall) approving a payment: %d %s, want 403", code, body)
	}
	// erin's groups give no access: she never gets a session.
	erin, at := ssoSignIn(t, e.S.URL, idp, "erin", "erin-pw", page)
	if at.Path != "/sign-in" || at.Query().Get("error") != "oidc_unknown" || erin.csrf != "" {
		t.Errorf("erin ended at %s (csrf %q), want the sign-in page refusing her", at, erin.csrf)
	}

	waited := make(chan map[string]any, 1)
	go func() { _, m := e.Wait("builder", a.Approval.ID, 20000); waited <- m }()
	carol, at := ssoSignIn(t, e.S.URL, idp, "carol", "carol-pw", page)
	if at.Path != page || carol.csrf == "" {
		t.Fatalf("carol ended at %s (csrf %q)", at, carol.csrf)
	}
	if code, body := carol.vote(a.Approval.ID, "approve"); code != 200 {
		t.Fatalf("carol approves: %d %s", code, body)
	}
	select {
	case m := <-waited:
		if m["decision"] != "allow" {
			t.Errorf("the waiting agent got %v, want allow", m)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting agent was not woken")
	}

	// The audit log: carol's key created by sign-in, her vote by that key.
	code, body := harness.HTTPDo(t, "GET", e.S.URL+"/v1/audit/entries?start=0&limit=10000", e.S.AdminKey(), nil, "")
	if code != 200 {
		t.Fatalf("audit: %d", code)
	}
	var created, voted bool
	for _, line := range strings.Split(string(body), "\n") {
		created = created || strings.Contains(line, `"key.created"`) && strings.Contains(line, `"carol@example.com"`) && strings.Contains(line, "oidc sign-in")
		voted = voted || strings.Contains(line, `"approval.vote"`) && strings.Contains(line, `"carol@example.com"`)
	}
	if !created || !voted {
		t.Errorf("audit log: key created by sign-in %v, vote by carol@example.com %v", created, voted)
	}
	// Her kept key is listed with the others, and no API request can use it.
	var keys struct {
		Keys []struct {
			Name   string
			Roles  []string
			Groups []string
		}
	}
	harness.GetJSON(t, e.S.URL+"/v1/keys?tenant=acme", e.S.AdminKey(), &keys)
	found := false
	for _, k := range keys.Keys {
		if k.Name == "carol@example.com" {
			found = strings.Join(k.Groups, ",") == "finance" && strings.Join(k.Roles, ",") == "approver"
		}
	}
	if !found {
		t.Errorf("carol's key is not listed as approver in finance: %+v", keys.Keys)
	}
}
