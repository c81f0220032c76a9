package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// rewriteTables are the tables whose records a rewrite passes through.
var rewriteTables = []string{"checks", "approvals", "reviews"}

// RewriteRecords passes every record of the checks, approvals and reviews
// to change and stores what it returns instead (nil: keep the record). It
// runs once per name, by one replica (the others wait for it). When it
// changed a record, the three tables are rewritten (VACUUM FULL), so that
// what was replaced is gone from their files too.
func (db *DB) RewriteRecords(ctx context.Context, name string, change func(table string, record []byte) []byte) (int, error) {
	changed := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		changed = 0
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", db.lockKey+1); err != nil {
			return err
		}
		var done int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM rewrites WHERE name = $1", name).Scan(&done); err != nil || done > 0 {
			return err
		}
		for _, table := range rewriteTables {
			after := ""
			for {
				rows, err := tx.Query(ctx, "SELECT id, record FROM "+table+" WHERE id > $1 ORDER BY id LIMIT 500", after)
				if err != nil {
					return err
				}
				type row struct{ id, record string }
				got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
					var x row
					return x, r.Scan(&x.id, &x.record)
				})
				if err != nil {
					return err
				}
				for _, r := range got {
					if out := change(table, []byte(r.record)); out != nil {
						if _, err := tx.Exec(ctx, "UPDATE "+table+" SET record = $1 WHERE id = $2", string(out), r.id); err != nil {
							return err
						}
						changed++
					}
				}
				if len(got) < 500 {
					break
				}
				after = got[len(got)-1].id
			}
		}
		_, err := tx.Exec(ctx, "INSERT INTO rewrites (name, done_at) VALUES ($1, $2)", name, time.Now().UTC().Format(time.RFC3339Nano))
		return err
	})
	if err != nil {
		return changed, fmt.Errorf("rewrite %s: %w", name, err)
	}
	if changed > 0 {
		if _, err := db.pool.Exec(ctx, "VACUUM FULL checks, approvals, reviews"); err != nil {
			return changed, fmt.Errorf("rewrite %s: vacuum: %w", name, err)
		}
	}
	return changed, nil
}
