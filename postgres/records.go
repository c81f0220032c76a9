package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

// Questions, reviews and proposals are each kept whole as a JSON record
// column beside the few columns their lists filter on (status among them).
// scanRecord and changeRecord are how all three are read and changed.

// scanRecord reads a row's record into a new T; no row is ErrNotFound.
func scanRecord[T any](row pgx.Row, what string) (*T, error) {
	var body string
	if err := row.Scan(&body); err != nil {
		return nil, notFound(err)
	}
	v := new(T)
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	return v, nil
}

// changeRecord applies change to the record of id in table in one write
// transaction, the row locked: when change returns audit entries, the
// changed record (and its status column) is written with them; with none,
// nothing is written.
func changeRecord[T any](ctx context.Context, db *DB, table, what, id string, status func(*T) string,
	change func(*T) ([]*rein.Entry, error)) (*T, error) {
	var out *T
	_, err := db.write(ctx, func(tx *wtx) error {
		v, err := scanRecord[T](tx.QueryRow(ctx, "SELECT record FROM "+table+" WHERE id = $1 FOR UPDATE", id), what)
		if err != nil {
			return err
		}
		entries, err := change(v)
		if err != nil {
			return err
		}
		out = v
		if len(entries) == 0 {
			return nil
		}
		body, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE "+table+" SET status = $1, record = $2 WHERE id = $3", status(v), string(body), id); err != nil {
			return fmt.Errorf("update %s %s: %w", what, id, err)
		}
		return tx.appendEntries(ctx, entries...)
	})
	return out, err
}
