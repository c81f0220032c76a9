package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

// CreateReview stores a new review with its audit entries.
func (db *DB) CreateReview(ctx context.Context, r *rein.Review, entries []*rein.Entry) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		if err := insertReview(ctx, tx, r, body); err != nil {
			return err
		}
		return tx.appendEntries(ctx, entries...)
	})
	return err
}

func insertReview(ctx context.Context, tx *wtx, r *rein.Review, body []byte) error {
	if _, err := tx.Exec(ctx, `INSERT INTO reviews (id, tenant, status, agent, session, created_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.ID, r.Tenant, r.Status, r.Agent, r.Session, ts(r.CreatedAt), string(body)); err != nil {
		return fmt.Errorf("insert review: %w", err)
	}
	return nil
}

func scanReview(row pgx.Row) (*rein.Review, error) { return scanRecord[rein.Review](row, "review") }

// Review returns one review.
func (db *DB) Review(ctx context.Context, id string) (*rein.Review, error) {
	return scanReview(db.pool.QueryRow(ctx, "SELECT record FROM reviews WHERE id = $1", id))
}

// Reviews lists reviews, newest first.
func (db *DB) Reviews(ctx context.Context, tenant string, f rein.ReviewFilter) ([]*rein.Review, error) {
	q, args := listQuery("reviews", tenant, rein.ListFilter{Status: f.Status, Agent: f.Agent, Limit: f.Limit, Before: f.Before})
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Review, error) { return scanReview(r) })
}

// ChangeReview applies change to a review in one write transaction.
func (db *DB) ChangeReview(ctx context.Context, id string, change rein.ReviewChange) (*rein.Review, error) {
	return changeRecord(ctx, db, "reviews", "review", id, func(v *rein.Review) string { return v.Status }, change)
}
