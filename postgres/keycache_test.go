package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/testenv"
)

// keyNotifyBound is the documented bound (docs/scale.md) on how long a key
// revoked on another replica keeps authenticating here: the delivery of
// the change notification, with room for a loaded machine.
const keyNotifyBound = 500 * time.Millisecond

// A key remembered by one replica stops authenticating there once another
// replica revokes it; a key remembered while the listener is down is never
// served from memory.
func TestKeyRevokedOnAnotherReplicaStops(t *testing.T) {
	url := testenv.Postgres(t)
	ctx := context.Background()
	a, err := Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id := rein.NewID("key")
	k := &rein.Key{ID: id, Name: "bot", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}, Groups: []string{},
		SecretHash: rein.HashSecret("secret-" + id), CreatedAt: time.Now().UTC()}
	if err := a.CreateKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for { // remembered by a once its listener is up
		if _, err := a.KeyBySecretHash(ctx, k.SecretHash); err != nil {
			t.Fatal(err)
		}
		if c, _ := a.keys.get(k.SecretHash); c != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key is never remembered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := b.RevokeKey(ctx, k.ID, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := a.KeyBySecretHash(ctx, k.SecretHash)
		if errors.Is(err, rein.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > keyNotifyBound {
			t.Fatalf("the key revoked on the other replica still authenticates after %v", time.Since(start))
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("stopped authenticating %v after the other replica's revoke began", time.Since(start))

	// Without a listener nothing is remembered.
	a.keys.listen(false)
	k2 := &rein.Key{ID: rein.NewID("key"), Name: "bot2", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}, Groups: []string{},
		SecretHash: rein.HashSecret("secret-2-" + id), CreatedAt: time.Now().UTC()}
	if err := a.CreateKey(ctx, k2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.KeyBySecretHash(ctx, k2.SecretHash); err != nil {
		t.Fatal(err)
	}
	if c, _ := a.keys.get(k2.SecretHash); c != nil {
		t.Errorf("a key was remembered while no notification could arrive")
	}
}
