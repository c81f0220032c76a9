package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// Questions, reviews and proposals are each kept whole as a JSON record
// column beside the few columns their lists filter on (status among them).
// scanRecord and changeRecord are how all three are read and changed; the
// logic is storesql's, shared with the SQLite store, and the SQL is here.

// scanRecord reads a row's record into a new T; no row is ErrNotFound.
func scanRecord[T any](row pgx.Row, what string) (*T, error) {
	return storesql.ScanRecord[T](row, what)
}

// changeRecord applies change to the record of id in table in one write
// transaction, the row locked: when change returns audit entries, the
// changed record (and its status column) is written with them; with none,
// nothing is written.
func changeRecord[T any](ctx context.Context, db *DB, table, what, id string, status func(*T) string,
	change func(*T) ([]*rein.Entry, error)) (*T, error) {
	q := storesql.RecordSQL{
		Select: "SELECT record FROM " + table + " WHERE id = $1 FOR UPDATE",
		Update: "UPDATE " + table + " SET status = $1, record = $2 WHERE id = $3",
	}
	return writeValue(ctx, db, func(tx *wtx) (*T, error) {
		return storesql.ChangeRecord(ctx, storeTx{tx}, q, what, id, status, change)
	})
}

// storeTx is a write transaction as the logic shared with the SQLite store
// (storesql) uses it; pgx reports a missing row as pgx.ErrNoRows, which is
// sql.ErrNoRows under errors.Is.
type storeTx struct{ tx *wtx }

func (t storeTx) QueryRow(ctx context.Context, query string, args ...any) storesql.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

func (t storeTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (t storeTx) Append(ctx context.Context, entries []*rein.Entry) error {
	return t.tx.appendEntries(ctx, entries...)
}
