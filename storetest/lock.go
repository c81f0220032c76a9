package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func locks(t *testing.T, s rein.Store) {
	exp := t0.Add(time.Hour)
	l := &rein.Lock{ID: "lck_1", Tenant: "acme", Target: rein.LockTarget{Agent: "builder", Tool: "shell.*"}, Reason: "incident", CreatedBy: "ops", CreatedAt: t0, ExpiresAt: &exp}
	if err := s.CreateLock(ctx, l, []*rein.Entry{entry(rein.KindLockCreated, l.ID)}); err != nil {
		t.Fatal(err)
	}
	all := &rein.Lock{ID: "lck_2", Tenant: "*", Reason: "everything", CreatedBy: "ops", CreatedAt: t0.Add(time.Second)}
	if err := s.CreateLock(ctx, all, []*rein.Entry{entry(rein.KindLockCreated, all.ID)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lock(ctx, "lck_1")
	if err != nil || got.Target.Tool != "shell.*" || !got.ExpiresAt.Equal(exp) {
		t.Fatalf("lock: %+v %v", got, err)
	}
	list, err := s.Locks(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "lck_1" {
		t.Fatalf("locks: %v %v", list, err)
	}
	removed, err := s.RemoveLock(ctx, "lck_1", "pat", t0.Add(time.Minute), entry(rein.KindLockRemoved, "lck_1"))
	if err != nil || removed.RemovedBy != "pat" || !removed.RemovedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("remove: %+v %v", removed, err)
	}
	if _, err := s.RemoveLock(ctx, "lck_1", "pat", t0, entry(rein.KindLockRemoved, "lck_1")); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("second remove: %v", err)
	}
	if list, _ := s.Locks(ctx); len(list) != 1 || list[0].ID != "lck_2" {
		t.Errorf("locks after removal: %v", list)
	}
	if got, _ := s.Lock(ctx, "lck_1"); got == nil || got.RemovedAt == nil {
		t.Errorf("a removed lock is kept for the record: %+v", got)
	}
	if n := subjects(t, s, rein.KindLockRemoved)["lck_1"]; n != 1 {
		t.Errorf("lock.removed entries: %d", n)
	}
}
