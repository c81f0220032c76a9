// Package postgres implements rein.Store on PostgreSQL (pgx), for several
// `rein serve` replicas sharing one database.
//
// Writers never take the audit log's next index themselves: each adds its
// entries to an outbox in the transaction of its state change, and one
// integrator (elected with an advisory lock, fenced by a compare-and-set on
// the log head) moves them into the log with contiguous indexes. A write
// returns once its entries have their indexes, so "acknowledged" means "in
// the log", as with the SQLite store.
//
// Replicas tell each other about changes through a table, woken by one
// NOTIFY sender, the integrator (see Notify).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the PostgreSQL store.
type DB struct {
	pool   *pgxpool.Pool
	conn   *pgx.ConnConfig // for the dedicated connections (listener, integrator)
	schema string
	log    *slog.Logger
	id     string // this process, as the log head names its integrator

	chAudit, chChange string // NOTIFY channels (wake-ups), per schema
	lockKey           int64  // the integrator's advisory lock

	idx  indexWaiters // writers waiting for their entries' indexes
	subs subscribers  // receivers of change notifications

	leading leadership // whether, and in which term, this process is the integrator
	busy    integratorClock
	sealMu  sync.Mutex
	seal    func(context.Context) error // run by the integrator every second

	batchJobs   chan *batchJob        // checks waiting to be recorded in a batch (batch.go)
	closed      <-chan struct{}       // closed by Close
	outboxKick  chan struct{}         // a local write added to the outbox
	changesRead chan struct{}         // closed once the changes table was first read
	changesKick chan struct{}         // read the changes table now (notify.go)
	wakeAudit   chan struct{}         // the integrator placed entries: wake the others (notify.go)
	wakeChange  chan struct{}         // new changes: wake the others
	notifyMu    sync.Mutex            // guards notifier
	notifier    ownConn               // Notify's connection
	keys        changeMemo[*rein.Key] // active keys by secret hash (changememo.go)
	open        changeMemo[struct{}]  // sessions known not to have ended, by tenant and id
	empty       emptySeen             // rate-limit buckets seen without a token (limits.go)
	stop        context.CancelFunc
	wg          sync.WaitGroup
}

var _ rein.Store = (*DB)(nil)

// Open connects to the database at url (postgres://…; a search_path
// parameter selects the schema), applies migrations and starts the
// listener and the integrator election.
func Open(ctx context.Context, url string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", redact(url), err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = 32
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redact(url), err)
	}
	db := &DB{notifier: ownConn{role: "notifier", setup: []string{"SET synchronous_commit = off"}}, pool: pool, conn: cfg.ConnConfig.Copy(), log: log, outboxKick: make(chan struct{}, 1),
		changesKick: make(chan struct{}, 1), changesRead: make(chan struct{}), wakeAudit: make(chan struct{}, 1), wakeChange: make(chan struct{}, 1)}
	host, _ := os.Hostname()
	db.id = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rein.NewID("int"))
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&db.schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", redact(url), err)
	}
	if db.schema == "" {
		pool.Close()
		return nil, fmt.Errorf("%s: the search_path names no existing schema; create it first (CREATE SCHEMA …)", redact(url))
	}
	db.chAudit, db.chChange = "rein_audit:"+db.schema, "rein_change:"+db.schema
	if err := pool.QueryRow(ctx, "SELECT hashtextextended($1, 0)", db.schema+"/rein/integrator").Scan(&db.lockKey); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate %s: %w", redact(url), err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	db.stop, db.closed = stop, runCtx.Done()
	db.idx.init()
	ready := make(chan struct{})
	db.batchJobs = make(chan *batchJob, maxCheckBatch)
	db.wg.Add(5 + batchWorkers)
	for range batchWorkers {
		go func() { defer db.wg.Done(); db.batcher(runCtx) }()
	}
	go func() { defer db.wg.Done(); db.listen(runCtx, ready) }()
	go func() { defer db.wg.Done(); db.readChanges(runCtx) }()
	go func() { defer db.wg.Done(); db.sendWakes(runCtx) }()
	go func() { defer db.wg.Done(); db.resolveIndexes(runCtx) }()
	go func() { defer db.wg.Done(); db.elect(runCtx) }()
	// The listener is up before the first write waits on it, and the
	// changes table read once: a change made after Open returns reaches
	// this store's subscribers.
	timeout := time.After(5 * time.Second)
	for _, ch := range []chan struct{}{ready, db.changesRead} {
		select {
		case <-ch:
		case <-timeout:
		}
	}
	return db, nil
}

// connect opens a connection outside the pool for one of the store's own
// loops; its application_name says which (role), so that pg_stat_activity
// tells a replica's listener and integrator from its writers.
func (db *DB) connect(ctx context.Context, role string) (*pgx.Conn, error) {
	cfg := db.conn.Copy()
	name := cfg.RuntimeParams["application_name"]
	if name == "" {
		name = "rein"
	}
	cfg.RuntimeParams["application_name"] = name + " " + role
	return pgx.ConnectConfig(ctx, cfg)
}

// redact hides a password in a database URL.
func redact(url string) string {
	at := strings.LastIndex(url, "@")
	scheme := strings.Index(url, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return url
	}
	userinfo := url[scheme+3 : at]
	if i := strings.Index(userinfo, ":"); i >= 0 {
		return url[:scheme+3] + userinfo[:i] + ":xxxxx" + url[at:]
	}
	return url
}

func (db *DB) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// Replicas starting together migrate one at a time.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", db.lockKey+1); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS rein_schema (version INT NOT NULL)"); err != nil {
			return err
		}
		have := 0
		if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM rein_schema").Scan(&have); err != nil {
			return err
		}
		pending, err := storesql.Pending(migrations, "migrations", have)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO rein_schema (version) VALUES ($1)", m.Version); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close stops the listener and the integrator (a last integration and
// seal first, when this process integrates) and closes the pool.
func (db *DB) Close() error {
	db.stop()
	db.wg.Wait()
	db.notifyMu.Lock()
	db.notifier.close()
	db.notifyMu.Unlock()
	db.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.pool.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// Meta returns a stored setting, creating it with init() when absent.
func (db *DB) Meta(ctx context.Context, key string, init func() string) (string, error) {
	if _, err := db.pool.Exec(ctx, "INSERT INTO meta (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING", key, init()); err != nil {
		return "", err
	}
	var v string
	err := db.pool.QueryRow(ctx, "SELECT v FROM meta WHERE k = $1", key).Scan(&v)
	return v, err
}

// wtx is a write transaction: its audit entries go to the outbox, and the
// caller is answered once the integrator has placed them in the log.
type wtx struct {
	pgx.Tx
	seqs []int64 // outbox rows added, in order
}

// write runs fn in a transaction, retried when PostgreSQL aborts it for a
// deadlock or a serialization failure, and returns once the transaction
// is committed and its audit entries are in the log. first is the index
// of the first entry (-1 when it wrote none).
func (db *DB) write(ctx context.Context, fn func(tx *wtx) error) (first int64, err error) {
	var waits []int64 // the first and last outbox rows: both placed, all are
	var chans []chan int64
	for attempt := 0; ; attempt++ {
		waits, chans = nil, nil
		err = pgx.BeginFunc(ctx, db.pool, func(raw pgx.Tx) error {
			tx := &wtx{Tx: raw}
			if err := fn(tx); err != nil {
				return err
			}
			if len(tx.seqs) == 0 {
				return nil
			}
			waits = []int64{tx.seqs[0]}
			if n := len(tx.seqs); n > 1 {
				waits = append(waits, tx.seqs[n-1])
			}
			for _, seq := range waits { // before the commit: no integration passes it by
				chans = append(chans, db.idx.register(seq))
			}
			return nil
		})
		if err != nil {
			for i, seq := range waits {
				db.idx.cancel(seq, chans[i])
			}
		}
		if err == nil || attempt >= 4 || !retryable(err) {
			break
		}
	}
	if err != nil {
		return -1, err
	}
	if len(waits) == 0 {
		return -1, nil
	}
	return db.awaitPlaced(ctx, waits, chans)
}

// writeValue runs fn in a write transaction (write) and returns what it
// made, in the attempt that committed.
func writeValue[T any](ctx context.Context, db *DB, fn func(*wtx) (T, error)) (T, error) {
	var out T
	_, err := db.write(ctx, func(tx *wtx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

// awaitPlaced tells the integrator that the outbox grew and waits until
// the rows seqs (registered as chans before their commit) are placed in
// the log; it returns the index of the first.
func (db *DB) awaitPlaced(ctx context.Context, seqs []int64, chans []chan int64) (int64, error) {
	db.kickIntegrator()
	first := int64(-1)
	for i, seq := range seqs {
		idx, err := db.awaitIndex(ctx, seq, chans[i])
		if err != nil {
			for j := i + 1; j < len(seqs); j++ {
				db.idx.cancel(seqs[j], chans[j])
			}
			return -1, err
		}
		if i == 0 {
			first = idx
		}
	}
	return first, nil
}

// kickIntegrator tells the integrator that the outbox grew, when this
// process integrates. Writers never NOTIFY: PostgreSQL serialises the
// commits of every transaction that notifies (a database-wide lock held
// until the commit is flushed), so replicas that notify queue on each
// other. The integrator elsewhere looks at the outbox every outboxPoll.
func (db *DB) kickIntegrator() {
	if !db.leading.get() {
		return
	}
	select {
	case db.outboxKick <- struct{}{}:
	default:
	}
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// violates reports whether err is a unique violation of the named index.
func violates(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == constraint
}

// appendEncoded adds entries to the outbox.
func (tx *wtx) appendEncoded(ctx context.Context, encs []*rein.EntryEncoding) error {
	if len(encs) == 0 {
		return nil
	}
	tenants, kinds := make([]string, len(encs)), make([]string, len(encs))
	heads, tails := make([][]byte, len(encs)), make([][]byte, len(encs))
	for i, x := range encs {
		tenants[i], kinds[i] = x.Tenant, x.Kind
		heads[i], tails[i] = x.Parts()
	}
	rows, err := tx.Query(ctx, `INSERT INTO audit_outbox (tenant, kind, head, tail)
		SELECT t, k, h, tl FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[]) WITH ORDINALITY AS x(t, k, h, tl, n) ORDER BY n
		RETURNING seq`, tenants, kinds, heads, tails)
	if err != nil {
		return fmt.Errorf("add audit entries to the outbox: %w", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("add audit entries to the outbox: %w", err)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	tx.seqs = append(tx.seqs, seqs...)
	return nil
}

func (tx *wtx) appendEntries(ctx context.Context, entries ...*rein.Entry) error {
	encs, err := rein.EncodeEntries(entries)
	if err != nil {
		return err
	}
	return tx.appendEncoded(ctx, encs)
}

// Append writes entries that accompany no other state change.
func (db *DB) Append(ctx context.Context, entries ...*rein.Entry) error {
	encs, err := rein.EncodeEntries(entries)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error { return tx.appendEncoded(ctx, encs) })
	return err
}

// timeFormat is fixed-width UTC, so that stored times compare as strings.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func ts(t time.Time) string { return t.UTC().Format(timeFormat) }

func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func parseTS(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// notFound maps pgx.ErrNoRows to rein.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return rein.ErrNotFound
	}
	return err
}

// leadership is the term in which this process integrates the audit log,
// 0 while it does not.
type leadership struct{ term atomic.Int64 }

func (l *leadership) get() bool { return l.term.Load() > 0 }

// integratorClock is the time this process spent integrating: placing
// entries (with the waits for the head) and sealing. It is what every
// replica's checks share, the serial part of a replica set (docs/scale.md).
type integratorClock struct {
	placing, sealing atomic.Int64 // nanoseconds
	placed           atomic.Int64 // entries placed by the integrator
}

// Leading reports whether this process is the audit log's integrator now.
func (db *DB) Leading() bool { return db.leading.get() }
