package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// Keys.

const keyColumns = storesql.KeyColumns

func scanKey(row pgx.Row) (*rein.Key, error) { return storesql.ScanKey(row) }

// CreateKey stores a new key; a name already active in the tenant is a conflict.
func (db *DB) CreateKey(ctx context.Context, k *rein.Key, e *rein.Entry) error {
	roles, _ := json.Marshal(k.Roles)
	groups, _ := json.Marshal(k.Groups)
	_, err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO keys (id, name, tenant, roles, groups_json, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			k.ID, k.Name, k.Tenant, string(roles), string(groups), k.SecretHash, ts(k.CreatedAt)); err != nil {
			if violates(err, "keys_active_name") {
				return storesql.KeyNameTaken(k)
			}
			return fmt.Errorf("insert key: %w", err)
		}
		if err := tx.notifyChange(ctx, db.chChange, keysChanged); err != nil {
			return err
		}
		if e != nil {
			return tx.appendEntries(ctx, e)
		}
		return nil
	})
	db.keys.forget()
	return err
}

// KeyBySecretHash returns the active key with that secret hash, from memory
// when it was read before and no key has changed since (keycache.go).
func (db *DB) KeyBySecretHash(ctx context.Context, hash string) (*rein.Key, error) {
	k, _, gen := db.keys.get(hash)
	if k != nil {
		c := *k
		return &c, nil
	}
	k, err := scanKey(db.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM keys WHERE secret_hash = $1 AND revoked_at IS NULL", hash))
	if err != nil {
		return nil, err
	}
	if k.RevokedAt == nil {
		c := *k
		db.keys.put(hash, &c, gen)
	}
	return k, nil
}

// KeyByID returns a key, revoked or not.
func (db *DB) KeyByID(ctx context.Context, id string) (*rein.Key, error) {
	return scanKey(db.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM keys WHERE id = $1", id))
}

// Keys lists the keys of a tenant ("*": of every tenant), oldest first.
func (db *DB) Keys(ctx context.Context, tenant string) ([]*rein.Key, error) {
	q, args := "SELECT "+keyColumns+" FROM keys WHERE tenant = $1 ORDER BY created_at, id", []any{tenant}
	if tenant == rein.AllTenants {
		q, args = "SELECT "+keyColumns+" FROM keys ORDER BY tenant, created_at, id", nil
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Key, error) { return scanKey(r) })
}

// RevokeKey marks a key revoked; it refuses to revoke the last active admin
// key of tenant "*" (the admin keys are locked while it counts them).
func (db *DB) RevokeKey(ctx context.Context, id string, at time.Time, e *rein.Entry) error {
	_, err := db.write(ctx, func(tx *wtx) error {
		rows, err := tx.Query(ctx, "SELECT "+keyColumns+" FROM keys WHERE tenant = $1 AND revoked_at IS NULL ORDER BY id FOR UPDATE", rein.AllTenants)
		if err != nil {
			return err
		}
		admins, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Key, error) { return scanKey(r) })
		if err != nil {
			return err
		}
		k, err := scanKey(tx.QueryRow(ctx, "SELECT "+keyColumns+" FROM keys WHERE id = $1 AND revoked_at IS NULL FOR UPDATE", id))
		if err != nil {
			return err
		}
		others := 0
		for _, a := range admins {
			if a.ID != id && a.Has(rein.RoleAdmin) {
				others++
			}
		}
		if err := storesql.CanRevoke(k, others); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE keys SET revoked_at = $1 WHERE id = $2", ts(at), id); err != nil {
			return err
		}
		if err := tx.notifyChange(ctx, db.chChange, keysChanged); err != nil {
			return err
		}
		if e != nil {
			return tx.appendEntries(ctx, e)
		}
		return nil
	})
	db.keys.forget() // also when the outcome is unknown
	return err
}

// Checks.

// RecordCheck stores a decided check with its new approval and audit entries
// in one transaction.
func (db *DB) RecordCheck(ctx context.Context, rec *rein.CheckRecord, created *rein.Approval, use *rein.ApprovalUse, entries []*rein.Entry) (*rein.CheckRecord, error) {
	encs, body, reviewBody, err := storesql.EncodeCheck(rec, entries)
	if err != nil {
		return nil, err
	}
	if batchable(rec, use) {
		first, err := db.recordBatched(ctx, rec, string(body), encs, created)
		if err == nil {
			rec.AuditIndex = first
			return rec, nil
		}
		if !errors.Is(err, errAlone) {
			return nil, err
		}
	}
	var reqID any
	if rec.Check.RequestID != "" {
		reqID = rec.Check.RequestID
	}
	first, err := db.write(ctx, func(tx *wtx) error {
		if created != nil {
			if err := expireStale(ctx, tx, created); err != nil {
				return err
			}
		}
		encs := encs
		if use != nil {
			var err error
			if encs, err = storesql.UseApproval(ctx, storeTx{tx}, approvalSQL, use, encs); err != nil {
				return err
			}
		}
		if err := tx.appendEncoded(ctx, encs); err != nil {
			return err
		}
		var seq any
		if len(tx.seqs) > 0 {
			seq = tx.seqs[0]
		}
		if _, err := tx.Exec(ctx, `INSERT INTO checks (id, tenant, key_id, request_id, agent, session, tool, decision, action_hash, created_at, outbox_seq, record)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			rec.ID, rec.Tenant, rec.KeyID, reqID, rec.Check.Agent, rec.Check.Session, rec.Check.Tool, string(rec.Decision),
			rec.ActionHash, ts(rec.CreatedAt), seq, string(body)); err != nil {
			if violates(err, "checks_request") {
				return rein.ErrDuplicateRequest
			}
			return fmt.Errorf("insert check: %w", err)
		}
		if created != nil {
			if err := insertApproval(ctx, tx, created); err != nil {
				return err
			}
		}
		if rec.Review != nil {
			if err := insertReview(ctx, tx, rec.Review, reviewBody); err != nil {
				return err
			}
		}
		return touchSession(ctx, tx, rec)
	})
	if errors.Is(err, rein.ErrDuplicateRequest) {
		dup, err := db.CheckByRequestID(ctx, rec.KeyID, rec.Check.RequestID)
		if err != nil {
			return nil, fmt.Errorf("read the check recorded first with request_id %q: %w", rec.Check.RequestID, err)
		}
		return dup, rein.ErrDuplicateRequest
	}
	if err != nil {
		return nil, err
	}
	rec.AuditIndex = first
	return rec, nil
}

func insertApproval(ctx context.Context, tx *wtx, a *rein.Approval) error {
	body, err := storesql.StoredApproval(a)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO approvals (id, tenant, status, action_hash, agent, session, created_at, expires_at, grant_expires_at, escalate_at, record)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		a.ID, a.Tenant, a.Status, a.ActionHash, a.Agent, a.Session, ts(a.CreatedAt), ts(a.ExpiresAt), tsPtr(a.GrantExpiresAt), tsPtr(a.EscalateAt()), string(body))
	if violates(err, "approvals_one_pending") {
		return rein.ErrApprovalPending
	}
	if err != nil {
		return fmt.Errorf("insert approval: %w", err)
	}
	return nil
}

// expireStale expires the pending approvals of a's action whose time ran
// out, recording each as a timeout, so that a new approval can take their
// place.
func expireStale(ctx context.Context, tx *wtx, a *rein.Approval) error {
	rows, err := tx.Query(ctx, "SELECT id FROM approvals WHERE tenant = $1 AND action_hash = $2 AND status = 'pending' AND expires_at <= $3 FOR UPDATE",
		a.Tenant, a.ActionHash, ts(a.CreatedAt))
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range ids {
		_, entries, err := loadAndChange(ctx, tx, id, func(x *rein.Approval) ([]*rein.Entry, error) {
			at := a.CreatedAt
			x.Status, x.ResolvedAt = rein.StatusExpired, &at
			return []*rein.Entry{{TS: a.CreatedAt, Tenant: a.Tenant, Kind: rein.KindApprovalResolved,
				Actor: "rein", Subject: id, Data: map[string]any{"status": rein.StatusExpired, "cause": "timeout"}}}, nil
		})
		if err != nil {
			return fmt.Errorf("expire approval %s: %w", id, err)
		}
		if err := tx.appendEntries(ctx, entries...); err != nil {
			return err
		}
	}
	return nil
}

// checkSelect reads a check with its audit index: the index of the entry
// in the outbox row it was recorded with.
const checkSelect = `SELECT c.record, c.key_id, e.idx, c.outbox_seq, c.result FROM checks c LEFT JOIN audit_placed e ON e.outbox_seq = c.outbox_seq WHERE `

func (db *DB) checkWhere(ctx context.Context, where string, args ...any) (*rein.CheckRecord, error) {
	rec, seq, err := scanCheck(db.pool.QueryRow(ctx, checkSelect+where, args...))
	if err != nil || seq == nil {
		return rec, err
	}
	// Recorded, not yet placed in the log (the writer is still waiting):
	// wait for the index too.
	ch := db.idx.register(*seq)
	var idx *int64
	if err := db.pool.QueryRow(ctx, "SELECT idx FROM audit_placed WHERE outbox_seq = $1", *seq).Scan(&idx); err == nil && idx != nil {
		db.idx.cancel(*seq, ch)
		rec.AuditIndex = *idx
		return rec, nil
	}
	db.idx.signal()
	i, err := db.awaitIndex(ctx, *seq, ch)
	if err != nil {
		return nil, err
	}
	rec.AuditIndex = i
	return rec, nil
}

// scanCheck reads a check; seq is set when its entry has no index yet.
func scanCheck(r pgx.Row) (*rein.CheckRecord, *int64, error) {
	var body, keyID string
	var idx, seq *int64
	var result *string
	if err := r.Scan(&body, &keyID, &idx, &seq, &result); err != nil {
		return nil, nil, notFound(err)
	}
	rec := &rein.CheckRecord{}
	if err := json.Unmarshal([]byte(body), rec); err != nil {
		return nil, nil, fmt.Errorf("decode check: %w", err)
	}
	rec.KeyID = keyID
	rec.Result = nil
	if result != nil {
		rec.Result = &rein.CheckResult{}
		if err := json.Unmarshal([]byte(*result), rec.Result); err != nil {
			return nil, nil, fmt.Errorf("decode check result: %w", err)
		}
	}
	if idx != nil {
		rec.AuditIndex = *idx
		return rec, nil, nil
	}
	return rec, seq, nil
}

// CheckByID returns a stored check.
func (db *DB) CheckByID(ctx context.Context, id string) (*rein.CheckRecord, error) {
	return db.checkWhere(ctx, "c.id = $1", id)
}

// CheckByRequestID returns the check a key made with a request_id.
func (db *DB) CheckByRequestID(ctx context.Context, keyID, requestID string) (*rein.CheckRecord, error) {
	return db.checkWhere(ctx, "c.key_id = $1 AND c.request_id = $2", keyID, requestID)
}

// Approvals.

func scanApproval(row pgx.Row) (*rein.Approval, error) { return storesql.ScanApproval(row) }

// LatestApproval returns the newest approval bound to an action hash.
func (db *DB) LatestApproval(ctx context.Context, tenant, actionHash string) (*rein.Approval, error) {
	return scanApproval(db.pool.QueryRow(ctx, "SELECT record FROM approvals WHERE tenant = $1 AND action_hash = $2 ORDER BY created_at DESC, id DESC LIMIT 1",
		tenant, actionHash))
}

// Approval returns one approval.
func (db *DB) Approval(ctx context.Context, id string) (*rein.Approval, error) {
	return scanApproval(db.pool.QueryRow(ctx, "SELECT record FROM approvals WHERE id = $1", id))
}

// Approvals lists approvals, newest first.
func (db *DB) Approvals(ctx context.Context, tenant string, f rein.ApprovalFilter) ([]*rein.Approval, error) {
	q, args := listQuery("approvals", tenant, f)
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Approval, error) { return scanApproval(r) })
}

// listQuery selects the records of approvals or questions that pass a list
// filter, newest first.
func listQuery(table, tenant string, f rein.ListFilter) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if tenant != rein.AllTenants {
		add("tenant = $%d", tenant)
	}
	for _, c := range []struct{ col, val string }{{"status", f.Status}, {"session", f.Session}, {"agent", f.Agent}} {
		if c.val != "" {
			add(c.col+" = $%d", c.val)
		}
	}
	if f.Before != "" {
		add("id < $%d", f.Before)
	}
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	q := "SELECT record FROM " + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	return q + fmt.Sprintf(" ORDER BY id DESC LIMIT $%d", len(args)), args
}

// ChangeApproval applies change to an approval in one write transaction
// (the approval's row is locked meanwhile).
func (db *DB) ChangeApproval(ctx context.Context, id string, change rein.ApprovalChange) (*rein.Approval, error) {
	return writeValue(ctx, db, func(tx *wtx) (*rein.Approval, error) {
		a, entries, err := loadAndChange(ctx, tx, id, change)
		if err != nil {
			return nil, err
		}
		return a, tx.appendEntries(ctx, entries...)
	})
}

func loadAndChange(ctx context.Context, tx *wtx, id string, change rein.ApprovalChange) (*rein.Approval, []*rein.Entry, error) {
	return storesql.ChangeApproval(ctx, storeTx{tx}, approvalSQL, id, change)
}

// approvalSQL is how storesql.ChangeApproval reads and writes an approval
// here, its row locked.
var approvalSQL = storesql.ApprovalSQL{
	Select:      "SELECT record, escalate_at FROM approvals WHERE id = $1 FOR UPDATE",
	SetEscalate: "UPDATE approvals SET escalate_at = $1 WHERE id = $2",
	Update:      "UPDATE approvals SET status = $1, grant_expires_at = $2, escalate_at = $3, record = $4 WHERE id = $5",
	Pending:     func(err error) bool { return violates(err, "approvals_one_pending") },
}

// DueEscalations returns pending approvals whose next escalation is due,
// the longest due first.
func (db *DB) DueEscalations(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM approvals WHERE status = 'pending' AND escalate_at IS NOT NULL AND escalate_at <= $1
		ORDER BY escalate_at LIMIT $2`, ts(now), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// DueApprovals returns the approvals whose time ran out.
func (db *DB) DueApprovals(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM approvals WHERE status = 'pending' AND expires_at <= $1
		UNION SELECT id FROM approvals WHERE status = 'approved' AND grant_expires_at <= $1`, ts(now))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Questions.

// CreateQuestion stores a new question and its audit entries together.
func (db *DB) CreateQuestion(ctx context.Context, q *rein.Question, entries []*rein.Entry) error {
	body, err := json.Marshal(q)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO questions (id, tenant, status, agent, session, created_at, expires_at, record)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, q.ID, q.Tenant, q.Status, q.Agent, q.Session, ts(q.CreatedAt), ts(q.ExpiresAt), string(body)); err != nil {
			return fmt.Errorf("insert question: %w", err)
		}
		return tx.appendEntries(ctx, entries...)
	})
	return err
}

func scanQuestion(row pgx.Row) (*rein.Question, error) {
	return scanRecord[rein.Question](row, "question")
}

// Question returns one question.
func (db *DB) Question(ctx context.Context, id string) (*rein.Question, error) {
	return scanQuestion(db.pool.QueryRow(ctx, "SELECT record FROM questions WHERE id = $1", id))
}

// Questions lists questions, newest first.
func (db *DB) Questions(ctx context.Context, tenant string, f rein.QuestionFilter) ([]*rein.Question, error) {
	q, args := listQuery("questions", tenant, f)
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Question, error) { return scanQuestion(r) })
}

// ChangeQuestion applies change to a question in one write transaction.
func (db *DB) ChangeQuestion(ctx context.Context, id string, change rein.QuestionChange) (*rein.Question, error) {
	return changeRecord(ctx, db, "questions", "question", id, func(v *rein.Question) string { return v.Status }, change)
}

// DueQuestions returns the pending questions whose time ran out.
func (db *DB) DueQuestions(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, "SELECT id FROM questions WHERE status = 'pending' AND expires_at <= $1", ts(now))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Locks.

// CreateLock stores a new lock with its audit entries.
func (db *DB) CreateLock(ctx context.Context, l *rein.Lock, entries []*rein.Entry) error {
	body, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO locks (id, tenant, created_at, record) VALUES ($1, $2, $3, $4)",
			l.ID, l.Tenant, ts(l.CreatedAt), string(body)); err != nil {
			return fmt.Errorf("insert lock: %w", err)
		}
		return tx.appendEntries(ctx, entries...)
	})
	return err
}

func scanLock(r pgx.Row) (*rein.Lock, error) { return storesql.ScanRecord[rein.Lock](r, "lock") }

// Lock returns one lock.
func (db *DB) Lock(ctx context.Context, id string) (*rein.Lock, error) {
	return scanLock(db.pool.QueryRow(ctx, "SELECT record FROM locks WHERE id = $1", id))
}

// Locks returns the locks not removed (active or expired), oldest first.
func (db *DB) Locks(ctx context.Context) ([]*rein.Lock, error) {
	rows, err := db.pool.Query(ctx, "SELECT record FROM locks WHERE removed_at IS NULL ORDER BY created_at, id")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Lock, error) { return scanLock(r) })
}

// RemoveLock marks a lock removed, with its audit entry; a lock already
// removed is not found.
func (db *DB) RemoveLock(ctx context.Context, id, by string, at time.Time, e *rein.Entry) (*rein.Lock, error) {
	return writeValue(ctx, db, func(tx *wtx) (*rein.Lock, error) {
		return storesql.RemoveLock(ctx, storeTx{tx}, lockSQL, id, by, at, e)
	})
}

// lockSQL is how storesql.RemoveLock reads and writes a lock here, its row
// locked.
var lockSQL = storesql.LockSQL{
	Select: "SELECT record FROM locks WHERE id = $1 AND removed_at IS NULL FOR UPDATE",
	Update: "UPDATE locks SET removed_at = $1, record = $2 WHERE id = $3",
}

// Sessions.

// SessionState returns a session and the count of earlier checks of an action in it.
func (db *DB) SessionState(ctx context.Context, tenant, id, actionHash string) (*rein.Session, int64, error) {
	var body *string
	var repeats int64
	err := db.pool.QueryRow(ctx, `SELECT (SELECT record FROM sessions WHERE tenant = $1 AND id = $2),
		(SELECT COUNT(*) FROM checks WHERE tenant = $1 AND session = $2 AND action_hash = $3)`,
		tenant, id, actionHash).Scan(&body, &repeats)
	if err != nil || body == nil {
		return nil, repeats, err
	}
	s := &rein.Session{}
	if err := json.Unmarshal([]byte(*body), s); err != nil {
		return nil, 0, fmt.Errorf("decode session: %w", err)
	}
	return s, repeats, nil
}

// touchSession adds a recorded check to its session's counters (the
// session's row is locked meanwhile).
func touchSession(ctx context.Context, tx *wtx, rec *rein.CheckRecord) error {
	if rec.Check.Session == "" {
		return nil
	}
	// Two statements either way: an existing session is locked and read,
	// then updated; a new one is inserted with this check counted, unless
	// a concurrent check inserted it first (then it is read and updated).
	for {
		s, err := loadSession(ctx, tx, rec.Tenant, rec.Check.Session)
		if err != nil {
			return err
		}
		if s != nil {
			s.Record(rec)
			return saveSession(ctx, tx, s)
		}
		s = storesql.SessionOf(rec)
		s.Record(rec)
		if inserted, err := (storeTx{tx}).InsertSession(ctx, s); err != nil || inserted {
			return err
		}
	}
}

// EndSession marks a session ended, with its audit entry.
func (db *DB) EndSession(ctx context.Context, tenant, id, by string, at time.Time, e *rein.Entry) (*rein.Session, error) {
	return db.changeSession(ctx, tenant, id, nil, func(s *rein.Session) error { return s.End(by, at) }, e)
}

// ContainSession starts a new session contained (Session.Contain).
func (db *DB) ContainSession(ctx context.Context, tenant, id, agent string, sb *rein.Sandbox, e *rein.Entry) (*rein.Session, error) {
	fresh := &rein.Session{ID: id, Tenant: tenant, Agent: agent, StartedAt: sb.StartedAt, LastAt: sb.StartedAt}
	return db.changeSession(ctx, tenant, id, fresh, func(s *rein.Session) error { return s.Contain(sb) }, e)
}

// EndSandbox records that the contained command of a session ended
// (Session.EndSandbox).
func (db *DB) EndSandbox(ctx context.Context, tenant, id, keyID string, end rein.SandboxEnd, at time.Time, e *rein.Entry) (*rein.Session, error) {
	return db.changeSession(ctx, tenant, id, nil, func(s *rein.Session) error { return s.EndSandbox(keyID, end, at) }, e)
}

// changeSession applies change (a rule of rein.Session) to a session, its
// row locked, with its audit entry (storesql.ChangeSession); every replica
// forgets what it knew of open sessions.
func (db *DB) changeSession(ctx context.Context, tenant, id string, fresh *rein.Session, change func(*rein.Session) error, e *rein.Entry) (*rein.Session, error) {
	s, err := writeValue(ctx, db, func(tx *wtx) (*rein.Session, error) {
		s, err := storesql.ChangeSession(ctx, storeTx{tx}, tenant, id, fresh, change)
		if err != nil {
			return nil, err
		}
		if err := tx.notifyChange(ctx, db.chChange, sessionsChanged); err != nil {
			return nil, err
		}
		return s, tx.appendEntries(ctx, e)
	})
	db.open.forget() // also when the outcome is unknown
	return s, err
}

// LoadSession reads a session, its row locked.
func (t storeTx) LoadSession(ctx context.Context, tenant, id string) (*rein.Session, error) {
	return loadSession(ctx, t.tx, tenant, id)
}

// InsertSession inserts a new session unless another transaction did first.
func (t storeTx) InsertSession(ctx context.Context, s *rein.Session) (bool, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return false, err
	}
	tag, err := t.tx.Exec(ctx, "INSERT INTO sessions (tenant, id, record) VALUES ($1, $2, $3) ON CONFLICT (tenant, id) DO NOTHING", s.Tenant, s.ID, string(body))
	return tag.RowsAffected() == 1, err
}

// SaveSession writes back a session LoadSession read.
func (t storeTx) SaveSession(ctx context.Context, s *rein.Session) error {
	return saveSession(ctx, t.tx, s)
}

// SessionEnded returns the session if it has ended, else nil: from memory
// when this replica has seen it open and no session has ended anywhere
// since (changememo.go), otherwise from the database.
func (db *DB) SessionEnded(ctx context.Context, tenant, id string) (*rein.Session, error) {
	k := tenant + "\x00" + id
	_, open, gen := db.open.get(k)
	if open {
		return nil, nil
	}
	var body string
	err := db.pool.QueryRow(ctx, "SELECT record FROM sessions WHERE tenant = $1 AND id = $2", tenant, id).Scan(&body)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // no checks yet: open
	case err != nil:
		return nil, err
	default:
		s := &rein.Session{}
		if err := json.Unmarshal([]byte(body), s); err != nil {
			return nil, fmt.Errorf("decode session: %w", err)
		}
		if s.EndedAt != nil {
			return s, nil
		}
	}
	db.open.put(k, struct{}{}, gen)
	return nil, nil
}

func loadSession(ctx context.Context, tx *wtx, tenant, id string) (*rein.Session, error) {
	var body string
	err := tx.QueryRow(ctx, "SELECT record FROM sessions WHERE tenant = $1 AND id = $2 FOR UPDATE", tenant, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := &rein.Session{}
	return s, json.Unmarshal([]byte(body), s)
}

func saveSession(ctx context.Context, tx *wtx, s *rein.Session) error {
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE sessions SET record = $3 WHERE tenant = $1 AND id = $2", s.Tenant, s.ID, string(body))
	return err
}

// SessionChecks lists a session's checks, newest first.
func (db *DB) SessionChecks(ctx context.Context, tenant, id string, limit int, before string) ([]*rein.CheckRecord, error) {
	// The page's ids come from the session index alone (ids sort by
	// creation time, and the cursor is an id); only the page's records are
	// read.
	q := "SELECT id FROM checks WHERE tenant = $1 AND session = $2"
	args := []any{tenant, id}
	if before != "" {
		q += " AND id < $3"
		args = append(args, before)
	}
	args = append(args, limit)
	q = checkSelect + "c.id IN (" + q + fmt.Sprintf(" ORDER BY id DESC LIMIT $%d) ORDER BY c.id DESC", len(args))
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.CheckRecord, error) {
		rec, _, err := scanCheck(r)
		return rec, err
	})
}

// Checks lists a tenant's checks that pass the filter, newest first. Ids
// sort by creation time, so the cursor is the last id seen.
func (db *DB) Checks(ctx context.Context, tenant string, f rein.CheckFilter) ([]*rein.CheckRecord, error) {
	q := checkSelect + "TRUE"
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		q += " AND " + strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args)))
	}
	if tenant != rein.AllTenants {
		add("c.tenant = ?", tenant)
	}
	if f.Decision != "" {
		add("c.decision = ?", string(f.Decision))
	}
	if f.Agent != "" {
		args = append(args, f.Agent, f.Agent+"/")
		q += fmt.Sprintf(" AND (c.agent = $%d OR left(c.agent, char_length($%d)) = $%d)", len(args)-1, len(args), len(args))
	}
	if f.Tool != "" {
		add("c.tool = ?", f.Tool)
	}
	if f.Session != "" {
		add("c.session = ?", f.Session)
	}
	if !f.Since.IsZero() {
		add("c.created_at >= ?", ts(f.Since))
	}
	if !f.Until.IsZero() {
		add("c.created_at < ?", ts(f.Until))
	}
	if f.Before != "" {
		add("c.id < ?", f.Before)
	}
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	args = append(args, limit)
	rows, err := db.pool.Query(ctx, q+fmt.Sprintf(" ORDER BY c.id DESC LIMIT $%d", len(args)), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.CheckRecord, error) {
		rec, _, err := scanCheck(r)
		return rec, err
	})
}

// RecordResult stores a check's result (storesql.RecordResult).
func (db *DB) RecordResult(ctx context.Context, rec *rein.CheckRecord, res *rein.CheckResult, e *rein.Entry) error {
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		return storesql.RecordResult(ctx, storeTx{tx}, "UPDATE checks SET result = $1 WHERE id = $2 AND result IS NULL", rec, res, body, e)
	})
	return err
}

// Webhook deliveries.

// LogDelivery records one webhook delivery attempt.
func (db *DB) LogDelivery(ctx context.Context, d *rein.WebhookDelivery) error {
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, "INSERT INTO webhook_deliveries (record) VALUES ($1)", string(body))
	return err
}

// Deliveries lists the latest delivery attempts, newest first.
func (db *DB) Deliveries(ctx context.Context, limit int) ([]*rein.WebhookDelivery, error) {
	rows, err := db.pool.Query(ctx, "SELECT record FROM webhook_deliveries ORDER BY seq DESC LIMIT $1", limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.WebhookDelivery, error) {
		var body string
		if err := r.Scan(&body); err != nil {
			return nil, err
		}
		d := &rein.WebhookDelivery{}
		return d, json.Unmarshal([]byte(body), d)
	})
}

// Policies.

// SavePolicy records a newly activated policy tier.
func (db *DB) SavePolicy(ctx context.Context, doc *rein.PolicyDoc, e *rein.Entry) error {
	_, err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO policies (tenant, version, source, loaded_at, loaded_by, origin) VALUES ($1, $2, $3, $4, $5, $6)",
			doc.Tenant, doc.Version, doc.Source, ts(doc.LoadedAt), doc.LoadedBy, doc.Origin); err != nil {
			return fmt.Errorf("insert policy: %w", err)
		}
		if e != nil {
			return tx.appendEntries(ctx, e)
		}
		return nil
	})
	return err
}

// Policies returns the newest policy of each tier.
func (db *DB) Policies(ctx context.Context) ([]*rein.PolicyDoc, error) {
	rows, err := db.pool.Query(ctx, `SELECT tenant, version, source, loaded_at, loaded_by, origin FROM policies
		WHERE seq IN (SELECT MAX(seq) FROM policies GROUP BY tenant) ORDER BY tenant`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.PolicyDoc, error) {
		d := &rein.PolicyDoc{}
		var at string
		err := r.Scan(&d.Tenant, &d.Version, &d.Source, &at, &d.LoadedBy, &d.Origin)
		d.LoadedAt = parseTS(at)
		return d, err
	})
}
