package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SignOut records that the console session named by nonce was signed
// out; it is refused until it would have expired anyway. Rows past their
// time are dropped on the way.
func (db *DB) SignOut(ctx context.Context, nonce string, until time.Time) error {
	if _, err := db.pool.Exec(ctx, "DELETE FROM console_signouts WHERE until < now()"); err != nil {
		return fmt.Errorf("purge sign-outs: %w", err)
	}
	if _, err := db.pool.Exec(ctx, "INSERT INTO console_signouts (nonce, until) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING", nonce, until.UTC()); err != nil {
		return fmt.Errorf("record sign-out: %w", err)
	}
	return nil
}

// SignedOut reports whether the console session named by nonce was
// signed out.
func (db *DB) SignedOut(ctx context.Context, nonce string) (bool, error) {
	var one int
	err := db.pool.QueryRow(ctx, "SELECT 1 FROM console_signouts WHERE nonce = $1", nonce).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
