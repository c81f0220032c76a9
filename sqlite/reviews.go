package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reinhq/rein"
)

// CreateReview stores a new review with its audit entries.
func (db *DB) CreateReview(ctx context.Context, r *rein.Review, entries []*rein.Entry) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		if err := insertReview(ctx, tx, r.ID, r.Tenant, r.Status, r.Agent, r.Session, r.CreatedAt, body); err != nil {
			return err
		}
		_, err := appendEntries(ctx, tx, entries)
		return err
	})
}

func insertReview(ctx context.Context, tx *wtx, id, tenant, status, agent, session string, at time.Time, body []byte) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO reviews (id, tenant, status, agent, session, created_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, tenant, status, agent, session, ts(at), string(body)); err != nil {
		return fmt.Errorf("insert review: %w", err)
	}
	return nil
}

// Review returns one review.
func (db *DB) Review(ctx context.Context, id string) (*rein.Review, error) {
	return scanReview(db.read.QueryRowContext(ctx, "SELECT record FROM reviews WHERE id = ?", id))
}

func scanReview(row scanner) (*rein.Review, error) { return scanRecord[rein.Review](row, "review") }

// Reviews lists reviews, newest first.
func (db *DB) Reviews(ctx context.Context, tenant string, f rein.ReviewFilter) ([]*rein.Review, error) {
	q, args := listQuery("reviews", "session", "agent", tenant, rein.ListFilter{Status: f.Status, Agent: f.Agent, Limit: f.Limit, Before: f.Before})
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, scanReview)
}

// ChangeReview applies change to a review in one write transaction.
func (db *DB) ChangeReview(ctx context.Context, id string, change rein.ReviewChange) (*rein.Review, error) {
	return changeRecord(ctx, db, "reviews", "review", id, func(v *rein.Review) string { return v.Status }, change)
}
