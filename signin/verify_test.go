package signin

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/reinhq/rein/internal/testidp"
)

// idToken signs user in at the provider as client and returns the token
// response (with its ID token), for the nonce given.
func idToken(t *testing.T, idp *testidp.Provider, client, redirect, user, password, nonce string) *oauth2.Token {
	t.Helper()
	p, err := oidc.NewProvider(context.Background(), idp.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	conf := &oauth2.Config{ClientID: client, ClientSecret: idp.ClientSecret, Endpoint: p.Endpoint(), RedirectURL: redirect,
		Scopes: []string{"openid", "email", "groups"}}
	verifier := oauth2.GenerateVerifier()
	jar, _ := cookiejar.New(nil)
	var code string
	c := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			code = req.URL.Query().Get("code")
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := c.Get(conf.AuthCodeURL("st", oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(string(page))
	if m == nil {
		t.Fatalf("no login form:\n%s", page)
	}
	res, err = c.PostForm(idp.Issuer+"/login/username", url.Values{"id": {m[1]}, "username": {user}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if code == "" {
		t.Fatal("no code")
	}
	tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestVerifyRefusesTokens: ID tokens from the real provider that are not
// for this sign-in are refused: made for another client (audience), for
// another sign-in (nonce), expired, from another provider (its keys do
// not verify the signature), or missing.
func TestVerifyRefusesTokens(t *testing.T) {
	const redirect = "http://127.0.0.1:1/sign-in/oidc/callback"
	users := []testidp.User{{ID: "u1", Username: "carol", Password: "pw", Email: "carol@example.com", EmailVerified: true, Groups: []string{"g"}}}
	idp := testidp.Start(t, []string{redirect}, users...)
	other := testidp.Start(t, []string{redirect}, users...)
	s := &SignIn{Config: Config{Issuer: idp.Issuer, ClientID: idp.ClientID, GroupsClaim: "groups"}}
	s.init()
	p, err := s.provider()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mine := idToken(t, idp, idp.ClientID, redirect, "carol", "pw", "n1")
	cl, err := s.verify(ctx, p, mine, "n1")
	if err != nil || cl.Subject != "u1" || cl.Email != "carol@example.com" || !cl.EmailVerified || len(cl.Groups) != 1 {
		t.Fatalf("a good token: %+v %v", cl, err)
	}
	cases := []struct {
		name  string
		tok   *oauth2.Token
		nonce string
		now   time.Time
		want  string
	}{
		{"another client's token", idToken(t, idp, testidp.OtherClientID, redirect, "carol", "pw", "n1"), "n1", time.Time{}, "audience"},
		{"another sign-in's nonce", mine, "n2", time.Time{}, "nonce"},
		{"expired", mine, "n1", time.Now().Add(24 * time.Hour), "expired"},
		{"another provider's token", idToken(t, other, other.ClientID, redirect, "carol", "pw", "n1"), "n1", time.Time{}, "signature"},
		{"no ID token", &oauth2.Token{AccessToken: "x"}, "n1", time.Time{}, "no ID token"},
	}
	for _, c := range cases {
		s.Now = time.Now
		if !c.now.IsZero() {
			s.Now = func() time.Time { return c.now }
		}
		if _, err := s.verify(ctx, p, c.tok, c.nonce); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %s", c.name, err, c.want)
		}
	}
}
