package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// rewriteTables are the tables whose records a rewrite passes through.
var rewriteTables = []string{"checks", "approvals", "reviews"}

// RewriteRecords passes every record of the checks, approvals and reviews
// to change and stores what it returns instead (nil: keep the record). It
// runs once per name. When it changed a record, the database is vacuumed and
// its WAL emptied, so that what was replaced is gone from the files too.
func (db *DB) RewriteRecords(ctx context.Context, name string, change func(table string, record []byte) []byte) (int, error) {
	var done int
	if err := db.read.QueryRowContext(ctx, "SELECT COUNT(*) FROM rewrites WHERE name = ?", name).Scan(&done); err != nil {
		return 0, fmt.Errorf("rewrite %s: %w", name, err)
	}
	if done > 0 {
		return 0, nil
	}
	changed := 0
	for _, table := range rewriteTables {
		after := ""
		for {
			n, last, err := db.rewritePage(ctx, table, after, change)
			if err != nil {
				return changed, fmt.Errorf("rewrite %s of %s: %w", name, table, err)
			}
			changed += n
			if last == "" {
				break
			}
			after = last
		}
	}
	err := db.tx(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO rewrites (name, done_at) VALUES (?, ?)", name, ts(time.Now()))
		return err
	})
	if err != nil {
		return changed, fmt.Errorf("rewrite %s: %w", name, err)
	}
	if changed > 0 {
		// The old records are still in free pages and in the WAL's frames:
		// rebuild the file and empty the WAL.
		if _, err := db.ckpt.ExecContext(ctx, "VACUUM"); err != nil {
			return changed, fmt.Errorf("rewrite %s: vacuum: %w", name, err)
		}
		var busy, frames, copied int
		if err := db.ckpt.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied); err != nil {
			return changed, fmt.Errorf("rewrite %s: checkpoint: %w", name, err)
		}
	}
	return changed, nil
}

// rewritePage rewrites up to 500 records of table after id after, in one
// transaction, and returns how many changed and the last id read ("" when
// the table has no more).
func (db *DB) rewritePage(ctx context.Context, table, after string, change func(string, []byte) []byte) (int, string, error) {
	const page = 500
	n, last := 0, ""
	err := db.tx(ctx, func(tx *wtx) error {
		n, last = 0, ""
		rows, err := tx.conn.QueryContext(ctx, "SELECT id, record FROM "+table+" WHERE id > ? ORDER BY id LIMIT ?", after, page)
		if err != nil {
			return err
		}
		type row struct{ id, record string }
		var got []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.record); err != nil {
				rows.Close()
				return err
			}
			got = append(got, r)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, r := range got {
			if out := change(table, []byte(r.record)); out != nil {
				if _, err := tx.conn.ExecContext(ctx, "UPDATE "+table+" SET record = ? WHERE id = ?", string(out), r.id); err != nil {
					return err
				}
				n++
			}
		}
		if len(got) == page {
			last = got[len(got)-1].id
		}
		return nil
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return n, last, err
}
