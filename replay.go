package rein

import "time"

// Replay is the difference a candidate policy would make on recorded
// traffic: every recorded check of a tenant since a time, decided by the
// policy in force and by the candidate (the same facts, a fresh session's
// counters), compared per decision and per rule.
type Replay struct {
	Tenant        string         `json:"tenant"`
	Since         time.Time      `json:"since"`
	Input         string         `json:"input"` // "all" recorded checks, or only the "concerns" of reviews
	Checks        int            `json:"checks"`
	Changed       int            `json:"changed"`
	NewlyAllowed  int            `json:"newly_allowed"` // not allowed before, allowed (or modified) now
	NewlyBlocked  int            `json:"newly_blocked"` // allowed before, denied, asked or throttled now
	NewlyDenied   int            `json:"newly_denied"`  // not denied before, denied now
	NewlyAsked    int            `json:"newly_asked"`   // not asked before, asked now
	Transitions   map[string]int `json:"transitions"`   // "allow->deny": count
	ByRule        map[string]int `json:"by_rule"`       // the candidate's deciding rule of each changed check: count
	Examples      []ReplayChange `json:"examples"`      // the first changes, newest first
	TookMS        int64          `json:"took_ms"`
	SessionsFresh bool           `json:"sessions_fresh"` // session counters are not replayed
}

// What a replay decides again: every recorded check, or only those that
// drew a reviewer's concern.
const (
	ReplayAll      = "all"
	ReplayConcerns = "concerns"
)

// ReplayChange is one check whose decision the candidate changes.
type ReplayChange struct {
	CheckID    string   `json:"check_id"`
	Tool       string   `json:"tool"`
	Agent      string   `json:"agent"`
	Before     Decision `json:"before"`
	BeforeRule string   `json:"before_rule"`
	After      Decision `json:"after"`
	AfterRule  string   `json:"after_rule"`
	Reason     string   `json:"reason"`
}
