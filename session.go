package rein

import (
	"context"
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
	Limits        *Limits  `json:"limits,omitempty"`
	PolicyVersion string   `json:"policy_version,omitempty"`

	FS  string `json:"fs"`  // "workspace": files of the workspace only; "host" when unconfined
	Net string `json:"net"` // "proxied": network only through rein's egress proxy; "host" when unconfined
	// Unconfined: the command ran without containment (rein run
	// --unconfined); policy sees sandbox.contained false.
	Unconfined bool     `json:"unconfined,omitempty"`
	Workspace  string   `json:"workspace"`
	Command    []string `json:"command"`
	Features   string   `json:"features"` // the kernel features in force
	KeyID      string   `json:"key_id"`   // the key of the rein run that contains it
	// Runner is what contains the session: "run" (rein run: a command,
	// often an agent, that makes its own checks) or "exec" (rein exec: one
	// shell action that rein checks and then runs itself).
	Runner    string    `json:"runner,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// EndedAt, ExitStatus and StoppedBy are set once the contained command
	// ended (sandbox.ended); StoppedBy is the lock that stopped it, if one did.
	EndedAt    *time.Time `json:"ended_at,omitempty"`
	ExitStatus *int       `json:"exit_status,omitempty"`
	StoppedBy  string     `json:"stopped_by,omitempty"`
}

// Runners of a contained session (Sandbox.Runner).
const (
	RunnerRun  = "run"
	RunnerExec = "exec"
)

// SandboxStart is what rein run (or rein exec) says when it starts a
// contained session.
type SandboxStart struct {
	Profile   string   `json:"profile"`
	Workspace string   `json:"workspace"`
	Command   []string `json:"command"`
	Features  string   `json:"features"`
	Runner    string   `json:"runner,omitempty"` // "run" (default) or "exec"
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
	// Unconfined: rein run --unconfined, which runs the command without
	// containment on a person's explicit say: the session is recorded
	// (sandbox.started with unconfined) and policy sees it as not
	// contained.
	Unconfined bool `json:"unconfined,omitempty"`
}

// SandboxEnd is what rein run says when the contained command ended.
type SandboxEnd struct {
	ExitStatus  int      `json:"exit_status"`
	DurationMS  int64    `json:"duration_ms"`
	Quarantined []string `json:"quarantined"` // files that arm later execution the run created, moved out
	// StoppedBy is the lock that stopped the run: rein killed every
	// process of the sandbox when it saw the lock.
	StoppedBy string `json:"stopped_by,omitempty"`
}

// SandboxStop is what a contained run watches for: the lock that stops
// its session, if one is in force (GET /v1/sessions/{id}/sandbox).
type SandboxStop struct {
	Sandbox *Sandbox `json:"sandbox"`
	Stop    *Lock    `json:"stop"`
}

// Stops reports whether lock l, in force at now, stops the contained run
// of a session of agent in tenant: a lock that stops every check of the
// session (it names no tool) ends every process of the run.
func (l *Lock) Stops(tenant, agent, session string, now time.Time) bool {
	return l.Target.Tool == "" && l.Matches(tenant, agent, session, "", now)
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

// EndSandbox records that the contained command of the session ended, as
// the key that contains it says. Ending it twice is a conflict; a key
// other than the one that started it, or a session that is not contained,
// is not found.
func (s *Session) EndSandbox(keyID string, end SandboxEnd, at time.Time) error {
	sb := s.Sandbox
	switch {
	case sb == nil || sb.KeyID != keyID:
		return Errorf(ECodeNotFound, "no contained session %s started by this key", s.ID)
	case sb.EndedAt != nil:
		return Errorf(ECodeConflict, "the contained command of session %s already ended at %s", s.ID, sb.EndedAt.UTC().Format(time.RFC3339))
	}
	status := end.ExitStatus
	c := *sb
	c.EndedAt, c.ExitStatus, c.StoppedBy = &at, &status, end.StoppedBy
	s.Sandbox = &c
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
	// ExecutedBy says who ran the action: "agent" (the default: the agent
	// ran it and reports) or "rein" (rein exec ran it inside containment;
	// accepted only from the key that started the exec's contained session,
	// see RefuseExecutedByRein). ExitStatus and the output's hashes are evidence
	// of what ran: the SHA-256 of every byte written to standard output and,
	// apart, to standard error.
	ExecutedBy   string `json:"executed_by,omitempty"`
	ExitStatus   *int   `json:"exit_status,omitempty"`
	StdoutSHA256 string `json:"stdout_sha256,omitempty"`
	StdoutBytes  *int64 `json:"stdout_bytes,omitempty"`
	StderrSHA256 string `json:"stderr_sha256,omitempty"`
	StderrBytes  *int64 `json:"stderr_bytes,omitempty"`
}

// Who ran an action (CheckResult.ExecutedBy).
const (
	ExecutedByAgent = "agent"
	ExecutedByRein  = "rein"
)

// RefuseExecutedByRein says why a result claiming executed_by "rein" for check
// rec, reported by key keyID, cannot be accepted ("" when it can): rein
// exec runs one shell.exec check of a session it contains itself, and
// reports it with the key that started that session, before the session's
// contained command ended. A run of rein run (whose contained agent makes
// its own checks) never qualifies, nor does another key's check.
func RefuseExecutedByRein(rec *CheckRecord, s *Session, keyID string) string {
	switch {
	case rec.Check.Tool != "shell.exec":
		return "only a shell.exec check is run by rein exec (this one is " + rec.Check.Tool + ")"
	case s == nil || s.Sandbox == nil:
		return "the check's session is not contained"
	case s.Sandbox.Runner != RunnerExec:
		return "the check's session was contained by rein " + s.Sandbox.Runner + ", not rein exec: its command runs its own actions"
	case s.Sandbox.KeyID != keyID || rec.KeyID != keyID:
		return "only the key that started the exec's contained session and made the check reports what rein ran"
	case s.Sandbox.EndedAt != nil:
		return "the exec's contained session already ended"
	}
	return ""
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

// SessionStore keeps sessions; RecordCheck (CheckStore) keeps their
// counters up to date.
type SessionStore interface {
	// SessionState returns a session (nil if it has no checks yet) and how
	// many earlier checks of the action hash it holds. RecordCheck keeps
	// sessions up to date in the same transaction as the check.
	SessionState(ctx context.Context, tenant, id, actionHash string) (*Session, int64, error)
	// SessionEnded returns the session if it has ended, nil while it is
	// open or has no checks: all a check needs when its policy reads
	// nothing of the session. It may answer from memory, as long as an end
	// made through any server reaches it within the bound docs/scale.md
	// gives.
	SessionEnded(ctx context.Context, tenant, id string) (*Session, error)
	// EndSession marks a session ended (ErrNotFound when it has no checks,
	// a conflict when it already ended) and appends e.
	EndSession(ctx context.Context, tenant, id, by string, at time.Time, e *Entry) (*Session, error)
	// ContainSession starts session id as contained (Session.Contain: a
	// conflict unless it is new), creating it, and appends e.
	ContainSession(ctx context.Context, tenant, id, agent string, sb *Sandbox, e *Entry) (*Session, error)
	// EndSandbox records that the contained command of session id ended
	// (Session.EndSandbox) and appends e.
	EndSandbox(ctx context.Context, tenant, id, keyID string, end SandboxEnd, at time.Time, e *Entry) (*Session, error)
	// SessionChecks lists a session's checks, newest first.
	SessionChecks(ctx context.Context, tenant, id string, limit int, before string) ([]*CheckRecord, error)
}
