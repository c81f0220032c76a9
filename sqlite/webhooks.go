package sqlite

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein"
)

// LogDelivery records one webhook delivery attempt.
func (db *DB) LogDelivery(ctx context.Context, d *rein.WebhookDelivery) error {
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO webhook_deliveries (record) VALUES (?)", string(body))
		return err
	})
}

// Deliveries lists the latest delivery attempts, newest first.
func (db *DB) Deliveries(ctx context.Context, limit int) ([]*rein.WebhookDelivery, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT record FROM webhook_deliveries ORDER BY seq DESC LIMIT ?", limit)
	return collect(rows, err, func(r scanner) (*rein.WebhookDelivery, error) {
		var body string
		if err := r.Scan(&body); err != nil {
			return nil, err
		}
		d := &rein.WebhookDelivery{}
		return d, json.Unmarshal([]byte(body), d)
	})
}
