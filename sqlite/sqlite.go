// Package sqlite implements rein.Store on an embedded SQLite database (the
// pure-Go modernc.org/sqlite driver, no cgo) in WAL mode. Writes go through
// one connection, so transactions are serialised; reads use a pool.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the SQLite store.
type DB struct {
	write *sql.DB
	read  *readPool // queries prepared once

	jobs    chan *job     // writes waiting for the writer
	batches atomic.Int64  // transactions the writer committed or tried
	written atomic.Int64  // jobs in them
	stop    chan struct{} // closed by Close: the writer finishes and exits
	stopped chan struct{} // closed when the writer has exited

	memo *memo // keys and sessions as committed (memo.go)

	ckpt        *sql.DB       // the checkpointer's connection
	ckptStopped chan struct{} // closed when the checkpointer has exited
	tail        chan struct{} // the checkpointer asks the writer to copy the WAL's tail
	restarts    atomic.Int64  // times the checkpointer saw the WAL start again from its beginning
	path        string        // the database file

	commits chan *commit       // committed batches waiting for the WAL's fsync
	synced  chan struct{}      // closed when the syncer has exited
	syncWAL func(string) error // fsyncs a file (a test holds it back)
	syncs   atomic.Int64       // fsyncs of the WAL by the syncer
	// commits handed to the syncer and not yet answered, and a signal
	// each time the syncer has answered some
	unsynced atomic.Int64
	syncDone chan struct{}
}

var _ rein.Store = (*DB)(nil)

// Open opens (creating if needed) the database file and applies migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	dsn := "file:" + filepath.ToSlash(path) +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	// The writer does not checkpoint the WAL after its commits (SQLite's
	// default): the checkpointer does, on a connection of its own (see
	// checkpointer). Nor does it fsync the WAL in its commits: the syncer
	// does, while the writer goes on with the next batch (see syncer), and
	// no caller is answered before that fsync.
	w, err := sql.Open("sqlite", strings.Replace(dsn, "synchronous(FULL)", "synchronous(OFF)", 1)+"&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	c, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	c.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)&_pragma=cache_size(-256)")
	if err != nil {
		w.Close()
		c.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8) // kept open: a new connection reads the schema and re-prepares statements
	db := &DB{write: w, read: newReadPool(r), ckpt: c, jobs: make(chan *job, maxBatch), stop: make(chan struct{}), stopped: make(chan struct{}),
		ckptStopped: make(chan struct{}), tail: make(chan struct{}, 1), memo: newMemo(), path: path,
		commits: make(chan *commit, syncDepth), synced: make(chan struct{}), syncWAL: syncWALFile,
		syncDone: make(chan struct{}, 1)}
	go db.syncer()
	go db.writer()
	go db.checkpointer(checkpointEvery)
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return db, nil
}

func (db *DB) migrate(ctx context.Context) error {
	var have int
	// Through the writer: it holds the only write connection.
	if err := db.tx(ctx, func(tx *wtx) error { return tx.conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have) }); err != nil {
		return err
	}
	pending, err := storesql.Pending(migrations, "migrations", have)
	if err != nil {
		return err
	}
	for _, m := range pending {
		err = db.tx(ctx, func(tx *wtx) error {
			if _, err := tx.conn.ExecContext(ctx, m.SQL); err != nil { // several statements: not cached
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			_, err := tx.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Close stops the writer (writes already queued are finished first) and
// closes both connection pools.
func (db *DB) Close() error {
	select {
	case <-db.stop:
	default:
		close(db.stop)
	}
	<-db.stopped
	<-db.synced
	<-db.ckptStopped
	return errors.Join(db.read.Close(), db.ckpt.Close(), db.write.Close())
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Group commit. Every write is a job for the one writer goroutine. The
// writer takes every job that is waiting and runs them in one transaction:
// one commit and one fsync for the batch. Each caller is answered only
// after the fsync, so nothing is acknowledged before it is durable; while
// one batch commits, the next one gathers.
//
// The fsync is not the writer's: it commits (writing the batch's frames to
// the WAL, synchronous=OFF) and hands the batch to the syncer, which fsyncs
// the WAL and then answers its callers, while the writer already runs the
// next batch. Under load the fsync of one batch overlaps the statements of
// the next instead of leaving the CPU idle while every check waits. One
// fsync covers every batch committed before it started, so batches that
// gather while the syncer is busy share the next one. A batch's frames
// follow every earlier batch's in the WAL, and SQLite's recovery keeps a
// commit only if every frame before it is valid, so no answered batch can
// be lost while an earlier one survives. Readers of the read pool may see
// a batch before its fsync; no write is answered before it.

// maxBatch bounds the jobs of one transaction.
const maxBatch = 1024

var errClosed = errors.New("the store is closed")

type job struct {
	ctx  context.Context
	fn   func(*wtx) error
	done chan error
}

// tx runs fn in the writer's next transaction and returns once that
// transaction is durable (or fn's error, with fn's writes undone).
func (db *DB) tx(ctx context.Context, fn func(*wtx) error) error {
	j := &job{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case db.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.stop:
		return errClosed
	}
	return <-j.done
}

// txValue runs fn as one job of a write transaction (tx) and returns
// what it made.
func txValue[T any](ctx context.Context, db *DB, fn func(*wtx) (T, error)) (T, error) {
	var out T
	err := db.tx(ctx, func(tx *wtx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

func (db *DB) writer() {
	defer close(db.stopped)
	defer close(db.commits) // after the queue's last commit has been handed over
	w := &writeConn{memo: db.memo, stmts: map[string]*sql.Stmt{}, next: -1, more: db.more}
	var err error
	if w.conn, err = db.write.Conn(context.Background()); err != nil {
		w.err = fmt.Errorf("open the write connection: %w", err)
	}
	defer w.close()
	poll := time.NewTicker(externalPoll)
	defer poll.Stop()
	for {
		var first *job
		select {
		case <-poll.C: // idle: has another process written?
			if w.conn != nil {
				w.external(context.Background())
			}
			continue
		case <-db.tail:
			w.tailPending = true
			w.checkpointTail()
			continue
		case first = <-db.jobs:
		case <-db.stop:
			for { // answer what is still queued, then exit
				select {
				case j := <-db.jobs:
					db.handOver(w.commit([]*job{j}))
				default:
					return
				}
			}
		}
		batch := []*job{first}
	gather:
		for len(batch) < maxBatch {
			select {
			case j := <-db.jobs:
				batch = append(batch, j)
			default:
				break gather
			}
		}
		db.batches.Add(1)
		c := w.commit(batch)
		db.written.Add(int64(len(c.jobs) + len(c.failed)))
		db.handOver(c)
		select { // between two batches: the moment to copy the WAL's tail
		case <-db.tail:
			w.tailPending = true
		default:
		}
		if w.tailPending {
			w.checkpointTail()
		}
	}
}

// Checkpoints. SQLite's default is that the connection that commits copies
// the WAL into the database file once it has grown past a threshold; that
// copy stalled the single writer, and every check waiting for it, for tens
// of milliseconds once a second under load, which set the 99th percentile
// of latency. So the writer never checkpoints by itself (autocheckpoint
// off). Every checkpointEvery, the checkpointer copies the WAL on its own
// connection while the writer goes on committing (a PASSIVE checkpoint
// takes no lock that writers or readers wait for): first the bulk, then
// again what the writer appended during the last copy, until a copy finds
// little left, and then it makes the database file durable itself (SQLite
// syncs the file only after a copy that reached the WAL's end, which a
// reader still reading an older part of it prevents; the writer would
// otherwise sync a second's worth of copied pages). The few frames
// appended since are then copied by the writer itself, between two
// batches. After that the whole WAL is in the database, and the writer's
// next transaction starts the WAL again from its beginning, so the file
// does not grow without bound (a WAL is only restarted by a writer that
// begins while it is fully copied, which under continuous load never
// happens by itself). Each page is copied about once per checkpointEvery
// however often it changed, as with the earlier threshold of 10,000 pages
// (once more by each later pass, or by the writer's copy, when it changed
// again during a copy).
var checkpointEvery = time.Second

const (
	checkpointPasses = 4   // copies per checkpoint before the writer's own
	tailFrames       = 256 // a copy of fewer frames than this ends them
)

// checkpointer copies the WAL into the database every period, and then
// asks the writer to copy what it appended meanwhile.
func (db *DB) checkpointer(period time.Duration) {
	defer close(db.ckptStopped)
	t := time.NewTicker(period)
	defer t.Stop()
	seq, seqErr := db.walSequence()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		var busy, frames, copied int
		for pass := 0; pass < checkpointPasses; pass++ {
			before := copied
			if err := db.ckpt.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
				frames = 0
				break
			}
			if frames <= 0 || copied-before < tailFrames {
				break
			}
		}
		if n, err := db.walSequence(); err == nil {
			if seqErr == nil && n > seq {
				db.restarts.Add(int64(n - seq))
			}
			seq, seqErr = n, nil
		}
		if frames <= 0 {
			continue
		}
		if err := db.syncFile(); err != nil {
			continue // the writer's copy syncs it
		}
		select {
		case db.tail <- struct{}{}:
		default:
		}
	}
}

// walSequence reads the WAL's checkpoint sequence number (its header's
// bytes 12 - 15, big-endian; https://www.sqlite.org/fileformat2.html#walformat),
// which grows by one each time the WAL starts again from its beginning.
func (db *DB) walSequence() (uint32, error) {
	f, err := os.Open(db.path + "-wal")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.ReadAt(b[:], 12); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

// syncFile makes the database file durable (fsync).
func (db *DB) syncFile() error { return syncFile(db.path) }

// syncFile fsyncs the file at path.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// checkpointTail copies into the database the frames appended since the
// checkpointer's last copy, between two batches. Once a copy reaches the
// WAL's end, the writer's next transaction starts the WAL again, unless a
// reader still reads it (then the next checkpoint copies and tries again).
// A copy that could not reach the end (a reader still reads an older part
// of the WAL) is tried again after the next batch, and copies only that
// batch's pages; an error leaves the tail to the next checkpoint.
//
// The copy runs at synchronous=FULL: SQLite then fsyncs the WAL before
// copying from it and the database file before the WAL may start again
// from its beginning; the writer's own commits run without (the syncer
// fsyncs the WAL for them), and a checkpoint without them would let the
// WAL's restart overwrite frames whose pages are not yet on disk.
func (w *writeConn) checkpointTail() {
	ctx := context.Background()
	var busy, frames, copied int
	if w.conn == nil || w.durable(ctx, true) != nil {
		w.tailPending = false
		return
	}
	err := w.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	w.durable(ctx, false) // on an error it stays at FULL: slower commits, nothing lost
	if err != nil {
		w.tailPending = false
		return
	}
	w.tailPending = copied < frames
}

// durable sets the writer's synchronous mode: FULL for what must sync
// itself (a checkpoint, the close), OFF for commits the syncer makes
// durable.
func (w *writeConn) durable(ctx context.Context, full bool) error {
	mode := "OFF"
	if full {
		mode = "FULL"
	}
	_, err := w.conn.ExecContext(ctx, "PRAGMA synchronous = "+mode)
	return err
}

// BatchStats reports how many write transactions the writer has run and how
// many jobs they held: their ratio is the average group-commit batch.
func (db *DB) BatchStats() (batches, jobs int64) { return db.batches.Load(), db.written.Load() }

// writeConn is the writer's connection, held for its lifetime.
type writeConn struct {
	conn *sql.Conn
	err  error // the connection could not be opened

	memo    *memo
	version int64 // PRAGMA data_version last seen; 0 before the first read

	// Kept from one transaction to the next while no other process writes:
	stmts map[string]*sql.Stmt // statements prepared on conn, each once
	next  int64                // the index the next audit entry gets; -1: read it

	// Copying the WAL's tail (checkpointTail): asked for and not yet done.
	tailPending bool

	// more gives a job to add to the open transaction before it commits;
	// nil: commit now (DB.more).
	more func(n int) *job
}

// externalPoll is how often an idle writer asks whether another process has
// written the database (PRAGMA data_version); a busy writer asks at the start
// of every transaction. It bounds how long a key revoked by another process
// keeps authenticating here (docs/scale.md).
const externalPoll = 100 * time.Millisecond

// external reads PRAGMA data_version, which changes when another connection
// (another process: this one writes only through this connection) has
// committed, and forgets what is remembered when it did. It runs on the
// idle connection, and at the start of every transaction (which holds the
// write lock from then on).
func (w *writeConn) external(ctx context.Context) {
	var v int64
	if err := w.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		w.forget() // cannot tell: assume it changed
		w.version = 0
		return
	}
	if v != w.version {
		w.forget()
		w.version = v
	}
}

// forget drops what the writer knows of the database beyond its own
// writes: the memo and the audit log's next index.
func (w *writeConn) forget() {
	if w.memo != nil {
		w.memo.forgetAll()
	}
	w.next = -1
}

func (w *writeConn) close() {
	for _, st := range w.stmts {
		st.Close()
	}
	if w.conn != nil {
		// The last connection to close copies the WAL into the database
		// and removes it: at FULL, SQLite fsyncs the file first.
		w.durable(context.Background(), true)
		w.conn.Close()
	}
}

// wtx is a write transaction (one batch) on the writer's connection. Each
// statement is prepared once for the connection's life and reused by every
// job of every batch: SQL parsing would otherwise be a fifth of the cost of
// a write, and preparing once per transaction a twentieth.
type wtx struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	next  int64    // the index the next audit entry gets; -1 until read
	after []func() // run in order once the transaction has committed
	memo  *memo    // keys and sessions as committed before this transaction
	// sessions written in this transaction, as written (sessions.go)
	sessions map[sessionID]*rein.Session
}

// committed runs fn after the transaction commits, before its callers are
// answered (memo updates); a rolled-back transaction never runs it.
func (t *wtx) committed(fn func()) { t.after = append(t.after, fn) }

// The statements of a write transaction run without their caller's
// context: a caller that leaves is skipped before its turn (attempt), but
// interrupting a statement halfway would fail the whole batch, and the
// driver watches a cancellable context with a goroutine per statement.
func (t *wtx) stmt(_ context.Context, query string) (*sql.Stmt, error) {
	ctx := context.Background()
	st, ok := t.stmts[query]
	if !ok {
		var err error
		if st, err = t.conn.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		t.stmts[query] = st
	}
	return st, nil
}

// ExecContext runs one statement, prepared once.
func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(context.Background(), args...)
}

// QueryContext runs one query, prepared once.
func (t *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(context.Background(), args...)
}

// QueryRowContext runs one single-row query, prepared once.
func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return t.conn.QueryRowContext(context.Background(), query, args...) // reports the same error when scanned
	}
	return st.QueryRowContext(context.Background(), args...)
}

// commit is a batch the writer has run: its callers' answers, sent once
// the WAL is fsynced (or at once when nothing was committed).
type commit struct {
	jobs    []*job  // answered with err
	err     error   // nil: committed, answered after the fsync
	failed  []*job  // answered with their own errors, after the others
	errs    []error // of failed
	durable bool    // a transaction committed: the WAL must be fsynced first
}

// answer sends every caller of c its answer; err is the fsync's.
func (c *commit) answer(err error) {
	if err == nil {
		err = c.err
	}
	for _, j := range c.jobs {
		j.done <- err
	}
	for i, j := range c.failed {
		j.done <- c.errs[i]
	}
}

// commit runs a batch of jobs in one transaction and returns the answers
// to send once it is durable. A job that fails is rare (a conflict, a lost
// race), so there are no savepoints: the transaction is rolled back and
// the batch run again without the failed job. Each job is a closure over
// its inputs that writes the same thing every time it runs. Failed jobs are
// answered after the others have committed, so that a caller who retries
// sees what it lost to.
func (w *writeConn) commit(batch []*job) *commit {
	c := &commit{}
	if w.err != nil {
		c.jobs, c.err = batch, w.err
		return c
	}
	for len(batch) > 0 {
		i, err := w.attempt(&batch)
		if i < 0 {
			c.jobs, c.err, c.durable = batch, err, err == nil
			return c
		}
		c.failed, c.errs = append(c.failed, batch[i]), append(c.errs, err)
		batch = append(slices.Clip(batch[:i]), batch[i+1:]...)
	}
	return c
}

// attempt runs the jobs in one transaction, adding those w.more gives
// before it commits. When all succeed it returns -1 and nil; when an error
// ends the whole batch, -1 and that error. When job i fails, it rolls back
// and returns i and the job's error.
func (w *writeConn) attempt(jobs *[]*job) (int, error) {
	ctx := context.Background()
	// BEGIN IMMEDIATE takes the write lock at once (no other process can
	// commit until this transaction ends); the statements prepared on the
	// connection run inside it.
	if _, err := w.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return -1, fmt.Errorf("begin: %w", err)
	}
	w.external(ctx)
	tx := &wtx{conn: w.conn, stmts: w.stmts, next: w.next, memo: w.memo}
	for i := 0; ; i++ {
		if i == len(*jobs) {
			j := w.more(i)
			if j == nil {
				break
			}
			*jobs = append(*jobs, j)
		}
		j := (*jobs)[i]
		err := j.ctx.Err() // the caller left before its turn: skip it
		if err == nil {
			err = j.fn(tx)
		}
		if err != nil {
			w.conn.ExecContext(ctx, "ROLLBACK")
			return i, err
		}
	}
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		w.conn.ExecContext(ctx, "ROLLBACK") // if the transaction is still open
		w.forget()                          // the commit's outcome is unknown
		return -1, fmt.Errorf("commit: %w", err)
	}
	w.next = tx.next
	for _, fn := range tx.after {
		fn()
	}
	return -1, nil
}

// handOver gives a committed batch to the syncer.
func (db *DB) handOver(c *commit) {
	db.unsynced.Add(1)
	db.commits <- c
}

// more returns a job to run in the writer's open transaction while the
// last commit is still being fsynced, or nil once it is (or the batch is
// full): the batch then commits and its fsync starts at once. So the
// statements of the next batch run during the last one's fsync, and a
// batch gathers as many jobs as it did when the writer waited for its own
// fsync (each commit writes every page it changed to the WAL: fewer,
// larger batches write fewer pages per job).
func (db *DB) more(n int) *job {
	for n < maxBatch && db.unsynced.Load() > 0 {
		select {
		case j := <-db.jobs:
			return j
		case <-db.syncDone:
		}
	}
	return nil
}

// syncWALFile fsyncs the WAL; a test holds it back.
var syncWALFile = syncFile

// syncDepth is how many committed batches may wait for the syncer before
// the writer waits for it too.
const syncDepth = 4

// syncer fsyncs the WAL for the batches the writer has committed and then
// answers their callers: every batch waiting when an fsync starts shares
// it. An fsync that fails leaves it unknown what reached the disk: its
// callers get the error, and so does every later write (the store must be
// opened again).
func (db *DB) syncer() {
	defer close(db.synced)
	var failed error
	var group []*commit
	for c := range db.commits {
		group = append(group[:0], c)
	gather:
		for {
			select {
			case c, ok := <-db.commits:
				if !ok {
					break gather
				}
				group = append(group, c)
			default:
				break gather
			}
		}
		durable := false
		for _, c := range group {
			durable = durable || c.durable
		}
		err := failed
		if durable && err == nil {
			db.syncs.Add(1)
			if err = db.syncWAL(db.path + "-wal"); err != nil {
				err = fmt.Errorf("fsync the write-ahead log: %w", err)
				failed = err
			}
		}
		for _, c := range group {
			if c.durable {
				c.answer(err)
			} else {
				c.answer(nil)
			}
		}
		db.unsynced.Add(-int64(len(group)))
		select { // the writer may be waiting to commit
		case db.syncDone <- struct{}{}:
		default:
		}
	}
}

// scanner is a row or rows being read.
type scanner interface{ Scan(...any) error }

// collect reads every row of a query with scan.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// scanID reads a single id column.
func scanID(r scanner) (string, error) {
	var id string
	err := r.Scan(&id)
	return id, err
}

// timeFormat is fixed-width UTC, so that stored times compare as strings
// (expires_at <= ?) in the order of the times they stand for.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func ts(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTS(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// appendEntries assigns the next contiguous indexes to entries and writes
// their canonical bytes. It returns the index of the first.
func appendEntries(ctx context.Context, tx *wtx, entries []*rein.Entry) (int64, error) {
	encs, err := rein.EncodeEntries(entries)
	if err != nil {
		return 0, err
	}
	return appendEncoded(ctx, tx, encs)
}

// appendEncoded is appendEntries for entries encoded before the transaction
// (outside the single writer, where the encoding's cost is shared out).
func appendEncoded(ctx context.Context, tx *wtx, encs []*rein.EntryEncoding) (int64, error) {
	if tx.next < 0 { // once per batch: later jobs continue from here
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(idx) + 1, 0) FROM audit_entries").Scan(&tx.next); err != nil {
			tx.next = -1
			return 0, fmt.Errorf("audit head: %w", err)
		}
	}
	first := tx.next
	for _, x := range encs {
		if _, err := tx.ExecContext(ctx, "INSERT INTO audit_entries (idx, tenant, kind, body) VALUES (?, ?, ?, ?)",
			tx.next, x.Tenant, x.Kind, x.At(tx.next)); err != nil {
			return 0, fmt.Errorf("append audit entry %d: %w", tx.next, err)
		}
		tx.next++
	}
	return first, nil
}

// Append writes entries that accompany no other state change.
func (db *DB) Append(ctx context.Context, entries ...*rein.Entry) error {
	encs, err := rein.EncodeEntries(entries)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		_, err := appendEncoded(ctx, tx, encs)
		return err
	})
}

// Entries returns up to limit entries from index start on.
func (db *DB) Entries(ctx context.Context, start int64, limit int) ([]*rein.StoredEntry, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT idx, tenant, kind, body FROM audit_entries WHERE idx >= ? ORDER BY idx LIMIT ?", start, limit)
	return collect(rows, err, func(r scanner) (*rein.StoredEntry, error) {
		e := &rein.StoredEntry{}
		return e, r.Scan(&e.Index, &e.Tenant, &e.Kind, &e.Bytes)
	})
}

// Keys.

// CreateKey stores a new key; a name already active in the tenant is a conflict.
func (db *DB) CreateKey(ctx context.Context, k *rein.Key, e *rein.Entry) error {
	roles, _ := json.Marshal(k.Roles)
	groups, _ := json.Marshal(k.Groups)
	return db.tx(ctx, func(tx *wtx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM keys WHERE tenant = ? AND name = ? AND revoked_at IS NULL", k.Tenant, k.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return storesql.KeyNameTaken(k)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO keys (id, name, tenant, roles, groups_json, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.Name, k.Tenant, string(roles), string(groups), k.SecretHash, ts(k.CreatedAt)); err != nil {
			return fmt.Errorf("insert key: %w", err)
		}
		tx.committed(db.memo.forgetKeys)
		if e != nil {
			_, err := appendEntries(ctx, tx, []*rein.Entry{e})
			return err
		}
		return nil
	})
}

const keyColumns = storesql.KeyColumns

func scanKey(row scanner) (*rein.Key, error) { return storesql.ScanKey(row) }

// KeyBySecretHash returns the active key with that secret hash, from memory
// when it was read before and no key has changed since (memo.go).
func (db *DB) KeyBySecretHash(ctx context.Context, hash string) (*rein.Key, error) {
	k, gen := db.memo.key(hash)
	if k != nil {
		c := *k
		return &c, nil
	}
	k, err := scanKey(db.read.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM keys WHERE secret_hash = ? AND revoked_at IS NULL", hash))
	if err != nil {
		return nil, err
	}
	c := *k
	db.memo.putKey(&c, gen)
	return k, nil
}

// KeyByID returns a key, revoked or not.
func (db *DB) KeyByID(ctx context.Context, id string) (*rein.Key, error) {
	return scanKey(db.read.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM keys WHERE id = ?", id))
}

// Keys lists the keys of a tenant ("*": of every tenant), oldest first.
func (db *DB) Keys(ctx context.Context, tenant string) ([]*rein.Key, error) {
	q, args := "SELECT "+keyColumns+" FROM keys WHERE tenant = ? ORDER BY created_at, id", []any{tenant}
	if tenant == rein.AllTenants {
		q, args = "SELECT "+keyColumns+" FROM keys ORDER BY tenant, created_at, id", nil
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*rein.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey marks a key revoked; it stops authenticating at once.
func (db *DB) RevokeKey(ctx context.Context, id string, at time.Time, e *rein.Entry) error {
	return db.tx(ctx, func(tx *wtx) error {
		k, err := scanKey(tx.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM keys WHERE id = ? AND revoked_at IS NULL", id))
		if err != nil {
			return err
		}
		others := 0 // the other admin keys of tenant "*", counted when k is one
		if k.Tenant == rein.AllTenants && k.Has(rein.RoleAdmin) {
			rows, err := tx.QueryContext(ctx, "SELECT roles FROM keys WHERE tenant = ? AND revoked_at IS NULL AND id != ?", rein.AllTenants, id)
			if err != nil {
				return err
			}
			for rows.Next() {
				var roles string
				rows.Scan(&roles)
				if strings.Contains(roles, `"admin"`) {
					others++
				}
			}
			rows.Close()
		}
		if err := storesql.CanRevoke(k, others); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", ts(at), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return rein.ErrNotFound
		}
		tx.committed(db.memo.forgetKeys)
		if e != nil {
			_, err = appendEntries(ctx, tx, []*rein.Entry{e})
		}
		return err
	})
}

// Checks.

// RecordCheck stores a decided check with its new approval and audit entries
// in one transaction.
func (db *DB) RecordCheck(ctx context.Context, rec *rein.CheckRecord, created *rein.Approval, use *rein.ApprovalUse, entries []*rein.Entry) (*rein.CheckRecord, error) {
	var dup *rein.CheckRecord
	// The record is encoded here, by its caller, not in the single writer;
	// its audit index, known only in the writer, is stored in its own
	// column and set again when the record is read (scanCheck).
	rec.AuditIndex = 0
	encs, body, reviewBody, err := storesql.EncodeCheck(rec, entries)
	if err != nil {
		return nil, err
	}
	err = db.tx(ctx, func(tx *wtx) error {
		if rec.Check.RequestID != "" {
			var body string
			var index int64
			err := tx.QueryRowContext(ctx, "SELECT record, audit_index FROM checks WHERE key_id = ? AND request_id = ?", rec.KeyID, rec.Check.RequestID).Scan(&body, &index)
			if err == nil {
				dup = &rein.CheckRecord{}
				if err := json.Unmarshal([]byte(body), dup); err != nil {
					return err
				}
				dup.AuditIndex = index
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if created != nil {
			if err := expireStale(ctx, tx, created); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM approvals WHERE tenant = ? AND action_hash = ? AND status = 'pending'",
				created.Tenant, created.ActionHash).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return rein.ErrApprovalPending
			}
		}
		encs := encs
		if use != nil {
			var err error
			if encs, err = storesql.UseApproval(ctx, storeTx{tx}, approvalSQL, use, encs); err != nil {
				return err
			}
		}
		first, err := appendEncoded(ctx, tx, encs)
		if err != nil {
			return err
		}
		rec.AuditIndex = first
		var reqID any
		if rec.Check.RequestID != "" {
			reqID = rec.Check.RequestID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO checks (id, tenant, key_id, request_id, agent, session, tool, decision, action_hash, created_at, audit_index, record)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, rec.Tenant, rec.KeyID, reqID, rec.Check.Agent, rec.Check.Session, rec.Check.Tool, string(rec.Decision),
			rec.ActionHash, ts(rec.CreatedAt), rec.AuditIndex, string(body)); err != nil {
			return fmt.Errorf("insert check: %w", err)
		}
		if created != nil {
			if err := insertApproval(ctx, tx, created); err != nil {
				return err
			}
		}
		if r := rec.Review; r != nil {
			if err := insertReview(ctx, tx, r.ID, r.Tenant, r.Status, r.Agent, r.Session, r.CreatedAt, reviewBody); err != nil {
				return err
			}
		}
		return db.touchSession(ctx, tx, rec)
	})
	if err != nil {
		return nil, err
	}
	if dup != nil {
		return dup, rein.ErrDuplicateRequest
	}
	return rec, nil
}

func insertApproval(ctx context.Context, tx *wtx, a *rein.Approval) error {
	body, err := storesql.StoredApproval(a)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO approvals (id, tenant, status, action_hash, created_at, expires_at, escalate_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tenant, a.Status, a.ActionHash, ts(a.CreatedAt), ts(a.ExpiresAt), tsPtr(a.EscalateAt()), string(body))
	if err != nil {
		return fmt.Errorf("insert approval: %w", err)
	}
	return nil
}

// expireStale expires the pending approvals of a's action whose time ran
// out (the sweeper may not have reached them yet), recording each as a
// timeout, so that a new approval can take their place.
func expireStale(ctx context.Context, tx *wtx, a *rein.Approval) error {
	rows, err := tx.QueryContext(ctx, "SELECT id FROM approvals WHERE tenant = ? AND action_hash = ? AND status = 'pending' AND expires_at <= ?",
		a.Tenant, a.ActionHash, ts(a.CreatedAt))
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		at := ts(a.CreatedAt)
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET status = 'expired',
			record = json_set(record, '$.status', 'expired', '$.resolved_at', ?) WHERE id = ?`, at, id); err != nil {
			return fmt.Errorf("expire approval %s: %w", id, err)
		}
		if _, err := appendEntries(ctx, tx, []*rein.Entry{{TS: a.CreatedAt, Tenant: a.Tenant, Kind: rein.KindApprovalResolved,
			Actor: "rein", Subject: id, Data: map[string]any{"status": rein.StatusExpired, "cause": "timeout"}}}); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) checkWhere(ctx context.Context, where string, args ...any) (*rein.CheckRecord, error) {
	return scanCheck(db.read.QueryRowContext(ctx, "SELECT record, key_id, result, audit_index FROM checks WHERE "+where, args...))
}

// CheckByID returns a stored check.
func (db *DB) CheckByID(ctx context.Context, id string) (*rein.CheckRecord, error) {
	return db.checkWhere(ctx, "id = ?", id)
}

// CheckByRequestID returns the check a key made with a request_id.
func (db *DB) CheckByRequestID(ctx context.Context, keyID, requestID string) (*rein.CheckRecord, error) {
	return db.checkWhere(ctx, "key_id = ? AND request_id = ?", keyID, requestID)
}

// LatestApproval returns the newest approval bound to an action hash.
func (db *DB) LatestApproval(ctx context.Context, tenant, actionHash string) (*rein.Approval, error) {
	return scanApproval(db.read.QueryRowContext(ctx, "SELECT record FROM approvals WHERE tenant = ? AND action_hash = ? ORDER BY created_at DESC, id DESC LIMIT 1",
		tenant, actionHash))
}

// Approval returns one approval.
func (db *DB) Approval(ctx context.Context, id string) (*rein.Approval, error) {
	return scanApproval(db.read.QueryRowContext(ctx, "SELECT record FROM approvals WHERE id = ?", id))
}

func scanApproval(row scanner) (*rein.Approval, error) { return storesql.ScanApproval(row) }

// Approvals lists approvals, newest first.
func (db *DB) Approvals(ctx context.Context, tenant string, f rein.ApprovalFilter) ([]*rein.Approval, error) {
	q, args := listQuery("approvals", "json_extract(record, '$.session')", "json_extract(record, '$.agent')", tenant, f)
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, func(r scanner) (*rein.Approval, error) { return scanApproval(r) })
}

// listQuery selects the records of a table of approvals or questions that
// pass a list filter, newest first; session and agent are the expressions
// that read those fields.
func listQuery(table, session, agent, tenant string, f rein.ListFilter) (string, []any) {
	q := "SELECT record FROM " + table + " WHERE 1 = 1"
	var args []any
	if tenant != rein.AllTenants { // "" is a tenant like any other, never "all"
		q += " AND tenant = ?"
		args = append(args, tenant)
	}
	for _, c := range []struct{ expr, val string }{{"status", f.Status}, {session, f.Session}, {agent, f.Agent}} {
		if c.val != "" {
			q += " AND " + c.expr + " = ?"
			args = append(args, c.val)
		}
	}
	if f.Before != "" {
		q += " AND id < ?"
		args = append(args, f.Before)
	}
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	return q + " ORDER BY id DESC LIMIT ?", append(args, limit)
}

// ChangeApproval applies change to an approval in one write transaction.
func (db *DB) ChangeApproval(ctx context.Context, id string, change rein.ApprovalChange) (*rein.Approval, error) {
	return txValue(ctx, db, func(tx *wtx) (*rein.Approval, error) {
		a, entries, err := loadAndChange(ctx, tx, id, change)
		if err != nil {
			return nil, err
		}
		if _, err := appendEntries(ctx, tx, entries); err != nil {
			return nil, err
		}
		return a, nil
	})
}

func loadAndChange(ctx context.Context, tx *wtx, id string, change rein.ApprovalChange) (*rein.Approval, []*rein.Entry, error) {
	return storesql.ChangeApproval(ctx, storeTx{tx}, approvalSQL, id, change)
}

// approvalSQL is how storesql.ChangeApproval reads and writes an approval
// here.
var approvalSQL = storesql.ApprovalSQL{
	Select:      "SELECT record, escalate_at FROM approvals WHERE id = ?",
	SetEscalate: "UPDATE approvals SET escalate_at = ? WHERE id = ?",
	Update:      "UPDATE approvals SET status = ?, grant_expires_at = ?, escalate_at = ?, record = ? WHERE id = ?",
}

// tsPtr is ts of a time that may be absent (NULL).
func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// DueEscalations returns pending approvals whose next escalation is due,
// the longest due first.
func (db *DB) DueEscalations(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM approvals WHERE status = 'pending' AND escalate_at IS NOT NULL AND escalate_at <= ?
		ORDER BY escalate_at LIMIT ?`, ts(now), limit)
	return collect(rows, err, scanID)
}

// DueApprovals returns the approvals whose time ran out.
func (db *DB) DueApprovals(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM approvals WHERE status = 'pending' AND expires_at <= ?
		UNION SELECT id FROM approvals WHERE status = 'approved' AND grant_expires_at <= ?`, ts(now), ts(now))
	return collect(rows, err, scanID)
}

// Policies.

// SavePolicy records a newly activated policy tier.
func (db *DB) SavePolicy(ctx context.Context, doc *rein.PolicyDoc, e *rein.Entry) error {
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO policies (tenant, version, source, loaded_at, loaded_by, origin) VALUES (?, ?, ?, ?, ?, ?)",
			doc.Tenant, doc.Version, doc.Source, ts(doc.LoadedAt), doc.LoadedBy, doc.Origin); err != nil {
			return fmt.Errorf("insert policy: %w", err)
		}
		if e != nil {
			_, err := appendEntries(ctx, tx, []*rein.Entry{e})
			return err
		}
		return nil
	})
}

// Policies returns the newest policy of each tier.
func (db *DB) Policies(ctx context.Context) ([]*rein.PolicyDoc, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT tenant, version, source, loaded_at, loaded_by, origin FROM policies
		WHERE seq IN (SELECT MAX(seq) FROM policies GROUP BY tenant) ORDER BY tenant`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*rein.PolicyDoc
	for rows.Next() {
		d := &rein.PolicyDoc{}
		var at string
		if err := rows.Scan(&d.Tenant, &d.Version, &d.Source, &at, &d.LoadedBy, &d.Origin); err != nil {
			return nil, err
		}
		d.LoadedAt = parseTS(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// Meta returns a stored setting, creating it with init() when absent.
func (db *DB) Meta(ctx context.Context, key string, init func() string) (string, error) {
	var v string
	err := db.tx(ctx, func(tx *wtx) error {
		err := tx.QueryRowContext(ctx, "SELECT v FROM meta WHERE k = ?", key).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			v = init()
			_, err = tx.ExecContext(ctx, "INSERT INTO meta (k, v) VALUES (?, ?)", key, v)
		}
		return err
	})
	return v, err
}
