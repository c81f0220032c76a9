// Package testidp runs a real OpenID provider on loopback for rein's tests:
// the provider of github.com/zitadel/oidc (package op: discovery, the
// authorization endpoint, PKCE, the token endpoint, signed ID tokens and
// their key set), with that module's in-memory storage and its
// username/password login page. Nothing in it is a stand-in: rein's
// sign-in talks to it exactly as to Dex, Okta, Entra ID or Google.
package testidp

import (
	"context"
	"net"
	"net/http"
	"slices"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a person the provider can sign in.
type User struct {
	ID, Username, Password, Email string
	EmailVerified                 bool
	// Groups are sent in the ID token's "groups" claim when the client
	// asks for the "groups" scope, as Dex does.
	Groups []string
}

// OtherClientID is a second client of every provider, with the same secret
// and redirect URIs as rein's.
const OtherClientID = "other-app"

// Provider is a running provider.
type Provider struct {
	Issuer       string // http://127.0.0.1:PORT
	ClientID     string
	ClientSecret string
	users        map[string]*User
}

// Start runs a provider on a free loopback port until the test ends, with
// one confidential web client ("rein") allowed to redirect to redirectURIs.
func Start(t testing.TB, redirectURIs []string, users ...User) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: "http://" + ln.Addr().String(), ClientID: "rein", ClientSecret: "rein-client-secret-for-tests",
		users: map[string]*User{}}
	for i := range users {
		p.users[users[i].ID] = &users[i]
	}
	// A second client, for tests of ID tokens made for someone else.
	clients := map[string]*storage.Client{p.ClientID: storage.WebClient(p.ClientID, p.ClientSecret, redirectURIs...),
		OtherClientID: storage.WebClient(OtherClientID, p.ClientSecret, redirectURIs...)}
	st := &claims{Storage: storage.NewStorageWithClients(userStore{p}, clients), p: p}
	srv := &http.Server{Handler: exampleop.SetupServer(p.Issuer, st, nil, false)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return p
}

// claims puts the person's e-mail address and groups in the ID token.
// The storage it wraps leaves userinfo claims out of ID tokens issued
// with an access token; Dex, Okta and Google put them in, and rein reads
// them from there.
type claims struct {
	*storage.Storage
	p *Provider
}

func (c *claims) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := c.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	u := c.p.users[req.GetSubject()]
	if u == nil {
		return nil
	}
	ui.Subject = u.ID
	ui.Email = u.Email
	ui.EmailVerified = oidc.Bool(u.EmailVerified)
	if slices.Contains(req.GetScopes(), "groups") {
		ui.AppendClaims("groups", u.Groups)
	}
	return nil
}

// GetClientByClientID lets rein's client ask for the groups scope.
func (c *claims) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	cl, err := c.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return groupsClient{cl}, nil
}

type groupsClient struct{ op.Client }

func (g groupsClient) IsScopeAllowed(scope string) bool {
	return scope == "groups" || g.Client.IsScopeAllowed(scope)
}

type userStore struct{ p *Provider }

func (s userStore) ExampleClientID() string { return "service" }

func (s userStore) GetUserByID(id string) *storage.User { return s.user(s.p.users[id]) }

func (s userStore) GetUserByUsername(name string) *storage.User {
	for _, u := range s.p.users {
		if u.Username == name {
			return s.user(u)
		}
	}
	return nil
}

func (s userStore) user(u *User) *storage.User {
	if u == nil {
		return nil
	}
	return &storage.User{ID: u.ID, Username: u.Username, Password: u.Password, Email: u.Email,
		EmailVerified: u.EmailVerified, PreferredLanguage: language.English}
}
