// Package notify brings approvals to the people who decide them, where they
// are: which channels an approval goes to (routes), who the people behind a
// Slack user or an e-mail link are in rein (identities), reminders before an
// approval expires, a digest of what is pending, and the audit record of a
// vote refused before it reached the pipeline.
package notify

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// KindVoteRefused records a vote that a channel refused before it reached
// the pipeline (a forged Slack signature, an unmapped user, a replayed or
// expired link), or that the pipeline refused (an ineligible voter).
const KindVoteRefused = "approval.vote_refused"

// Identity is a person as rein knows them: the name of their key in a
// tenant. A vote from Slack or an e-mail link is cast as that key, so the
// approval's approvers, separation of duties and the audit log see the same
// voter as for a vote with the key itself.
type Identity struct {
	Tenant string `yaml:"tenant"`
	Key    string `yaml:"key"`
}

func (id Identity) String() string { return id.Tenant + "/" + id.Key }

// Keys is the part of the store that finds a key by name.
type Keys interface {
	Keys(ctx context.Context, tenant string) ([]*rein.Key, error)
}

// KeyOf returns the identity's key: the active key of that name in the
// tenant. A revoked key, a missing one, or two active keys of one name are
// refused: the vote would not be provably this person's.
func KeyOf(ctx context.Context, store Keys, id Identity) (*rein.Key, error) {
	keys, err := store.Keys(ctx, id.Tenant)
	if err != nil {
		return nil, fmt.Errorf("find key %s: %w", id, err)
	}
	var found *rein.Key
	for _, k := range keys {
		if k.Name != id.Key || k.Tenant != id.Tenant || k.RevokedAt != nil {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("identity %s: two active keys have that name; revoke one", id)
		}
		found = k
	}
	if found == nil {
		return nil, fmt.Errorf("identity %s: no active key of that name in the tenant", id)
	}
	return found, nil
}

// Eligible reports whether key may vote on a: it matches one of the
// approval's approvers and is not the key that asked. The pipeline decides
// the vote itself; this only chooses whom to notify.
func Eligible(a *rein.Approval, key *rein.Key) bool {
	if key.ID == a.AgentKeyID || !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return false
	}
	v := approval.VoterOf(key)
	sets := a.ApproverSets
	if len(sets) == 0 {
		sets = [][]string{a.Approvers}
	}
	for _, set := range sets {
		for _, s := range set {
			if approval.Matches(s, v) {
				return true
			}
		}
	}
	return false
}

// Appender is the part of the store that writes audit entries.
type Appender interface {
	Append(ctx context.Context, entries ...*rein.Entry) error
}

// Refusal is a vote a channel refused, as the audit log keeps it.
type Refusal struct {
	Tenant   string // "*" when the request could not be tied to a tenant
	Actor    string // slack:<user id>, email:<tenant/key>, or "unknown"
	Approval string // the approval it was about, when known
	Channel  string // slack or email
	Reason   string
	// Suppressed counts the refusals of this kind left out of the log
	// since the last one written (see Limiter).
	Suppressed int
}

// Refuse writes the refusal to the audit log.
func Refuse(ctx context.Context, store Appender, r Refusal, at time.Time) error {
	if r.Tenant == "" {
		r.Tenant = rein.AllTenants
	}
	if r.Actor == "" {
		r.Actor = "unknown"
	}
	data := map[string]any{"channel": r.Channel, "reason": r.Reason}
	if r.Suppressed > 0 {
		data["suppressed"] = r.Suppressed
	}
	return store.Append(context.WithoutCancel(ctx), &rein.Entry{TS: at.UTC(), Tenant: r.Tenant, Kind: KindVoteRefused,
		Actor: r.Actor, Subject: r.Approval, Data: data})
}

// Limiter bounds how many refusals of requests anyone can send (a forged
// Slack signature, a made-up link) are written to the audit log: Max per
// minute. The rest are counted, and the count goes into the next entry
// written, so that the log shows the flood without being filled by it.
type Limiter struct {
	Max int // per minute; 0 means 60

	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

// Take reports whether one more refusal may be written now and, when it
// may, how many were left out before it.
func (l *Limiter) Take(now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	max := l.Max
	if max <= 0 {
		max = 60
	}
	if now.Sub(l.start) >= time.Minute || now.Before(l.start) {
		l.start, l.n = now, 0
	}
	if l.n >= max {
		l.suppressed++
		return false, 0
	}
	l.n++
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}

// Items a route can be for (Route.For).
const (
	ForApprovals = "approvals"
	ForReviews   = "reviews"
)

// Route chooses the channels of the approvals and reviews it matches.
// Empty match fields match everything.
type Route struct {
	// For says what the route carries: approvals, reviews, or both (the
	// default, so that routes written before reviews existed send the
	// reviews of their rules and tenants where their approvals go).
	For []string `yaml:"for"`
	// Rules are globs (path.Match) on the id of the rule that asked (an
	// approval) or that queued it (a review; a session's review has none).
	Rules []string `yaml:"rules"`
	// Approvers are selectors as the policy writes them (group:finance,
	// role:approver, user:alice); the route matches an approval that names
	// any of them. A route with approvers is a route for approvals.
	Approvers []string `yaml:"approvers"`
	// Reviewers are selectors the same way; the route matches a review that
	// names any of them as its reviewers. A route with reviewers is a route
	// for reviews.
	Reviewers []string `yaml:"reviewers"`
	Tenants   []string `yaml:"tenants"`
	// Slack lists channel ids (C...) or user ids (U..., a direct message).
	Slack []string `yaml:"slack"`
	// Email sends to the approval's eligible approvers (a review's
	// reviewers) that have an address.
	Email bool `yaml:"email"`
	// Webhooks lists webhook target names (approvals only: review events
	// reach webhooks through their own events and tenants filters).
	Webhooks []string `yaml:"webhooks"`
	// Push sends Web Push notifications to the devices the approval's
	// eligible approvers subscribed in the console (approvals only).
	Push bool `yaml:"push"`
}

// carries reports whether the route is for items of kind (ForApprovals,
// ForReviews).
func (r *Route) carries(kind string) bool {
	if len(r.For) > 0 {
		return slices.Contains(r.For, kind)
	}
	if kind == ForApprovals {
		return len(r.Reviewers) == 0
	}
	return len(r.Approvers) == 0
}

func (r *Route) matchesWhere(tenant, rule string) bool {
	if len(r.Tenants) > 0 && !slices.Contains(r.Tenants, tenant) {
		return false
	}
	return len(r.Rules) == 0 || slices.ContainsFunc(r.Rules, func(g string) bool { ok, _ := path.Match(g, rule); return ok })
}

// Matches reports whether the route applies to a.
func (r *Route) Matches(a *rein.Approval) bool {
	if !r.carries(ForApprovals) || !r.matchesWhere(a.Tenant, a.Rule) {
		return false
	}
	if len(r.Approvers) > 0 {
		named := slices.Concat(append([][]string{a.Approvers}, a.ApproverSets...)...)
		if !slices.ContainsFunc(r.Approvers, func(s string) bool { return slices.Contains(named, s) }) {
			return false
		}
	}
	return true
}

// MatchesReview reports whether the route applies to rv.
func (r *Route) MatchesReview(rv *rein.Review) bool {
	if !r.carries(ForReviews) || !r.matchesWhere(rv.Tenant, rv.Rule) {
		return false
	}
	return len(r.Reviewers) == 0 || slices.ContainsFunc(r.Reviewers, func(s string) bool { return slices.Contains(rv.Reviewers, s) })
}

// Channels are where one approval is announced.
type Channels struct {
	Slack    []string
	Email    bool
	Webhooks []string
	Push     bool
}

// Routing is the notification configuration of a deployment.
type Routing struct {
	// Routes: an approval goes to the channels of every route it matches.
	// With no routes, every approval goes to every configured channel.
	Routes []Route `yaml:"routes"`
	// RemindBefore sends one reminder of a pending approval this long before
	// it expires (0: none).
	RemindBefore time.Duration `yaml:"remind_before"`
	// DigestEvery sends a digest of every pending approval this often (0: none).
	DigestEvery time.Duration `yaml:"digest_every"`
	// DigestSlack lists the Slack channels that get the digest; the digest
	// also goes by e-mail to every configured address when DigestEmail is set.
	DigestSlack []string `yaml:"digest_slack"`
	DigestEmail bool     `yaml:"digest_email"`
	// DigestReviews adds the open reviews to the digest: a list in the
	// digest's Slack channels, and by e-mail (with DigestEmail) to each
	// reviewer the ones they may mark.
	DigestReviews bool `yaml:"digest_reviews"`
}

// Check validates the routes.
func (r *Routing) Check() error {
	for i, rt := range r.Routes {
		for _, g := range rt.Rules {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("notify route %d: rule glob %q: %v", i+1, g, err)
			}
		}
		if len(rt.Slack) == 0 && !rt.Email && len(rt.Webhooks) == 0 && !rt.Push {
			return fmt.Errorf("notify route %d: names no channel; give slack, email, push or webhooks", i+1)
		}
		for _, f := range rt.For {
			if f != ForApprovals && f != ForReviews {
				return fmt.Errorf("notify route %d: for %q: use %s or %s", i+1, f, ForApprovals, ForReviews)
			}
		}
		if !rt.carries(ForApprovals) && len(rt.Approvers) > 0 || !rt.carries(ForReviews) && len(rt.Reviewers) > 0 {
			return fmt.Errorf("notify route %d: approvers match approvals and reviewers match reviews; this route's for: %v never uses one of them", i+1, rt.For)
		}
		if len(rt.Approvers) > 0 && len(rt.Reviewers) > 0 {
			return fmt.Errorf("notify route %d: give approvers (a route for approvals) or reviewers (a route for reviews), not both; write two routes", i+1)
		}
		if !rt.carries(ForApprovals) && len(rt.Slack) == 0 && !rt.Email {
			return fmt.Errorf("notify route %d: a route for reviews sends to slack or email; webhooks get review events through their own events filter", i+1)
		}
	}
	if r.RemindBefore < 0 || r.DigestEvery < 0 {
		return fmt.Errorf("notify: remind_before and digest_every cannot be negative")
	}
	return nil
}

// For returns the channels for a, given the defaults that apply when no
// route is configured (every configured channel).
func (r *Routing) For(a *rein.Approval, defaults Channels) Channels {
	return r.pick(func(rt *Route) bool { return rt.Matches(a) }, defaults)
}

// ForReview returns the channels for a review: with no routes, where
// approvals go (the defaults); with routes, those of the routes that match
// it, which are every route not limited to approvals.
func (r *Routing) ForReview(rv *rein.Review, defaults Channels) Channels {
	c := r.pick(func(rt *Route) bool { return rt.MatchesReview(rv) }, defaults)
	c.Webhooks, c.Push = nil, false
	return c
}

func (r *Routing) pick(match func(*Route) bool, defaults Channels) Channels {
	if len(r.Routes) == 0 {
		return defaults
	}
	var c Channels
	for i := range r.Routes {
		rt := &r.Routes[i]
		if !match(rt) {
			continue
		}
		c.Email = c.Email || rt.Email
		c.Push = c.Push || rt.Push
		for _, s := range rt.Slack {
			if !slices.Contains(c.Slack, s) {
				c.Slack = append(c.Slack, s)
			}
		}
		for _, w := range rt.Webhooks {
			if !slices.Contains(c.Webhooks, w) {
				c.Webhooks = append(c.Webhooks, w)
			}
		}
	}
	return c
}

// Progress says how far an approval is: its status, or for a pending one
// how many approving votes count towards its quorum.
func Progress(a *rein.Approval) string {
	q := max(a.Quorum, 1)
	switch a.Status {
	case rein.StatusPending:
		return fmt.Sprintf("pending: %d of %d approvals", len(a.Counting()), q)
	default:
		return a.Status
	}
}
