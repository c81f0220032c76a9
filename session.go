package rein

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

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
	// EndedAt is set when the agent or an admin ended the session
	// (POST /v1/sessions/{id}/end): later checks in it are denied.
	EndedAt *time.Time `json:"ended_at,omitempty"`
	EndedBy string     `json:"ended_by,omitempty"`
	// Sandbox is set when the session was started contained (rein run):
	// policy sees it as the sandbox variable.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// Sandbox is the containment a session's work runs in (containment.md).
type Sandbox struct {
	Profile string `json:"profile"`
	// Read and Env are the profile in force, as the policy of
	// PolicyVersion defines it: what rein run applies (containment.md).
	Read          []string `json:"read,omitempty"`
	Env           []string `json:"env,omitempty"`
	PolicyVersion string   `json:"policy_version,omitempty"`

	FS        string    `json:"fs"`  // "workspace": files of the workspace only
	Net       string    `json:"net"` // "proxied": network only through rein's egress proxy
	Workspace string    `json:"workspace"`
	Command   []string  `json:"command"`
	Features  string    `json:"features"` // the kernel features in force
	KeyID     string    `json:"key_id"`   // the key of the rein run that contains it
	StartedAt time.Time `json:"started_at"`
}

// SandboxStart is what rein run says when it starts a contained session.
type SandboxStart struct {
	Profile   string   `json:"profile"`
	Workspace string   `json:"workspace"`
	Command   []string `json:"command"`
	Features  string   `json:"features"`
	// Agent is the agent CLI rein run recognised in the command ("claude",
	// "codex"; "" for any other command); Hooks whether it wired its hooks
	// to rein through the run's relay; Credentials the names (never the
	// values) of the variables that carry its model credential inside;
	// ModelEndpoint the model endpoint on this machine (host:port) that the
	// person configured and rein run forwards to, "" when the model is
	// reached through the egress proxy.
	Agent         string   `json:"agent,omitempty"`
	Hooks         bool     `json:"hooks,omitempty"`
	Credentials   []string `json:"credentials,omitempty"`
	ModelEndpoint string   `json:"model_endpoint,omitempty"`
	// Resolver is the DNS server (host:port) rein run's egress proxy
	// resolves allowed names with, "" for the system's.
	Resolver string `json:"resolver,omitempty"`
}

// SandboxEnd is what rein run says when the contained command ended.
type SandboxEnd struct {
	ExitStatus  int      `json:"exit_status"`
	DurationMS  int64    `json:"duration_ms"`
	Quarantined []string `json:"quarantined"` // files that arm later execution the run created, moved out
}

// Contain marks a new session as contained. Only a session with no checks
// yet can be: a session's checks are all made inside its containment or
// none is, so a session that ran uncontained can never be claimed later.
func (s *Session) Contain(sb *Sandbox) error {
	switch {
	case s.Sandbox != nil:
		return Errorf(ECodeConflict, "session %s is already contained (since %s)", s.ID, s.Sandbox.StartedAt.UTC().Format(time.RFC3339))
	case s.Checks > 0:
		return Errorf(ECodeConflict, "session %s already has %d checks made outside containment; start a new session", s.ID, s.Checks)
	case s.EndedAt != nil:
		return Errorf(ECodeConflict, "session %s has ended", s.ID)
	}
	s.Sandbox = sb
	return nil
}

// Record adds a recorded check to the session's counters. Both stores call
// it inside the transaction that records the check.
func (s *Session) Record(rec *CheckRecord) {
	s.Checks++
	s.LastAt = rec.CreatedAt
	switch {
	case rec.Decision.Allows():
		s.Calls++
		s.Cost += rec.Check.Cost
		s.Tainted = s.Tainted || rec.Taints
	case rec.Decision == Deny:
		s.Denials++
	}
}

// End closes the session; ending it twice is a conflict.
func (s *Session) End(by string, at time.Time) error {
	if s.EndedAt != nil {
		return Errorf(ECodeConflict, "session %s already ended at %s", s.ID, s.EndedAt.UTC().Format(time.RFC3339))
	}
	s.EndedAt, s.EndedBy = &at, by
	return nil
}

// CheckResult is what an agent reports after running an allowed action
// (POST /v1/checks/{id}/result).
type CheckResult struct {
	Status  string   `json:"status"` // succeeded or failed
	Summary string   `json:"summary"`
	Cost    *float64 `json:"cost"`
	// Args are the arguments the agent actually executed, or ArgsHash their
	// hash ("sha256:" + hex SHA-256 of the canonical JSON). rein keeps only
	// the hash, compares it with the allowed arguments' and sets ArgsMatch.
	Args      json.RawMessage `json:"args,omitempty"`
	ArgsHash  string          `json:"args_hash,omitempty"`
	ArgsMatch *bool           `json:"args_match,omitempty"`
	// Address is the network address a net.connect check's name resolved
	// to, which rein's egress proxy connected to or refused (containment.md).
	Address string `json:"address,omitempty"`
}

// ArgsHash is "sha256:" + hex SHA-256 of the canonical JSON (RFC 8785) of
// the arguments: how a result names what ran without repeating it. The
// arguments are canonicalised here, so stored arguments (which json.Marshal
// may have written with other escapes) hash as the agent computes it. Text
// that is not JSON is hashed as it is: it matches no canonical hash.
func ArgsHash(args json.RawMessage) string {
	canon, err := Canonical(args)
	if err != nil {
		canon = args
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
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
