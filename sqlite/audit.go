package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// AuditSize returns the number of entries and of records in the tree.
func (db *DB) AuditSize(ctx context.Context) (entries, hashed int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(idx) + 1, 0) FROM audit_entries),
		(SELECT COALESCE(MAX(record) + 1, 0) FROM audit_tree)`).Scan(&entries, &hashed)
	return entries, hashed, err
}

// ReadHashes returns stored hashes by stored-hash index.
func (db *DB) ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	rows := map[int64][]byte{}
	var want []any
	for _, x := range indexes {
		rec, _ := audit.RecordRow(x)
		if _, ok := rows[rec]; !ok {
			rows[rec] = nil
			want = append(want, rec)
		}
	}
	for len(want) > 0 {
		chunk := want[:min(len(want), 500)]
		want = want[len(chunk):]
		q := "SELECT record, hashes FROM audit_tree WHERE record IN (?" + strings.Repeat(",?", len(chunk)-1) + ")"
		r, err := db.read.QueryContext(ctx, q, chunk...)
		if err != nil {
			return nil, err
		}
		for r.Next() {
			var rec int64
			var hs []byte
			if err := r.Scan(&rec, &hs); err != nil {
				r.Close()
				return nil, err
			}
			rows[rec] = hs
		}
		r.Close()
		if err := r.Err(); err != nil {
			return nil, err
		}
	}
	for i, x := range indexes {
		rec, pos := audit.RecordRow(x)
		hs := rows[rec]
		if len(hs) < (pos+1)*tlog.HashSize {
			return nil, fmt.Errorf("stored hash %d (record %d) is not in the tree", x, rec)
		}
		copy(out[i][:], hs[pos*tlog.HashSize:])
	}
	return out, nil
}

// SaveTree appends tree records and, optionally, a checkpoint.
func (db *DB) SaveTree(ctx context.Context, u *rein.TreeUpdate) error {
	return db.tx(ctx, func(tx *wtx) error {
		for i, hs := range u.Hashes {
			blob := make([]byte, 0, len(hs)*tlog.HashSize)
			for _, h := range hs {
				blob = append(blob, h[:]...)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO audit_tree (record, hashes) VALUES (?, ?)", u.From+int64(i), blob); err != nil {
				return fmt.Errorf("store tree record %d: %w", u.From+int64(i), err)
			}
		}
		if c := u.Checkpoint; c != nil {
			if _, err := tx.ExecContext(ctx, "INSERT INTO audit_checkpoints (size, note, signed_at) VALUES (?, ?, ?)",
				c.Size, string(c.Note), ts(c.SignedAt)); err != nil {
				return fmt.Errorf("store checkpoint %d: %w", c.Size, err)
			}
		}
		return nil
	})
}

// Checkpoints returns the checkpoints with sizes in [lo, hi], ascending.
func (db *DB) Checkpoints(ctx context.Context, lo, hi int64) ([]*rein.SignedCheckpoint, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT size, note, signed_at FROM audit_checkpoints WHERE size BETWEEN ? AND ? ORDER BY size", lo, hi)
	return collect(rows, err, scanCheckpoint)
}

func scanCheckpoint(row scanner) (*rein.SignedCheckpoint, error) {
	var c rein.SignedCheckpoint
	var n, at string
	if err := row.Scan(&c.Size, &n, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, rein.ErrNotFound
		}
		return nil, err
	}
	c.Note, c.SignedAt = []byte(n), parseTS(at)
	return &c, nil
}

// LatestCheckpoint returns the newest checkpoint.
func (db *DB) LatestCheckpoint(ctx context.Context) (*rein.SignedCheckpoint, error) {
	return scanCheckpoint(db.read.QueryRowContext(ctx, "SELECT size, note, signed_at FROM audit_checkpoints ORDER BY size DESC LIMIT 1"))
}

// AuditKeys lists the signing keys, oldest first.
func (db *DB) AuditKeys(ctx context.Context) ([]*rein.AuditKey, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT verifier, from_at, to_at FROM audit_keys ORDER BY from_at")
	return collect(rows, err, func(r scanner) (*rein.AuditKey, error) {
		var k rein.AuditKey
		var from string
		var to sql.NullString
		if err := r.Scan(&k.Verifier, &from, &to); err != nil {
			return nil, err
		}
		k.From = parseTS(from)
		if to.Valid {
			t := parseTS(to.String)
			k.To = &t
		}
		return &k, nil
	})
}

// AddAuditKey records a key coming into use; the key in use until then is
// retired at the same moment. A key already known is left as it is.
func (db *DB) AddAuditKey(ctx context.Context, k *rein.AuditKey) error {
	return db.tx(ctx, func(tx *wtx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM audit_keys WHERE verifier = ?", k.Verifier).Scan(&n); err != nil || n > 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE audit_keys SET to_at = ? WHERE to_at IS NULL", ts(k.From)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO audit_keys (verifier, from_at) VALUES (?, ?)", k.Verifier, ts(k.From))
		return err
	})
}
