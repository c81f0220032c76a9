package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

// AddPasskey stores a new passkey with its audit entry.
func (db *DB) AddPasskey(ctx context.Context, p *rein.Passkey, e *rein.Entry) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO passkeys (id, tenant, name, record) VALUES ($1, $2, $3, $4)", p.ID, p.Tenant, p.Name, string(body)); err != nil {
			if violates(err, "passkeys_pkey") {
				return rein.Errorf(rein.ECodeConflict, "this passkey is registered already")
			}
			return fmt.Errorf("insert passkey: %w", err)
		}
		return tx.appendEntries(ctx, e)
	})
	return err
}

func scanPasskey(row pgx.Row) (*rein.Passkey, error) {
	var body string
	if err := row.Scan(&body); err != nil {
		return nil, notFound(err)
	}
	p := &rein.Passkey{}
	return p, json.Unmarshal([]byte(body), p)
}

// PasskeysOf lists a person's passkeys, oldest first.
func (db *DB) PasskeysOf(ctx context.Context, tenant, name string) ([]*rein.Passkey, error) {
	rows, err := db.pool.Query(ctx, "SELECT record FROM passkeys WHERE tenant = $1 AND name = $2", tenant, name)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Passkey, error) { return scanPasskey(r) })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(list, func(a, b *rein.Passkey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return list, nil
}

// UsePasskey records a use of a passkey.
func (db *DB) UsePasskey(ctx context.Context, id string, credential json.RawMessage, at time.Time) error {
	_, err := db.write(ctx, func(tx *wtx) error {
		p, err := scanPasskey(tx.QueryRow(ctx, "SELECT record FROM passkeys WHERE id = $1 FOR UPDATE", id))
		if err != nil {
			return err
		}
		p.Credential, p.LastUsedAt = credential, &at
		body, _ := json.Marshal(p)
		_, err = tx.Exec(ctx, "UPDATE passkeys SET record = $1 WHERE id = $2", string(body), id)
		return err
	})
	return err
}

// RemovePasskey deletes a passkey and appends e.
func (db *DB) RemovePasskey(ctx context.Context, id string, e *rein.Entry) error {
	_, err := db.write(ctx, func(tx *wtx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM passkeys WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return rein.ErrNotFound
		}
		return tx.appendEntries(ctx, e)
	})
	return err
}
