package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// delegations: a delegation is stored with its audit entries, listed newest
// first for its tenant (every tenant's for "*"), and revoked once: an
// unknown one is not found, a second revocation a conflict, and a revoked
// delegation stays listed with who revoked it.
func delegations(t *testing.T, s rein.Store) {
	mk := func(id, tenant string) *rein.Delegation {
		return &rein.Delegation{ID: id, Tenant: tenant, From: "alice", To: "bob", StartsAt: t0, Until: t0.Add(24 * time.Hour),
			Reason: "holiday", CreatedBy: "alice", CreatedAt: t0}
	}
	for _, d := range []*rein.Delegation{mk("dlg_1", "acme"), mk("dlg_2", "acme"), mk("dlg_3", "other")} {
		if err := s.CreateDelegation(ctx, d, []*rein.Entry{entry(rein.KindDelegationCreated, d.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Delegations(ctx, "acme")
	if err != nil || len(list) != 2 || list[0].ID != "dlg_2" || list[1].ID != "dlg_1" || list[0].To != "bob" || !list[0].Until.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("acme's delegations: %+v %v", list, err)
	}
	if all, err := s.Delegations(ctx, rein.AllTenants); err != nil || len(all) != 3 {
		t.Fatalf("every tenant's delegations: %+v %v", all, err)
	}

	at := t0.Add(time.Hour)
	d, err := s.RevokeDelegation(ctx, "dlg_1", "carol", at, entry(rein.KindDelegationRevoked, "dlg_1"))
	if err != nil || d.RevokedBy != "carol" || d.RevokedAt == nil || !d.RevokedAt.Equal(at) || d.Active(at) {
		t.Fatalf("revoke: %+v %v", d, err)
	}
	if _, err := s.RevokeDelegation(ctx, "dlg_1", "carol", at, entry(rein.KindDelegationRevoked, "dlg_1")); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("second revocation: %v, want a conflict", err)
	}
	if _, err := s.RevokeDelegation(ctx, "dlg_none", "carol", at, entry(rein.KindDelegationRevoked, "dlg_none")); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("unknown delegation: %v, want ErrNotFound", err)
	}
	list, _ = s.Delegations(ctx, "acme")
	if len(list) != 2 || list[1].ID != "dlg_1" || list[1].RevokedBy != "carol" || list[0].RevokedAt != nil {
		t.Errorf("after revocation: %+v", list)
	}
	if n := subjects(t, s, rein.KindDelegationRevoked)["dlg_1"]; n != 1 {
		t.Errorf("delegation.revoked entries for dlg_1: %d, want 1", n)
	}
	if n := subjects(t, s, rein.KindDelegationCreated); len(n) != 3 {
		t.Errorf("delegation.created entries: %v", n)
	}
}
