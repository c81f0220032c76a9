package serve

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/signin"
)

func TestCheckSignIn(t *testing.T) {
	t.Setenv("REIN_OIDC_CLIENT_SECRET", "from-env")
	cfg := Config{OIDC: &signin.Config{Issuer: "https://sso.example.com", ClientID: "rein", ClientSecret: "from-file"}}
	if err := checkSignIn(&cfg); err != nil || cfg.OIDC.ClientSecret != "from-env" || cfg.OIDC.Label == "" {
		t.Fatalf("%+v %v", cfg.OIDC, err)
	}
	bad := Config{OIDC: &signin.Config{Issuer: "http://sso.example.com", ClientID: "rein"}}
	if err := checkSignIn(&bad); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("plain-http issuer: %v", err)
	}
	if err := checkSignIn(&Config{}); err != nil {
		t.Errorf("no oidc section: %v", err)
	}
}
