package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// Group commit for the common check. Most checks change nothing but their
// own rows: an outbox entry, the check, and their session's counters. The
// checks that a replica is recording at the same moment are written in one
// transaction, with one statement per table for all of them (rows passed
// as arrays), so a batch costs a handful of round trips and one commit
// instead of several round trips and a commit per check.
//
// A check that creates an approval (an ask) adds its approval's row to the
// batch; one whose action already has a pending approval (another check
// asked first, or an approval timed out and must be expired first) is
// taken out and recorded alone. A check that uses an approval, opens a
// review or carries a request_id (whose duplicate must be answered with
// the first record) is recorded alone, as before. When a batch fails for
// any reason, nothing of it is committed and each of its checks is
// recorded alone: the batch is only ever a faster way to the same rows.

// batchWorkers is how many batches may be in flight at once on a replica.
// Sessions are locked in one order by every batch, so batches do not
// deadlock on them.
const (
	batchWorkers  = 1
	maxCheckBatch = 128
)

// batchJob is one check waiting for a batch.
type batchJob struct {
	ctx  context.Context
	rec  *rein.CheckRecord
	body string
	encs []*rein.EntryEncoding
	// created is the approval the check creates (an ask), with its stored
	// form; nil for the others.
	created      *rein.Approval
	approvalBody string
	done         chan batchDone
}

// batchDone answers a job: the index of its first audit entry when the
// batch placed its entries in the log itself (placed), or else the index
// waiters of its first and last outbox rows (registered before the
// commit); or an error. errAlone asks the caller to record the check by
// itself.
type batchDone struct {
	placed bool
	first  int64
	seqs   []int64
	chans  []chan int64
	err    error
}

var (
	errAlone  = errors.New("record alone")
	errClosed = errors.New("the store is closed")
)

// batchable reports whether a check may be recorded in a batch.
func batchable(rec *rein.CheckRecord, use *rein.ApprovalUse) bool {
	return use == nil && rec.Review == nil && rec.Check.RequestID == ""
}

// recordBatched records a check through the batchers and returns the index
// of its first audit entry; errAlone when the check must be recorded alone.
func (db *DB) recordBatched(ctx context.Context, rec *rein.CheckRecord, body string, encs []*rein.EntryEncoding, created *rein.Approval) (int64, error) {
	j := &batchJob{ctx: ctx, rec: rec, body: body, encs: encs, created: created, done: make(chan batchDone, 1)}
	if created != nil {
		b, err := storesql.StoredApproval(created)
		if err != nil {
			return -1, err
		}
		j.approvalBody = string(b)
	}
	select {
	case db.batchJobs <- j:
	case <-ctx.Done():
		return -1, ctx.Err()
	case <-db.closed:
		return -1, errClosed
	}
	var d batchDone
	select {
	case d = <-j.done:
	case <-ctx.Done(): // the batch may still commit it, as a write whose caller left
		return -1, ctx.Err()
	case <-db.closed: // the same; or no batcher is left to take it
		return -1, errClosed
	}
	if d.err != nil {
		return -1, d.err
	}
	if d.placed {
		return d.first, nil
	}
	return db.awaitPlaced(ctx, d.seqs, d.chans)
}

// batcher takes the next job and every job already waiting, and records
// them in one transaction. When the store closes, waiting jobs are sent
// back to be recorded alone (which then fails with the closed pool).
func (db *DB) batcher(ctx context.Context) {
	for {
		var first *batchJob
		select {
		case first = <-db.batchJobs:
		case <-ctx.Done():
			for {
				select {
				case j := <-db.batchJobs:
					j.done <- batchDone{err: errAlone}
				default:
					return
				}
			}
		}
		batch := []*batchJob{first}
	gather:
		for len(batch) < maxCheckBatch {
			select {
			case j := <-db.batchJobs:
				batch = append(batch, j)
			default:
				break gather
			}
		}
		db.recordBatch(ctx, batch)
	}
}

// recordBatch writes the batch's checks in one transaction and answers
// every job.
func (db *DB) recordBatch(ctx context.Context, batch []*batchJob) {
	live := batch[:0:0]
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil { // the caller left before its turn
			j.done <- batchDone{err: err}
			continue
		}
		live = append(live, j)
	}
	var answers []batchDone
	var err error
	term := db.leading.term.Load() // this replica integrates: place the entries directly
	for len(live) > 0 {
		answers, err = db.writeBatch(ctx, live, term)
		if term > 0 && errors.Is(err, errDeposed) {
			term = 0 // another replica integrates now: through the outbox
			continue
		}
		var pending pendingApprovals
		if !errors.As(err, &pending) {
			break
		}
		// Nothing was committed: the checks whose action has a pending
		// approval go alone, and the batch runs again without them.
		rest := live[:0:0]
		for i, j := range live {
			if pending[i] {
				j.done <- batchDone{err: errAlone}
			} else {
				rest = append(rest, j)
			}
		}
		live = rest
	}
	if len(live) == 0 {
		return
	}
	if err != nil {
		db.log.Debug("a batch of checks failed; recording each alone", "checks", len(live), "err", err)
		for _, j := range live {
			j.done <- batchDone{err: errAlone}
		}
		return
	}
	for i, j := range live {
		j.done <- answers[i]
	}
}

// pendingApprovals is a batch's failure when some of its asks could not
// create their approval: their action has a pending approval already. It
// holds the positions of those jobs.
type pendingApprovals map[int]bool

func (p pendingApprovals) Error() string {
	return fmt.Sprintf("%d checks of the batch ask about an action with a pending approval", len(p))
}

// writeBatch runs the batch's transaction. With term 0 the entries go to
// the outbox, and on success every job's first and last outbox rows are
// registered with the index waiters (before the commit, so that no
// integration passes them by). With the term in which this replica
// integrates, the batch places its entries in the log itself, as the
// integrator would (the head locked, the entries written at the next
// indexes, the head moved on with a compare-and-set of size and term),
// and each job learns its index at commit: one transaction per batch
// instead of two, and each entry written once. The head is locked after
// the sessions and approvals, so a batch holds it only for its last round
// trip and its commit; a batch that finds another term in the head
// returns errDeposed, having changed nothing.
func (db *DB) writeBatch(ctx context.Context, jobs []*batchJob, term int64) ([]batchDone, error) {
	// The sessions the batch touches, in one order (tenant, id): every
	// batch locks them in this order.
	type sessionKey struct{ tenant, id string }
	var keys []sessionKey
	seen := map[sessionKey]bool{}
	var tenants, kinds []string
	var heads, tails [][]byte
	var encs []*rein.EntryEncoding // every entry of the batch, in order
	var asks []int                 // the jobs that create an approval
	for i, j := range jobs {
		if j.created != nil {
			asks = append(asks, i)
		}
		if s := j.rec.Check.Session; s != "" && !seen[sessionKey{j.rec.Tenant, s}] {
			seen[sessionKey{j.rec.Tenant, s}] = true
			keys = append(keys, sessionKey{j.rec.Tenant, s})
		}
		for _, x := range j.encs {
			h, t := x.Parts()
			tenants, kinds, heads, tails = append(tenants, x.Tenant), append(kinds, x.Kind), append(heads, h), append(tails, t)
			encs = append(encs, x)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].tenant != keys[b].tenant {
			return keys[a].tenant < keys[b].tenant
		}
		return keys[a].id < keys[b].id
	})
	sTenants, sIDs, fresh := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		sTenants[i], sIDs[i] = k.tenant, k.id
		for _, j := range jobs { // a new session starts with its first check here
			if j.rec.Tenant == k.tenant && j.rec.Check.Session == k.id {
				b, _ := json.Marshal(storesql.SessionOf(j.rec))
				fresh[i] = string(b)
				break
			}
		}
	}

	var answers []batchDone
	var registered []batchDone
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// Round trip 1: the sessions locked in order (tenant, id), created
		// where missing, and read; the outbox rows of every entry. A
		// session is created here as it starts (no check counted), so that
		// the counts below are the only place a check is counted.
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO sessions AS s (tenant, id, record) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ORDER BY 1, 2
			ON CONFLICT (tenant, id) DO UPDATE SET record = s.record RETURNING s.tenant, s.id, s.record`, sTenants, sIDs, fresh)
		if term == 0 {
			b.Queue(`INSERT INTO audit_outbox (tenant, kind, head, tail)
			SELECT t, k, h, tl FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[]) WITH ORDINALITY AS x(t, k, h, tl, n) ORDER BY n
			RETURNING seq`, tenants, kinds, heads, tails)
		}
		if len(asks) > 0 {
			queueApprovals(b, jobs, asks)
		}
		if term > 0 {
			// Outbox numbers without outbox rows (checks and entries refer
			// to each other by them), then the head, locked.
			b.Queue(`SELECT nextval('audit_outbox_seq_seq') FROM generate_series(1, $1::int)`, len(encs))
			b.Queue(`SELECT size, term FROM audit_head WHERE one = 1 FOR UPDATE`)
		}
		res := tx.SendBatch(ctx, b)
		sessions := map[sessionKey]*rein.Session{}
		var size, headTerm int64
		seqs, err := func() ([]int64, error) {
			defer res.Close()
			rows, err := res.Query()
			if err != nil {
				return nil, fmt.Errorf("lock sessions: %w", err)
			}
			for rows.Next() {
				var k sessionKey
				var body string
				if err := rows.Scan(&k.tenant, &k.id, &body); err != nil {
					rows.Close()
					return nil, err
				}
				s := &rein.Session{}
				if err := json.Unmarshal([]byte(body), s); err != nil {
					rows.Close()
					return nil, fmt.Errorf("decode session: %w", err)
				}
				sessions[k] = s
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("lock sessions: %w", err)
			}
			var seqs []int64
			if term == 0 {
				rows, err = res.Query()
				if err != nil {
					return nil, fmt.Errorf("add audit entries to the outbox: %w", err)
				}
				if seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
					return nil, fmt.Errorf("add audit entries to the outbox: %w", err)
				}
			}
			if len(asks) > 0 {
				rows, err = res.Query()
				if err != nil {
					return nil, fmt.Errorf("insert approvals: %w", err)
				}
				inserted, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					return nil, fmt.Errorf("insert approvals: %w", err)
				}
				if len(inserted) < len(asks) {
					return nil, notInserted(jobs, asks, inserted)
				}
			}
			if term > 0 {
				rows, err = res.Query()
				if err != nil {
					return nil, fmt.Errorf("number audit entries: %w", err)
				}
				if seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
					return nil, fmt.Errorf("number audit entries: %w", err)
				}
				if err := res.QueryRow().Scan(&size, &headTerm); err != nil {
					return nil, fmt.Errorf("lock the audit log's head: %w", err)
				}
				if headTerm != term {
					return nil, errDeposed
				}
			}
			return seqs, nil
		}()
		if err != nil {
			return err
		}
		if len(seqs) != len(tenants) || len(sessions) != len(keys) {
			return fmt.Errorf("batch: %d outbox rows for %d entries, %d sessions for %d", len(seqs), len(tenants), len(sessions), len(keys))
		}
		sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })

		// Round trip 2: the checks, and the sessions with every check counted.
		n := len(jobs)
		ids, cTenants, keyIDs, agents, cSessions, tools, decisions, hashes, created, bodies :=
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		firsts := make([]int64, n)
		answers = make([]batchDone, n)
		at := 0
		for i, j := range jobs {
			r := j.rec
			mine := seqs[at : at+len(j.encs)]
			firsts[i] = mine[0]
			if term > 0 {
				answers[i] = batchDone{placed: true, first: size + int64(at)}
			} else {
				answers[i].seqs = []int64{mine[0]}
				if len(mine) > 1 {
					answers[i].seqs = append(answers[i].seqs, mine[len(mine)-1])
				}
			}
			at += len(j.encs)
			ids[i], cTenants[i], keyIDs[i], agents[i], cSessions[i] = r.ID, r.Tenant, r.KeyID, r.Check.Agent, r.Check.Session
			tools[i], decisions[i], hashes[i], created[i], bodies[i] = r.Check.Tool, string(r.Decision), r.ActionHash, ts(r.CreatedAt), j.body
			if r.Check.Session != "" {
				sessions[sessionKey{r.Tenant, r.Check.Session}].Record(r)
			}
		}
		sBodies := make([]string, len(keys))
		for i, k := range keys {
			body, err := json.Marshal(sessions[k])
			if err != nil {
				return err
			}
			sBodies[i] = string(body)
		}
		b = &pgx.Batch{}
		b.Queue(`INSERT INTO checks (id, tenant, key_id, agent, session, tool, decision, action_hash, created_at, outbox_seq, record)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[])`,
			ids, cTenants, keyIDs, agents, cSessions, tools, decisions, hashes, created, firsts, bodies)
		b.Queue(`UPDATE sessions s SET record = k.r FROM unnest($1::text[], $2::text[], $3::text[]) AS k(t, i, r)
			WHERE s.tenant = k.t AND s.id = k.i`, sTenants, sIDs, sBodies)
		if term > 0 {
			idxs, bodies := make([]int64, len(encs)), make([][]byte, len(encs))
			for k, x := range encs {
				idxs[k] = size + int64(k)
				bodies[k] = x.At(idxs[k])
			}
			next := size + int64(len(encs))
			b.Queue(`INSERT INTO audit_entries (idx, tenant, kind, body, outbox_seq)
				SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::bigint[])`,
				idxs, tenants, kinds, bodies, seqs)
			b.Queue(`UPDATE audit_head SET size = $1 WHERE one = 1 AND size = $2 AND term = $3`, next, size, term)
		}
		res = tx.SendBatch(ctx, b)
		var moved int64
		for range b.Len() {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return fmt.Errorf("write the checks, sessions and entries: %w", err)
			}
			moved = tag.RowsAffected() // of the last statement: the head, when placing
		}
		if err := res.Close(); err != nil {
			return fmt.Errorf("write the checks, sessions and entries: %w", err)
		}
		if term > 0 {
			if moved != 1 {
				return errDeposed
			}
			return nil
		}
		for i := range answers {
			for _, seq := range answers[i].seqs {
				answers[i].chans = append(answers[i].chans, db.idx.register(seq))
			}
		}
		registered = answers
		return nil
	})
	if err != nil {
		for _, a := range registered {
			for k, seq := range a.seqs {
				db.idx.cancel(seq, a.chans[k])
			}
		}
		return nil, err
	}
	return answers, nil
}

// queueApprovals adds the insert of the approvals the asks among jobs
// create, in one order (tenant, action), as sessions are locked, so that
// batches never wait on each other in a cycle. An approval whose action
// has a pending one already (stored, or earlier in this batch) is left
// out, and so missing from what the insert returns.
func queueApprovals(b *pgx.Batch, jobs []*batchJob, asks []int) {
	n := len(asks)
	ids, tenants, statuses, hashes, agents, sessions, created, expires, bodies :=
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	grants, escalates := make([]*string, n), make([]*string, n)
	for i, at := range asks {
		a := jobs[at].created
		ids[i], tenants[i], statuses[i], hashes[i], agents[i] = a.ID, a.Tenant, a.Status, a.ActionHash, a.Agent
		sessions[i], created[i], expires[i], bodies[i] = a.Session, ts(a.CreatedAt), ts(a.ExpiresAt), jobs[at].approvalBody
		if a.GrantExpiresAt != nil {
			g := ts(*a.GrantExpiresAt)
			grants[i] = &g
		}
		if e := a.EscalateAt(); e != nil {
			x := ts(*e)
			escalates[i] = &x
		}
	}
	b.Queue(`INSERT INTO approvals (id, tenant, status, action_hash, agent, session, created_at, expires_at, grant_expires_at, escalate_at, record)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[]) ORDER BY 2, 4
		ON CONFLICT (tenant, action_hash) WHERE status = 'pending' DO NOTHING
		RETURNING id`, ids, tenants, statuses, hashes, agents, sessions, created, expires, grants, escalates, bodies)
}

// notInserted names the asks whose approval the insert left out.
func notInserted(jobs []*batchJob, asks []int, inserted []string) pendingApprovals {
	got := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		got[id] = true
	}
	out := pendingApprovals{}
	for _, at := range asks {
		if !got[jobs[at].created.ID] {
			out[at] = true
		}
	}
	return out
}
