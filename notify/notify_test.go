package notify

import (
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func TestRoutingFor(t *testing.T) {
	r := Routing{Routes: []Route{
		{Rules: []string{"payments-*"}, Slack: []string{"CFINANCE"}, Email: true},
		{Approvers: []string{"group:oncall"}, Slack: []string{"CONCALL", "UPAGER"}, Webhooks: []string{"pager"}},
		{Tenants: []string{"globex"}, Webhooks: []string{"globex-hook"}},
	}}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	defaults := Channels{Slack: []string{"CDEFAULT"}, Email: true}
	cases := []struct {
		name string
		a    rein.Approval
		want Channels
	}{
		{"rule glob", rein.Approval{Tenant: "acme", Rule: "payments-large", Approvers: []string{"group:finance"}}, Channels{Slack: []string{"CFINANCE"}, Email: true}},
		{"approver group", rein.Approval{Tenant: "acme", Rule: "deploys", Approvers: []string{"group:oncall"}}, Channels{Slack: []string{"CONCALL", "UPAGER"}, Webhooks: []string{"pager"}}},
		{"approver in a combined set", rein.Approval{Tenant: "acme", Rule: "x", ApproverSets: [][]string{{"role:admin"}, {"group:oncall"}}}, Channels{Slack: []string{"CONCALL", "UPAGER"}, Webhooks: []string{"pager"}}},
		{"two routes add up", rein.Approval{Tenant: "globex", Rule: "payments-1", Approvers: []string{"group:oncall"}},
			Channels{Slack: []string{"CFINANCE", "CONCALL", "UPAGER"}, Email: true, Webhooks: []string{"pager", "globex-hook"}}},
		{"no route matches: nowhere", rein.Approval{Tenant: "acme", Rule: "reads", Approvers: []string{"role:approver"}}, Channels{}},
	}
	for _, c := range cases {
		got := r.For(&c.a, defaults)
		if !slices.Equal(got.Slack, c.want.Slack) || got.Email != c.want.Email || !slices.Equal(got.Webhooks, c.want.Webhooks) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	none := Routing{}
	if got := none.For(&rein.Approval{}, defaults); !slices.Equal(got.Slack, defaults.Slack) || !got.Email {
		t.Errorf("no routes: %+v, want the defaults", got)
	}
	bad := []Routing{
		{Routes: []Route{{Rules: []string{"["}, Email: true}}},
		{Routes: []Route{{Rules: []string{"x"}}}},
		{RemindBefore: -time.Second},
	}
	for i, b := range bad {
		if b.Check() == nil {
			t.Errorf("bad routing %d accepted", i)
		}
	}
}

func TestDueAndLive(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := func(id string, left time.Duration, status string) *rein.Approval {
		return &rein.Approval{ID: id, Status: status, ExpiresAt: now.Add(left)}
	}
	list := []*rein.Approval{p("soon", 4*time.Minute, rein.StatusPending), p("later", time.Hour, rein.StatusPending),
		p("gone", -time.Second, rein.StatusPending), p("done", time.Minute, rein.StatusApproved), p("told", time.Minute, rein.StatusPending)}
	due := Due(list, map[string]bool{"told": true}, 5*time.Minute, now)
	if len(due) != 1 || due[0].ID != "soon" {
		t.Errorf("due: %v", due)
	}
	if Due(list, nil, 0, now) != nil {
		t.Error("reminders sent with remind_before 0")
	}
	if live := Live(list, now); len(live) != 3 {
		t.Errorf("live: %d, want soon, later, told", len(live))
	}
}

func TestProgress(t *testing.T) {
	a := &rein.Approval{Status: rein.StatusPending, Quorum: 2, Votes: []rein.Vote{{Vote: "approve"}, {Vote: "reject"}}}
	if got := Progress(a); got != "pending: 1 of 2 approvals" {
		t.Errorf("progress %q", got)
	}
	a.Status = rein.StatusRejected
	if Progress(a) != "rejected" {
		t.Error(Progress(a))
	}
}

func TestLimiter(t *testing.T) {
	l := &Limiter{Max: 2}
	now := time.Unix(1_800_000_000, 0)
	want := []struct {
		at         time.Duration
		ok         bool
		suppressed int
	}{
		{0, true, 0}, {time.Second, true, 0}, {2 * time.Second, false, 0}, {3 * time.Second, false, 0},
		{time.Minute, true, 2}, {time.Minute + time.Second, true, 0}, {time.Minute + 2*time.Second, false, 0},
	}
	for i, w := range want {
		ok, s := l.Take(now.Add(w.at))
		if ok != w.ok || s != w.suppressed {
			t.Errorf("take %d at +%s: %v %d, want %v %d", i, w.at, ok, s, w.ok, w.suppressed)
		}
	}
}
