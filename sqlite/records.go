package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reinhq/rein"
)

// Questions, reviews and proposals are each kept whole as a JSON record
// column beside the few columns their lists filter on (status among them).
// scanRecord and changeRecord are how all three are read and changed.

// scanRecord reads a row's record into a new T; no row is ErrNotFound.
func scanRecord[T any](row scanner, what string) (*T, error) {
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

// changeRecord applies change to the record of id in table in one write
// transaction: when change returns audit entries, the changed record (and
// its status column) is written with them; with none, nothing is written.
func changeRecord[T any](ctx context.Context, db *DB, table, what, id string, status func(*T) string,
	change func(*T) ([]*rein.Entry, error)) (*T, error) {
	var out *T
	err := db.tx(ctx, func(tx *wtx) error {
		v, err := scanRecord[T](tx.QueryRowContext(ctx, "SELECT record FROM "+table+" WHERE id = ?", id), what)
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
		if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET status = ?, record = ? WHERE id = ?", status(v), string(body), id); err != nil {
			return fmt.Errorf("update %s %s: %w", what, id, err)
		}
		_, err = appendEntries(ctx, tx, entries)
		return err
	})
	return out, err
}
