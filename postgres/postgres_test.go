package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/limit"
	"github.com/reinhq/rein/storetest"
)

func open(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), testenv.Postgres(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// queryOne runs a query for one value.
func queryOne[T any](t *testing.T, db *DB, q string, args ...any) T {
	t.Helper()
	var v T
	if err := db.pool.QueryRow(context.Background(), q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// TestConformance runs the store conformance suite (package storetest).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) rein.Store { return open(t) })
}

func TestAuditTablesAreAppendOnly(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	if err := db.Append(ctx, &rein.Entry{Kind: rein.KindServerStarted, Tenant: "*"}, &rein.Entry{Kind: rein.KindServerStarted, Tenant: "*"}); err != nil {
		t.Fatal(err)
	}
	// Entries placed by the integrator stay in the outbox with their
	// index beside them; the integrating replica's batches (and entries
	// placed before the outbox was kept) are in audit_entries: rows of
	// both kinds.
	if _, err := db.pool.Exec(ctx, "INSERT INTO audit_entries (idx, tenant, kind, body, outbox_seq) VALUES (1000, '*', 'x', '\\x7b7d', -1), (1001, '*', 'x', '\\x7b7d', -2)"); err != nil {
		t.Fatal(err)
	}
	var h tlog.Hash
	if err := db.SaveTree(ctx, &rein.TreeUpdate{From: 0, Hashes: [][]tlog.Hash{{h}}, Checkpoint: &rein.SignedCheckpoint{Size: 1, Note: []byte("n")}}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE audit_entries SET body = '\\x00' WHERE idx = 1000",
		"DELETE FROM audit_entries WHERE idx = 1001",
		"TRUNCATE audit_entries",
		"DELETE FROM audit_checkpoints",
		"UPDATE audit_tree SET hashes = '\\x00'",
		"UPDATE audit_outbox SET tail = '\\x00'",
		"DELETE FROM audit_outbox",
		"TRUNCATE audit_outbox",
		"UPDATE audit_index SET idx = idx + 100",
		"DELETE FROM audit_index",
	} {
		_, err := db.pool.Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err %v, want the append-only trigger to refuse it", stmt, err)
		}
	}
	if es, err := db.Entries(ctx, 0, 10); err != nil || len(es) != 4 {
		t.Fatalf("entries %v %v", es, err)
	}
}

// TestReplicasShareOneSequence: two stores on one schema (two replicas)
// write at once; one integrates, both are answered with contiguous
// indexes; when the integrator stops, the other takes over within seconds;
// an integrator whose term has passed cannot write.
func TestReplicasShareOneSequence(t *testing.T) {
	url := testenv.Postgres(t)
	ctx := context.Background()
	openAt := func() *DB {
		db, err := Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := openAt(), openAt()
	appendFrom := func(db *DB, n int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := db.Append(ctx, &rein.Entry{Kind: rein.KindServerStarted, Tenant: "*", Subject: fmt.Sprint(i)}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); appendFrom(a, 50) }()
	go func() { defer wg.Done(); appendFrom(b, 50) }()
	wg.Wait()
	leader, other := a, b
	if !a.Leading() {
		leader, other = b, a
	}
	if !leader.Leading() || other.Leading() {
		t.Fatalf("leading: a %v, b %v; want exactly one integrator", a.Leading(), b.Leading())
	}
	var term int64
	if err := other.pool.QueryRow(ctx, "SELECT term FROM audit_head").Scan(&term); err != nil {
		t.Fatal(err)
	}
	leader.Close()
	start := time.Now()
	appendFrom(other, 10)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("takeover took %v", took)
	}
	if !other.Leading() {
		t.Error("the remaining store did not take over")
	}
	es, err := other.Entries(ctx, 0, 1000)
	if err != nil || len(es) != 110 {
		t.Fatalf("%d entries, %v; want 110", len(es), err)
	}
	for i, e := range es {
		if e.Index != int64(i) {
			t.Fatalf("position %d holds index %d", i, e.Index)
		}
	}
	// The old term is fenced off.
	conn, err := pgx.ConnectConfig(ctx, other.conn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := other.pool.Exec(ctx, "INSERT INTO audit_outbox (tenant, kind, head, tail) VALUES ('*', 'x', '\\x7b', '\\x7d')"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.integrate(ctx, conn, term); !errors.Is(err, errDeposed) {
		t.Errorf("integrating with the old term %d: %v, want errDeposed", term, err)
	}
}

// TestSharedLimitsAreExact: replicas reserving from one bucket at once
// never get more tokens than its rate; refunds give tokens back.
func TestSharedLimitsAreExact(t *testing.T) {
	url := testenv.Postgres(t)
	ctx := context.Background()
	var dbs []*DB
	for range 3 {
		db, err := Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	now := time.Now()
	mail := limit.Rate{Key: "mail", Rate: 10, Per: time.Minute}
	other := limit.Rate{Key: "other", Rate: 100, Per: time.Minute}
	var wg sync.WaitGroup
	var got atomic.Int32
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, v, err := dbs[i%3].ReserveTokens(ctx, []limit.Rate{other, mail}, now)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				got.Add(1)
			} else if !v[1].Exceeded || v[0].Exceeded || v[1].RetryAfter <= 0 {
				t.Errorf("verdicts %+v: want mail exceeded with a retry time, other not", v)
			}
		}()
	}
	wg.Wait()
	if got.Load() != 10 {
		t.Fatalf("%d reservations of a bucket of 10 succeeded across replicas", got.Load())
	}
	// The refused reservations did not charge the other bucket: 90 left.
	var tokens float64
	dbs[0].pool.QueryRow(ctx, "SELECT tokens FROM limit_buckets WHERE key = $1", bucketKey(other)).Scan(&tokens)
	if tokens != 90 {
		t.Errorf("other bucket holds %v tokens, want 90", tokens)
	}
	if err := dbs[1].RefundTokens(ctx, []limit.Rate{mail}); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := dbs[2].ReserveTokens(ctx, []limit.Rate{mail}, now); !ok {
		t.Error("a refunded token was not given back")
	}
	if ok, _, _ := dbs[2].ReserveTokens(ctx, []limit.Rate{mail}, now); ok {
		t.Error("a token appeared from nowhere")
	}
	if ok, _, _ := dbs[0].ReserveTokens(ctx, []limit.Rate{mail}, now.Add(6*time.Second)); !ok {
		t.Error("no token after a tenth of the period")
	}
}

// TestEmptyBucketAnsweredWithoutLock: a check whose bucket is empty (as
// this replica saw it) is answered from a plain read, even while another
// check holds the bucket's row locked; one whose bucket has tokens still
// takes the lock and waits.
func TestEmptyBucketAnsweredWithoutLock(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	now := time.Now()
	empty := limit.Rate{Key: "empty", Rate: 1, Per: time.Hour}
	full := limit.Rate{Key: "full", Rate: 100, Per: time.Hour}
	if ok, _, err := db.ReserveTokens(ctx, []limit.Rate{empty, full}, now); !ok || err != nil {
		t.Fatalf("first reservation: %v %v", ok, err)
	}
	// The read is made only for buckets this replica saw empty, until
	// they refill: a check whose buckets have tokens goes straight to the
	// locked reservation.
	if !db.empty.seen([]string{bucketKey(empty)}, now) || db.empty.seen([]string{bucketKey(empty)}, now.Add(2*time.Hour)) {
		t.Error("the bucket this reservation emptied is not remembered as empty until it refills")
	}
	if db.empty.seen([]string{bucketKey(full)}, now) {
		t.Error("a bucket with tokens is remembered as empty")
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM limit_buckets FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ok, v, err := db.ReserveTokens(short, []limit.Rate{full, empty}, now)
	if err != nil || ok || !v[1].Exceeded || v[0].Exceeded || v[1].RetryAfter <= 0 {
		t.Fatalf("empty bucket while locked: ok %v, verdicts %+v, err %v; want exceeded at once", ok, v, err)
	}
	shorter, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if ok, _, err := db.ReserveTokens(shorter, []limit.Rate{full}, now); ok || err == nil {
		t.Fatalf("a bucket with tokens, locked by another check: ok %v, err %v; want it to wait for the lock", ok, err)
	}
	tx.Rollback(ctx)
	if tokens := queryOne[float64](t, db, "SELECT tokens FROM limit_buckets WHERE key = $1", bucketKey(full)); tokens != 99 {
		t.Errorf("full bucket holds %v tokens; want 99: neither refused reservation took one", tokens)
	}
}

func TestEscalationsFromBeforeTheColumn(t *testing.T) {
	db := open(t)
	m, err := migrations.ReadFile("migrations/0011_due_escalations.sql")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) error { _, err := db.pool.Exec(context.Background(), q); return err }
	storetest.EscalationsFromBeforeTheColumn(t, db, exec, storetest.MigrationStatement(t, m, "UPDATE approvals"))
}

// TestFailingIntegratorPauses: an integrator whose moves fail (here a
// trigger refuses every entry, as a full disk would) competes for the log
// again only after a pause, instead of taking a new term in a tight loop;
// once the cause is gone, the waiting entry is placed.
func TestFailingIntegratorPauses(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if _, err := db.pool.Exec(ctx, `CREATE FUNCTION refuse_entries() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'no space left (test)'; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, "CREATE TRIGGER refuse BEFORE INSERT ON audit_index FOR EACH ROW EXECUTE FUNCTION refuse_entries()"); err != nil {
		t.Fatal(err)
	}
	term := func() int64 { return queryOne[int64](t, db, "SELECT term FROM audit_head WHERE one = 1") }
	size := func() int64 { return queryOne[int64](t, db, "SELECT size FROM audit_head WHERE one = 1") }
	before := size()
	if _, err := db.pool.Exec(ctx, "INSERT INTO audit_outbox (tenant, kind, head, tail) VALUES ('*', 'x', '\\x7b', '\\x7d')"); err != nil {
		t.Fatal(err)
	}
	start := term()
	time.Sleep(2500 * time.Millisecond)
	if n := term() - start; n > 5 {
		t.Errorf("%d terms taken in 2.5 s by an integrator that fails every move; want a pause between them", n)
	}
	if _, err := db.pool.Exec(ctx, "DROP TRIGGER refuse ON audit_index"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for size() == before {
		if time.Now().After(deadline) {
			t.Fatal("the entry is not placed once the cause is gone")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
