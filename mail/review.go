package mail

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
)

// reviewers are the configured people with an address that rv names as
// its reviewers (notify.Reviewer).
func (m *Mailer) reviewers(ctx context.Context, rv *rein.Review) []recipient {
	var out []recipient
	for _, ap := range m.Config.Approvers {
		if ap.Tenant != rv.Tenant {
			continue
		}
		key, err := notify.KeyOf(ctx, m.Store, notify.Identity{Tenant: ap.Tenant, Key: ap.Key})
		if err != nil {
			m.Log.Warn("e-mail reviewer has no usable key", "err", err)
			continue
		}
		if notify.Reviewer(rv, key) {
			out = append(out, recipient{ap, key})
		}
	}
	return out
}

// AnnounceReview writes to every reviewer the review names who has an
// address. The e-mail carries no link that decides: a review is marked
// with `rein review` or the API, after reading what happened.
func (m *Mailer) AnnounceReview(ctx context.Context, rv *rein.Review, _ []string) error {
	var errs []error
	subject, body := m.reviewLetter(rv)
	for _, r := range m.reviewers(ctx, rv) {
		if err := m.send(r.Address, subject, body); err != nil {
			errs = append(errs, fmt.Errorf("e-mail to %s: %w", r.Address, err))
		}
	}
	return errors.Join(errs...)
}

// UpdateReview sends nothing: the verdict is in the console, the audit log
// and `rein reviews`.
func (m *Mailer) UpdateReview(context.Context, *rein.Review) error { return nil }

// reviewLetter is the e-mail about rv: what ran (the arguments laid out as
// for an approval, risky ones first), its risk tags, why it was queued, the
// result when one was reported, and how to mark it.
func (m *Mailer) reviewLetter(rv *rein.Review) (string, string) {
	subject := "Review after the fact: " + oneLine(notify.ReviewSubject(rv))
	var b strings.Builder
	if rv.Kind == "session" {
		fmt.Fprintf(&b, "Session %s of %s is queued for review.\n\n", oneLine(notify.Visible(rv.Session)), oneLine(notify.Visible(rv.Agent)))
	} else {
		session := ""
		if rv.Session != "" {
			session = " (session " + oneLine(notify.Visible(rv.Session)) + ")"
		}
		fmt.Fprintf(&b, "%s ran %s%s, and it is queued for review.\n\n", oneLine(notify.Visible(rv.Agent)),
			oneLine(clipUTF8(notify.Visible(rv.Tool), toolMax)), session)
	}
	tags := "none derived from the arguments"
	if len(rv.Risk) > 0 {
		tags = strings.Join(rv.Risk, ", ")
	}
	fmt.Fprintf(&b, "Risk: %s\nQueued for review: %s\n", oneLine(tags), oneLine(strings.Join(rv.Why, "; ")))
	if rv.Rule != "" {
		fmt.Fprintf(&b, "Rule: %s\n", oneLine(rv.Rule))
	}
	if rv.Kind != "session" {
		show := layout(&rein.Approval{Tenant: rv.Tenant, Tool: rv.Tool, Args: rv.Args}, m.tools(&rein.Approval{Tenant: rv.Tenant}))
		show.Review = true
		fmt.Fprintf(&b, "Arguments:\n%s", show.text())
	}
	if res := rv.Result; res != nil {
		fmt.Fprintf(&b, "Result: %s", oneLine(res.Status))
		if res.Summary != "" {
			fmt.Fprintf(&b, ": %s", oneLine(res.Summary))
		}
		b.WriteString("\n")
		if res.ArgsMatch != nil && !*res.ArgsMatch {
			b.WriteString("The executed arguments differ from the allowed ones.\n")
		}
	}
	fmt.Fprintf(&b, "Reviewers: %s\nQueued: %s\n\n", oneLine(strings.Join(rv.Reviewers, ", ")), rv.CreatedAt.UTC().Format(time.RFC1123))
	fmt.Fprintf(&b, "Mark it:\n  rein review %s --ok\n  rein review %s --concern --message \"...\"   (an admin can add --lock agent)\n\n", rv.ID, rv.ID)
	fmt.Fprintf(&b, "What happened around it, in the console: %s\n", notify.ReviewPage(m.BaseURL, rv))
	return subject, b.String()
}

// DigestReviews writes each configured reviewer the open reviews that
// name them.
func (m *Mailer) DigestReviews(ctx context.Context, open []*rein.Review, _ []string) error {
	var d digest
	for _, rv := range open {
		for _, r := range m.reviewers(ctx, rv) {
			d.add(r.Address, fmt.Sprintf("- %s: %s (%s; risk: %s)\n  rein review %s --ok | --concern; %s\n", rv.ID, oneLine(notify.ReviewSubject(rv)),
				oneLine(strings.Join(rv.Why, "; ")), oneLine(strings.Join(rv.Risk, ", ")), rv.ID, notify.ReviewPage(m.BaseURL, rv)))
		}
	}
	return d.send(m, "Reviews waiting for you: %d", "review digest")
}
