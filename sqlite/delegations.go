package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/storesql"
)

// CreateDelegation stores a delegation with its audit entries.
func (db *DB) CreateDelegation(ctx context.Context, d *rein.Delegation, entries []*rein.Entry) error {
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO delegations (id, tenant, record) VALUES (?, ?, ?)", d.ID, d.Tenant, string(body)); err != nil {
			return fmt.Errorf("insert delegation: %w", err)
		}
		_, err := appendEntries(ctx, tx, entries)
		return err
	})
}

// Delegations lists a tenant's delegations, newest first.
func (db *DB) Delegations(ctx context.Context, tenant string) ([]*rein.Delegation, error) {
	q, args := "SELECT record FROM delegations WHERE tenant = ? ORDER BY id DESC", []any{tenant}
	if tenant == rein.AllTenants {
		q, args = "SELECT record FROM delegations ORDER BY id DESC", nil
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, scanDelegation)
}

func scanDelegation(row scanner) (*rein.Delegation, error) {
	var body string
	if err := row.Scan(&body); err != nil {
		return nil, err
	}
	d := &rein.Delegation{}
	return d, json.Unmarshal([]byte(body), d)
}

// RevokeDelegation ends a delegation (storesql.RevokeDelegation).
func (db *DB) RevokeDelegation(ctx context.Context, id, by string, at time.Time, e *rein.Entry) (*rein.Delegation, error) {
	return txValue(ctx, db, func(tx *wtx) (*rein.Delegation, error) {
		return storesql.RevokeDelegation(ctx, storeTx{tx}, delegationSQL, id, by, at, e)
	})
}

// delegationSQL is how storesql.RevokeDelegation reads and writes a
// delegation here.
var delegationSQL = storesql.DelegationSQL{
	Select: "SELECT record FROM delegations WHERE id = ?",
	Update: "UPDATE delegations SET record = ? WHERE id = ?",
}
