// Package signin signs people in to rein's console with their company's
// identity provider (OpenID Connect, authorization code flow with PKCE).
// The provider says who the person is; this package maps that to a rein
// key, and the console's own session cookie carries it from there: every
// vote is cast by a key, through the same pipeline as any other.
package signin

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

// Config is the oidc section of rein's configuration.
type Config struct {
	// Issuer is the provider's issuer URL, exactly as its discovery
	// document (<issuer>/.well-known/openid-configuration) and its ID
	// tokens name it.
	Issuer string `yaml:"issuer"`
	// ClientID and ClientSecret are rein's client at the provider; the
	// secret may come from REIN_OIDC_CLIENT_SECRET instead. The redirect
	// URI to register is <base_url>/sign-in/oidc/callback.
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// Scopes asked for; default openid, email, profile. Add the scope that
	// makes the provider send groups (Dex: groups).
	Scopes []string `yaml:"scopes"`
	// Label names the provider on the sign-in button ("Sign in with
	// <label>"); default "your company account".
	Label string `yaml:"label"`
	// Identity is the claim that names the person in rein: email (default;
	// only when the provider says the address is verified) or sub.
	Identity string `yaml:"identity"`
	// Users maps an identity (an e-mail address, or a subject) to a key
	// that exists already, as Slack and e-mail do: the person signs in as
	// that key, with its roles and groups.
	Users map[string]notify.Identity `yaml:"users"`
	// Tenant is where people admitted by Groups or Everyone get their key.
	Tenant string `yaml:"tenant"`
	// GroupsClaim is the ID token claim listing the person's groups at the
	// provider; default groups.
	GroupsClaim string `yaml:"groups_claim"`
	// Groups maps a group at the provider to rein roles and approver
	// groups. A person in mapped groups gets a key of their own named by
	// their identity, with the union of the mapped roles and groups, kept
	// in step with the provider at every sign-in.
	Groups map[string]Access `yaml:"groups"`
	// Everyone is what anyone else the provider signs in gets. Left out
	// (the default), a person neither in Users nor in a mapped group is
	// refused.
	Everyone *Access `yaml:"everyone"`
}

// Access is what a group at the provider gives in rein.
type Access struct {
	Roles  []rein.Role `yaml:"roles"`
	Groups []string    `yaml:"groups"`
}

// Identity claims.
const (
	ClaimEmail   = "email"
	ClaimSubject = "sub"
)

// Check validates the section and fills in defaults.
func (c *Config) Check() error {
	u, err := url.Parse(c.Issuer)
	if c.Issuer == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("oidc: issuer %q: give the provider's issuer URL, e.g. https://dex.example.com", c.Issuer)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("oidc: issuer %q: use https (plain http only for a provider on this machine)", c.Issuer)
	}
	if c.ClientID == "" {
		return errors.New("oidc: client_id is required: register rein as a client at the provider")
	}
	if len(c.Scopes) == 0 {
		c.Scopes = []string{"openid", "email", "profile"}
	}
	if !slices.Contains(c.Scopes, "openid") {
		c.Scopes = append([]string{"openid"}, c.Scopes...)
	}
	if c.Label == "" {
		c.Label = "your company account"
	}
	switch c.Identity {
	case "":
		c.Identity = ClaimEmail
	case ClaimEmail, ClaimSubject:
	default:
		return fmt.Errorf("oidc: identity %q: use email or sub", c.Identity)
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	for who, id := range c.Users {
		if who == "" || !rein.ValidTenant(id.Tenant) || id.Key == "" {
			return fmt.Errorf("oidc: users: %q: give tenant and key of an existing key", who)
		}
	}
	if (len(c.Groups) > 0 || c.Everyone != nil) && !rein.ValidTenant(c.Tenant) {
		return fmt.Errorf("oidc: tenant %q: people admitted by groups or everyone need a tenant for their keys", c.Tenant)
	}
	for g, a := range c.Groups {
		if err := a.check(); err != nil {
			return fmt.Errorf("oidc: groups: %q: %w", g, err)
		}
	}
	if c.Everyone != nil {
		if err := c.Everyone.check(); err != nil {
			return fmt.Errorf("oidc: everyone: %w", err)
		}
	}
	return nil
}

func (a Access) check() error {
	if len(a.Roles) == 0 && len(a.Groups) == 0 {
		return errors.New("give roles, groups or both")
	}
	for _, r := range a.Roles {
		if r != rein.RoleApprover && r != rein.RoleAdmin && r != rein.RoleAuditor {
			return fmt.Errorf("role %q: people sign in as approver, admin or auditor", r)
		}
	}
	k := &rein.Key{Name: "x", Tenant: "x", Roles: []rein.Role{rein.RoleApprover}, Groups: a.Groups}
	return rein.ValidateKey(k)
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || strings.HasPrefix(host, "127.")
}
