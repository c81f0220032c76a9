package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// AddPasskey stores a new passkey with its audit entry.
func (db *DB) AddPasskey(ctx context.Context, p *rein.Passkey, e *rein.Entry) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO passkeys (id, tenant, name, record) VALUES (?, ?, ?, ?)", p.ID, p.Tenant, p.Name, string(body)); err != nil {
			if strings.Contains(err.Error(), "UNIQUE") {
				return rein.Errorf(rein.ECodeConflict, "this passkey is registered already")
			}
			return fmt.Errorf("insert passkey: %w", err)
		}
		_, err := appendEntries(ctx, tx, []*rein.Entry{e})
		return err
	})
}

// PasskeysOf lists a person's passkeys, oldest first.
func (db *DB) PasskeysOf(ctx context.Context, tenant, name string) ([]*rein.Passkey, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT record FROM passkeys WHERE tenant = ? AND name = ?", tenant, name)
	list, err := collect(rows, err, scanPasskey)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(list, func(a, b *rein.Passkey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return list, nil
}

func scanPasskey(row scanner) (*rein.Passkey, error) {
	var body string
	if err := row.Scan(&body); err != nil {
		return nil, err
	}
	p := &rein.Passkey{}
	return p, json.Unmarshal([]byte(body), p)
}

// UsePasskey records a use of a passkey.
func (db *DB) UsePasskey(ctx context.Context, id string, credential json.RawMessage, at time.Time) error {
	return db.tx(ctx, func(tx *wtx) error {
		p, err := scanPasskey(tx.QueryRowContext(ctx, "SELECT record FROM passkeys WHERE id = ?", id))
		if err != nil {
			return rein.ErrNotFound
		}
		p.Credential, p.LastUsedAt = credential, &at
		body, _ := json.Marshal(p)
		_, err = tx.ExecContext(ctx, "UPDATE passkeys SET record = ? WHERE id = ?", string(body), id)
		return err
	})
}

// RemovePasskey deletes a passkey and appends e.
func (db *DB) RemovePasskey(ctx context.Context, id string, e *rein.Entry) error {
	return db.tx(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM passkeys WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return rein.ErrNotFound
		}
		_, err = appendEntries(ctx, tx, []*rein.Entry{e})
		return err
	})
}
