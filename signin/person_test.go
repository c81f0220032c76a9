package signin

import (
	"errors"
	"reflect"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

func TestResolve(t *testing.T) {
	base := func() Config {
		return Config{Issuer: "https://idp.example.com", ClientID: "rein", Tenant: "acme",
			Users: map[string]notify.Identity{"Olga@Example.com": {Tenant: "acme", Key: "olga"}, "sub-7": {Tenant: "acme", Key: "seven"}},
			Groups: map[string]Access{
				"finance-approvers": {Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
				"sre":               {Groups: []string{"oncall"}},
				"rein-admins":       {Roles: []rein.Role{rein.RoleAdmin, rein.RoleApprover}},
			}}
	}
	everyone := func(c *Config) { c.Everyone = &Access{Roles: []rein.Role{rein.RoleAuditor}} }
	bySub := func(c *Config) { c.Identity = ClaimSubject }
	cases := []struct {
		name   string
		mutate func(*Config)
		claims Claims
		want   Person
		err    error
	}{
		{"mapped user, address in another case", nil, Claims{Subject: "s1", Email: "olga@example.COM", EmailVerified: true},
			Person{Existing: &notify.Identity{Tenant: "acme", Key: "olga"}}, nil},
		{"one group", nil, Claims{Email: "Carol@example.com", EmailVerified: true, Groups: []string{"finance-approvers", "staff"}},
			Person{Name: "carol@example.com", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}}, nil},
		{"groups merge, roles in order", nil, Claims{Email: "a@example.com", EmailVerified: true, Groups: []string{"sre", "finance-approvers", "rein-admins"}},
			Person{Name: "a@example.com", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin, rein.RoleApprover}, Groups: []string{"finance", "oncall"}}, nil},
		{"a group with groups only makes an approver", nil, Claims{Email: "b@example.com", EmailVerified: true, Groups: []string{"sre"}},
			Person{Name: "b@example.com", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}}, nil},
		{"no mapped group", nil, Claims{Email: "c@example.com", EmailVerified: true, Groups: []string{"staff"}},
			Person{Name: "c@example.com", Tenant: "acme"}, ErrUnknown},
		{"no mapped group, everyone", everyone, Claims{Email: "c@example.com", EmailVerified: true},
			Person{Name: "c@example.com", Tenant: "acme", Roles: []rein.Role{rein.RoleAuditor}, Groups: []string{}}, nil},
		{"unverified address", nil, Claims{Email: "olga@example.com", Groups: []string{"rein-admins"}}, Person{}, ErrUnverified},
		{"no address", nil, Claims{Subject: "s1", Groups: []string{"rein-admins"}}, Person{}, ErrNoIdentity},
		{"address that is no key name", nil, Claims{Email: "d+x@example.com", EmailVerified: true, Groups: []string{"sre"}}, Person{}, ErrBadName},
		{"by subject: mapped", bySub, Claims{Subject: "sub-7", Email: "x@example.com"}, Person{Existing: &notify.Identity{Tenant: "acme", Key: "seven"}}, nil},
		{"by subject: case matters", bySub, Claims{Subject: "SUB-7"}, Person{Name: "SUB-7", Tenant: "acme"}, ErrUnknown},
		{"by subject: the address is not the identity", bySub, Claims{Subject: "s9", Email: "olga@example.com", EmailVerified: true},
			Person{Name: "s9", Tenant: "acme"}, ErrUnknown},
		{"by subject: none", bySub, Claims{Email: "x@example.com"}, Person{}, ErrNoIdentity},
	}
	for _, c := range cases {
		cfg := base()
		if c.mutate != nil {
			c.mutate(&cfg)
		}
		if err := cfg.Check(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := cfg.Resolve(c.claims)
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	ok := Config{Issuer: "https://idp.example.com", ClientID: "rein"}
	for _, c := range []struct {
		name   string
		mutate func(*Config)
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }},
		{"plain http to another host", func(c *Config) { c.Issuer = "http://idp.example.com" }},
		{"no client", func(c *Config) { c.ClientID = "" }},
		{"unknown identity claim", func(c *Config) { c.Identity = "preferred_username" }},
		{"groups without tenant", func(c *Config) { c.Groups = map[string]Access{"g": {Roles: []rein.Role{rein.RoleApprover}}} }},
		{"agent role", func(c *Config) {
			c.Tenant = "acme"
			c.Groups = map[string]Access{"g": {Roles: []rein.Role{rein.RoleAgent}}}
		}},
		{"empty access", func(c *Config) { c.Tenant = "acme"; c.Everyone = &Access{} }},
		{"user without key", func(c *Config) { c.Users = map[string]notify.Identity{"a@example.com": {Tenant: "acme"}} }},
	} {
		cfg := ok
		c.mutate(&cfg)
		if err := cfg.Check(); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	cfg := Config{Issuer: "http://127.0.0.1:5556/dex", ClientID: "rein", Scopes: []string{"email"}}
	if err := cfg.Check(); err != nil || cfg.Scopes[0] != "openid" || cfg.Identity != ClaimEmail || cfg.GroupsClaim != "groups" {
		t.Errorf("defaults: %+v %v", cfg, err)
	}
}
