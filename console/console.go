// Package console serves rein's web console: static pages (plain HTML, CSS
// and ES modules embedded in the binary) that use the JSON API with a
// session cookie, and the few handlers that exchange an API key for that
// cookie. The pages decide nothing: every vote, answer and lock goes
// through the same API endpoints and rules as any other client.
package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/reinhq/rein"
)

//go:embed web
var webFS embed.FS

// CookieName is the session cookie.
const CookieName = "rein_session"

// CSRFHeader carries the session's CSRF token on state-changing API requests.
const CSRFHeader = "X-Rein-CSRF"

// SignInRoles are the roles that may sign in to the console. Agent keys
// cannot: a console session never acts as an agent.
var SignInRoles = []rein.Role{rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor}

// CSP is the Content-Security-Policy of every console response: scripts,
// styles and connections only from rein itself, no inline code, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"worker-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Keys is what the console needs of the store.
type Keys interface {
	KeyBySecretHash(ctx context.Context, hash string) (*rein.Key, error)
	KeyByID(ctx context.Context, id string) (*rein.Key, error)
}

// Console is the web console.
type Console struct {
	Keys Keys
	// SignOuts, when set, ends sessions on the server at sign-out (nil:
	// signing out only removes the browser's cookie).
	SignOuts rein.SignOutStore
	Sealer   *Sealer
	// Secure marks cookies Secure even for plain-HTTP requests (rein behind
	// a TLS-terminating proxy); requests over TLS always get Secure cookies.
	Secure bool
	Log    *slog.Logger
	Now    func() time.Time

	static fs.FS
	etags  map[string]string
	mux    *http.ServeMux
}

// pages are the console's page paths; each serves the one page shell,
// whose script renders the page the path names.
var pages = []string{"/inbox", "/activity", "/reviews", "/reviews/{id}", "/sessions/{id}", "/approvals/{id}", "/questions/{id}", "/audit", "/policy", "/admin", "/passkeys"}

// Handler builds the console's routes. Call it once.
func (c *Console) Handler() http.Handler {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	c.static, _ = fs.Sub(webFS, "web")
	c.etags = map[string]string{}
	fs.WalkDir(c.static, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(c.static, p)
			sum := sha256.Sum256(b)
			c.etags[p] = `"` + hex.EncodeToString(sum[:8]) + `"`
		}
		return nil
	})
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/inbox", http.StatusSeeOther) })
	for _, p := range pages {
		m.HandleFunc("GET "+p, c.page)
	}
	m.HandleFunc("GET /sign-in", func(w http.ResponseWriter, r *http.Request) { c.file(w, r, "sign-in.html") })
	m.HandleFunc("POST /sign-in", c.signIn)
	m.HandleFunc("POST /sign-out", c.signOut)
	m.HandleFunc("GET /me", c.me)
	m.HandleFunc("GET /assets/", func(w http.ResponseWriter, r *http.Request) { c.file(w, r, strings.TrimPrefix(r.URL.Path, "/")) })
	// The web app manifest makes the console installable; the service
	// worker (at the root, so that its scope is the whole console) shows
	// Web Push notifications. Neither needs a session: they hold no data.
	m.HandleFunc("GET /manifest.webmanifest", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/manifest+json")
		c.file(w, r, "manifest.webmanifest")
	})
	m.HandleFunc("GET /sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		c.file(w, r, "sw.js")
	})
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "404: no such page in the rein console; start at /inbox (the API is under /v1/)", http.StatusNotFound)
	})
	c.mux = m
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		m.ServeHTTP(w, r)
	})
}

// file serves an embedded file, revalidated by its content hash.
func (c *Console) file(w http.ResponseWriter, r *http.Request, name string) {
	etag, ok := c.etags[name]
	if !ok {
		http.Error(w, "404: no such file", http.StatusNotFound)
		return
	}
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFileFS(w, r, c.static, name)
}

// page serves the page shell to a signed-in user, and sends anyone else to
// the sign-in page, coming back here afterwards.
func (c *Console) page(w http.ResponseWriter, r *http.Request) {
	if _, _, err := c.session(w, r); err != nil {
		http.Redirect(w, r, "/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	c.file(w, r, "index.html")
}

// Authenticate reads the session cookie of an API request. It returns
// ok=false when there is none. The key it returns acts with its roles minus
// agent. A state-changing request must carry the session's CSRF token in
// the X-Rein-CSRF header: without it (or with a wrong one) the answer is a
// forbidden error, and nothing is done.
func (c *Console) Authenticate(w http.ResponseWriter, r *http.Request) (key *rein.Key, ok bool, err error) {
	if _, err := r.Cookie(CookieName); err != nil {
		return nil, false, nil
	}
	key, t, err := c.session(w, r)
	if err != nil {
		return nil, true, rein.Errorf(rein.ECodeUnauthenticated, "%v (at /sign-in), or send `Authorization: Bearer <key>`", err)
	}
	if !safeMethod(r.Method) && !c.Sealer.CheckCSRF(key, t, r.Header.Get(CSRFHeader)) {
		return nil, true, rein.Errorf(rein.ECodeForbidden,
			"missing or wrong CSRF token: a request that changes something and is authenticated by the console's session cookie must send the session's token (GET /me, field csrf) in the %s header", CSRFHeader)
	}
	return consoleKey(key), true, nil
}

// consoleKey is the key a session acts as: its roles without agent.
func consoleKey(k *rein.Key) *rein.Key {
	cp := *k
	cp.Roles = slices.DeleteFunc(slices.Clone(k.Roles), func(r rein.Role) bool { return r == rein.RoleAgent })
	return &cp
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// session verifies the session cookie and renews it when it is stale.
func (c *Console) session(w http.ResponseWriter, r *http.Request) (*rein.Key, *Token, error) {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil, nil, ErrSession
	}
	t, err := Parse(ck.Value)
	if err != nil {
		return nil, nil, err
	}
	key, err := c.Keys.KeyByID(r.Context(), t.KeyID)
	if errors.Is(err, rein.ErrNotFound) {
		return nil, nil, ErrSession
	}
	if err != nil {
		return nil, nil, rein.Errorf(rein.ECodeUnavailable, "cannot check the console session: the store is unavailable; retry later")
	}
	now := c.Now()
	if t, err = c.Sealer.Verify(key, ck.Value, now); err != nil {
		return nil, nil, err
	}
	if !key.Has(SignInRoles...) {
		return nil, nil, ErrSession
	}
	if c.SignOuts != nil {
		out, err := c.SignOuts.SignedOut(r.Context(), t.Nonce)
		if err != nil {
			return nil, nil, rein.Errorf(rein.ECodeUnavailable, "cannot check the console session: the store is unavailable; retry later")
		}
		if out {
			return nil, nil, ErrSession
		}
	}
	if c.Sealer.Stale(t, now) {
		t.Seen = now
		c.setCookie(w, r, c.Sealer.Seal(key, t), c.Sealer.maxAge())
	}
	return key, t, nil
}

func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge time.Duration) {
	ck := &http.Cookie{Name: CookieName, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: c.Secure || r.TLS != nil}
	if maxAge > 0 {
		ck.MaxAge = int(maxAge.Seconds())
	} else {
		ck.MaxAge = -1
	}
	http.SetCookie(w, ck)
}

// sameOrigin refuses cross-site form posts (login CSRF): browsers send
// Origin on POST, and Sec-Fetch-Site where they support it.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// signIn: POST /sign-in (form fields key and next). A good key of an
// approver, admin or auditor gets a session cookie and goes to next; anyone
// else goes back to the sign-in page with the reason.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.FormValue("next"))
	fail := func(code int, reason string) {
		c.Log.Info("console sign-in refused", "reason", reason, "remote", r.RemoteAddr)
		http.Redirect(w, r, "/sign-in?error="+reason+"&next="+url.QueryEscape(next), code)
	}
	if !sameOrigin(r) {
		http.Error(w, "403: sign-in must come from rein's own sign-in page", http.StatusForbidden)
		return
	}
	secret := strings.TrimSpace(r.PostFormValue("key"))
	if secret == "" {
		fail(http.StatusSeeOther, "missing")
		return
	}
	hash := rein.HashSecret(secret)
	key, err := c.Keys.KeyBySecretHash(r.Context(), hash)
	switch {
	case errors.Is(err, rein.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare([]byte(key.SecretHash), []byte(hash)) != 1):
		fail(http.StatusSeeOther, "unknown")
		return
	case err != nil:
		fail(http.StatusSeeOther, "unavailable")
		return
	case !key.Has(SignInRoles...):
		fail(http.StatusSeeOther, "role")
		return
	}
	t := c.Sealer.New(key, c.Now())
	c.setCookie(w, r, c.Sealer.Seal(key, t), c.Sealer.maxAge())
	c.Log.Info("console sign-in", "key", key.Name, "tenant", key.Tenant, "remote", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// StartSession signs key in to the console, as a good API key does at
// POST /sign-in: the same session cookie, roles and lifetime. Sign-in with
// an identity provider ends here.
func (c *Console) StartSession(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	if !key.Has(SignInRoles...) {
		return rein.Errorf(rein.ECodeForbidden, "key %s cannot sign in: the console is for approver, admin and auditor keys", key.Name)
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	c.setCookie(w, r, c.Sealer.Seal(key, c.Sealer.New(key, now)), c.Sealer.maxAge())
	return nil
}

// signOut: POST /sign-out (form field csrf, or the X-Rein-CSRF header)
// ends the session on the server and removes its cookie.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	key, t, err := c.session(w, r)
	if err == nil {
		presented := r.Header.Get(CSRFHeader)
		if presented == "" {
			presented = r.PostFormValue("csrf")
		}
		if !c.Sealer.CheckCSRF(key, t, presented) {
			http.Error(w, "403: missing or wrong CSRF token; sign out from the console's own button", http.StatusForbidden)
			return
		}
		// The session ends on the server too: a copy of the cookie (another
		// tab, a stolen one) is refused from now on.
		if c.SignOuts != nil {
			if err := c.SignOuts.SignOut(r.Context(), t.Nonce, c.Sealer.Expires(t)); err != nil {
				c.Log.Error("console sign-out could not be recorded", "key", key.Name, "err", err)
				http.Error(w, "503: the sign-out could not be recorded, so the session still works; retry", http.StatusServiceUnavailable)
				return
			}
		}
		c.Log.Info("console sign-out", "key", key.Name, "tenant", key.Tenant)
	}
	c.setCookie(w, r, "", 0)
	http.Redirect(w, r, "/sign-in?signed_out=1", http.StatusSeeOther)
}

// me: GET /me, who is signed in, with the session's CSRF token and when the
// session ends. 401 without a session.
func (c *Console) me(w http.ResponseWriter, r *http.Request) {
	key, t, err := c.session(w, r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": rein.ECodeUnauthenticated, "message": err.Error()}})
		return
	}
	k := consoleKey(key)
	json.NewEncoder(w).Encode(map[string]any{"name": k.Name, "tenant": k.Tenant, "roles": k.Roles, "groups": k.Groups,
		"key_id": k.ID, "csrf": c.Sealer.CSRF(key, t), "signed_in_at": t.Issued.UTC(), "expires_at": c.Sealer.Expires(t).UTC()})
}

// localPath is next when it is a path of this console, else "/inbox": no
// scheme or host, no control characters, spaces or backslashes (browsers
// drop tabs and newlines and read a backslash as a slash, which turns
// "/<TAB>/evil.example" or "/<BACKSLASH>evil.example" into another site),
// and nothing that starts a network-path reference.
func localPath(next string) string {
	const home = "/inbox"
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || len(next) > 2048 {
		return home
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f || c == '\\' || unicode.IsSpace(c) || unicode.Is(unicode.Cf, c) {
			return home
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return home
	}
	return next
}
