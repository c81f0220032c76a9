package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

const pushColumns = "id, tenant, name, endpoint, p256dh, auth, label, created_at"

// SavePushSubscription stores s with its audit entry, replacing a
// subscription with the same endpoint.
func (db *DB) SavePushSubscription(ctx context.Context, s *rein.PushSubscription, e *rein.Entry) error {
	if s.ID == "" {
		return errors.New("save push subscription: no id")
	}
	_, err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO push_subscriptions (`+pushColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (endpoint) DO UPDATE SET id = excluded.id, tenant = excluded.tenant, name = excluded.name,
			p256dh = excluded.p256dh, auth = excluded.auth, label = excluded.label, created_at = excluded.created_at`,
			s.ID, s.Tenant, s.Name, s.Endpoint, s.P256DH, s.Auth, s.Label, ts(s.CreatedAt)); err != nil {
			if violates(err, "push_subscriptions_pkey") {
				return rein.Errorf(rein.ECodeConflict, "push subscription %s exists already", s.ID)
			}
			return fmt.Errorf("save push subscription: %w", err)
		}
		if e != nil {
			return tx.appendEntries(ctx, e)
		}
		return nil
	})
	return err
}

// PushSubscriptionsOf lists a person's subscriptions, oldest first.
func (db *DB) PushSubscriptionsOf(ctx context.Context, tenant, name string) ([]*rein.PushSubscription, error) {
	return db.pushSubscriptions(ctx, "SELECT "+pushColumns+" FROM push_subscriptions WHERE tenant = $1 AND name = $2 ORDER BY created_at, id", tenant, name)
}

// PushSubscriptionsIn lists every subscription of the tenants, oldest first.
func (db *DB) PushSubscriptionsIn(ctx context.Context, tenants ...string) ([]*rein.PushSubscription, error) {
	return db.pushSubscriptions(ctx, "SELECT "+pushColumns+" FROM push_subscriptions WHERE tenant = ANY($1) ORDER BY created_at, id", tenants)
}

func (db *DB) pushSubscriptions(ctx context.Context, q string, args ...any) ([]*rein.PushSubscription, error) {
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.PushSubscription, error) {
		s := &rein.PushSubscription{}
		var created string
		if err := r.Scan(&s.ID, &s.Tenant, &s.Name, &s.Endpoint, &s.P256DH, &s.Auth, &s.Label, &created); err != nil {
			return nil, err
		}
		s.CreatedAt = parseTS(created)
		return s, nil
	})
}

// RemovePushSubscription deletes a subscription and appends e when e is
// not nil.
func (db *DB) RemovePushSubscription(ctx context.Context, id string, e *rein.Entry) error {
	_, err := db.write(ctx, func(tx *wtx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM push_subscriptions WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return rein.ErrNotFound
		}
		if e != nil {
			return tx.appendEntries(ctx, e)
		}
		return nil
	})
	return err
}

var _ rein.PushSubscriptionStore = (*DB)(nil)
