package rein

import "time"

// Session is what rein knows of one session (a run, a conversation): the
// history policy sees as session.* and GET /v1/sessions/{id} returns.
type Session struct {
	ID        string    `json:"id"`
	Tenant    string    `json:"tenant"`
	Agent     string    `json:"agent"`
	Calls     int64     `json:"calls"`   // checks allowed (allow or modify)
	Cost      float64   `json:"cost"`    // declared costs of allowed checks, corrected by reported results
	Tainted   bool      `json:"tainted"` // a tool marked taints_session was allowed
	Denials   int64     `json:"denials"` // checks denied
	Checks    int64     `json:"checks"`  // checks of any decision
	StartedAt time.Time `json:"started_at"`
	LastAt    time.Time `json:"last_at"`
}

// CheckResult is what an agent reports after running an allowed action
// (POST /v1/checks/{id}/result).
type CheckResult struct {
	Status  string   `json:"status"` // succeeded or failed
	Summary string   `json:"summary"`
	Cost    *float64 `json:"cost"`
}

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
