package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func newKey(tenant, name string, roles ...rein.Role) *rein.Key {
	_, hash := rein.NewSecret()
	return &rein.Key{ID: rein.NewID("key"), Name: name, Tenant: tenant, Roles: roles, Groups: []string{"g"}, CreatedAt: t0, SecretHash: hash}
}

func keys(t *testing.T, s rein.Store) {
	k := newKey("acme", "builder", rein.RoleAgent)
	if err := s.CreateKey(ctx, k, entry(rein.KindKeyCreated, k.ID)); err != nil {
		t.Fatal(err)
	}
	dup := newKey("acme", "builder", rein.RoleAgent)
	if err := s.CreateKey(ctx, dup, entry(rein.KindKeyCreated, dup.ID)); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("a second active key named builder: %v, want a conflict", err)
	}
	other := newKey("globex", "builder", rein.RoleAgent)
	if err := s.CreateKey(ctx, other, nil); err != nil {
		t.Errorf("the same name in another tenant: %v", err)
	}
	got, err := s.KeyBySecretHash(ctx, k.SecretHash)
	if err != nil || got.ID != k.ID || got.Name != "builder" || got.Groups[0] != "g" || got.Roles[0] != rein.RoleAgent || !got.CreatedAt.Equal(t0) {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if list, err := s.Keys(ctx, "acme"); err != nil || len(list) != 1 || list[0].ID != k.ID {
		t.Errorf("acme's keys: %v %v", list, err)
	}
	if list, err := s.Keys(ctx, rein.AllTenants); err != nil || len(list) != 2 {
		t.Errorf("every tenant's keys: %v %v", list, err)
	}
	if err := s.RevokeKey(ctx, k.ID, t0.Add(time.Hour), entry(rein.KindKeyRevoked, k.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyBySecretHash(ctx, k.SecretHash); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("a revoked key still authenticates: %v", err)
	}
	if got, err := s.KeyByID(ctx, k.ID); err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("by id after revoke: %+v %v", got, err)
	}
	if err := s.RevokeKey(ctx, k.ID, time.Now(), nil); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("second revoke: %v, want not found", err)
	}
	if _, err := s.KeyByID(ctx, "key_missing"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	// The name is free again once revoked.
	if err := s.CreateKey(ctx, dup, nil); err != nil {
		t.Errorf("name reuse after revoke: %v", err)
	}
	if got := subjects(t, s, rein.KindKeyCreated); got[k.ID] != 1 || got[dup.ID] != 0 {
		t.Errorf("key.created entries %v: want one for the first key, none for the refused one", got)
	}
	if got := subjects(t, s, rein.KindKeyRevoked); got[k.ID] != 1 {
		t.Errorf("key.revoked entries %v", got)
	}
}

// revokedKeyUnderReads: a key read again and again (a store may remember
// it) stops authenticating as soon as its revocation returns, also when
// reads raced the revocation.
func revokedKeyUnderReads(t *testing.T, s rein.Store) {
	for round := range 5 {
		k := newKey("acme", fmt.Sprint("reader-", round), rein.RoleAgent)
		if err := s.CreateKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						s.KeyBySecretHash(ctx, k.SecretHash)
					}
				}
			}()
		}
		time.Sleep(5 * time.Millisecond)
		if err := s.RevokeKey(ctx, k.ID, time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			if _, err := s.KeyBySecretHash(ctx, k.SecretHash); !errors.Is(err, rein.ErrNotFound) {
				t.Fatalf("round %d, read %d after the revocation returned: %v, want not found", round, i, err)
			}
		}
		close(stop)
		wg.Wait()
		if _, err := s.KeyBySecretHash(ctx, k.SecretHash); !errors.Is(err, rein.ErrNotFound) {
			t.Fatalf("round %d, after the racing reads ended: %v, want not found", round, err)
		}
	}
}

func lastAdminKey(t *testing.T, s rein.Store) {
	a, b := newKey("*", "admin-a", rein.RoleAdmin), newKey("*", "admin-b", rein.RoleAdmin)
	for _, k := range []*rein.Key{a, b} {
		if err := s.CreateKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Both revoked at once: exactly one may go.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, k := range []*rein.Key{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.RevokeKey(ctx, k.ID, t0, nil) }()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case rein.ErrorCode(err) != rein.ECodeConflict:
			t.Errorf("revoke: %v, want success or a conflict", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of the last two admin keys were revoked at once; want 1", ok)
	}
}
