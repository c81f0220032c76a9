package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// The audit log on PostgreSQL: many writers, one sequence.
//
//   - A writer adds its entries to audit_outbox in the transaction of its
//     state change (wtx.appendEncoded), registers to be told their index,
//     commits, and waits.
//   - One integrator, the process holding the schema's advisory lock, gives
//     waiting outbox rows (audit_pending) the next contiguous indexes
//     (audit_index); the rows themselves stay where they were written. Each
//     integrator takes a new term in audit_head; each move is one
//     transaction that ends with a compare-and-set of (size, term) on the
//     head, so a deposed integrator cannot write even if it still runs.
//   - Writers do not notify: the integrator looks at the outbox every
//     outboxPoll (a local writer wakes it at once). After each move it
//     sends one wake-up NOTIFY (coalesced, outside the move's transaction:
//     it is the only process that notifies, notify.go); every process's
//     listener then looks up the indexes its writers wait for.
//   - The integrator also signs checkpoints (the seal hook) every second,
//     in a goroutine of its own beside the moves.
//
// When the integrator dies, PostgreSQL ends its session and releases the
// lock; another replica's election loop takes it within a second or so.

// integrateBatch bounds the entries moved per transaction.
const integrateBatch = 4096

// outboxPoll is how often the integrator looks at the outbox when no local
// writer woke it: the other replicas' writers do not notify (notify.go).
// While it finds nothing it looks less often, doubling the wait up to
// idlePoll, so that an idle replica set does not query the database 500
// times a second; the first entry after a quiet spell waits at most that.
const (
	outboxPoll = 2 * time.Millisecond
	idlePoll   = 16 * time.Millisecond
)

// backoff is a poll's wait: the shortest while polls find something,
// doubling (up to idlePoll) while they find nothing.
type backoff struct{ wait, min time.Duration }

func (b *backoff) found(any bool) time.Duration {
	switch {
	case any || b.wait < b.min:
		b.wait = b.min
	case b.wait < idlePoll:
		b.wait = min(2*b.wait, idlePoll)
	}
	return b.wait
}

// waitLimit bounds how long a writer waits for its index.
const waitLimit = 30 * time.Second

// indexWaiters are writers waiting for the index of an outbox row.
type indexWaiters struct {
	mu      sync.Mutex
	waiting map[int64][]chan int64
	kick    chan struct{} // the log grew: look up what is waited for
}

func (w *indexWaiters) init() {
	w.waiting = map[int64][]chan int64{}
	w.kick = make(chan struct{}, 1)
}

// register asks to be told the index of outbox row seq; the writer does so
// before it commits, so that no integration can pass it by.
func (w *indexWaiters) register(seq int64) chan int64 {
	ch := make(chan int64, 1)
	w.mu.Lock()
	w.waiting[seq] = append(w.waiting[seq], ch)
	w.mu.Unlock()
	return ch
}

func (w *indexWaiters) cancel(seq int64, ch chan int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.waiting[seq]
	for i, c := range list {
		if c == ch {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.waiting, seq)
	} else {
		w.waiting[seq] = list
	}
}

func (w *indexWaiters) pending() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]int64, 0, len(w.waiting))
	for seq := range w.waiting {
		out = append(out, seq)
	}
	return out
}

func (w *indexWaiters) deliver(seq, idx int64) {
	w.mu.Lock()
	list := w.waiting[seq]
	delete(w.waiting, seq)
	w.mu.Unlock()
	for _, ch := range list {
		ch <- idx
	}
}

func (w *indexWaiters) signal() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// errNoIndex: the entry is durable in the outbox, but no integrator placed
// it in time.
var errNoIndex = errors.New("the change is stored, but the audit log's integrator did not place its entry in time (is every replica down or cut off from PostgreSQL?)")

func (db *DB) awaitIndex(ctx context.Context, seq int64, ch chan int64) (int64, error) {
	t := time.NewTimer(waitLimit)
	defer t.Stop()
	select {
	case idx := <-ch:
		return idx, nil
	case <-ctx.Done():
		db.idx.cancel(seq, ch)
		return -1, ctx.Err()
	case <-t.C:
		db.idx.cancel(seq, ch)
		return -1, errNoIndex
	}
}

// resolveIndexes looks up the indexes writers wait for whenever the log
// grows (and a few times a second, in case a notification was missed).
// While this process integrates, it hands out the indexes it places as it
// places them (integrate), so the growth it announces itself is not looked
// up again; the look a few times a second remains, for entries an earlier
// integrator placed.
func (db *DB) resolveIndexes(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.idx.kick:
			if db.leading.get() {
				continue
			}
		case <-t.C:
		}
		seqs := db.idx.pending()
		if len(seqs) == 0 {
			continue
		}
		rows, err := db.pool.Query(ctx, "SELECT seq, idx FROM audit_index WHERE seq = ANY($1)", seqs)
		if err != nil {
			continue
		}
		var seq, idx int64
		pgx.ForEachRow(rows, []any{&seq, &idx}, func() error { db.idx.deliver(seq, idx); return nil })
	}
}

// listen holds a connection that LISTENs for the integrating replica's
// wake-ups (notify.go), reconnecting when it breaks.
func (db *DB) listen(ctx context.Context, ready chan struct{}) {
	once := sync.OnceFunc(func() { close(ready) })
	for ctx.Err() == nil {
		conn, err := db.connect(ctx, "listener")
		if err != nil {
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		for _, ch := range []string{db.chAudit, db.chChange} {
			if _, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
				break
			}
		}
		if err == nil {
			once()
			db.idx.signal()  // what was integrated while nobody listened
			db.kickChanges() // and changed
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					break
				}
				switch n.Channel {
				case db.chAudit:
					db.idx.signal()
				case db.chChange:
					db.kickChanges()
				}
			}
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx)
		cancel()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// SetSeal sets what the integrator runs every second while it leads (the
// checkpoint sealer), and once more before it stops.
func (db *DB) SetSeal(fn func(context.Context) error) {
	db.sealMu.Lock()
	db.seal = fn
	db.sealMu.Unlock()
}

func (db *DB) runSeal(ctx context.Context) {
	db.sealMu.Lock()
	fn := db.seal
	db.sealMu.Unlock()
	if fn == nil {
		return
	}
	if err := fn(ctx); err != nil && ctx.Err() == nil {
		db.log.Error("sealing the audit log failed", "err", err)
	}
}

// elect competes for the integrator's advisory lock and integrates while
// it holds it.
func (db *DB) elect(ctx context.Context) {
	for ctx.Err() == nil {
		conn, err := db.connect(ctx, "integrator")
		if err != nil {
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		for ctx.Err() == nil {
			var got bool
			if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", db.lockKey).Scan(&got); err != nil {
				break
			}
			if got {
				if !db.lead(ctx, conn) {
					// A failure that may repeat (a broken statement, a
					// full disk): compete again after a pause, not at once.
					sleep(ctx, time.Second)
				}
				break
			}
			sleep(ctx, 500*time.Millisecond)
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx) // releases the lock, if held
		cancel()
	}
}

// errDeposed: another integrator took over.
var errDeposed = errors.New("another integrator took over the audit log")

// lead integrates the outbox while conn holds the lock. It reports false
// when integrating failed.
func (db *DB) lead(ctx context.Context, conn *pgx.Conn) bool {
	var term int64
	if err := conn.QueryRow(ctx, "UPDATE audit_head SET term = term + 1, holder = $1 WHERE one = 1 RETURNING term", db.id).Scan(&term); err != nil {
		return false
	}
	failed := false
	db.leading.term.Store(term)
	defer db.leading.term.Store(0)
	db.log.Info("integrating the audit log", "term", term)
	// The sealer runs beside the placements, not between them: hashing
	// and signing never holds up placing.
	sealCtx, stopSeal := context.WithCancel(ctx)
	sealed := make(chan struct{})
	go func() {
		defer close(sealed)
		seal := time.NewTicker(time.Second)
		defer seal.Stop()
		for n := 0; ; n++ {
			select {
			case <-sealCtx.Done():
				return
			case <-seal.C:
				t0 := time.Now()
				db.runSeal(sealCtx)
				db.busy.sealing.Add(int64(time.Since(t0)))
				if n%30 == 0 { // a scan of the changes table: not every second
					db.trimChanges(sealCtx)
				}
			}
		}
	}()
	pace := backoff{min: outboxPoll}
	poll := time.NewTimer(pace.found(true))
	defer poll.Stop()
	for {
		t0 := time.Now()
		n, err := db.integrate(ctx, conn, term)
		db.busy.placing.Add(int64(time.Since(t0)))
		db.busy.placed.Add(int64(n))
		if n > 0 {
			poll.Reset(pace.found(true))
		}
		if err != nil {
			if ctx.Err() == nil {
				db.log.Error("integrating the audit log failed; leaving it to the next integrator", "term", term, "err", err)
				failed = true
			}
			break
		}
		if n == integrateBatch {
			continue
		}
		woken := false
		for !woken && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-db.outboxKick:
				woken = true
			case <-poll.C:
				// Other replicas' writers do not notify: look whether the
				// outbox holds anything, without locking the head.
				var any bool
				if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM audit_pending)").Scan(&any); err != nil || any {
					woken = true
				}
				poll.Reset(pace.found(woken))
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopSeal()
	<-sealed
	if ctx.Err() != nil { // stopping: place what is left and seal it
		final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for {
			n, err := db.integrate(final, conn, term)
			if err != nil || n < integrateBatch {
				break
			}
		}
		db.runSeal(final)
	}
	return !failed
}

// integrate gives the oldest waiting outbox rows their indexes in one
// transaction and returns how many it placed. The entries themselves stay
// where their writers put them: the integrator writes two numbers per
// entry, never its bytes.
func (db *DB) integrate(ctx context.Context, conn *pgx.Conn, term int64) (int, error) {
	var placed []int64 // outbox seq, index pairs
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// The head, locked, with the oldest waiting rows. Only a new
		// integrator's term changes the head meanwhile; then the head
		// read after the wait carries that term and this one stops.
		rows, err := tx.Query(ctx, `SELECT h.size, h.term, p.seq
			FROM audit_head h LEFT JOIN LATERAL (SELECT seq FROM audit_pending ORDER BY seq LIMIT $1) p ON true
			WHERE h.one = 1 FOR UPDATE OF h`, integrateBatch)
		if err != nil {
			return err
		}
		var idxs, seqs []int64
		var size, cur int64
		var seq *int64
		heads := 0
		_, err = pgx.ForEachRow(rows, []any{&size, &cur, &seq}, func() error {
			heads++
			if seq == nil { // nothing waits
				return nil
			}
			idxs, seqs = append(idxs, size+int64(len(idxs))), append(seqs, *seq)
			return nil
		})
		switch {
		case err != nil:
			return err
		case heads == 0:
			return errors.New("the audit log's head row is missing")
		case cur != term:
			return errDeposed
		case len(idxs) == 0:
			return nil
		}
		// The indexes written, the rows taken off the queue, and the head
		// moved on (compare-and-set on size and term): one statement.
		next := size + int64(len(idxs))
		tag, err := tx.Exec(ctx, `WITH placed AS (
				INSERT INTO audit_index (idx, seq) SELECT * FROM unnest($1::bigint[], $2::bigint[])
			), taken AS (
				DELETE FROM audit_pending WHERE seq = ANY($2)
			)
			UPDATE audit_head SET size = $3 WHERE one = 1 AND size = $4 AND term = $5`,
			idxs, seqs, next, size, term)
		if err != nil {
			return fmt.Errorf("place entries %d to %d: %w", size, next-1, err)
		}
		if tag.RowsAffected() != 1 {
			return errDeposed
		}
		for i := range seqs {
			placed = append(placed, seqs[i], idxs[i])
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(placed); i += 2 { // this process's writers learn at once
		db.idx.deliver(placed[i], placed[i+1])
	}
	if len(placed) > 0 {
		db.wake(db.chAudit) // the others' writers, after the commit
	}
	return len(placed) / 2, nil
}

// Entries returns up to limit entries from index start on: from
// audit_entries as stored, or from the outbox row with its index put in
// (the same bytes the writer was answered for).
func (db *DB) Entries(ctx context.Context, start int64, limit int) ([]*rein.StoredEntry, error) {
	rows, err := db.pool.Query(ctx, "SELECT idx, tenant, kind, body, head, tail FROM audit_log WHERE idx >= $1 ORDER BY idx LIMIT $2", start, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.StoredEntry, error) {
		e := &rein.StoredEntry{}
		var head, tail []byte
		if err := r.Scan(&e.Index, &e.Tenant, &e.Kind, &e.Bytes, &head, &tail); err != nil {
			return nil, err
		}
		if e.Bytes == nil {
			e.Bytes = rein.EncodingFromParts(e.Tenant, e.Kind, head, tail).At(e.Index)
		}
		return e, nil
	})
}

// AuditSize returns the number of entries and of records in the tree.
func (db *DB) AuditSize(ctx context.Context) (entries, hashed int64, err error) {
	err = db.pool.QueryRow(ctx, `SELECT (SELECT size FROM audit_head WHERE one = 1),
		(SELECT COALESCE(MAX(record) + 1, 0) FROM audit_tree)`).Scan(&entries, &hashed)
	return entries, hashed, err
}

// ReadHashes returns stored hashes by stored-hash index.
func (db *DB) ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	recs := make([]int64, 0, len(indexes))
	seen := map[int64]bool{}
	for _, x := range indexes {
		rec, _ := audit.RecordRow(x)
		if !seen[rec] {
			seen[rec] = true
			recs = append(recs, rec)
		}
	}
	rows, err := db.pool.Query(ctx, "SELECT record, hashes FROM audit_tree WHERE record = ANY($1)", recs)
	if err != nil {
		return nil, err
	}
	got := map[int64][]byte{}
	var rec int64
	var hs []byte
	if _, err := pgx.ForEachRow(rows, []any{&rec, &hs}, func() error { got[rec] = append([]byte(nil), hs...); return nil }); err != nil {
		return nil, err
	}
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		rec, pos := audit.RecordRow(x)
		hs := got[rec]
		if len(hs) < (pos+1)*tlog.HashSize {
			return nil, fmt.Errorf("stored hash %d (record %d) is not in the tree", x, rec)
		}
		copy(out[i][:], hs[pos*tlog.HashSize:])
	}
	return out, nil
}

// SaveTree appends tree records and, optionally, a checkpoint.
func (db *DB) SaveTree(ctx context.Context, u *rein.TreeUpdate) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if len(u.Hashes) > 0 {
			recs := make([]int64, len(u.Hashes))
			blobs := make([][]byte, len(u.Hashes))
			for i, hs := range u.Hashes {
				recs[i] = u.From + int64(i)
				for _, h := range hs {
					blobs[i] = append(blobs[i], h[:]...)
				}
			}
			if _, err := tx.Exec(ctx, "INSERT INTO audit_tree (record, hashes) SELECT * FROM unnest($1::bigint[], $2::bytea[])", recs, blobs); err != nil {
				return fmt.Errorf("store tree records from %d: %w", u.From, err)
			}
		}
		if c := u.Checkpoint; c != nil {
			if _, err := tx.Exec(ctx, "INSERT INTO audit_checkpoints (size, note, signed_at) VALUES ($1, $2, $3)",
				c.Size, string(c.Note), ts(c.SignedAt)); err != nil {
				return fmt.Errorf("store checkpoint %d: %w", c.Size, err)
			}
		}
		return nil
	})
}

func scanCheckpoint(r pgx.Row) (*rein.SignedCheckpoint, error) {
	var c rein.SignedCheckpoint
	var n, at string
	if err := r.Scan(&c.Size, &n, &at); err != nil {
		return nil, notFound(err)
	}
	c.Note, c.SignedAt = []byte(n), parseTS(at)
	return &c, nil
}

// Checkpoints returns the checkpoints with sizes in [lo, hi], ascending.
func (db *DB) Checkpoints(ctx context.Context, lo, hi int64) ([]*rein.SignedCheckpoint, error) {
	rows, err := db.pool.Query(ctx, "SELECT size, note, signed_at FROM audit_checkpoints WHERE size BETWEEN $1 AND $2 ORDER BY size", lo, hi)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.SignedCheckpoint, error) { return scanCheckpoint(r) })
}

// LatestCheckpoint returns the newest checkpoint.
func (db *DB) LatestCheckpoint(ctx context.Context) (*rein.SignedCheckpoint, error) {
	return scanCheckpoint(db.pool.QueryRow(ctx, "SELECT size, note, signed_at FROM audit_checkpoints ORDER BY size DESC LIMIT 1"))
}

// AuditKeys lists the signing keys, oldest first.
func (db *DB) AuditKeys(ctx context.Context) ([]*rein.AuditKey, error) {
	rows, err := db.pool.Query(ctx, "SELECT verifier, from_at, to_at FROM audit_keys ORDER BY from_at")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.AuditKey, error) {
		var k rein.AuditKey
		var from string
		var to *string
		if err := r.Scan(&k.Verifier, &from, &to); err != nil {
			return nil, err
		}
		k.From = parseTS(from)
		if to != nil {
			t := parseTS(*to)
			k.To = &t
		}
		return &k, nil
	})
}

// AddAuditKey records a key coming into use; the key in use until then is
// retired at the same moment. A key already known is left as it is.
func (db *DB) AddAuditKey(ctx context.Context, k *rein.AuditKey) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE audit_keys IN EXCLUSIVE MODE"); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM audit_keys WHERE verifier = $1", k.Verifier).Scan(&n); err != nil || n > 0 {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE audit_keys SET to_at = $1 WHERE to_at IS NULL", ts(k.From)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO audit_keys (verifier, from_at) VALUES ($1, $2)", k.Verifier, ts(k.From))
		return err
	})
}
