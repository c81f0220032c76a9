package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// passkeys: a person's passkeys are stored with their audit entry, listed
// oldest first and only for that person, updated on use, removed once;
// a credential id registers once.
func passkeys(t *testing.T, st rein.Store) {
	s, ok := st.(rein.PasskeyStore)
	if !ok {
		t.Fatal("the store does not keep passkeys (rein.PasskeyStore)")
	}
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	added := func(id string) *rein.Entry {
		return &rein.Entry{TS: t0, Tenant: "acme", Kind: rein.KindPasskeyAdded, Actor: "carol", Subject: id, Data: map[string]any{}}
	}
	mk := func(id, tenant, name string, at time.Time) *rein.Passkey {
		return &rein.Passkey{ID: id, Tenant: tenant, Name: name, Label: "laptop", Credential: json.RawMessage(`{"n":1}`), CreatedAt: at}
	}
	for _, p := range []*rein.Passkey{mk("pk2", "acme", "carol", t0.Add(time.Minute)), mk("pk1", "acme", "carol", t0), mk("pk3", "acme", "bob", t0), mk("pk4", "other", "carol", t0)} {
		if err := s.AddPasskey(ctx, p, added(p.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddPasskey(ctx, mk("pk1", "acme", "mallory", t0), added("pk1")); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("the same credential id again: %v, want a conflict", err)
	}
	list, err := s.PasskeysOf(ctx, "acme", "carol")
	if err != nil || len(list) != 2 || list[0].ID != "pk1" || list[1].ID != "pk2" || list[0].Label != "laptop" || list[0].LastUsedAt != nil {
		t.Fatalf("carol's passkeys: %+v %v", list, err)
	}
	used := t0.Add(time.Hour)
	if err := s.UsePasskey(ctx, "pk1", json.RawMessage(`{"n":2}`), used); err != nil {
		t.Fatal(err)
	}
	list, _ = s.PasskeysOf(ctx, "acme", "carol")
	if string(list[0].Credential) != `{"n":2}` || list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(used) {
		t.Errorf("after use: %s %v", list[0].Credential, list[0].LastUsedAt)
	}
	if err := s.UsePasskey(ctx, "nope", nil, used); err != rein.ErrNotFound {
		t.Errorf("use of an unknown passkey: %v", err)
	}
	removed := &rein.Entry{TS: t0, Tenant: "acme", Kind: rein.KindPasskeyRemoved, Actor: "carol", Subject: "pk2", Data: map[string]any{}}
	if err := s.RemovePasskey(ctx, "pk2", removed); err != nil {
		t.Fatal(err)
	}
	if err := s.RemovePasskey(ctx, "pk2", removed); err != rein.ErrNotFound {
		t.Errorf("removing twice: %v", err)
	}
	if list, _ := s.PasskeysOf(ctx, "acme", "carol"); len(list) != 1 || list[0].ID != "pk1" {
		t.Errorf("after removal: %+v", list)
	}
	entries, err := st.Entries(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range entries {
		kinds[e.Kind]++
	}
	if kinds[rein.KindPasskeyAdded] != 4 || kinds[rein.KindPasskeyRemoved] != 1 {
		t.Errorf("audit entries: %v, want 4 added and 1 removed (refused and repeated changes write none)", kinds)
	}
}
