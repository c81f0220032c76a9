package rein

import (
	"context"
	"time"
)

// Audit entry kinds of Web Push subscriptions (console.md, Notifications on
// this device).
const (
	KindPushSubscribed   = "push.subscribed"
	KindPushUnsubscribed = "push.unsubscribed"
)

// PushSubscription is a browser's Web Push subscription (RFC 8030, the W3C
// Push API): where rein sends a notification of a new approval for the
// person who subscribed, and the keys that encrypt it (RFC 8291). Like a
// passkey it belongs to the person — the key name in a tenant — so a key
// re-issued under the same name keeps its person's devices, and a revoked
// key's person gets nothing until a key of that name is active again.
type PushSubscription struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	Name   string `json:"name"` // the key name of the person
	// Endpoint is the push service's URL for this browser; unique: a
	// browser that subscribes again replaces its earlier subscription.
	Endpoint string `json:"endpoint"`
	// P256DH is the browser's public key (an uncompressed P-256 point) and
	// Auth its 16-byte authentication secret, both base64url without
	// padding as the Push API gives them.
	P256DH    string    `json:"p256dh"`
	Auth      string    `json:"auth"`
	Label     string    `json:"label"` // what the person calls the device
	CreatedAt time.Time `json:"created_at"`
}

// PushSubscriptionStore keeps Web Push subscriptions.
type PushSubscriptionStore interface {
	// SavePushSubscription stores s with its audit entry. A subscription
	// with the same endpoint is replaced (the browser subscribed again,
	// perhaps for another person): it keeps no trace of the old one.
	SavePushSubscription(ctx context.Context, s *PushSubscription, e *Entry) error
	// PushSubscriptionsOf lists a person's subscriptions, oldest first.
	PushSubscriptionsOf(ctx context.Context, tenant, name string) ([]*PushSubscription, error)
	// PushSubscriptionsIn lists every subscription of the tenants named,
	// oldest first.
	PushSubscriptionsIn(ctx context.Context, tenants ...string) ([]*PushSubscription, error)
	// RemovePushSubscription deletes a subscription by id (ErrNotFound when
	// it is gone) and appends e when e is not nil.
	RemovePushSubscription(ctx context.Context, id string, e *Entry) error
}
