package webpush

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/sqlite"
)

// TestNotifierRevise: after an edit, every eligible person who has not
// voted on the new revision is pushed again, alerting (frank approved the
// request, which no longer counts; gina made the edit): the message says who
// edited and which argument changed, without its values, and its link names
// the approval and the new revision.
func TestNotifierRevise(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, k := range []*rein.Key{
		{ID: "key_agent", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}},
		{ID: "key_fiona", Name: "fiona", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_frank", Name: "frank", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_gina", Name: "gina", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
	} {
		k.CreatedAt = time.Now()
		_, k.SecretHash = rein.NewSecret()
		if err := store.CreateKey(ctx, k, &rein.Entry{TS: time.Now(), Tenant: k.Tenant, Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID}); err != nil {
			t.Fatal(err)
		}
	}
	ps := newPushService(t)
	for _, name := range []string{"fiona", "frank", "gina"} {
		ps.subscribe(t, store, "acme", name, name+"-phone")
	}
	n := &Notifier{Store: store, BaseURL: "https://rein.example",
		Sender: &Sender{VAPID: &VAPID{Key: mustKey(t), Subject: "https://rein.example"}, Services: []string{ps.srv.URL + "/push/"}}}
	a := &rein.Approval{ID: "apr_1", Tenant: "acme", Status: rein.StatusPending, Agent: "builder", AgentKeyID: "key_agent",
		Tool: "pay", Args: json.RawMessage(`{"amount":50,"payee":"ACME-PAYEE"}`), Rule: "pays",
		Approvers: []string{"group:finance"}, Quorum: 2, ExpiresAt: time.Now().Add(time.Hour), Revision: 2,
		ApprovedArgs: json.RawMessage(`{"amount":50,"payee":"MALLORY-PAYEE"}`)}
	a.Changes = rein.ArgChanges(a.Args, a.ApprovedArgs)
	a.Votes = []rein.Vote{{By: "frank", ByKey: "key_frank", Vote: "approve", Revision: 1}, {By: "gina", ByKey: "key_gina", Vote: "edit", Revision: 2}}
	if err := n.Revise(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	got := ps.take()
	if want := []string{"fiona-phone", "frank-phone"}; !slices.Equal(names(got), want) {
		t.Fatalf("pushed to %v, want %v", names(got), want)
	}
	p := got["frank-phone"][0]
	if !p.Renotify || p.Revision != 2 || p.URL != "https://rein.example/approvals/apr_1?revision=2" || !strings.HasPrefix(p.Title, "Edited: ") ||
		!strings.Contains(p.Body, "Edited by gina (revision 2), changed: payee") {
		t.Fatalf("payload %+v", p)
	}
	if raw, _ := json.Marshal(got); strings.Contains(string(raw), "PAYEE") {
		t.Fatalf("argument values went into a push message (lock screens show them): %s", raw)
	}
	// Decided approvals are not pushed again.
	a.Status = rein.StatusApproved
	if err := n.Revise(ctx, a, nil); err != nil || len(ps.take()) != 0 {
		t.Fatalf("a decided approval was pushed again: %v", err)
	}
}
