package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein"
)

const pushColumns = "id, tenant, name, endpoint, p256dh, auth, label, created_at"

// SavePushSubscription stores s with its audit entry, replacing a
// subscription with the same endpoint.
func (db *DB) SavePushSubscription(ctx context.Context, s *rein.PushSubscription, e *rein.Entry) error {
	if s.ID == "" {
		return errors.New("save push subscription: no id")
	}
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO push_subscriptions (`+pushColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (endpoint) DO UPDATE SET id = excluded.id, tenant = excluded.tenant, name = excluded.name,
			p256dh = excluded.p256dh, auth = excluded.auth, label = excluded.label, created_at = excluded.created_at`,
			s.ID, s.Tenant, s.Name, s.Endpoint, s.P256DH, s.Auth, s.Label, ts(s.CreatedAt)); err != nil {
			if strings.Contains(err.Error(), "UNIQUE") {
				return rein.Errorf(rein.ECodeConflict, "push subscription %s exists already", s.ID)
			}
			return fmt.Errorf("save push subscription: %w", err)
		}
		if e != nil {
			_, err := appendEntries(ctx, tx, []*rein.Entry{e})
			return err
		}
		return nil
	})
}

// PushSubscriptionsOf lists a person's subscriptions, oldest first.
func (db *DB) PushSubscriptionsOf(ctx context.Context, tenant, name string) ([]*rein.PushSubscription, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT "+pushColumns+" FROM push_subscriptions WHERE tenant = ? AND name = ? ORDER BY created_at, id", tenant, name)
	return collect(rows, err, scanPushSubscription)
}

// PushSubscriptionsIn lists every subscription of the tenants, oldest first.
func (db *DB) PushSubscriptionsIn(ctx context.Context, tenants ...string) ([]*rein.PushSubscription, error) {
	if len(tenants) == 0 {
		return nil, nil
	}
	args := make([]any, len(tenants))
	for i, t := range tenants {
		args[i] = t
	}
	in := strings.Repeat(", ?", len(tenants))[2:]
	rows, err := db.read.QueryContext(ctx, "SELECT "+pushColumns+" FROM push_subscriptions WHERE tenant IN ("+in+") ORDER BY created_at, id", args...)
	return collect(rows, err, scanPushSubscription)
}

func scanPushSubscription(row scanner) (*rein.PushSubscription, error) {
	s := &rein.PushSubscription{}
	var created string
	if err := row.Scan(&s.ID, &s.Tenant, &s.Name, &s.Endpoint, &s.P256DH, &s.Auth, &s.Label, &created); err != nil {
		return nil, err
	}
	s.CreatedAt = parseTS(created)
	return s, nil
}

// RemovePushSubscription deletes a subscription and appends e when e is
// not nil.
func (db *DB) RemovePushSubscription(ctx context.Context, id string, e *rein.Entry) error {
	return db.tx(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM push_subscriptions WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return rein.ErrNotFound
		}
		if e != nil {
			_, err := appendEntries(ctx, tx, []*rein.Entry{e})
			return err
		}
		return nil
	})
}

var _ rein.PushSubscriptionStore = (*DB)(nil)
