package notify

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
)

// recorder is a channel that writes down what it was asked to send.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) add(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
	return nil
}

func (r *recorder) Announce(_ context.Context, a *rein.Approval, t []string) error {
	return r.add(fmt.Sprintf("announce %s %v", a.ID, t))
}
func (r *recorder) Update(_ context.Context, a *rein.Approval) error {
	return r.add(fmt.Sprintf("update %s %s", a.ID, a.Status))
}
func (r *recorder) Remind(_ context.Context, a *rein.Approval, t []string) error {
	return r.add(fmt.Sprintf("remind %s %v", a.ID, t))
}
func (r *recorder) Digest(_ context.Context, p []*rein.Approval, t []string) error {
	return r.add(fmt.Sprintf("digest %d %v", len(p), t))
}

func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.got {
		if g == s {
			return true
		}
	}
	return false
}

func (r *recorder) count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.got {
		if g == s {
			n++
		}
	}
	return n
}

type pendingList []*rein.Approval

func (p pendingList) Approvals(context.Context, string, rein.ApprovalFilter) ([]*rein.Approval, error) {
	return p, nil
}

func TestDispatcherRoutesRemindsDigests(t *testing.T) {
	now := time.Now()
	soon := &rein.Approval{ID: "apr_soon", Tenant: "acme", Rule: "payments-big", Status: rein.StatusPending, ExpiresAt: now.Add(2 * time.Minute)}
	later := &rein.Approval{ID: "apr_later", Tenant: "acme", Rule: "deploys", Approvers: []string{"group:oncall"}, Status: rein.StatusPending, ExpiresAt: now.Add(time.Hour)}
	slack, email := &recorder{}, &recorder{}
	bus := &events.Bus{}
	d := &Dispatcher{Bus: bus, Store: pendingList{soon, later}, Slack: slack, Email: email, SlackDefault: []string{"CDEFAULT"},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tick: 20 * time.Millisecond,
		Routing: Routing{RemindBefore: 5 * time.Minute, DigestEvery: 50 * time.Millisecond, DigestSlack: []string{"CDIGEST"}, DigestEmail: true,
			Routes: []Route{{Rules: []string{"payments-*"}, Slack: []string{"CFINANCE"}, Email: true}, {Approvers: []string{"group:oncall"}, Slack: []string{"UONCALL"}}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Run(ctx)
	bus.Publish(events.ApprovalCreated, "acme", soon)
	bus.Publish(events.ApprovalCreated, "acme", later)
	done := &rein.Approval{ID: "apr_later", Tenant: "acme", Rule: "deploys", Approvers: []string{"group:oncall"}, Status: rein.StatusApproved}
	bus.Publish(events.ApprovalUpdated, "acme", done)
	want := []struct {
		r    *recorder
		what string
	}{
		{slack, "announce apr_soon [CFINANCE]"}, {email, "announce apr_soon []"},
		{slack, "announce apr_later [UONCALL]"},
		{slack, "update apr_later approved"},
		{slack, "remind apr_soon [CFINANCE]"}, {email, "remind apr_soon []"},
		{slack, "digest 2 [CDIGEST]"}, {email, "digest 2 []"},
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, w := range want {
		for !w.r.has(w.what) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !w.r.has(w.what) {
			t.Errorf("never sent %q; slack %v, email %v", w.what, slack.got, email.got)
		}
	}
	if email.has("announce apr_later []") {
		t.Error("the on-call approval went by e-mail; no route sends it there")
	}
	time.Sleep(100 * time.Millisecond)
	if n := slack.count("remind apr_soon [CFINANCE]"); n != 1 {
		t.Errorf("%d reminders of apr_soon, want exactly one", n)
	}
}

// TestDispatcherPush: with no routes every approval is pushed; with routes
// only those of routes that say push; reviews never are.
func TestDispatcherPush(t *testing.T) {
	now := time.Now()
	money := &rein.Approval{ID: "apr_money", Tenant: "acme", Rule: "payments-big", Status: rein.StatusPending, ExpiresAt: now.Add(2 * time.Minute)}
	deploy := &rein.Approval{ID: "apr_deploy", Tenant: "acme", Rule: "deploys", Status: rein.StatusPending, ExpiresAt: now.Add(time.Hour)}
	for _, c := range []struct {
		name   string
		routes []Route
		want   []string
		never  []string
	}{
		{"no routes", nil, []string{"announce apr_money []", "announce apr_deploy []", "update apr_deploy approved", "remind apr_money []"}, nil},
		{"routes", []Route{{Rules: []string{"payments-*"}, Push: true}, {Rules: []string{"deploys"}, Email: true}},
			[]string{"announce apr_money []", "remind apr_money []"}, []string{"announce apr_deploy []", "update apr_deploy approved"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			push, email := &recorder{}, &recorder{}
			bus := &events.Bus{}
			d := &Dispatcher{Bus: bus, Store: pendingList{money, deploy}, Push: push, Email: email,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tick: 20 * time.Millisecond,
				Routing: Routing{RemindBefore: 5 * time.Minute, Routes: c.routes}}
			if err := d.Routing.Check(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			d.Run(ctx)
			bus.Publish(events.ApprovalCreated, "acme", money)
			bus.Publish(events.ApprovalCreated, "acme", deploy)
			bus.Publish(events.ApprovalUpdated, "acme", &rein.Approval{ID: "apr_deploy", Tenant: "acme", Rule: "deploys", Status: rein.StatusApproved})
			bus.Publish(events.ReviewCreated, "acme", &rein.Review{ID: "rev_1", Tenant: "acme", Rule: "payments-big"})
			deadline := time.Now().Add(3 * time.Second)
			for _, w := range c.want {
				for !push.has(w) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if !push.has(w) {
					t.Errorf("never pushed %q; pushed %v", w, push.got)
				}
			}
			time.Sleep(60 * time.Millisecond)
			for _, n := range c.never {
				if push.has(n) {
					t.Errorf("pushed %q; no route pushes it", n)
				}
			}
			if push.has("announce rev_1 []") {
				t.Error("a review was pushed")
			}
		})
	}
	if err := (&Routing{Routes: []Route{{Rules: []string{"x"}}}}).Check(); err == nil || !strings.Contains(err.Error(), "push") {
		t.Errorf("a route with no channel: %v", err)
	}
}
