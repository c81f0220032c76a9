package signin

import (
	"errors"
	"slices"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

// Claims are what a verified ID token says about the person signing in.
type Claims struct {
	Subject       string
	Email         string
	EmailVerified bool
	Groups        []string
}

// Person is who signs in, as rein knows them: either an existing key
// (Existing, from the users map) or a key that sign-in keeps for them
// (Name and Tenant, with the roles and groups their provider groups give).
type Person struct {
	Existing *notify.Identity
	Name     string
	Tenant   string
	Roles    []rein.Role
	Groups   []string
}

// Why a person is refused; each is shown on the sign-in page by its code.
var (
	ErrUnverified = errors.New("the provider does not say that the e-mail address is verified")
	ErrNoIdentity = errors.New("the ID token does not carry the claim that names the person")
	ErrBadName    = errors.New("the person's identity cannot be a rein key name (letters, digits, '.', '_', '@', '-')")
	ErrUnknown    = errors.New("the person is neither mapped to a key nor in a group that gives access to rein")
)

// Resolve maps a verified ID token's claims to a person, or refuses. It is
// pure: the configuration and the claims in, the person out. A person
// refused with ErrUnknown still comes with their name and tenant.
func (c *Config) Resolve(cl Claims) (Person, error) {
	var who string
	switch c.Identity {
	case ClaimSubject:
		who = cl.Subject
	default:
		if cl.Email == "" {
			return Person{}, ErrNoIdentity
		}
		if !cl.EmailVerified {
			return Person{}, ErrUnverified
		}
		who = strings.ToLower(cl.Email)
	}
	if who == "" {
		return Person{}, ErrNoIdentity
	}
	for k, id := range c.Users {
		if k == who || c.Identity != ClaimSubject && strings.EqualFold(k, who) {
			return Person{Existing: &id}, nil
		}
	}
	var roles []rein.Role
	var groups []string
	matched := false
	for _, g := range cl.Groups {
		a, ok := c.Groups[g]
		if !ok {
			continue
		}
		matched = true
		roles = append(roles, a.Roles...)
		groups = append(groups, a.Groups...)
	}
	if !matched {
		if c.Everyone == nil {
			// The name, so that a key kept for the person before can be
			// revoked: their access at the provider is gone.
			return Person{Name: who, Tenant: c.Tenant}, ErrUnknown
		}
		roles, groups = c.Everyone.Roles, c.Everyone.Groups
	}
	p := Person{Name: who, Tenant: c.Tenant, Roles: ordered(roles), Groups: sorted(groups)}
	if len(p.Roles) == 0 {
		// Groups alone make an approver: being in an approver group is
		// what the mapping says.
		p.Roles = []rein.Role{rein.RoleApprover}
	}
	if rein.ValidateKey(&rein.Key{Name: p.Name, Tenant: p.Tenant, Roles: p.Roles, Groups: p.Groups}) != nil {
		return Person{}, ErrBadName
	}
	return p, nil
}

// ordered returns the distinct roles in rein's documented order.
func ordered(rs []rein.Role) []rein.Role {
	var out []rein.Role
	for _, r := range rein.AllRoles {
		if slices.Contains(rs, r) {
			out = append(out, r)
		}
	}
	return out
}

func sorted(gs []string) []string {
	out := slices.Clone(gs)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}
