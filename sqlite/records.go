package sqlite

import (
	"context"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// Questions, reviews and proposals are each kept whole as a JSON record
// column beside the few columns their lists filter on (status among them).
// scanRecord and changeRecord are how all three are read and changed; the
// logic is storesql's, shared with the PostgreSQL store, and the SQL is here.

// scanRecord reads a row's record into a new T; no row is ErrNotFound.
func scanRecord[T any](row scanner, what string) (*T, error) {
	return storesql.ScanRecord[T](row, what)
}

// changeRecord applies change to the record of id in table in one write
// transaction: when change returns audit entries, the changed record (and
// its status column) is written with them; with none, nothing is written.
func changeRecord[T any](ctx context.Context, db *DB, table, what, id string, status func(*T) string,
	change func(*T) ([]*rein.Entry, error)) (*T, error) {
	q := storesql.RecordSQL{
		Select: "SELECT record FROM " + table + " WHERE id = ?",
		Update: "UPDATE " + table + " SET status = ?, record = ? WHERE id = ?",
	}
	return txValue(ctx, db, func(tx *wtx) (*T, error) {
		return storesql.ChangeRecord(ctx, storeTx{tx}, q, what, id, status, change)
	})
}

// storeTx is a write transaction as the logic shared with the PostgreSQL
// store (storesql) uses it.
type storeTx struct{ *wtx }

func (t storeTx) QueryRow(ctx context.Context, query string, args ...any) storesql.Row {
	return t.QueryRowContext(ctx, query, args...)
}

func (t storeTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t storeTx) Append(ctx context.Context, entries []*rein.Entry) error {
	_, err := appendEntries(ctx, t.wtx, entries)
	return err
}
