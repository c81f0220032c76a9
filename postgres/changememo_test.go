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

// twoReplicas opens two stores on one database, as two replicas would.
func twoReplicas(t *testing.T) (*DB, *DB) {
	t.Helper()
	url := testenv.Postgres(t)
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

// A key remembered by one replica stops authenticating there once another
// replica revokes it; a key remembered while the listener is down is never
// served from memory.
func TestKeyRevokedOnAnotherReplicaStops(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
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
		if c, _, _ := a.keys.get(k.SecretHash); c != nil {
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
	if c, _, _ := a.keys.get(k2.SecretHash); c != nil {
		t.Errorf("a key was remembered while no notification could arrive")
	}
}

// A session seen open by one replica is reported ended there once another
// replica ends it; while the listener is down nothing is remembered.
func TestSessionEndedOnAnotherReplicaReachesThisOne(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
	sess := rein.NewID("run")
	at := time.Now().UTC()
	rec := &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: rein.NewID("chk"), Decision: rein.Allow, ActionHash: "sha256:x",
		Args: []byte(`{}`), Risk: []string{}}, Tenant: "acme", CreatedAt: at, KeyID: "key_1", Facts: map[string]any{},
		Shadow: []rein.ShadowMatch{}, Check: rein.CheckInput{Tool: "fs.read", Agent: "bot", Session: sess, Args: []byte(`{}`)}}
	entry := &rein.Entry{TS: at, Tenant: "acme", Kind: rein.KindCheck, Actor: "bot", Subject: rec.ID, Data: map[string]any{}}
	if _, err := a.RecordCheck(ctx, rec, nil, nil, []*rein.Entry{entry}); err != nil {
		t.Fatal(err)
	}
	key := "acme\x00" + sess
	deadline := time.Now().Add(5 * time.Second)
	for { // remembered as open by a once its listener is up
		if s, err := a.SessionEnded(ctx, "acme", sess); err != nil || s != nil {
			t.Fatalf("open session reported %+v %v", s, err)
		}
		if _, open, _ := a.open.get(key); open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the open session is never remembered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	end := &rein.Entry{TS: at, Tenant: "acme", Kind: rein.KindSessionEnded, Actor: "admin", Subject: sess, Data: map[string]any{}}
	if _, err := b.EndSession(ctx, "acme", sess, "admin", time.Now(), end); err != nil {
		t.Fatal(err)
	}
	for {
		s, err := a.SessionEnded(ctx, "acme", sess)
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			if s.EndedBy != "admin" {
				t.Errorf("ended by %q, want admin", s.EndedBy)
			}
			break
		}
		if time.Since(start) > keyNotifyBound {
			t.Fatalf("the session ended on the other replica still looks open here after %v", time.Since(start))
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("seen ended %v after the other replica's end began", time.Since(start))

	// Without a listener nothing is remembered.
	a.open.listen(false)
	other := rein.NewID("run")
	if s, err := a.SessionEnded(ctx, "acme", other); err != nil || s != nil {
		t.Fatalf("unknown session: %+v %v", s, err)
	}
	if _, open, _ := a.open.get("acme\x00" + other); open {
		t.Errorf("a session was remembered while no notification could arrive")
	}
}
