package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"database/sql"
)

// SignOut records that the console session named by nonce was signed
// out; it is refused until it would have expired anyway. Rows past their
// time are dropped on the way.
func (db *DB) SignOut(ctx context.Context, nonce string, until time.Time) error {
	return db.tx(ctx, func(tx *wtx) error {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		if _, err := tx.ExecContext(ctx, "DELETE FROM console_signouts WHERE until < ?", now); err != nil {
			return fmt.Errorf("purge sign-outs: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO console_signouts (nonce, until) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
			nonce, until.UTC().Format(time.RFC3339Nano)); err != nil {
			return fmt.Errorf("record sign-out: %w", err)
		}
		return nil
	})
}

// SignedOut reports whether the console session named by nonce was
// signed out.
func (db *DB) SignedOut(ctx context.Context, nonce string) (bool, error) {
	var one int
	err := db.read.QueryRowContext(ctx, "SELECT 1 FROM console_signouts WHERE nonce = ?", nonce).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
