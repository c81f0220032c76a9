package rein

import (
	"testing"
	"time"
)

func TestLockMatches(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	cases := []struct {
		lock                         Lock
		tenant, agent, session, tool string
		want                         bool
	}{
		{Lock{Tenant: "acme"}, "acme", "builder", "s1", "fs.read", true},
		{Lock{Tenant: "acme"}, "globex", "builder", "s1", "fs.read", false},
		{Lock{Tenant: "*"}, "globex", "builder", "s1", "fs.read", true},
		{Lock{Tenant: "acme", Target: LockTarget{Agent: "builder"}}, "acme", "builder", "", "x", true},
		{Lock{Tenant: "acme", Target: LockTarget{Agent: "builder"}}, "acme", "builder/planner", "", "x", true},
		{Lock{Tenant: "acme", Target: LockTarget{Agent: "builder"}}, "acme", "builder2", "", "x", false},
		{Lock{Tenant: "acme", Target: LockTarget{Session: "s1"}}, "acme", "a", "s1", "x", true},
		{Lock{Tenant: "acme", Target: LockTarget{Session: "s1"}}, "acme", "a", "s2", "x", false},
		{Lock{Tenant: "acme", Target: LockTarget{Tool: "payments.*"}}, "acme", "a", "", "payments.transfer", true},
		{Lock{Tenant: "acme", Target: LockTarget{Tool: "payments.*"}}, "acme", "a", "", "fs.read", false},
		{Lock{Tenant: "acme", Target: LockTarget{Agent: "a", Tool: "shell.*"}}, "acme", "a", "", "fs.read", false},
		{Lock{Tenant: "acme", ExpiresAt: &past}, "acme", "a", "", "x", false},
		{Lock{Tenant: "acme", ExpiresAt: &future}, "acme", "a", "", "x", true},
		{Lock{Tenant: "acme", RemovedAt: &past}, "acme", "a", "", "x", false},
	}
	for i, c := range cases {
		if got := c.lock.Matches(c.tenant, c.agent, c.session, c.tool, now); got != c.want {
			t.Errorf("case %d: %+v matches (%s %s %s %s) = %v", i, c.lock, c.tenant, c.agent, c.session, c.tool, got)
		}
	}
}
