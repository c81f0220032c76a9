package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/passkey"
	"github.com/reinhq/rein/signin"
)

// checkSignIn validates the oidc section; its client secret may come from
// REIN_OIDC_CLIENT_SECRET instead of the file.
func checkSignIn(cfg *Config) error {
	if cfg.OIDC == nil {
		return nil
	}
	if v := os.Getenv("REIN_OIDC_CLIENT_SECRET"); v != "" {
		cfg.OIDC.ClientSecret = v
	}
	return cfg.OIDC.Check()
}

// withSignIn puts the identity provider's sign-in paths (/sign-in/oidc...)
// in front of the console when an oidc section is configured.
func withSignIn(web http.Handler, cfg Config, store signin.Store, sessions *console.Console, base string, secret []byte, log *slog.Logger) http.Handler {
	if cfg.OIDC == nil {
		return web
	}
	s := &signin.SignIn{Config: *cfg.OIDC, BaseURL: base, Secret: secret, Store: store, Sessions: sessions,
		Secure: strings.HasPrefix(base, "https://"), Log: log}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == signin.PathStart || strings.HasPrefix(r.URL.Path, signin.PathStart+"/") {
			s.ServeHTTP(w, r)
			return
		}
		web.ServeHTTP(w, r)
	})
}

// newPasskeys is the passkey service for step-up. Its ceremonies are
// sealed with a secret derived from the console secret, which replicas
// share: a confirmation begun on one replica is verified on any.
func newPasskeys(keys rein.PasskeyStore, base string, consoleSecret []byte) *passkey.Service {
	m := hmac.New(sha256.New, consoleSecret)
	m.Write([]byte("rein passkeys v1"))
	return &passkey.Service{Store: keys, Secret: m.Sum(nil), BaseURL: func() string { return base }}
}
