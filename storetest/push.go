package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// pushSubscriptions: Web Push subscriptions are stored with their audit
// entry, listed oldest first (then by id) for a person or a tenant with
// every field as saved, replaced by a later one with the same endpoint (for
// any person), and removed once.
func pushSubscriptions(t *testing.T, st rein.Store) {
	s, ok := st.(rein.PushSubscriptionStore)
	if !ok {
		t.Fatal("the store does not keep push subscriptions (rein.PushSubscriptionStore)")
	}
	// Nanoseconds and a zone: the stores keep the instant exactly.
	at := time.Date(2026, 11, 25, 9, 0, 0, 123456789, time.FixedZone("CET", 3600))
	subscribed := func(p *rein.PushSubscription) *rein.Entry {
		return &rein.Entry{TS: at, Tenant: p.Tenant, Kind: rein.KindPushSubscribed, Actor: p.Name, Subject: p.ID, Data: map[string]any{}}
	}
	mk := func(id, tenant, name, endpoint string, created time.Time) *rein.PushSubscription {
		return &rein.PushSubscription{ID: id, Tenant: tenant, Name: name, Endpoint: "https://push.example/" + endpoint,
			P256DH: "BP256-" + id, Auth: "auth-" + id, Label: "laptop of " + name, CreatedAt: created}
	}
	ps1 := mk("ps1", "acme", "carol", "e1", at)
	ps2 := mk("ps2", "acme", "carol", "e2", at.Add(time.Minute))
	ps3 := mk("ps3", "acme", "dave", "e3", at) // as old as ps1: after it by id
	ps4 := mk("ps4", "other", "carol", "e4", at)
	for _, p := range []*rein.PushSubscription{ps2, ps1, ps3, ps4} {
		if err := s.SavePushSubscription(ctx, p, subscribed(p)); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, got []*rein.PushSubscription, err error, want ...*rein.PushSubscription) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %s, want %s", what, pushIDs(got), pushIDs(want))
			return
		}
		for i, w := range want {
			g := *got[i]
			if !g.CreatedAt.Equal(w.CreatedAt) {
				t.Errorf("%s[%d]: created at %v, want %v", what, i, g.CreatedAt, w.CreatedAt)
			}
			g.CreatedAt = w.CreatedAt
			if g != *w {
				t.Errorf("%s[%d]: %+v, want %+v", what, i, g, *w)
			}
		}
	}
	list, err := s.PushSubscriptionsOf(ctx, "acme", "carol")
	same("acme/carol", list, err, ps1, ps2)
	list, err = s.PushSubscriptionsOf(ctx, "acme", "dave")
	same("acme/dave", list, err, ps3)
	list, err = s.PushSubscriptionsOf(ctx, "other", "carol")
	same("other/carol", list, err, ps4)
	list, err = s.PushSubscriptionsOf(ctx, "acme", "nobody")
	same("acme/nobody", list, err)
	list, err = s.PushSubscriptionsIn(ctx, "acme")
	same("acme", list, err, ps1, ps3, ps2)
	list, err = s.PushSubscriptionsIn(ctx, "other")
	same("other", list, err, ps4)
	list, err = s.PushSubscriptionsIn(ctx, "other", "acme") // one list, oldest first
	same("other and acme", list, err, ps1, ps3, ps4, ps2)
	list, err = s.PushSubscriptionsIn(ctx)
	same("no tenant", list, err)

	// Refused: no id; an id stored already for another endpoint.
	if err := s.SavePushSubscription(ctx, mk("", "acme", "carol", "e9", at), subscribed(ps1)); err == nil {
		t.Error("a subscription without an id was saved")
	}
	if err := s.SavePushSubscription(ctx, mk("ps2", "acme", "mallory", "e9", at), subscribed(ps2)); err == nil {
		t.Error("a second subscription with id ps2 (another endpoint) was saved")
	}
	list, err = s.PushSubscriptionsIn(ctx, "acme")
	same("acme after refused saves", list, err, ps1, ps3, ps2)

	// The browser of ps1 subscribes again, for dave: carol's row is gone.
	ps5 := mk("ps5", "acme", "dave", "e1", at.Add(2*time.Minute))
	ps5.P256DH, ps5.Auth, ps5.Label = "BP256-new", "auth-new", "phone"
	if err := s.SavePushSubscription(ctx, ps5, subscribed(ps5)); err != nil {
		t.Fatal(err)
	}
	list, err = s.PushSubscriptionsOf(ctx, "acme", "carol")
	same("acme/carol after the endpoint moved", list, err, ps2)
	list, err = s.PushSubscriptionsOf(ctx, "acme", "dave")
	same("acme/dave after the endpoint moved", list, err, ps3, ps5)
	list, err = s.PushSubscriptionsIn(ctx, "acme")
	same("acme after the endpoint moved", list, err, ps3, ps2, ps5)
	if err := s.RemovePushSubscription(ctx, "ps1", nil); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("removing the replaced ps1: %v, want not found", err)
	}

	unsubscribed := &rein.Entry{TS: at, Tenant: "acme", Kind: rein.KindPushUnsubscribed, Actor: "dave", Subject: "ps3", Data: map[string]any{}}
	if err := s.RemovePushSubscription(ctx, "nope", unsubscribed); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("removing an unknown subscription: %v, want not found", err)
	}
	if err := s.RemovePushSubscription(ctx, "ps3", unsubscribed); err != nil {
		t.Fatal(err)
	}
	if err := s.RemovePushSubscription(ctx, "ps3", unsubscribed); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("removing twice: %v, want not found", err)
	}
	if err := s.RemovePushSubscription(ctx, "ps4", nil); err != nil { // no entry: none written
		t.Fatal(err)
	}
	list, err = s.PushSubscriptionsOf(ctx, "acme", "dave")
	same("acme/dave after removal", list, err, ps5)
	list, err = s.PushSubscriptionsIn(ctx, "other")
	same("other after removal", list, err)

	if got := subjects(t, st, rein.KindPushSubscribed); len(got) != 5 || got["ps1"] != 1 || got["ps2"] != 1 || got["ps3"] != 1 || got["ps4"] != 1 || got["ps5"] != 1 {
		t.Errorf("push.subscribed entries %v: want one for each of ps1..ps5, none for refused saves", got)
	}
	if got := subjects(t, st, rein.KindPushUnsubscribed); len(got) != 1 || got["ps3"] != 1 {
		t.Errorf("push.unsubscribed entries %v: want one for ps3 only", got)
	}
}

func pushIDs(list []*rein.PushSubscription) string {
	ids := make([]string, len(list))
	for i, p := range list {
		ids[i] = p.ID
	}
	return fmt.Sprintf("[%s]", strings.Join(ids, " "))
}
