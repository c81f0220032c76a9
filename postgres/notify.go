package postgres

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Replicas tell each other about changes through the schema's changes
// table: Notify inserts payloads, and every process using the schema (this
// one included) reads the rows it has not seen and hands them to its
// subscribers (Subscribe), in order of insertion.
//
// No replica NOTIFYs in its own transactions: PostgreSQL serialises the
// commits of every transaction that notifies on one database-wide lock,
// held until the commit is flushed, so replicas that notify queue on each
// other. Instead the integrating replica reads the table every few
// milliseconds and, when it found something new (or placed audit entries),
// sends one NOTIFY without payload: a wake-up for the others' readers,
// from one sender. A replica also reads the table every 100 ms by itself,
// so that changes still arrive, a little later, while no replica
// integrates or a wake-up is lost.
//
// A reader that was cut off receives Resync once it reads again, and must
// reload what it keeps in memory.

// Resync is delivered to subscribers when the reader (re)connects: changes
// may have been missed.
const Resync = ""

// How often a replica reads the changes table: the integrating one (which
// then wakes the others), and the others when no wake-up comes.
const (
	leaderChangePoll = 2 * time.Millisecond
	changePoll       = 100 * time.Millisecond
)

type subscribers struct {
	mu  sync.Mutex
	fns []func(string)
}

func (s *subscribers) deliver(payload string) {
	s.mu.Lock()
	fns := append([]func(string){}, s.fns...)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(payload)
	}
}

// Subscribe calls fn with the payload of every change (from any replica,
// this one included), in the reader's goroutine: fn must not block.
func (db *DB) Subscribe(fn func(payload string)) {
	db.subs.mu.Lock()
	db.subs.fns = append(db.subs.fns, fn)
	db.subs.mu.Unlock()
}

// Notify sends payloads to every replica, in order, in one round trip.
//
// It writes on a connection of its own, not the pool's (a pool busy with
// checks would hold announcements up), with synchronous_commit off: what
// Notify announces (a waiter to wake, an event, locks or policies to
// reload) is durable in its own transaction already, and a replica that
// could miss an announcement in a crash reloads everything (Resync) when
// it reconnects. So announcing never waits for a WAL flush.
func (db *DB) Notify(ctx context.Context, payloads ...string) error {
	if len(payloads) == 0 {
		return nil
	}
	db.notifyMu.Lock()
	defer db.notifyMu.Unlock()
	c, err := db.notifier.get(ctx, db)
	if err != nil {
		return err
	}
	if _, err = c.Exec(ctx, "INSERT INTO changes (payload) SELECT p FROM unnest($1::text[]) WITH ORDINALITY AS x(p, n) ORDER BY n", payloads); err != nil {
		db.notifier.close()
		return err
	}
	db.kickChanges()
	return nil
}

// kickChanges asks this replica's reader to read the changes table now.
func (db *DB) kickChanges() {
	select {
	case db.changesKick <- struct{}{}:
	default:
	}
}

// changeReader reads the changes table: which rows it has delivered, and
// below which transaction id every row is known to be delivered.
type changeReader struct {
	safe    uint64           // every row of a transaction below it was read
	seen    map[int64]uint64 // delivered rows at or above safe: id -> xid
	healthy bool             // the last read succeeded
}

// readChanges delivers new changes whenever it is woken (a NOTIFY from the
// integrating replica, a local Notify) and every changePoll; while this
// replica integrates, every leaderChangePoll, and it then wakes the others.
func (db *DB) readChanges(ctx context.Context) {
	r := &changeReader{seen: map[int64]uint64{}}
	conn := ownConn{role: "changes"} // not the pool's: a busy pool would hold changes up
	defer conn.close()
	pace := backoff{min: leaderChangePoll}
	fast := time.NewTimer(pace.found(true))
	defer fast.Stop()
	slow := time.NewTicker(changePoll)
	defer slow.Stop()
	// rearm sets the next read of the integrating replica: soon while
	// changes come, later while none do (and after a failed read).
	rearm := func(found bool) {
		if !fast.Stop() {
			select {
			case <-fast.C:
			default:
			}
		}
		fast.Reset(pace.found(found))
	}
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.changesKick:
		case <-slow.C:
		case <-fast.C:
			if !db.leading.get() {
				fast.Reset(idlePoll)
				continue
			}
		}
		c, err := conn.get(ctx, db)
		var n int
		if err == nil {
			if n, err = db.readNew(ctx, c, r, first); err != nil {
				conn.close()
			}
		}
		if err != nil {
			if r.healthy && ctx.Err() == nil {
				db.log.Warn("reading the changes of other replicas failed; forgetting what depends on them until it works again", "err", err)
			}
			if r.healthy || first {
				db.keys.listen(false)
				db.open.listen(false)
			}
			r.healthy, first = false, false
			if db.leading.get() {
				rearm(false)
			}
			continue
		}
		if first || !r.healthy { // (re)connected: anything may have been missed
			db.keys.listen(true)
			db.open.listen(true)
			db.subs.deliver(Resync)
			if first {
				close(db.changesRead)
			}
			r.healthy, first = true, false
		}
		if db.leading.get() {
			if n > 0 {
				db.wake(db.chChange)
			}
			// While it integrates, this replica reads for every other one.
			rearm(n > 0)
		}
	}
}

// readNew delivers the rows of the changes table not delivered yet and
// returns how many. The rows of transactions that were still running when
// it read may commit later with lower ids, so the next read starts from
// the oldest of those (the snapshot's xmin), skipping rows delivered.
// The first read only takes note of what may still commit (what
// committed before it is what Resync stands for).
func (db *DB) readNew(ctx context.Context, conn *pgx.Conn, r *changeReader, first bool) (int, error) {
	rows, err := conn.Query(ctx, `WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
		SELECT s.xmin::text, c.id, c.xid::text, c.payload
		FROM s LEFT JOIN changes c ON c.xid >= CASE WHEN $2 THEN s.xmin ELSE $1::text::xid8 END ORDER BY c.id`,
		strconv.FormatUint(r.safe, 10), first)
	if err != nil {
		return 0, err
	}
	type row struct {
		id      int64
		xid     uint64
		payload string
	}
	var got []row
	var xmin string
	var id *int64
	var xid, payload *string
	if _, err := pgx.ForEachRow(rows, []any{&xmin, &id, &xid, &payload}, func() error {
		if id != nil {
			x, _ := strconv.ParseUint(*xid, 10, 64)
			got = append(got, row{*id, x, *payload})
		}
		return nil
	}); err != nil {
		return 0, err
	}
	safe, err := strconv.ParseUint(xmin, 10, 64)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range got {
		if _, ok := r.seen[c.id]; ok {
			continue
		}
		r.seen[c.id] = c.xid
		if first {
			continue
		}
		n++
		switch c.payload {
		case keysChanged:
			db.keys.forget()
		case sessionsChanged:
			db.open.forget()
		}
		db.subs.deliver(c.payload)
	}
	r.safe = safe
	for id, x := range r.seen {
		if x < safe {
			delete(r.seen, id)
		}
	}
	return n, nil
}

// wake sends one NOTIFY without payload on channel; wake-ups asked for
// while one is being sent are sent together, as the next.
func (db *DB) wake(channel string) {
	w := db.wakeAudit
	if channel == db.chChange {
		w = db.wakeChange
	}
	select {
	case w <- struct{}{}:
	default:
	}
}

// sendWakes sends the NOTIFYs wake asks for, one at a time, outside any
// other transaction: this replica is then the only one that notifies.
func (db *DB) sendWakes(ctx context.Context) {
	conn := ownConn{role: "wakes"}
	defer conn.close()
	for {
		var ch string
		select {
		case <-ctx.Done():
			return
		case <-db.wakeAudit:
			ch = db.chAudit
		case <-db.wakeChange:
			ch = db.chChange
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := conn.get(sctx, db)
		if err == nil {
			if _, err := c.Exec(sctx, "SELECT pg_notify($1, '')", ch); err != nil {
				conn.close()
			}
		}
		cancel()
	}
}

// ownConn is a connection of one goroutine's own, opened when first needed
// and again after close.
type ownConn struct {
	role  string
	setup []string // run on every new connection
	c     *pgx.Conn
}

func (o *ownConn) get(ctx context.Context, db *DB) (*pgx.Conn, error) {
	if o.c != nil {
		return o.c, nil
	}
	c, err := db.connect(ctx, o.role)
	if err != nil {
		return nil, err
	}
	for _, stmt := range o.setup {
		if _, err := c.Exec(ctx, stmt); err != nil {
			c.Close(ctx)
			return nil, err
		}
	}
	o.c = c
	return c, nil
}

func (o *ownConn) close() {
	if o.c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	o.c.Close(ctx)
	cancel()
	o.c = nil
}

// trimChanges removes changes every replica has had time to read.
func (db *DB) trimChanges(ctx context.Context) {
	db.pool.Exec(ctx, "DELETE FROM changes WHERE at < now() - interval '5 minutes'")
}
