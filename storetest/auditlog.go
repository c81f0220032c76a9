package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
)

func auditIndexesContiguous(t *testing.T, s rein.Store) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				if err := s.Append(ctx, entry(rein.KindServerStarted, fmt.Sprintf("%d-%d", i, j))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if es := entries(t, s); len(es) != 200 {
		t.Fatalf("%d entries, want 200", len(es))
	}
	n, _, err := s.AuditSize(ctx)
	if err != nil || n != 200 {
		t.Fatalf("audit size %d %v, want 200", n, err)
	}
}

func entriesCarryIndex(t *testing.T, s rein.Store) {
	a := &rein.Entry{TS: t0, Tenant: "acme", Kind: rein.KindServerStarted, Actor: "t", Subject: "a", Data: map[string]any{"n": 1}}
	b := &rein.Entry{TS: t0, Tenant: "*", Kind: rein.KindKeyCreated, Actor: "t", Subject: "b", Data: map[string]any{}}
	if err := s.Append(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	es := entries(t, s)
	if len(es) != 2 || es[0].Tenant != "acme" || es[1].Tenant != "*" || es[1].Kind != rein.KindKeyCreated {
		t.Fatalf("entries %+v", es)
	}
	for i, e := range []*rein.Entry{a, b} {
		want, _ := e.Encode(int64(i))
		if string(es[i].Bytes) != string(want) {
			t.Errorf("entry %d stored as\n%s\nwant the canonical bytes\n%s", i, es[i].Bytes, want)
		}
	}
	page, err := s.Entries(ctx, 1, 10)
	if err != nil || len(page) != 1 || page[0].Index != 1 {
		t.Fatalf("entries from 1: %+v %v", page, err)
	}
}

func treeAndCheckpoints(t *testing.T, s rein.Store) {
	s.Append(ctx, entry(rein.KindServerStarted, "a"), entry(rein.KindServerStarted, "b"))
	if n, h, err := s.AuditSize(ctx); err != nil || n != 2 || h != 0 {
		t.Fatalf("size %d hashed %d %v", n, h, err)
	}
	if _, err := s.LatestCheckpoint(ctx); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("no checkpoint yet: %v", err)
	}
	h := func(b byte) tlog.Hash { var x tlog.Hash; x[0] = b; return x }
	u := &rein.TreeUpdate{From: 0, Hashes: [][]tlog.Hash{{h(1)}, {h(2), h(3)}}}
	if err := s.SaveTree(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTree(ctx, &rein.TreeUpdate{From: 1, Hashes: [][]tlog.Hash{{h(9)}}}); err == nil {
		t.Error("a tree record was overwritten")
	}
	got, err := s.ReadHashes(ctx, []int64{0, 1, 2})
	if err != nil || got[0] != h(1) || got[1] != h(2) || got[2] != h(3) {
		t.Fatalf("hashes %v %v", got, err)
	}
	if _, err := s.ReadHashes(ctx, []int64{3}); err == nil {
		t.Error("a hash beyond the tree was read")
	}
	for _, size := range []int64{1, 2} {
		c := &rein.SignedCheckpoint{Size: size, Note: []byte(fmt.Sprint("note ", size)), SignedAt: t0.Add(time.Duration(size) * time.Second)}
		if err := s.SaveTree(ctx, &rein.TreeUpdate{From: 2, Checkpoint: c}); err != nil {
			t.Fatal(err)
		}
	}
	if _, h, _ := s.AuditSize(ctx); h != 2 {
		t.Errorf("hashed %d, want 2", h)
	}
	latest, err := s.LatestCheckpoint(ctx)
	if err != nil || latest.Size != 2 || string(latest.Note) != "note 2" || !latest.SignedAt.Equal(t0.Add(2*time.Second)) {
		t.Errorf("latest: %+v %v", latest, err)
	}
	list, err := s.Checkpoints(ctx, 0, 1)
	if err != nil || len(list) != 1 || list[0].Size != 1 {
		t.Errorf("checkpoints up to 1: %+v %v", list, err)
	}
}

func auditKeys(t *testing.T, s rein.Store) {
	for _, k := range []*rein.AuditKey{{Verifier: "k1", From: t0}, {Verifier: "k1", From: t0.Add(time.Hour)}, {Verifier: "k2", From: t0.Add(2 * time.Hour)}} {
		if err := s.AddAuditKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.AuditKeys(ctx)
	if err != nil || len(list) != 2 || list[0].Verifier != "k1" || !list[0].From.Equal(t0) || list[0].To == nil ||
		!list[0].To.Equal(t0.Add(2*time.Hour)) || list[1].To != nil {
		t.Errorf("keys: %+v %v", list, err)
	}
}
