package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein"
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

func scanLock(r scanner) (*rein.Lock, error) {
	var body string
	if err := r.Scan(&body); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, rein.ErrNotFound
		}
		return nil, err
	}
	l := &rein.Lock{}
	if err := json.Unmarshal([]byte(body), l); err != nil {
		return nil, fmt.Errorf("decode lock: %w", err)
	}
	return l, nil
}

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
	var out *rein.Lock
	err := db.tx(ctx, func(tx *wtx) error {
		l, err := scanLock(tx.QueryRowContext(ctx, "SELECT record FROM locks WHERE id = ? AND removed_at IS NULL", id))
		if err != nil {
			return err
		}
		l.RemovedAt, l.RemovedBy = &at, by
		body, err := json.Marshal(l)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE locks SET removed_at = ?, record = ? WHERE id = ?", ts(at), string(body), id); err != nil {
			return fmt.Errorf("remove lock: %w", err)
		}
		if _, err := appendEntries(ctx, tx, []*rein.Entry{e}); err != nil {
			return err
		}
		out = l
		return nil
	})
	return out, err
}
