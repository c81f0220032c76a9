package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// SessionState returns a session and the count of earlier checks of an action
// in it: from memory when this process has seen the session's checks and the
// action is not among them (memo.go), otherwise from the database.
func (db *DB) SessionState(ctx context.Context, tenant, id, actionHash string) (*rein.Session, int64, error) {
	if s, ok, repeats, known := db.memo.session(tenant, id, actionHash); ok {
		if !known {
			if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM checks WHERE tenant = ? AND session = ? AND action_hash = ?`,
				tenant, id, actionHash).Scan(&repeats); err != nil {
				return nil, 0, err
			}
		}
		return &s, repeats, nil
	}
	var body sql.NullString
	var repeats int64
	err := db.read.QueryRowContext(ctx, `SELECT (SELECT record FROM sessions WHERE tenant = ? AND id = ?),
		(SELECT COUNT(*) FROM checks WHERE tenant = ? AND session = ? AND action_hash = ?)`,
		tenant, id, tenant, id, actionHash).Scan(&body, &repeats)
	if err != nil || !body.Valid {
		return nil, repeats, err
	}
	s := &rein.Session{}
	if err := json.Unmarshal([]byte(body.String), s); err != nil {
		return nil, 0, fmt.Errorf("decode session: %w", err)
	}
	return s, repeats, nil
}

// SessionEnded returns the session if it has ended, else nil (memory
// first, as SessionState).
func (db *DB) SessionEnded(ctx context.Context, tenant, id string) (*rein.Session, error) {
	s, _, err := db.SessionState(ctx, tenant, id, "")
	if err != nil || s == nil || s.EndedAt == nil {
		return nil, err
	}
	return s, nil
}

// touchSession adds a recorded check to its session's counters.
func (db *DB) touchSession(ctx context.Context, tx *wtx, rec *rein.CheckRecord) error {
	if rec.Check.Session == "" {
		return nil
	}
	s, err := tx.writerSession(ctx, rec.Tenant, rec.Check.Session)
	if err != nil {
		return err
	}
	isNew := s == nil
	if isNew {
		s = storesql.SessionOf(rec)
	}
	s.Record(rec)
	if err := saveSession(ctx, tx, s); err != nil {
		return err
	}
	hash := rec.ActionHash
	tx.committed(func() { db.memo.recorded(s, hash, isNew) })
	return nil
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

// changeSession applies change (a rule of rein.Session) to a session in
// one write transaction with its audit entry (storesql.ChangeSession).
func (db *DB) changeSession(ctx context.Context, tenant, id string, fresh *rein.Session, change func(*rein.Session) error, e *rein.Entry) (*rein.Session, error) {
	return txValue(ctx, db, func(tx *wtx) (*rein.Session, error) {
		s, err := storesql.ChangeSession(ctx, storeTx{tx}, tenant, id, fresh, change)
		if err != nil {
			return nil, err
		}
		_, err = appendEntries(ctx, tx, []*rein.Entry{e})
		return s, err
	})
}

// writerSession is loadSession for recording a check: a session this
// transaction wrote already, or one remembered as committed (the memo holds
// exactly what the database does: the writer checked for other processes'
// commits at the start of this transaction, and holds the write lock), or
// else the stored row.
func (tx *wtx) writerSession(ctx context.Context, tenant, id string) (*rein.Session, error) {
	if s, ok := tx.sessions[sessionID{tenant, id}]; ok {
		c := *s
		return &c, nil
	}
	if s, ok, _, _ := tx.memo.session(tenant, id, ""); ok {
		return &s, nil
	}
	return loadSession(ctx, tx, tenant, id)
}

// LoadSession reads a session as a check would (writerSession).
func (t storeTx) LoadSession(ctx context.Context, tenant, id string) (*rein.Session, error) {
	return t.writerSession(ctx, tenant, id)
}

// InsertSession writes a new session: the single writer holds the write
// lock, so no other transaction can have inserted it meanwhile.
func (t storeTx) InsertSession(ctx context.Context, s *rein.Session) (bool, error) {
	return true, t.SaveSession(ctx, s)
}

// SaveSession writes a session and remembers it as changed once committed.
func (t storeTx) SaveSession(ctx context.Context, s *rein.Session) error {
	if err := saveSession(ctx, t.wtx, s); err != nil {
		return err
	}
	t.committed(func() { t.memo.changed(s) })
	return nil
}

func loadSession(ctx context.Context, tx *wtx, tenant, id string) (*rein.Session, error) {
	var body string
	err := tx.QueryRowContext(ctx, "SELECT record FROM sessions WHERE tenant = ? AND id = ?", tenant, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := &rein.Session{}
	return s, json.Unmarshal([]byte(body), s)
}

// saveSession writes a session; later jobs of the same transaction read it
// from tx.sessions.
func saveSession(ctx context.Context, tx *wtx, s *rein.Session) error {
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx, `INSERT INTO sessions (tenant, id, record) VALUES (?, ?, ?)
		ON CONFLICT (tenant, id) DO UPDATE SET record = excluded.record`, s.Tenant, s.ID, string(body)); err != nil {
		return err
	}
	if tx.sessions == nil {
		tx.sessions = map[sessionID]*rein.Session{}
	}
	c := *s
	tx.sessions[sessionID{s.Tenant, s.ID}] = &c
	return nil
}

// SessionChecks lists a session's checks, newest first. The page's ids
// come from the session index alone (ids sort by creation time, and the
// cursor is an id); only the page's records are read.
func (db *DB) SessionChecks(ctx context.Context, tenant, id string, limit int, before string) ([]*rein.CheckRecord, error) {
	q, args := sessionChecksQuery(tenant, id, limit, before)
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, scanCheck)
}

func sessionChecksQuery(tenant, id string, limit int, before string) (string, []any) {
	q := "SELECT id FROM checks INDEXED BY checks_session WHERE tenant = ? AND session = ?"
	args := []any{tenant, id}
	if before != "" {
		q += " AND id < ?"
		args = append(args, before)
	}
	q = "SELECT record, key_id, result, audit_index FROM checks WHERE id IN (" + q + " ORDER BY id DESC LIMIT ?) ORDER BY id DESC"
	return q, append(args, limit)
}

func scanCheck(r scanner) (*rein.CheckRecord, error) {
	var body, keyID string
	var result sql.NullString
	var index int64
	if err := r.Scan(&body, &keyID, &result, &index); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, rein.ErrNotFound
		}
		return nil, err
	}
	rec := &rein.CheckRecord{}
	if err := json.Unmarshal([]byte(body), rec); err != nil {
		return nil, fmt.Errorf("decode check: %w", err)
	}
	rec.KeyID = keyID
	rec.AuditIndex = index // not in the record: it is known only once written
	rec.Result = nil
	if result.Valid {
		rec.Result = &rein.CheckResult{}
		if err := json.Unmarshal([]byte(result.String), rec.Result); err != nil {
			return nil, fmt.Errorf("decode check result: %w", err)
		}
	}
	return rec, nil
}

// RecordResult stores a check's result (storesql.RecordResult).
func (db *DB) RecordResult(ctx context.Context, rec *rein.CheckRecord, res *rein.CheckResult, e *rein.Entry) error {
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		return storesql.RecordResult(ctx, storeTx{tx}, "UPDATE checks SET result = ? WHERE id = ? AND result IS NULL", rec, res, body, e)
	})
}

// Checks lists a tenant's checks that pass the filter, newest first. Ids
// sort by creation time, so the cursor is the last id seen.
func (db *DB) Checks(ctx context.Context, tenant string, f rein.CheckFilter) ([]*rein.CheckRecord, error) {
	q := "SELECT record, key_id, result, audit_index FROM checks WHERE 1 = 1"
	var args []any
	add := func(cond string, v ...any) {
		q += " AND " + cond
		args = append(args, v...)
	}
	if tenant != rein.AllTenants {
		add("tenant = ?", tenant)
	}
	if f.Decision != "" {
		add("decision = ?", string(f.Decision))
	}
	if f.Agent != "" {
		add("(agent = ? OR substr(agent, 1, ?) = ?)", f.Agent, utf8.RuneCountInString(f.Agent)+1, f.Agent+"/")
	}
	if f.Tool != "" {
		add("tool = ?", f.Tool)
	}
	if f.Session != "" {
		add("session = ?", f.Session)
	}
	if !f.Since.IsZero() {
		add("created_at >= ?", ts(f.Since))
	}
	if !f.Until.IsZero() {
		add("created_at < ?", ts(f.Until))
	}
	if f.Before != "" {
		add("id < ?", f.Before)
	}
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	rows, err := db.read.QueryContext(ctx, q+" ORDER BY id DESC LIMIT ?", append(args, limit)...)
	return collect(rows, err, scanCheck)
}
