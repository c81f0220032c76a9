package signin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

// managedPrefix starts the stored secret hash of a key that sign-in keeps
// for a person. Hashes of real secrets are hex, so such a key can never
// authenticate an API request, and only sign-in can make one: a key an
// admin created under the same name is never taken over.
const managedPrefix = "oidc:"

// Managed reports whether sign-in keeps k for a person.
func Managed(k *rein.Key) bool { return strings.HasPrefix(k.SecretHash, managedPrefix) }

// Store is what sign-in needs of rein's store.
type Store interface {
	Keys(ctx context.Context, tenant string) ([]*rein.Key, error)
	CreateKey(ctx context.Context, k *rein.Key, e *rein.Entry) error
	RevokeKey(ctx context.Context, id string, at time.Time, e *rein.Entry) error
}

// ErrTaken refuses a person whose name is held by a key that sign-in does
// not keep.
var ErrTaken = errors.New("a key of that name exists that sign-in does not keep; map the person to it under oidc users, or revoke it")

// keyFor returns the key p signs in as: the existing key the users map
// names, or the key sign-in keeps for p, created on first sign-in and
// re-issued when p's roles or groups at the provider changed. A person
// keeps their identity across re-issues (votes count by key name), and the
// old key's sessions end.
func keyFor(ctx context.Context, store Store, p Person, actor string, now time.Time) (*rein.Key, error) {
	if p.Existing != nil {
		return notify.KeyOf(ctx, store, *p.Existing)
	}
	keys, err := store.Keys(ctx, p.Tenant)
	if err != nil {
		return nil, fmt.Errorf("find key %s/%s: %w", p.Tenant, p.Name, err)
	}
	var current *rein.Key
	var stale []*rein.Key
	for _, k := range keys {
		if k.Name != p.Name || k.Tenant != p.Tenant || k.RevokedAt != nil {
			continue
		}
		if !Managed(k) {
			return nil, ErrTaken
		}
		if current == nil && slices.Equal(k.Roles, p.Roles) && slices.Equal(sorted(k.Groups), p.Groups) {
			current = k
		} else {
			stale = append(stale, k)
		}
	}
	if err := revoke(ctx, store, stale, actor, "roles or groups at the identity provider changed", now); err != nil {
		return nil, err
	}
	if current != nil {
		return current, nil
	}
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	k := &rein.Key{ID: rein.NewID("key"), Name: p.Name, Tenant: p.Tenant, Roles: p.Roles, Groups: p.Groups,
		CreatedAt: now.UTC(), SecretHash: managedPrefix + hex.EncodeToString(b[:])}
	if err := rein.ValidateKey(k); err != nil {
		return nil, err
	}
	e := &rein.Entry{TS: k.CreatedAt, Tenant: k.Tenant, Kind: rein.KindKeyCreated, Actor: actor, Subject: k.ID,
		Data: map[string]any{"name": k.Name, "roles": k.Roles, "groups": k.Groups, "by": "oidc sign-in"}}
	if err := store.CreateKey(ctx, k, e); err != nil {
		return nil, fmt.Errorf("create key %s/%s: %w", p.Tenant, p.Name, err)
	}
	return k, nil
}

// revokeManaged revokes the keys sign-in keeps for name in tenant: the
// person no longer has access at the provider.
func revokeManaged(ctx context.Context, store Store, tenant, name, actor string, now time.Time) error {
	keys, err := store.Keys(ctx, tenant)
	if err != nil {
		return err
	}
	var mine []*rein.Key
	for _, k := range keys {
		if k.Name == name && k.Tenant == tenant && k.RevokedAt == nil && Managed(k) {
			mine = append(mine, k)
		}
	}
	return revoke(ctx, store, mine, actor, "no longer in a group that gives access to rein", now)
}

func revoke(ctx context.Context, store Store, keys []*rein.Key, actor, reason string, now time.Time) error {
	for _, k := range keys {
		e := &rein.Entry{TS: now.UTC(), Tenant: k.Tenant, Kind: rein.KindKeyRevoked, Actor: actor, Subject: k.ID,
			Data: map[string]any{"name": k.Name, "reason": reason}}
		if err := store.RevokeKey(ctx, k.ID, now.UTC(), e); err != nil && !errors.Is(err, rein.ErrNotFound) {
			return fmt.Errorf("revoke key %s: %w", k.ID, err)
		}
	}
	return nil
}
