package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/internal/testenv"
)

// TestReplicasShareNoHotLock runs 2, 3 and 4 replicas (stores on one
// schema, as production's replicas share one) under a load of checks,
// samples pg_locks and pg_stat_activity every few milliseconds, and fails
// when one lock (a row, a transaction's row locks, or the database's
// notification lock) is waited on by backends of more than one replica at
// once: such a lock would be a point every replica queues on. (Waits for
// other heavyweight locks, such as a table's extension, are counted and
// reported, not failed.) Each agent
// keeps to one replica (its session's checks reach one replica, as with
// session affinity at the load balancer), so the only thing the replicas
// share is the audit log. It also measures what docs/scale.md's model
// needs: checks per second, the integrator's busy time per 1,000 checks,
// and how long a change notified on one replica takes to reach another.
//
//	go test ./postgres -run TestReplicasShareNoHotLock -v
//
// REIN_CONTENTION_SECONDS sets the load's length per replica count (3 s).
func TestReplicasShareNoHotLock(t *testing.T) {
	seconds := 3
	if s, err := strconv.Atoi(os.Getenv("REIN_CONTENTION_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	// REIN_CONTENTION_RATE offers that many checks per second in all,
	// spread over the replicas' agents, instead of as many as they answer:
	// a fixed load, to compare the integrator's time per check across
	// replica counts.
	rate, _ := strconv.Atoi(os.Getenv("REIN_CONTENTION_RATE"))
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("replicas=%d", n), func(t *testing.T) {
			m := loadReplicas(t, n, 8, time.Duration(seconds)*time.Second, rate)
			t.Logf("%d replicas: %d checks in %v (%.0f/s), check p50 %v p99 %v; integrator placing %.1f ms and sealing %.1f ms per 1k checks (%d entries placed by it); %d samples, waits %v; change notified on one replica seen on another: p50 %v p99 %v (%d; storing it took %v at p99, from its commit to its receipt %v at p99)",
				n, m.checks, m.wall.Round(time.Millisecond), float64(m.checks)/m.wall.Seconds(), m.p50, m.p99,
				m.placingPer1k, m.sealingPer1k, m.placed, m.samples, m.waits, m.wakeP50, m.wakeP99, m.wakes, m.storeP99, m.deliverP99)
			for _, s := range m.shared {
				t.Errorf("waited on by several replicas at once: %s", s)
			}
			// What the replicas' way of telling each other adds, from the
			// change's commit on: under 100 ms at p99. (The sender's own
			// insert, a commit like any other, is reported above; on an
			// overloaded machine it alone can take longer.)
			if m.wakes < 10 {
				t.Errorf("only %d changes reached the other replica", m.wakes)
			} else if m.deliverP99 > 100*time.Millisecond {
				t.Errorf("a change reached the other replica %v after its commit at p99; want under 100 ms", m.deliverP99)
			}
		})
	}
}

// contention is what loadReplicas measured.
type contention struct {
	checks                     int64
	wall                       time.Duration
	p50, p99                   time.Duration
	placingPer1k, sealingPer1k float64 // milliseconds of the integrator per 1,000 checks
	placed                     int64
	samples                    int
	waits                      map[string]int // samples with a backend waiting, by lock class
	shared                     []string       // locks waited on by several replicas in one sample
	wakes                      int
	wakeP50, wakeP99           time.Duration
	storeP99                   time.Duration // of inserting the change, on the sending replica
	deliverP99                 time.Duration // from the change's commit to its receipt
}

// loadReplicas opens n replicas on one schema, the first of them the
// integrator (with a sealer, as rein serve runs it), records checks from
// agents agents per replica for d (at rate checks per second in all, or
// as fast as they are answered when rate is 0), and samples the locks
// meanwhile.
func loadReplicas(t *testing.T, n, agents int, d time.Duration, rate int) *contention {
	t.Helper()
	ctx := context.Background()
	base := testenv.Postgres(t)
	tag := strings.ToLower(rein.NewID("ct"))
	skey, vkey, err := note.GenerateKey(rand.Reader, "rein/contention")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	dbs := make([]*DB, n)
	for i := range n {
		db, err := Open(ctx, fmt.Sprintf("%s&application_name=%s", base, url.QueryEscape(fmt.Sprintf("%s/%d", tag, i))), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		sealer := &audit.Sealer{Store: db, Origin: "rein/contention", Signer: signer, Known: note.VerifierList(verifier), Now: time.Now}
		db.SetSeal(func(ctx context.Context) error { _, err := sealer.Seal(ctx); return err })
		dbs[i] = db
		if i == 0 {
			for deadline := time.Now().Add(10 * time.Second); !db.Leading(); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the first replica did not become the integrator")
				}
			}
		}
	}

	// Changes notified on the last replica, received on the first.
	var wakeMu sync.Mutex
	var wakes, stored []time.Duration
	received := map[int64]time.Time{} // by the time the change was sent
	dbs[0].Subscribe(func(p string) {
		if at, ok := strings.CutPrefix(p, "wake:"+tag+":"); ok {
			ns, _ := strconv.ParseInt(at, 10, 64)
			wakeMu.Lock()
			wakes = append(wakes, time.Since(time.Unix(0, ns)))
			received[ns] = time.Now()
			wakeMu.Unlock()
		}
	})
	committed := map[int64]time.Time{}

	sampler, err := pgx.Connect(ctx, testenv.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer sampler.Close(ctx)

	before := make([]integratorClockSnapshot, n)
	for i, db := range dbs {
		before[i] = db.busy.snapshot()
	}
	m := &contention{waits: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var checks atomic.Int64
	var latMu sync.Mutex
	var lats []time.Duration
	start := time.Now()
	for i, db := range dbs {
		for a := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				defer func() { latMu.Lock(); lats = append(lats, mine...); latMu.Unlock() }()
				var every time.Duration // between this agent's checks, at a fixed rate
				if rate > 0 {
					every = time.Duration(float64(time.Second) * float64(n*agents) / float64(rate))
				}
				for k := 0; ; k++ {
					if every > 0 {
						due := start.Add(time.Duration(k) * every)
						select {
						case <-stop:
							return
						case <-time.After(time.Until(due)):
						}
					}
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("chk_%s_%d_%d_%d", tag, i, a, k)
					rec := &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: rein.Allow, Reason: "allowed by rule read-only",
						ActionHash: "sha256:" + id, Args: json.RawMessage(`{"path":"README.md"}`), Risk: []string{}},
						Tenant: "acme", CreatedAt: time.Now().UTC(), KeyID: "key_1", Facts: map[string]any{}, Shadow: []rein.ShadowMatch{},
						Check: rein.CheckInput{Tool: "fs.read", Agent: fmt.Sprintf("agent-%d-%d", i, a), Session: fmt.Sprintf("s-%d-%d", i, a),
							Args: json.RawMessage(`{"path":"README.md"}`)}}
					e := &rein.Entry{TS: rec.CreatedAt, Tenant: rec.Tenant, Kind: rein.KindCheck, Actor: rec.Check.Agent, Subject: id,
						Data: map[string]any{"tool": rec.Check.Tool, "decision": "allow", "reason": rec.Reason, "action_hash": rec.ActionHash}}
					t0 := time.Now()
					if _, err := db.RecordCheck(ctx, rec, nil, nil, []*rein.Entry{e}); err != nil {
						t.Errorf("replica %d: %v", i, err)
						return
					}
					mine = append(mine, time.Since(t0))
					checks.Add(1)
				}
			}()
		}
	}
	wg.Add(1)
	go func() { // a change every 20 ms from the last replica
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				t0 := time.Now()
				if err := dbs[n-1].Notify(ctx, fmt.Sprintf("wake:%s:%d", tag, t0.UnixNano())); err != nil {
					t.Errorf("notify: %v", err)
				}
				wakeMu.Lock()
				stored = append(stored, time.Since(t0))
				committed[t0.UnixNano()] = time.Now()
				wakeMu.Unlock()
			}
		}
	}()

	sharedSeen := map[string]bool{}
	for deadline := start.Add(d); time.Now().Before(deadline); time.Sleep(3 * time.Millisecond) {
		waits, err := sampleLockWaits(ctx, sampler, tag)
		if err != nil {
			t.Fatal(err)
		}
		m.samples++
		byLock := map[string]map[string]bool{}
		classes := map[string]bool{}
		for _, w := range waits {
			classes[w.class] = true
			if byLock[w.lock] == nil {
				byLock[w.lock] = map[string]bool{}
			}
			if w.serial {
				byLock[w.lock][w.replica] = true
			}
		}
		for c := range classes {
			m.waits[c]++
		}
		for lock, reps := range byLock {
			if len(reps) > 1 && !sharedSeen[lock] {
				sharedSeen[lock] = true
				names := make([]string, 0, len(reps))
				for r := range reps {
					names = append(names, r)
				}
				sort.Strings(names)
				m.shared = append(m.shared, fmt.Sprintf("%s by replicas %s", lock, strings.Join(names, ", ")))
			}
		}
	}
	close(stop)
	wg.Wait()
	m.wall = time.Since(start)
	m.checks = checks.Load()
	var placing, sealing int64
	for i, db := range dbs {
		d := db.busy.snapshot().minus(before[i])
		placing, sealing, m.placed = placing+d.placing, sealing+d.sealing, m.placed+d.placed
	}
	if m.checks > 0 {
		m.placingPer1k = float64(placing) / 1e6 / float64(m.checks) * 1000
		m.sealingPer1k = float64(sealing) / 1e6 / float64(m.checks) * 1000
	}
	m.p50, m.p99 = percentile(lats, 0.50), percentile(lats, 0.99)
	time.Sleep(200 * time.Millisecond) // the last changes arrive
	wakeMu.Lock()
	m.wakes, m.wakeP50, m.wakeP99 = len(wakes), percentile(wakes, 0.50), percentile(wakes, 0.99)
	m.storeP99 = percentile(stored, 0.99)
	var delivered []time.Duration
	for sent, at := range received {
		if c, ok := committed[sent]; ok {
			delivered = append(delivered, max(0, at.Sub(c)))
		}
	}
	m.deliverP99 = percentile(delivered, 0.99)
	wakeMu.Unlock()
	return m
}

// lockWait is one backend of a replica waiting for a heavyweight lock or
// the notification queue.
type lockWait struct {
	replica string
	class   string // what kind of lock: "tuple audit_head", "transactionid", "notify", ...
	lock    string // which lock exactly
	serial  bool   // a row lock or the notification lock: what no two replicas may queue on
}

// sampleLockWaits reads which backends of the replicas tagged tag wait for
// a lock now. The notification lock is the database object lock
// (pg_database) that a committing transaction that notified holds until
// its commit ends, and the notification queue's LWLocks.
func sampleLockWaits(ctx context.Context, conn *pgx.Conn, tag string) ([]lockWait, error) {
	rows, err := conn.Query(ctx, `SELECT a.application_name, a.wait_event_type, a.wait_event,
			COALESCE(l.locktype, ''), COALESCE(l.relation::regclass::text, ''), COALESCE(l.page, -1), COALESCE(l.tuple, -1),
			COALESCE(l.transactionid::text, ''), COALESCE(l.classid::regclass::text, ''), COALESCE(l.objid::bigint, 0)
		FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
		WHERE a.application_name LIKE $1 AND (a.wait_event_type = 'Lock' OR (a.wait_event_type = 'LWLock' AND a.wait_event LIKE 'Notify%'))`,
		tag+"/%")
	if err != nil {
		return nil, err
	}
	var out []lockWait
	var app, wtype, wevent, ltype, rel, txid, class string
	var page, tuple int32
	var objid int64
	_, err = pgx.ForEachRow(rows, []any{&app, &wtype, &wevent, &ltype, &rel, &page, &tuple, &txid, &class, &objid}, func() error {
		// tag/replica for the pool's writers, tag/replica role for the
		// store's own connections (listener, integrator, changes, wakes).
		replica, role, _ := strings.Cut(app[strings.LastIndex(app, "/")+1:], " ")
		w := lockWait{replica: replica}
		switch {
		case wtype == "Lock" && ltype == "": // the wait ended between the two views
			return nil
		case wtype == "LWLock":
			w.class, w.lock = "notify queue", "LWLock "+wevent
		case ltype == "object" && class == "pg_database":
			w.class, w.lock = "notify", "the database's notification lock"
		case ltype == "tuple":
			w.class, w.lock, w.serial = "tuple "+rel, fmt.Sprintf("row (%d,%d) of %s", page, tuple, rel), true
		case ltype == "transactionid":
			w.class, w.lock, w.serial = "transactionid", "the row locks of transaction "+txid, true
		default: // relation extension and the like: brief, not a row
			w.class, w.lock = ltype+" "+rel+class, fmt.Sprintf("%s %s%s %d", ltype, rel, class, objid)
		}
		if w.class == "notify" || w.class == "notify queue" {
			// A listener reading the queue waits behind the one sender;
			// the receivers do not queue on each other's work.
			w.serial = role != "listener"
		}
		if role == "listener" {
			w.class += " (listener)"
		}
		out = append(out, w)
		return nil
	})
	return out, err
}

func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

type integratorClockSnapshot struct{ placing, sealing, placed int64 }

func (c *integratorClock) snapshot() integratorClockSnapshot {
	return integratorClockSnapshot{c.placing.Load(), c.sealing.Load(), c.placed.Load()}
}

func (a integratorClockSnapshot) minus(b integratorClockSnapshot) integratorClockSnapshot {
	return integratorClockSnapshot{a.placing - b.placing, a.sealing - b.sealing, a.placed - b.placed}
}
