package rein

import (
	"fmt"
	"time"
)

// Grant scopes: what an approver's approval lets the agent do (approvals.md).
const (
	// GrantOnce: this exact action, once.
	GrantOnce = "once"
	// GrantSession: this exact action, as often as the agent asks, for the
	// rest of the session (at most SessionGrantMax).
	GrantSession = "session"
)

// SessionGrantMax bounds a session grant: sessions are not always ended.
const SessionGrantMax = 12 * time.Hour

// ParseGrant reads a grant scope: "once", "session", or a window such as
// "30m", "1h" or "1d" (this exact action as often as asked, until the window
// closes; at most 7 days). It returns the window (0 for once, SessionGrantMax
// for session).
func ParseGrant(s string) (time.Duration, error) {
	switch s {
	case GrantOnce:
		return 0, nil
	case GrantSession:
		return SessionGrantMax, nil
	}
	d, err := parseDays(s)
	if err != nil || d <= 0 || d > 7*24*time.Hour {
		return 0, fmt.Errorf("grant %q: use once, session, or a window between 1s and 7d such as 30m, 1h, 1d", s)
	}
	return d, nil
}

// parseDays reads Go durations plus a "d" (24h) unit.
func parseDays(s string) (time.Duration, error) {
	if n := len(s); n > 1 && s[n-1] == 'd' {
		var days int
		if _, err := fmt.Sscanf(s[:n-1], "%d", &days); err != nil || fmt.Sprint(days) != s[:n-1] {
			return 0, fmt.Errorf("bad days %q", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}
