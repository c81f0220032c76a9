package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func open(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func entry(kind string) *rein.Entry {
	return &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: kind, Actor: "t", Subject: "x", Data: map[string]any{}}
}

func TestAuditEntriesAreAppendOnly(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	if err := db.Append(ctx, entry(rein.KindServerStarted), entry(rein.KindServerStarted)); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE audit_entries SET body = x'00' WHERE idx = 0",
		"DELETE FROM audit_entries WHERE idx = 1",
		"DELETE FROM audit_entries",
	} {
		err := db.tx(ctx, func(tx *wtx) error { _, err := tx.ExecContext(ctx, stmt); return err })
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err %v, want the append-only trigger to refuse it", stmt, err)
		}
	}
	es, err := db.Entries(ctx, 0, 10)
	if err != nil || len(es) != 2 || es[0].Index != 0 || es[1].Index != 1 {
		t.Fatalf("entries %v %v", es, err)
	}
	var parsed map[string]any
	if err := json.Unmarshal(es[1].Bytes, &parsed); err != nil || parsed["index"] != 1.0 {
		t.Errorf("entry bytes must carry their index: %s", es[1].Bytes)
	}
}

func TestAuditIndexesAreContiguousUnderConcurrency(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 25; j++ {
				if err := db.Append(ctx, entry(rein.KindServerStarted)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	es, err := db.Entries(ctx, 0, 1000)
	if err != nil || len(es) != 200 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	for i, e := range es {
		if e.Index != int64(i) {
			t.Fatalf("gap: position %d holds index %d", i, e.Index)
		}
	}
}

func TestKeys(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	_, hash := rein.NewSecret()
	k := &rein.Key{ID: rein.NewID("key"), Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}, Groups: []string{"g"}, CreatedAt: time.Now(), SecretHash: hash}
	if err := db.CreateKey(ctx, k, entry(rein.KindKeyCreated)); err != nil {
		t.Fatal(err)
	}
	_, hash2 := rein.NewSecret()
	dup := *k
	dup.ID, dup.SecretHash = rein.NewID("key"), hash2
	if err := db.CreateKey(ctx, &dup, nil); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("duplicate name: %v", err)
	}
	other := dup
	other.Tenant = "globex"
	if err := db.CreateKey(ctx, &other, nil); err != nil {
		t.Errorf("same name in another tenant: %v", err)
	}
	got, err := db.KeyBySecretHash(ctx, hash)
	if err != nil || got.Name != "builder" || got.Groups[0] != "g" || got.Roles[0] != rein.RoleAgent {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if err := db.RevokeKey(ctx, k.ID, time.Now(), entry(rein.KindKeyRevoked)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.KeyBySecretHash(ctx, hash); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("revoked key still authenticates: %v", err)
	}
	if err := db.RevokeKey(ctx, k.ID, time.Now(), nil); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	// The name is free again once revoked.
	_, dup.SecretHash = rein.NewSecret()
	dup.ID = rein.NewID("key")
	if err := db.CreateKey(ctx, &dup, nil); err != nil {
		t.Errorf("name reuse after revoke: %v", err)
	}
	es, _ := db.Entries(ctx, 0, 10)
	if len(es) != 2 {
		t.Errorf("key changes must be audited in the same transaction: %d entries", len(es))
	}
}

func TestRecordCheckIdempotency(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	rec := func(id string) *rein.CheckRecord {
		return &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: rein.Allow, ActionHash: "sha256:x", Args: json.RawMessage(`{}`)},
			Tenant: "acme", CreatedAt: time.Now(), KeyID: "key_1", Check: rein.CheckInput{Tool: "t", RequestID: "r1", Args: json.RawMessage(`{}`)}}
	}
	first, err := db.RecordCheck(ctx, rec("chk_1"), nil, nil, []*rein.Entry{entry(rein.KindCheck)})
	if err != nil || first.AuditIndex != 0 {
		t.Fatalf("%+v %v", first, err)
	}
	again, err := db.RecordCheck(ctx, rec("chk_2"), nil, nil, []*rein.Entry{entry(rein.KindCheck)})
	if !errors.Is(err, rein.ErrDuplicateRequest) || again.ID != "chk_1" {
		t.Fatalf("duplicate request_id: %+v %v", again, err)
	}
	if es, _ := db.Entries(ctx, 0, 10); len(es) != 1 {
		t.Errorf("a replayed request must not write audit entries: %d", len(es))
	}
	got, err := db.CheckByRequestID(ctx, "key_1", "r1")
	if err != nil || got.ID != "chk_1" || got.KeyID != "key_1" {
		t.Errorf("by request id: %+v %v", got, err)
	}
	if _, err := db.CheckByID(ctx, "chk_2"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("chk_2 must not exist: %v", err)
	}
}

func TestMigrationsAreIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	for i := 0; i < 2; i++ {
		db, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		var mode string
		db.tx(context.Background(), func(tx *wtx) error {
			return tx.QueryRowContext(context.Background(), "PRAGMA journal_mode").Scan(&mode)
		})
		if mode != "wal" {
			t.Errorf("journal mode %q, want wal", mode)
		}
		db.Close()
	}
}

// TestGroupCommitIsolatesFailures: many writers at once share transactions;
// a job that fails after writing leaves nothing behind, the others are all
// durable, and the audit indexes stay contiguous.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 300
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := &rein.Key{ID: fmt.Sprintf("key_%d", i), Tenant: "acme", Roles: []rein.Role{rein.RoleAgent},
				SecretHash: fmt.Sprintf("h%d", i), CreatedAt: time.Now()}
			switch i % 3 {
			case 0: // writes the key, then fails encoding its entry
				k.Name = fmt.Sprintf("broken-%d", i)
				errs[i] = db.CreateKey(ctx, k, &rein.Entry{Kind: rein.KindKeyCreated, Data: make(chan int)})
			case 1:
				errs[i] = db.Append(ctx, &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindServerStarted, Subject: fmt.Sprint(i)})
			case 2: // all the same name: exactly one wins
				k.Name = "dup"
				errs[i] = db.CreateKey(ctx, k, &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindKeyCreated, Subject: k.ID})
			}
		}()
	}
	wg.Wait()
	dupWins := 0
	for i, err := range errs {
		switch i % 3 {
		case 0:
			if err == nil {
				t.Fatalf("job %d: a failing job reported success", i)
			}
			if _, err := db.KeyByID(ctx, fmt.Sprintf("key_%d", i)); !errors.Is(err, rein.ErrNotFound) {
				t.Errorf("job %d failed but its key row stayed: %v", i, err)
			}
		case 1:
			if err != nil {
				t.Errorf("append %d: %v", i, err)
			}
		case 2:
			if err == nil {
				dupWins++
			}
		}
	}
	if dupWins != 1 {
		t.Errorf("%d keys named dup were created; want 1", dupWins)
	}
	entries, err := db.Entries(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if want := n/3 + 1; len(entries) != want {
		t.Fatalf("%d entries; want %d", len(entries), want)
	}
	for i, e := range entries {
		if e.Index != int64(i) {
			t.Fatalf("entry %d has index %d: not contiguous", i, e.Index)
		}
		var m map[string]any
		if err := json.Unmarshal(e.Bytes, &m); err != nil || m["index"] != float64(i) {
			t.Fatalf("entry %d bytes say index %v (%v)", i, m["index"], err)
		}
	}
}
