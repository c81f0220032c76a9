// Package storesql is what the SQLite and PostgreSQL stores do alike inside
// a write transaction, written once above the SQL: each store opens its own
// transaction, gives it through the narrow Tx, and passes its own statements
// (placeholders, row locks), so that the SQL stays per dialect and the logic
// does not.
package storesql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reinhq/rein"
)

// Row is one row of a single-row query.
type Row interface{ Scan(dest ...any) error }

// Tx is a store's write transaction as the shared logic uses it.
type Tx interface {
	// QueryRow runs a single-row query; a missing row is reported when
	// scanned, as an error that is sql.ErrNoRows under errors.Is.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Append writes audit entries with the transaction.
	Append(ctx context.Context, entries []*rein.Entry) error
}

// ScanRecord reads a row's JSON record into a new T; no row is
// rein.ErrNotFound.
func ScanRecord[T any](row Row, what string) (*T, error) {
	var body string
	err := row.Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rein.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	return v, nil
}

// RecordSQL is a dialect's statements for ChangeRecord.
type RecordSQL struct {
	// Select reads the record column of the row whose id is its one
	// argument, locking the row where the engine locks rows.
	Select string
	// Update sets status and record (in that order) of the row whose id
	// is its third argument.
	Update string
}

// ChangeRecord applies change to the record of id inside tx: when change
// returns audit entries, the changed record (and its status column) is
// written with them; with none, nothing is written. The record is returned
// once change has succeeded, even when writing it then fails.
func ChangeRecord[T any](ctx context.Context, tx Tx, q RecordSQL, what, id string, status func(*T) string,
	change func(*T) ([]*rein.Entry, error)) (*T, error) {
	v, err := ScanRecord[T](tx.QueryRow(ctx, q.Select, id), what)
	if err != nil {
		return nil, err
	}
	entries, err := change(v)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return v, nil
	}
	body, err := json.Marshal(v)
	if err != nil {
		return v, err
	}
	if _, err := tx.Exec(ctx, q.Update, status(v), string(body), id); err != nil {
		return v, fmt.Errorf("update %s %s: %w", what, id, err)
	}
	return v, tx.Append(ctx, entries)
}

// ApprovalRow is the stored form of an approval: its JSON plus what the API
// hides.
type ApprovalRow struct {
	*rein.Approval
	GrantTTLNS int64 `json:"grant_ttl_ns"`
}

// StoredApproval is the record column of a.
func StoredApproval(a *rein.Approval) ([]byte, error) {
	return json.Marshal(ApprovalRow{a, int64(a.GrantTTL)})
}

// ScanApproval reads an approval's record column; no row is
// rein.ErrNotFound.
func ScanApproval(row Row) (*rein.Approval, error) {
	r, err := ScanRecord[ApprovalRow](row, "approval")
	if err != nil {
		return nil, err
	}
	if r.Approval == nil { // a record with none of an approval's fields
		r.Approval = &rein.Approval{}
	}
	r.Approval.GrantTTL = time.Duration(r.GrantTTLNS)
	if string(r.Approval.ApprovedArgs) == "null" {
		r.Approval.ApprovedArgs = nil
	}
	r.Approval.Upgrade()
	return r.Approval, nil
}

// ApprovalSQL is a dialect's statements for ChangeApproval.
type ApprovalSQL struct {
	// Select reads record and escalate_at of the approval whose id is its
	// one argument, locking the row where the engine locks rows.
	Select string
	// SetEscalate sets escalate_at of the approval whose id is its second
	// argument.
	SetEscalate string
	// Update sets status, grant_expires_at, escalate_at and record (in
	// that order) of the approval whose id is its fifth argument.
	Update string
	// Pending, when set, reports whether an Update failed for another
	// pending approval of the same action (rein.ErrApprovalPending).
	Pending func(error) bool
}

// ChangeApproval applies change to the approval id inside tx and returns
// the approval and the audit entries change made, which the caller
// appends. With no entries the approval is not written, but an escalation
// time stored wrong is set right.
func ChangeApproval(ctx context.Context, tx Tx, q ApprovalSQL, id string, change rein.ApprovalChange) (*rein.Approval, []*rein.Entry, error) {
	var escalate *string
	a, err := ScanApproval(withColumns{tx.QueryRow(ctx, q.Select, id), []any{&escalate}})
	if err != nil {
		return nil, nil, err
	}
	entries, err := change(a)
	if err != nil {
		return a, nil, err
	}
	if len(entries) == 0 {
		// Unchanged; an escalation time stored before the column was
		// kept (or otherwise off) is set right, so the sweep does not
		// read the approval again before it is due.
		if want := TimePtr(a.EscalateAt()); want != nullable(escalate) {
			if _, err := tx.Exec(ctx, q.SetEscalate, want, id); err != nil {
				return nil, nil, fmt.Errorf("update approval %s: %w", id, err)
			}
		}
		return a, nil, nil
	}
	body, err := StoredApproval(a)
	if err != nil {
		return nil, nil, err
	}
	if _, err := tx.Exec(ctx, q.Update, a.Status, TimePtr(a.GrantExpiresAt), TimePtr(a.EscalateAt()), string(body), id); err != nil {
		if q.Pending != nil && q.Pending(err) {
			return nil, nil, rein.ErrApprovalPending
		}
		return nil, nil, fmt.Errorf("update approval %s: %w", id, err)
	}
	return a, entries, nil
}

// UseApproval applies use (a check using an approval: a grant spent, a
// one-off consumed) inside tx and returns encs with the audit entries the
// change made, encoded, after them; encs itself is left as it is.
func UseApproval(ctx context.Context, tx Tx, q ApprovalSQL, use *rein.ApprovalUse, encs []*rein.EntryEncoding) ([]*rein.EntryEncoding, error) {
	_, more, err := ChangeApproval(ctx, tx, q, use.ID, use.Change)
	if err != nil {
		return nil, err
	}
	moreEncs, err := rein.EncodeEntries(more)
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(encs), moreEncs...), nil
}

// TimeFormat is fixed-width UTC, so that stored times compare as strings
// in the order of the times they stand for.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// Time is the stored form of t.
func Time(t time.Time) string { return t.UTC().Format(TimeFormat) }

// TimePtr is Time of a time that may be absent (NULL).
func TimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return Time(*t)
}

// nullable is a column read into a *string as TimePtr gives it.
func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// withColumns is a row whose columns after those its reader scans are read
// into extra.
type withColumns struct {
	row   Row
	extra []any
}

func (w withColumns) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra...)...) }

// LockSQL is a dialect's statements for RemoveLock.
type LockSQL struct {
	// Select reads the record of the lock not removed whose id is its one
	// argument, locking the row where the engine locks rows.
	Select string
	// Update sets removed_at and record (in that order) of the lock whose
	// id is its third argument.
	Update string
}

// RemoveLock marks the lock id removed by by at at inside tx, with its
// audit entry e; a lock already removed is rein.ErrNotFound. The lock is
// returned once it is written, even when appending e then fails.
func RemoveLock(ctx context.Context, tx Tx, q LockSQL, id, by string, at time.Time, e *rein.Entry) (*rein.Lock, error) {
	l, err := ScanRecord[rein.Lock](tx.QueryRow(ctx, q.Select, id), "lock")
	if err != nil {
		return nil, err
	}
	l.RemovedAt, l.RemovedBy = &at, by
	body, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, q.Update, Time(at), string(body), id); err != nil {
		return nil, fmt.Errorf("remove lock: %w", err)
	}
	return l, tx.Append(ctx, []*rein.Entry{e})
}

// DelegationSQL is a dialect's statements for RevokeDelegation.
type DelegationSQL struct {
	// Select reads the record of the delegation whose id is its one
	// argument, locking the row where the engine locks rows.
	Select string
	// Update sets record of the delegation whose id is its second
	// argument.
	Update string
}

// RevokeDelegation ends the delegation id, revoked by by at at, inside tx
// with its audit entry e: an unknown delegation is rein.ErrNotFound, one
// revoked already a conflict. The delegation is returned once it is
// written, even when appending e then fails.
func RevokeDelegation(ctx context.Context, tx Tx, q DelegationSQL, id, by string, at time.Time, e *rein.Entry) (*rein.Delegation, error) {
	d, err := ScanRecord[rein.Delegation](tx.QueryRow(ctx, q.Select, id), "delegation")
	if err != nil {
		return nil, err
	}
	if d.RevokedAt != nil {
		return nil, rein.Errorf(rein.ECodeConflict, "delegation %s was already revoked", id)
	}
	d.RevokedAt, d.RevokedBy = &at, by
	body, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, q.Update, string(body), id); err != nil {
		return nil, err
	}
	return d, tx.Append(ctx, []*rein.Entry{e})
}
