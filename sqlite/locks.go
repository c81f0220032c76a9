package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// CreateLock stores a new lock with its audit entries.
func (db *DB) CreateLock(ctx context.Context, l *rein.Lock, entries []*rein.Entry) error {
	body, err := json.Marshal(l)
	if err != nil {
		return err
	}
	encs, err := rein.EncodeEntries(entries)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO locks (id, tenant, created_at, record) VALUES (?, ?, ?, ?)",
			l.ID, l.Tenant, ts(l.CreatedAt), string(body)); err != nil {
			return fmt.Errorf("insert lock: %w", err)
		}
		_, err := appendEncoded(ctx, tx, encs)
		return err
	})
}

func scanLock(r scanner) (*rein.Lock, error) { return storesql.ScanRecord[rein.Lock](r, "lock") }

// Lock returns one lock.
func (db *DB) Lock(ctx context.Context, id string) (*rein.Lock, error) {
	return scanLock(db.read.QueryRowContext(ctx, "SELECT record FROM locks WHERE id = ?", id))
}

// Locks returns the locks not removed (active or expired), oldest first.
func (db *DB) Locks(ctx context.Context) ([]*rein.Lock, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT record FROM locks WHERE removed_at IS NULL ORDER BY created_at, id")
	return collect(rows, err, scanLock)
}

// RemoveLock marks a lock removed, with its audit entry; a lock already
// removed is not found.
func (db *DB) RemoveLock(ctx context.Context, id, by string, at time.Time, e *rein.Entry) (*rein.Lock, error) {
	return txValue(ctx, db, func(tx *wtx) (*rein.Lock, error) {
		return storesql.RemoveLock(ctx, storeTx{tx}, lockSQL, id, by, at, e)
	})
}

// lockSQL is how storesql.RemoveLock reads and writes a lock here.
var lockSQL = storesql.LockSQL{
	Select: "SELECT record FROM locks WHERE id = ? AND removed_at IS NULL",
	Update: "UPDATE locks SET removed_at = ?, record = ? WHERE id = ?",
}
