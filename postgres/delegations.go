package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// CreateDelegation stores a delegation with its audit entries.
func (db *DB) CreateDelegation(ctx context.Context, d *rein.Delegation, entries []*rein.Entry) error {
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO delegations (id, tenant, record) VALUES ($1, $2, $3)", d.ID, d.Tenant, string(body)); err != nil {
			return fmt.Errorf("insert delegation: %w", err)
		}
		return tx.appendEntries(ctx, entries...)
	})
	return err
}

func scanDelegation(row pgx.Row) (*rein.Delegation, error) {
	var body string
	if err := row.Scan(&body); err != nil {
		return nil, notFound(err)
	}
	d := &rein.Delegation{}
	return d, json.Unmarshal([]byte(body), d)
}

// Delegations lists a tenant's delegations, newest first.
func (db *DB) Delegations(ctx context.Context, tenant string) ([]*rein.Delegation, error) {
	q, args := "SELECT record FROM delegations WHERE tenant = $1 ORDER BY id DESC", []any{tenant}
	if tenant == rein.AllTenants {
		q, args = "SELECT record FROM delegations ORDER BY id DESC", nil
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Delegation, error) { return scanDelegation(r) })
}

// RevokeDelegation ends a delegation, its row locked
// (storesql.RevokeDelegation).
func (db *DB) RevokeDelegation(ctx context.Context, id, by string, at time.Time, e *rein.Entry) (*rein.Delegation, error) {
	return writeValue(ctx, db, func(tx *wtx) (*rein.Delegation, error) {
		return storesql.RevokeDelegation(ctx, storeTx{tx}, delegationSQL, id, by, at, e)
	})
}

// delegationSQL is how storesql.RevokeDelegation reads and writes a
// delegation here, its row locked.
var delegationSQL = storesql.DelegationSQL{
	Select: "SELECT record FROM delegations WHERE id = $1 FOR UPDATE",
	Update: "UPDATE delegations SET record = $1 WHERE id = $2",
}
