package signin

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/reinhq/rein"
)

// Paths of the sign-in flow. Register <base_url>/sign-in/oidc/callback as
// the redirect URI at the provider.
const (
	PathStart    = "/sign-in/oidc"
	PathCallback = "/sign-in/oidc/callback"
	PathOptions  = "/sign-in/oidc/options"
)

// Sessions starts a console session for a key, as the console's own API-key
// sign-in does: same cookie, same roles, same end.
type Sessions interface {
	StartSession(w http.ResponseWriter, r *http.Request, key *rein.Key) error
}

// SignIn is the OpenID Connect sign-in of the console.
type SignIn struct {
	Config  Config
	BaseURL string // the redirect URI is BaseURL + PathCallback
	// Secret is the console secret: the flow cookies' key is derived from it.
	Secret   []byte
	Store    Store
	Sessions Sessions
	// Secure marks the flow cookie Secure even for plain-HTTP requests
	// (rein behind a TLS-terminating proxy).
	Secure bool
	Log    *slog.Logger
	Now    func() time.Time
	// Client talks to the provider; default: a client with a 10 s timeout.
	Client *http.Client

	once   sync.Once
	flows  *flowSealer
	mu     sync.Mutex
	issuer *oidc.Provider // discovered on first use, then kept
}

func (s *SignIn) init() {
	s.once.Do(func() {
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Log == nil {
			s.Log = slog.Default()
		}
		if s.Client == nil {
			s.Client = &http.Client{Timeout: 10 * time.Second}
		}
		s.flows = newFlowSealer(s.Secret)
	})
}

// provider discovers the provider (its endpoints and signing keys) on first
// use: rein starts even while the provider is unreachable, and sign-in
// works once it is back.
func (s *SignIn) provider() (*oidc.Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issuer != nil {
		return s.issuer, nil
	}
	// Keys are fetched later with this context: it must outlive the request.
	p, err := oidc.NewProvider(oidc.ClientContext(context.Background(), s.Client), s.Config.Issuer)
	if err != nil {
		return nil, err
	}
	s.issuer = p
	return p, nil
}

func (s *SignIn) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: s.Config.ClientID, ClientSecret: s.Config.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: strings.TrimRight(s.BaseURL, "/") + PathCallback, Scopes: s.Config.Scopes}
}

// ServeHTTP answers the three sign-in paths.
func (s *SignIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "405: use GET", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case PathStart:
		s.start(w, r)
	case PathCallback:
		s.callback(w, r)
	case PathOptions:
		h.Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"label": s.Config.Label, "start": PathStart})
	default:
		http.Error(w, "404: no such sign-in page", http.StatusNotFound)
	}
}

// refuse sends the person back to the sign-in page with a reason code the
// page explains; the details go to the log only.
func (s *SignIn) refuse(w http.ResponseWriter, r *http.Request, code, next string, err error) {
	s.Log.Info("console sign-in refused", "via", "oidc", "reason", code, "err", err, "remote", r.RemoteAddr)
	http.Redirect(w, r, "/sign-in?error=oidc_"+code+"&next="+url.QueryEscape(next), http.StatusSeeOther)
}

// start: GET /sign-in/oidc?next=PAGE sends the browser to the provider with
// a fresh state, nonce and PKCE challenge, remembered in a flow cookie.
func (s *SignIn) start(w http.ResponseWriter, r *http.Request) {
	next := LocalPath(r.URL.Query().Get("next"))
	p, err := s.provider()
	if err != nil {
		s.refuse(w, r, "unavailable", next, err)
		return
	}
	f := &flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Next: next, Expires: s.Now().Add(flowTTL)}
	http.SetCookie(w, &http.Cookie{Name: flowCookie(f.State), Value: s.flows.seal(f), Path: PathCallback,
		MaxAge: int(flowTTL.Seconds()), HttpOnly: true, Secure: s.Secure || r.TLS != nil,
		// Lax, not Strict: the provider's redirect back is a cross-site
		// navigation, and the cookie must come with it.
		SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, s.oauth(p).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// callback: GET /sign-in/oidc/callback?code=...&state=... finishes a
// sign-in: the flow cookie of that state, the code exchanged with the PKCE
// verifier, the ID token verified (signature, issuer, audience, expiry,
// nonce), the person mapped to a key, and a console session started.
func (s *SignIn) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	ck, err := r.Cookie(flowCookie(state))
	if state == "" || err != nil {
		s.refuse(w, r, "expired", "/inbox", errFlow)
		return
	}
	// A flow is used once, whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: ck.Name, Value: "", Path: PathCallback, MaxAge: -1, HttpOnly: true,
		Secure: s.Secure || r.TLS != nil, SameSite: http.SameSiteLaxMode})
	now := s.Now()
	f, err := s.flows.open(ck.Value, state, now)
	if err != nil {
		s.refuse(w, r, "expired", "/inbox", err)
		return
	}
	if e := q.Get("error"); e != "" {
		s.refuse(w, r, "denied", f.Next, errors.New("the provider answered "+e+": "+q.Get("error_description")))
		return
	}
	p, err := s.provider()
	if err != nil {
		s.refuse(w, r, "unavailable", f.Next, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	ctx = context.WithValue(oidc.ClientContext(ctx, s.Client), oauth2.HTTPClient, s.Client)
	tok, err := s.oauth(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		s.refuse(w, r, "failed", f.Next, err)
		return
	}
	cl, err := s.verify(ctx, p, tok, f.Nonce)
	if err != nil {
		s.refuse(w, r, "failed", f.Next, err)
		return
	}
	person, err := s.Config.Resolve(cl)
	actor := "oidc:" + s.Config.Issuer
	switch {
	case errors.Is(err, ErrUnknown):
		if err := revokeManaged(ctx, s.Store, person.Tenant, person.Name, actor, now); err != nil {
			s.Log.Error("revoking the key of a person without access failed", "name", person.Name, "err", err)
		}
		s.refuse(w, r, "unknown", f.Next, err)
		return
	case errors.Is(err, ErrUnverified):
		s.refuse(w, r, "unverified", f.Next, err)
		return
	case err != nil:
		s.refuse(w, r, "identity", f.Next, err)
		return
	}
	key, err := keyFor(ctx, s.Store, person, actor, now)
	switch {
	case errors.Is(err, ErrTaken):
		s.refuse(w, r, "taken", f.Next, err)
		return
	case err != nil:
		s.refuse(w, r, "nokey", f.Next, err)
		return
	}
	if err := s.Sessions.StartSession(w, r, key); err != nil {
		s.refuse(w, r, "role", f.Next, err)
		return
	}
	s.Log.Info("console sign-in", "via", "oidc", "key", key.Name, "tenant", key.Tenant, "subject", cl.Subject, "remote", r.RemoteAddr)
	// The session cookie is SameSite=Strict, and this response ends a
	// navigation that came from the provider's site: browsers would not
	// send the cookie on a redirect from here. A page that moves on by
	// itself makes the next request a same-site one.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	onward.Execute(w, f.Next)
}

var onward = template.Must(template.New("onward").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={{.}}">
<title>Signed in · rein console</title><link rel="stylesheet" href="/assets/console.css"></head>
<body class="sign-in"><main class="sign-in-box"><p>Signed in. <a id="continue" href="{{.}}">Continue</a></p></main></body></html>
`))

// verify checks the ID token of tok: signature with the provider's keys,
// issuer, audience (and authorized party when there are several),
// expiry, the nonce of this flow, and the access token hash when present.
func (s *SignIn) verify(ctx context.Context, p *oidc.Provider, tok *oauth2.Token, nonce string) (Claims, error) {
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return Claims{}, errors.New("the provider's token response carries no ID token")
	}
	id, err := p.Verifier(&oidc.Config{ClientID: s.Config.ClientID, Now: s.Now}).Verify(ctx, raw)
	if err != nil {
		return Claims{}, err
	}
	if id.Nonce == "" || id.Nonce != nonce {
		return Claims{}, errors.New("the ID token's nonce is not this sign-in's")
	}
	if id.AccessTokenHash != "" {
		if err := id.VerifyAccessToken(tok.AccessToken); err != nil {
			return Claims{}, err
		}
	}
	var all map[string]any
	if err := id.Claims(&all); err != nil {
		return Claims{}, err
	}
	if len(id.Audience) > 1 {
		if azp, _ := all["azp"].(string); azp != s.Config.ClientID {
			return Claims{}, errors.New("the ID token names several audiences and rein is not its authorized party")
		}
	}
	cl := Claims{Subject: id.Subject}
	cl.Email, _ = all["email"].(string)
	switch v := all["email_verified"].(type) {
	case bool:
		cl.EmailVerified = v
	case string: // some providers send "true"
		cl.EmailVerified = v == "true"
	}
	switch v := all[s.Config.GroupsClaim].(type) {
	case []any:
		for _, g := range v {
			if g, ok := g.(string); ok && !slices.Contains(cl.Groups, g) {
				cl.Groups = append(cl.Groups, g)
			}
		}
	case string:
		cl.Groups = []string{v}
	}
	return cl, nil
}
