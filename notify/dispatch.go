package notify

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
)

// Channel is one way of reaching approvers (Slack, e-mail). Slack's
// targets are channel or user ids; e-mail ignores them and writes to the
// approval's eligible approvers.
type Channel interface {
	Announce(ctx context.Context, a *rein.Approval, targets []string) error
	Update(ctx context.Context, a *rein.Approval) error
	Remind(ctx context.Context, a *rein.Approval, targets []string) error
	Digest(ctx context.Context, pending []*rein.Approval, targets []string) error
}

// Approvals is the part of the store that lists pending approvals.
type Approvals interface {
	Approvals(ctx context.Context, tenant string, f rein.ApprovalFilter) ([]*rein.Approval, error)
}

// Dispatcher follows the event stream and tells each channel about the
// approvals its routes give it; it sends reminders and digests on a clock.
type Dispatcher struct {
	Bus     *events.Bus
	Store   Approvals
	Routing Routing
	// Reviews lists open reviews for the digest (nil: none in it). Review
	// events are sent to the channels that are ReviewChannels.
	Reviews Reviews
	// Slack and Email are the configured channels (nil: not configured);
	// SlackDefault is where Slack messages go when no route is configured.
	Slack        Channel
	SlackDefault []string
	Email        Channel
	// Push is the Web Push channel (nil: not configured).
	Push Channel
	Log  *slog.Logger
	Now  func() time.Time
	// Tick is how often reminders and digests are considered (default 10s).
	Tick time.Duration

	reminded   map[string]bool
	lastDigest time.Time
	// revised is the revision each approval was last announced again at
	// after an edit, so that an edit is announced once.
	revised map[string]int
}

func (d *Dispatcher) defaults() Channels {
	return Channels{Slack: d.SlackDefault, Email: d.Email != nil, Push: d.Push != nil}
}

// Run follows the bus until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Tick <= 0 {
		d.Tick = 10 * time.Second
	}
	d.reminded = map[string]bool{}
	d.lastDigest = d.Now()
	last := d.Bus.Last()
	ch := d.Bus.Subscribe()
	go func() {
		defer d.Bus.Unsubscribe(ch)
		tick := time.NewTicker(d.Tick)
		defer tick.Stop()
		for {
			list, _ := d.Bus.Since(last, func(e *events.Event) bool {
				return !e.Remote && (e.Type == events.ApprovalCreated || e.Type == events.ApprovalUpdated ||
					e.Type == events.ReviewCreated || e.Type == events.ReviewUpdated)
			})
			for _, e := range list {
				if e.Type == events.ReviewCreated || e.Type == events.ReviewUpdated {
					d.review(ctx, &e)
				} else {
					d.event(ctx, &e)
				}
				last = e.ID
			}
			select {
			case <-ctx.Done():
				return
			case <-ch:
			case <-tick.C:
				d.clock(ctx)
			}
		}
	}()
}

func (d *Dispatcher) event(ctx context.Context, e *events.Event) {
	var a rein.Approval
	if err := json.Unmarshal(e.Data, &a); err != nil || a.ID == "" {
		return
	}
	c := d.Routing.For(&a, d.defaults())
	if e.Type == events.ApprovalCreated {
		if d.Slack != nil && len(c.Slack) > 0 {
			d.report("slack", a.ID, d.Slack.Announce(ctx, &a, c.Slack))
		}
		if d.Email != nil && c.Email {
			d.report("email", a.ID, d.Email.Announce(ctx, &a, nil))
		}
		if d.Push != nil && c.Push {
			d.report("push", a.ID, d.Push.Announce(ctx, &a, nil))
		}
		return
	}
	if Edited(&a) && d.revised[a.ID] < a.Revision {
		d.revise(ctx, &a, c)
		return
	}
	if a.Status != rein.StatusPending {
		delete(d.revised, a.ID)
	}
	if d.Slack != nil {
		d.report("slack", a.ID, d.Slack.Update(ctx, &a))
	}
	if d.Email != nil && c.Email {
		d.report("email", a.ID, d.Email.Update(ctx, &a))
	}
	if d.Push != nil && c.Push {
		d.report("push", a.ID, d.Push.Update(ctx, &a))
	}
}

// revise tells the approval's channels about an edit of its action: each
// that is a Reviser announces the new revision again (with what changed),
// the others update what they showed.
func (d *Dispatcher) revise(ctx context.Context, a *rein.Approval, c Channels) {
	if d.revised == nil {
		d.revised = map[string]int{}
	}
	d.revised[a.ID] = a.Revision
	tell := func(name string, ch Channel, targets []string) {
		if r, ok := ch.(Reviser); ok {
			d.report(name, a.ID, r.Revise(ctx, a, targets))
			return
		}
		d.report(name, a.ID, ch.Update(ctx, a))
	}
	if d.Slack != nil {
		tell("slack", d.Slack, c.Slack)
	}
	if d.Email != nil && c.Email {
		tell("email", d.Email, nil)
	}
	if d.Push != nil && c.Push {
		tell("push", d.Push, nil)
	}
}

// review announces a review to the channels its routes give it (with no
// routes, where approvals go), and shows its verdict where it was
// announced.
func (d *Dispatcher) review(ctx context.Context, e *events.Event) {
	var r rein.Review
	if err := json.Unmarshal(e.Data, &r); err != nil || r.ID == "" {
		return
	}
	c := d.Routing.ForReview(&r, d.defaults())
	slack, _ := d.Slack.(ReviewChannel)
	email, _ := d.Email.(ReviewChannel)
	if e.Type == events.ReviewCreated {
		if slack != nil && len(c.Slack) > 0 {
			d.report("slack", r.ID, slack.AnnounceReview(ctx, &r, c.Slack))
		}
		if email != nil && c.Email {
			d.report("email", r.ID, email.AnnounceReview(ctx, &r, nil))
		}
		return
	}
	if slack != nil {
		d.report("slack", r.ID, slack.UpdateReview(ctx, &r))
	}
	if email != nil && c.Email {
		d.report("email", r.ID, email.UpdateReview(ctx, &r))
	}
}

func (d *Dispatcher) report(channel, id string, err error) {
	if err != nil {
		d.Log.Error("notification failed", "channel", channel, "item", id, "err", err)
	}
}

// clock sends due reminders and digests.
func (d *Dispatcher) clock(ctx context.Context) {
	r := d.Routing
	if r.RemindBefore <= 0 && r.DigestEvery <= 0 {
		return
	}
	pending, err := d.Store.Approvals(ctx, rein.AllTenants, rein.ApprovalFilter{Status: rein.StatusPending, Limit: 500})
	if err != nil {
		d.Log.Error("list pending approvals for reminders", "err", err)
		return
	}
	now := d.Now()
	for _, a := range Due(pending, d.reminded, r.RemindBefore, now) {
		d.reminded[a.ID] = true
		c := r.For(a, d.defaults())
		if d.Slack != nil && len(c.Slack) > 0 {
			d.report("slack", a.ID, d.Slack.Remind(ctx, a, c.Slack))
		}
		if d.Email != nil && c.Email {
			d.report("email", a.ID, d.Email.Remind(ctx, a, nil))
		}
		if d.Push != nil && c.Push {
			d.report("push", a.ID, d.Push.Remind(ctx, a, nil))
		}
	}
	if r.DigestEvery > 0 && now.Sub(d.lastDigest) >= r.DigestEvery {
		d.lastDigest = now
		if live := Live(pending, now); len(live) > 0 {
			if d.Slack != nil && len(r.DigestSlack) > 0 {
				d.report("slack", "digest", d.Slack.Digest(ctx, live, r.DigestSlack))
			}
			if d.Email != nil && r.DigestEmail {
				d.report("email", "digest", d.Email.Digest(ctx, live, nil))
			}
		}
		d.digestReviews(ctx)
	}
}

// digestReviews sends the open reviews, when the digest includes them.
func (d *Dispatcher) digestReviews(ctx context.Context) {
	r := d.Routing
	if !r.DigestReviews || d.Reviews == nil {
		return
	}
	list, err := d.Reviews.Reviews(ctx, rein.AllTenants, rein.ReviewFilter{Status: rein.ReviewOpen, Limit: 500})
	if err != nil {
		d.Log.Error("list open reviews for the digest", "err", err)
		return
	}
	open := OpenReviews(list)
	if len(open) == 0 {
		return
	}
	if slack, ok := d.Slack.(ReviewChannel); ok && len(r.DigestSlack) > 0 {
		d.report("slack", "review digest", slack.DigestReviews(ctx, open, r.DigestSlack))
	}
	if email, ok := d.Email.(ReviewChannel); ok && r.DigestEmail {
		d.report("email", "review digest", email.DigestReviews(ctx, open, nil))
	}
}

// Due returns the pending approvals that expire within before and have
// not been reminded of.
func Due(pending []*rein.Approval, reminded map[string]bool, before time.Duration, now time.Time) []*rein.Approval {
	if before <= 0 {
		return nil
	}
	var out []*rein.Approval
	for _, a := range pending {
		left := a.ExpiresAt.Sub(now)
		if a.Status == rein.StatusPending && left > 0 && left <= before && !reminded[a.ID] {
			out = append(out, a)
		}
	}
	return out
}

// Live returns the approvals still pending at now.
func Live(pending []*rein.Approval, now time.Time) []*rein.Approval {
	var out []*rein.Approval
	for _, a := range pending {
		if a.Status == rein.StatusPending && now.Before(a.ExpiresAt) {
			out = append(out, a)
		}
	}
	return out
}
