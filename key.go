package rein

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"time"
)

// SecretPrefix starts every generated key secret, so leaked keys are easy to scan for.
const SecretPrefix = "rein_"

// NewSecret returns a fresh key secret (160 random bits) and its stored hash.
func NewSecret() (secret, hash string) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("rein: crypto/rand failed: " + err.Error())
	}
	secret = SecretPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	return secret, HashSecret(secret)
}

// HashSecret is how key secrets are stored: hex SHA-256. Secrets are random
// and long, so a fast hash is enough; nothing stored can authenticate.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// The names' patterns are compiled on first use, not when a program
// starts: a bounded repetition ({0,127}) compiles to one instruction per
// repeat, which every start of rein (rein run's inside too) would pay.
var (
	keyNameRE = lazyRE(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)
	tenantRE  = lazyRE(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	groupRE   = lazyRE(`^[A-Za-z0-9][A-Za-z0-9._@/-]{0,127}$`)
)

// lazyRE is the regular expression expr, compiled on the first call.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ValidateKey checks a new key's name, tenant, roles and groups.
func ValidateKey(k *Key) error {
	if !keyNameRE().MatchString(k.Name) {
		return Errorf(ECodeBadRequest, "key name %q: use 1-128 letters, digits, '.', '_', '@' or '-' (no '/': it separates sub-agents)", k.Name)
	}
	if k.Tenant != AllTenants && !tenantRE().MatchString(k.Tenant) {
		return Errorf(ECodeBadRequest, "tenant %q: use 1-64 lower-case letters, digits, '.', '_' or '-'", k.Tenant)
	}
	if len(k.Roles) == 0 {
		return Errorf(ECodeBadRequest, `"roles" is empty: give at least one of admin, approver, agent, auditor`)
	}
	seen := map[Role]bool{}
	for _, r := range k.Roles {
		ok := false
		for _, known := range AllRoles {
			ok = ok || r == known
		}
		if !ok {
			return Errorf(ECodeBadRequest, "role %q: use admin, approver, agent or auditor", r)
		}
		if seen[r] {
			return Errorf(ECodeBadRequest, "role %q is listed twice", r)
		}
		seen[r] = true
	}
	for _, g := range k.Groups {
		if !groupRE().MatchString(g) {
			return Errorf(ECodeBadRequest, "group %q: use 1-128 letters, digits, '.', '_', '@', '/' or '-'", g)
		}
	}
	return nil
}

// ValidTenant reports whether t is a usable tenant name ("*" excluded).
func ValidTenant(t string) bool { return tenantRE().MatchString(t) }

// Role is what a key may do (api.md, Roles).
type Role string

const (
	RoleAdmin    Role = "admin"
	RoleApprover Role = "approver"
	RoleAgent    Role = "agent"
	RoleAuditor  Role = "auditor"
)

// AllRoles lists the roles in the order they are documented.
var AllRoles = []Role{RoleAdmin, RoleApprover, RoleAgent, RoleAuditor}

// AllTenants is the tenant of keys that administer every tenant.
const AllTenants = "*"

// Key is an API key: the identity (Name) of an agent or a person in one tenant.
type Key struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Tenant     string     `json:"tenant"`
	Roles      []Role     `json:"roles"`
	Groups     []string   `json:"groups"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	SecretHash string     `json:"-"`
}

// Has reports whether the key holds any of the roles.
func (k *Key) Has(roles ...Role) bool {
	for _, have := range k.Roles {
		for _, want := range roles {
			if have == want {
				return true
			}
		}
	}
	return false
}

// Sees reports whether the key may see objects of tenant t.
func (k *Key) Sees(t string) bool { return k.Tenant == AllTenants || k.Tenant == t }

// KeyStore keeps API keys.
type KeyStore interface {
	CreateKey(ctx context.Context, k *Key, e *Entry) error
	KeyBySecretHash(ctx context.Context, hash string) (*Key, error)
	KeyByID(ctx context.Context, id string) (*Key, error)
	Keys(ctx context.Context, tenant string) ([]*Key, error)
	// RevokeKey revokes a key; it refuses (conflict) to revoke the last
	// active admin key of tenant "*", checked in the same transaction.
	RevokeKey(ctx context.Context, id string, at time.Time, e *Entry) error
}
