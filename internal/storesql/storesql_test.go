package storesql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

// fakeTx holds one row's columns and records what is written.
type fakeTx struct {
	cols    []any // nil: no row
	execErr error
	// rowsAffected, when set, is what Exec reports changed; else 1
	rowsAffected *int64
	queries      []string
	execs        [][]any
	appends      [][]*rein.Entry
}

type fakeRow struct {
	cols []any
	err  error
}

func (r fakeRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	for i, d := range dest {
		reflect.ValueOf(d).Elem().Set(reflect.ValueOf(r.cols[i]))
	}
	return nil
}

func (t *fakeTx) QueryRow(_ context.Context, query string, args ...any) Row {
	t.queries = append(t.queries, query)
	if t.cols == nil {
		return fakeRow{err: sql.ErrNoRows}
	}
	return fakeRow{cols: t.cols}
}

func (t *fakeTx) Exec(_ context.Context, query string, args ...any) (int64, error) {
	t.execs = append(t.execs, append([]any{query}, args...))
	if t.execErr != nil {
		return 0, t.execErr
	}
	if t.rowsAffected != nil {
		return *t.rowsAffected, nil
	}
	return 1, nil
}

func (t *fakeTx) Append(_ context.Context, entries []*rein.Entry) error {
	t.appends = append(t.appends, entries)
	return nil
}

type rec struct {
	Status string `json:"status"`
}

var recSQL = RecordSQL{Select: "select", Update: "update"}

func status(r *rec) string { return r.Status }

func TestChangeRecordWritesOnlyWithEntries(t *testing.T) {
	ctx := context.Background()
	tx := &fakeTx{cols: []any{`{"status":"open"}`}}
	got, err := ChangeRecord(ctx, tx, recSQL, "thing", "t1", status, func(r *rec) ([]*rein.Entry, error) { return nil, nil })
	if err != nil || got.Status != "open" {
		t.Fatalf("unchanged: %+v, %v", got, err)
	}
	if len(tx.execs) != 0 || len(tx.appends) != 0 {
		t.Fatalf("unchanged record written: %v %v", tx.execs, tx.appends)
	}

	entry := &rein.Entry{Kind: "k"}
	got, err = ChangeRecord(ctx, tx, recSQL, "thing", "t1", status, func(r *rec) ([]*rein.Entry, error) {
		r.Status = "closed"
		return []*rein.Entry{entry}, nil
	})
	if err != nil || got.Status != "closed" {
		t.Fatalf("changed: %+v, %v", got, err)
	}
	want := []any{"update", "closed", `{"status":"closed"}`, "t1"}
	if len(tx.execs) != 1 || !reflect.DeepEqual(tx.execs[0], want) {
		t.Fatalf("update = %v, want %v", tx.execs, want)
	}
	if len(tx.appends) != 1 || tx.appends[0][0] != entry {
		t.Fatalf("entries not appended with the record: %v", tx.appends)
	}
}

func TestChangeRecordErrors(t *testing.T) {
	ctx := context.Background()
	_, err := ChangeRecord(ctx, &fakeTx{}, recSQL, "thing", "t1", status, func(r *rec) ([]*rein.Entry, error) {
		t.Fatal("change called without a record")
		return nil, nil
	})
	if !errors.Is(err, rein.ErrNotFound) {
		t.Fatalf("missing record: %v, want ErrNotFound", err)
	}
	refused := errors.New("refused")
	tx := &fakeTx{cols: []any{`{"status":"open"}`}}
	got, err := ChangeRecord(ctx, tx, recSQL, "thing", "t1", status, func(r *rec) ([]*rein.Entry, error) { return nil, refused })
	if got != nil || !errors.Is(err, refused) || len(tx.execs) != 0 {
		t.Fatalf("refused change: %v, %v, %v", got, err, tx.execs)
	}
}

// The PostgreSQL store's rows report no row as pgx.ErrNoRows; ScanRecord
// knows it as sql.ErrNoRows.
func TestPgxNoRowsIsSQLNoRows(t *testing.T) {
	if _, err := ScanRecord[rec](fakeRow{err: pgx.ErrNoRows}, "thing"); !errors.Is(err, rein.ErrNotFound) {
		t.Fatalf("pgx.ErrNoRows scanned as %v, want ErrNotFound", err)
	}
}

func approvalCols(t *testing.T, a *rein.Approval, escalate *string) []any {
	body, err := json.Marshal(ApprovalRow{a, int64(a.GrantTTL)})
	if err != nil {
		t.Fatal(err)
	}
	return []any{string(body), escalate}
}

var approvalSQLs = ApprovalSQL{Select: "select", SetEscalate: "escalate", Update: "update"}

func TestChangeApprovalSetsEscalationRightWhenUnchanged(t *testing.T) {
	ctx := context.Background()
	stale := "2000-01-01T00:00:00.000000000Z"
	tx := &fakeTx{cols: approvalCols(t, &rein.Approval{ID: "a1", Status: rein.StatusApproved}, &stale)}
	a, entries, err := ChangeApproval(ctx, tx, approvalSQLs, "a1", func(*rein.Approval) ([]*rein.Entry, error) { return nil, nil })
	if err != nil || a == nil || entries != nil {
		t.Fatalf("unchanged: %v %v %v", a, entries, err)
	}
	want := []any{"escalate", nil, "a1"}
	if len(tx.execs) != 1 || !reflect.DeepEqual(tx.execs[0], want) {
		t.Fatalf("execs = %v, want %v", tx.execs, want)
	}

	tx = &fakeTx{cols: approvalCols(t, &rein.Approval{ID: "a1", Status: rein.StatusApproved}, nil)}
	if _, _, err := ChangeApproval(ctx, tx, approvalSQLs, "a1", func(*rein.Approval) ([]*rein.Entry, error) { return nil, nil }); err != nil || len(tx.execs) != 0 {
		t.Fatalf("escalation already right, yet written: %v %v", tx.execs, err)
	}
}

func TestChangeApprovalPending(t *testing.T) {
	ctx := context.Background()
	conflict := errors.New("unique violation")
	change := func(a *rein.Approval) ([]*rein.Entry, error) {
		a.Status = rein.StatusPending
		return []*rein.Entry{{Kind: "k"}}, nil
	}
	q := approvalSQLs
	q.Pending = func(err error) bool { return err == conflict }
	tx := &fakeTx{cols: approvalCols(t, &rein.Approval{ID: "a1", Status: rein.StatusExpired}, nil), execErr: conflict}
	if _, _, err := ChangeApproval(ctx, tx, q, "a1", change); !errors.Is(err, rein.ErrApprovalPending) {
		t.Fatalf("conflict: %v, want ErrApprovalPending", err)
	}
	if len(tx.execs) != 1 || tx.execs[0][0] != "update" || tx.execs[0][1] != rein.StatusPending {
		t.Fatalf("update = %v", tx.execs)
	}
	tx = &fakeTx{cols: approvalCols(t, &rein.Approval{ID: "a1", Status: rein.StatusExpired}, nil), execErr: conflict}
	if _, _, err := ChangeApproval(ctx, tx, approvalSQLs, "a1", change); errors.Is(err, rein.ErrApprovalPending) || !errors.Is(err, conflict) {
		t.Fatalf("without Pending: %v, want the update's error", err)
	}
}

func TestRemoveLock(t *testing.T) {
	ctx := context.Background()
	q := LockSQL{Select: "select", Update: "update"}
	e := &rein.Entry{Kind: "k"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	if _, err := RemoveLock(ctx, &fakeTx{}, q, "l1", "ann", at, e); !errors.Is(err, rein.ErrNotFound) {
		t.Fatalf("no lock not removed: %v, want ErrNotFound", err)
	}
	tx := &fakeTx{cols: []any{`{"id":"l1"}`}}
	l, err := RemoveLock(ctx, tx, q, "l1", "ann", at, e)
	if err != nil || l.RemovedBy != "ann" || l.RemovedAt == nil || !l.RemovedAt.Equal(at) {
		t.Fatalf("removed: %+v, %v", l, err)
	}
	if len(tx.execs) != 1 || tx.execs[0][0] != "update" || tx.execs[0][1] != "2026-01-02T03:04:05.000000006Z" || tx.execs[0][3] != "l1" {
		t.Fatalf("update = %v", tx.execs)
	}
	var stored rein.Lock
	if err := json.Unmarshal([]byte(tx.execs[0][2].(string)), &stored); err != nil || stored.RemovedBy != "ann" {
		t.Fatalf("stored record %v: %+v, %v", tx.execs[0][2], stored, err)
	}
	if len(tx.appends) != 1 || len(tx.appends[0]) != 1 || tx.appends[0][0] != e {
		t.Fatalf("entry not appended: %v", tx.appends)
	}
}

func TestUseApproval(t *testing.T) {
	ctx := context.Background()
	tx := &fakeTx{cols: approvalCols(t, &rein.Approval{ID: "a1", Status: rein.StatusApproved}, nil)}
	first, err := rein.EncodeEntries([]*rein.Entry{{Kind: "check"}})
	if err != nil {
		t.Fatal(err)
	}
	encs := make([]*rein.EntryEncoding, 1, 4) // room to append in place
	encs[0] = first[0]
	use := &rein.ApprovalUse{ID: "a1", Change: func(a *rein.Approval) ([]*rein.Entry, error) {
		a.Status = rein.StatusExpired
		return []*rein.Entry{{Kind: "used"}}, nil
	}}
	got, err := UseApproval(ctx, tx, approvalSQLs, use, encs)
	if err != nil || len(got) != 2 || got[0] != encs[0] || got[1].Kind != "used" {
		t.Fatalf("used: %v %v", got, err)
	}
	if len(tx.execs) != 1 || tx.execs[0][0] != "update" {
		t.Fatalf("approval not written: %v", tx.execs)
	}
	if encs[:2][1] != nil {
		t.Fatal("the caller's encodings were written over")
	}
}
