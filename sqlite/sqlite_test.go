package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/storetest"
)

// TestConformance runs the store conformance suite (package storetest).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) rein.Store { return open(t) })
}

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

// A session's checks are read from one index: session.repeats counted
// from the index alone by a direct seek, and a page of a session's checks
// found in the index before any record is read. A session index that needs
// the table costs a read per check of the session; a second session index
// costs a page written per check (migration 0016).
func TestSessionReadsUseOneIndex(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	plan := func(q string, args ...any) string {
		rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	if p := plan(`SELECT COUNT(*) FROM checks WHERE tenant = ? AND session = ? AND action_hash = ?`, "t", "s", "h"); !strings.Contains(p, "COVERING INDEX checks_session (tenant=? AND session=? AND action_hash=?)") {
		t.Errorf("session.repeats: %s", p)
	}
	q, args := sessionChecksQuery("t", "s", 10, "chk_")
	if p := plan(q, args...); !strings.Contains(p, "COVERING INDEX checks_session (tenant=? AND session=?)") {
		t.Errorf("a session's checks: %s", p)
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'checks' AND sql LIKE '%session%'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("indexes of checks by session: %d (%v), want 1", n, err)
	}
}

func TestEscalationsFromBeforeTheColumn(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := migrations.ReadFile("migrations/0017_due_escalations.sql")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) error {
		return db.tx(context.Background(), func(tx *wtx) error { _, err := tx.ExecContext(context.Background(), q); return err })
	}
	storetest.EscalationsFromBeforeTheColumn(t, db, exec, storetest.MigrationStatement(t, m, "UPDATE approvals"))
}

// TestWALStartsAgainUnderContinuousWrites: the writer never checkpoints
// after its commits; the checkpointer copies the WAL on its own connection
// and the writer copies the tail between batches, so that under writes
// that never pause the WAL still starts again from its beginning (and its
// file stops growing), and nothing written is lost.
// TestAnsweredOnlyAfterTheWALsFsync: the writer commits without syncing and
// runs the next batch's statements while the syncer fsyncs the WAL; no
// caller is answered before the fsync that covers its commit.
func TestAnsweredOnlyAfterTheWALsFsync(t *testing.T) {
	var hold sync.Mutex
	var syncs atomic.Int64
	defer func(f func(string) error) { syncWALFile = f }(syncWALFile)
	syncWALFile = func(path string) error {
		hold.Lock()
		defer hold.Unlock()
		syncs.Add(1)
		return syncFile(path)
	}
	db := open(t)
	ctx := context.Background()
	before, _, err := db.AuditSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hold.Lock() // the next fsync waits
	held := true
	defer func() {
		if held { // a failure while held: let the store close
			hold.Unlock()
		}
	}()
	answered := make(chan error, 2)
	go func() { answered <- db.Append(ctx, entry(rein.KindServerStarted)) }()
	// Committed (readers see it) but not answered: its fsync is held.
	waitFor(t, func() bool { n, _, _ := db.AuditSize(ctx); return n == before+1 })
	// The writer is not held by the fsync: it runs the next write's
	// statements meanwhile, and commits them once the fsync is done.
	ran := make(chan struct{})
	go func() {
		answered <- db.tx(ctx, func(tx *wtx) error {
			close(ran)
			_, err := appendEntries(ctx, tx, []*rein.Entry{entry(rein.KindServerStarted)})
			return err
		})
	}()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not run the next write while the last one's fsync was held")
	}
	select {
	case err := <-answered:
		t.Fatalf("a write was answered (%v) before the WAL's fsync", err)
	case <-time.After(100 * time.Millisecond):
	}
	n := syncs.Load()
	held = false
	hold.Unlock()
	for range 2 {
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
	}
	// One fsync each: the second commits only after the first's.
	if got := syncs.Load(); got < n+2 {
		t.Errorf("answered after %d fsyncs of the WAL, %d before the writes; want one each", got, n)
	}
	if size, _, err := db.AuditSize(ctx); err != nil || size != before+2 {
		t.Errorf("%d entries (%v), want %d", size, err, before+2)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

func TestWALStartsAgainUnderContinuousWrites(t *testing.T) {
	defer func(d time.Duration) { checkpointEvery = d }(checkpointEvery)
	checkpointEvery = 50 * time.Millisecond
	db := open(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var written atomic.Int64
	stop := time.Now().Add(1500 * time.Millisecond)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if err := db.Append(ctx, entry(rein.KindServerStarted)); err != nil {
					t.Error(err)
					return
				}
				written.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := db.restarts.Load(); n < 2 {
		t.Errorf("the WAL started again %d times in 1.5 s of continuous writes with a checkpoint every 50 ms; want at least 2", n)
	}
	if size, hashed, err := db.AuditSize(ctx); err != nil || size != written.Load() {
		t.Errorf("%d entries (%d hashed, %v) after %d appends", size, hashed, err, written.Load())
	}
}

// TestSealAcrossChunks: the sealer hashes and stores the tree in chunks;
// a checkpoint over several chunks, and one sealed later from the middle
// of a chunk, have the root of the whole log computed from its entries
// alone.
func TestSealAcrossChunks(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	skey, vkey, err := note.GenerateKey(rand.Reader, "rein/test")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	sealer := &audit.Sealer{Store: db, Origin: "rein/test", Signer: signer, Known: note.VerifierList(verifier), Now: time.Now}
	add := func(n int) {
		for range n {
			if err := db.Append(ctx, entry(rein.KindServerStarted)); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func() {
		t.Helper()
		c, err := sealer.Seal(ctx)
		if err != nil {
			t.Fatal(err)
		}
		es, err := db.Entries(ctx, 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		tree := &audit.Tree{}
		for _, e := range es {
			if err := tree.AppendLeaf(tlog.RecordHash(e.Bytes)); err != nil {
				t.Fatal(err)
			}
		}
		root, err := tree.Root(tree.Size())
		if err != nil {
			t.Fatal(err)
		}
		if c.Size != int64(len(es)) || c.Root != root {
			t.Fatalf("checkpoint at %d with root %x; the log has %d entries with root %x", c.Size, c.Root, len(es), root)
		}
	}
	add(3*512 + 7)
	check()
	add(700)
	check()
}
