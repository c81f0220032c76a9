package rein

import (
	"context"
	"time"
)

// WebhookDelivery is one attempt to deliver an event to a webhook target,
// as the delivery log keeps it.
type WebhookDelivery struct {
	Target    string    `json:"target"`
	MessageID string    `json:"message_id"`
	EventID   int64     `json:"event_id"`
	EventType string    `json:"event_type"`
	Attempt   int       `json:"attempt"`
	Status    int       `json:"status"` // HTTP status; 0 when there was no answer
	Error     string    `json:"error,omitempty"`
	Delivered bool      `json:"delivered"`
	At        time.Time `json:"at"`
	TookMS    int64     `json:"took_ms"`
}

// DeliveryStore keeps the log of webhook deliveries.
type DeliveryStore interface {
	// LogDelivery records a webhook delivery attempt; Deliveries lists the
	// latest, newest first.
	LogDelivery(ctx context.Context, d *WebhookDelivery) error
	Deliveries(ctx context.Context, limit int) ([]*WebhookDelivery, error)
}
