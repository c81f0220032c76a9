package webpush

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

// Store is what the notifier needs of rein's store: the subscriptions and
// the keys of the people behind them.
type Store interface {
	rein.PushSubscriptionStore
	notify.Keys
}

// Notifier is the Web Push channel of approvals (a notify.Channel): each
// new approval is pushed to the devices of every person who may vote on it
// and has not; a decided approval takes its notification off those
// devices; reminders push it again. Digests are not pushed.
type Notifier struct {
	Sender  *Sender
	Store   Store
	BaseURL string
	Log     *slog.Logger
	Now     func() time.Time
}

// Payload is what a push message carries to the console's service worker.
// It names the action but not its arguments: a phone shows notifications
// on its lock screen.
type Payload struct {
	// Type is "approval" (show it) or "closed" (take it away).
	Type  string `json:"type"`
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	URL   string `json:"url,omitempty"`
	// Renotify makes a reminder alert again.
	Renotify  bool       `json:"renotify,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Status    string     `json:"status,omitempty"`
	// Revision is the revision of the action the message announces; URL
	// names it too (?revision=N).
	Revision int `json:"revision,omitempty"`
}

func (n *Notifier) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

// Announce pushes a new approval to its approvers' devices.
func (n *Notifier) Announce(ctx context.Context, a *rein.Approval, _ []string) error {
	return n.push(ctx, a, false)
}

// Remind pushes a pending approval again, shortly before it expires.
func (n *Notifier) Remind(ctx context.Context, a *rein.Approval, _ []string) error {
	return n.push(ctx, a, true)
}

// Revise pushes an edited approval again, alerting, to every eligible
// person who has not voted on the new revision (approvals of the one before
// no longer count): the message says who edited it and which arguments
// changed, not their values, and opens the approval's page.
func (n *Notifier) Revise(ctx context.Context, a *rein.Approval, _ []string) error {
	if a.Status != rein.StatusPending {
		return nil
	}
	p := n.payload(a, false)
	p.Renotify = true
	p.Title = fmt.Sprintf("Edited: %s wants to run %s", a.Agent, a.Tool)
	by := notify.Editor(a)
	if by == "" {
		by = "an approver"
	}
	var paths []string
	for _, c := range a.Changes {
		path := c.Path
		if path == "" {
			path = "the arguments"
		}
		paths = append(paths, path)
	}
	changed := "nothing changed from the agent's request"
	if len(paths) > 0 {
		changed = "changed: " + strings.Join(paths, ", ")
	}
	p.Body = fmt.Sprintf("Edited by %s (revision %d), %s. Open to see the edited version before you vote.\n%s", by, a.Revision, changed, p.Body)
	return n.send(ctx, a, n.toTell(a), p, "high")
}

// toTell are the people a pending approval is pushed to: those who may
// vote on it and have not voted on its current revision.
func (n *Notifier) toTell(a *rein.Approval) func(*rein.Key) bool {
	return func(key *rein.Key) bool { return notify.Eligible(a, key) && !notify.VotedOnCurrent(a, key) }
}

// Digest pushes nothing: a digest is for channels people read later.
func (n *Notifier) Digest(context.Context, []*rein.Approval, []string) error { return nil }

// Update takes the notification of a decided approval off the devices it
// went to, and off those of anyone who voted; a pending approval's update
// (a vote, an escalation) pushes it to eligible people who have not voted
// (the service worker shows one notification per approval, so those
// already told are not alerted again).
func (n *Notifier) Update(ctx context.Context, a *rein.Approval) error {
	if a.Status == rein.StatusPending {
		return n.send(ctx, a, n.toTell(a), n.payload(a, false), "normal")
	}
	p := Payload{Type: "closed", ID: a.ID, Status: a.Status}
	return n.send(ctx, a, func(key *rein.Key) bool { return notify.Eligible(a, key) || voted(a, key) }, p, "normal")
}

func (n *Notifier) push(ctx context.Context, a *rein.Approval, reminder bool) error {
	if a.Status != rein.StatusPending {
		return nil
	}
	return n.send(ctx, a, n.toTell(a), n.payload(a, reminder), "high")
}

func (n *Notifier) payload(a *rein.Approval, reminder bool) Payload {
	title := fmt.Sprintf("%s wants to run %s", a.Agent, a.Tool)
	if reminder {
		title = "Reminder: " + title
	}
	var lines []string
	if len(a.Risk) > 0 {
		lines = append(lines, "Risk: "+strings.Join(a.Risk, ", "))
	}
	why := a.Reason
	if why == "" {
		why = "rule " + a.Rule
	}
	lines = append(lines, why)
	lines = append(lines, notify.Progress(a)+", expires "+a.ExpiresAt.UTC().Format("15:04 UTC"))
	exp := a.ExpiresAt
	rev := max(a.Revision, 1)
	if rev > 1 {
		lines = append([]string{fmt.Sprintf("Edited (revision %d)", rev)}, lines...)
	}
	// The link names the approval and the revision announced: the console
	// page shows the approval as it is now, and can say when that is a
	// later revision than the one the notification announced.
	return Payload{Type: "approval", ID: a.ID, Title: title, Body: strings.Join(lines, "\n"),
		URL:      fmt.Sprintf("%s/approvals/%s?revision=%d", strings.TrimRight(n.BaseURL, "/"), url.PathEscape(a.ID), rev),
		Renotify: reminder, ExpiresAt: &exp, Revision: rev}
}

// send pushes p to the devices of every person of the approval's tenant
// whose active key to passes. A subscription the push service has
// forgotten is removed.
func (n *Notifier) send(ctx context.Context, a *rein.Approval, to func(*rein.Key) bool, p Payload, urgency string) error {
	// The approval's tenant's people, and those of every tenant (keys of
	// tenant *), who may vote on it too.
	tenants := []string{a.Tenant}
	if a.Tenant != rein.AllTenants {
		tenants = append(tenants, rein.AllTenants)
	}
	subs, err := n.Store.PushSubscriptionsIn(ctx, tenants...)
	if err != nil {
		return fmt.Errorf("web push: list subscriptions: %w", err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	ttl := a.ExpiresAt.Sub(n.now())
	if p.Type == "closed" || ttl < 0 {
		ttl = time.Hour
	}
	keys := map[notify.Identity]*rein.Key{} // nil: not to be told
	var (
		errs []error
		mu   sync.Mutex
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 8)
	)
	for _, s := range subs {
		person := notify.Identity{Tenant: s.Tenant, Key: s.Name}
		key, seen := keys[person]
		if !seen {
			k, err := notify.KeyOf(ctx, n.Store, person)
			if err == nil && to(k) {
				key = k
			}
			keys[person] = key
		}
		if key == nil {
			continue
		}
		// Devices are sent to side by side, a few at a time, so that one
		// slow push service holds the dispatcher for one timeout, not one
		// per device.
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := n.deliver(ctx, s, body, ttl, urgency, a.ID); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deliver sends one message to one device; a device its push service
// forgot is removed, and the removal audited.
func (n *Notifier) deliver(ctx context.Context, s *rein.PushSubscription, body []byte, ttl time.Duration, urgency, approval string) error {
	err := n.Sender.Send(ctx, Subscription{Endpoint: s.Endpoint, P256DH: s.P256DH, Auth: s.Auth},
		Message{Payload: body, TTL: ttl, Urgency: urgency, Topic: topic(approval)})
	switch {
	case errors.Is(err, ErrGone):
		err := n.Store.RemovePushSubscription(context.WithoutCancel(ctx), s.ID, &rein.Entry{TS: n.now().UTC(),
			Tenant: s.Tenant, Kind: rein.KindPushUnsubscribed, Actor: "rein", Subject: s.ID,
			Data: map[string]any{"name": s.Name, "reason": "the push service no longer knows the subscription"}})
		if err != nil && !errors.Is(err, rein.ErrNotFound) {
			return err
		}
		return nil
	case err != nil:
		return fmt.Errorf("web push to %s's device %s: %w", s.Name, s.ID, err)
	}
	return nil
}

// topic is the Topic header of an approval's messages: an undelivered
// message about it is replaced by a newer one (its closing, say). Topics
// are at most 32 characters of the base64url alphabet.
func topic(id string) string {
	t := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, id)
	if len(t) > 32 {
		t = t[len(t)-32:]
	}
	return t
}

func voted(a *rein.Approval, k *rein.Key) bool {
	return slices.ContainsFunc(a.Votes, func(v rein.Vote) bool { return v.ByKey == k.ID })
}
