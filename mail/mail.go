// Package mail notifies approvers by e-mail (SMTP) with signed, single-use,
// short-lived links: each link is bound to one approval, its action hash
// and one approver. Opening a link shows the approval and asks for a tap to
// confirm; only that POST, with its CSRF token, casts the vote, as the
// approver's rein identity, through the pipeline. A GET never votes: mail
// scanners and link previews open links.
package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/smtp"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/pipeline"
)

// Approver is a person who gets e-mail: their rein identity and address.
type Approver struct {
	Tenant  string `yaml:"tenant"`
	Key     string `yaml:"key"`
	Address string `yaml:"address"`
}

// Config is the e-mail channel's configuration (serve's `email:` section).
type Config struct {
	// SMTP is the server's host:port. Username and Password, when set,
	// authenticate with PLAIN, which Go's net/smtp sends only over TLS
	// (STARTTLS, used whenever the server offers it) or to localhost.
	SMTP     string `yaml:"smtp"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	From     string `yaml:"from"`
	// Approvers are the people with an address: approvals go to those
	// eligible to vote, reviews to those the review names as reviewers.
	Approvers []Approver `yaml:"approvers"`
	// LinkTTL is how long a link may be used (default 15m, never past the
	// approval's expiry).
	LinkTTL time.Duration `yaml:"link_ttl"`
}

// Check validates the configuration and fills in defaults.
func (c *Config) Check() error {
	if _, _, err := net.SplitHostPort(c.SMTP); err != nil {
		return fmt.Errorf("email: smtp %q: give host:port, e.g. smtp.example.com:587", c.SMTP)
	}
	if c.From == "" || strings.ContainsAny(c.From, "\r\n") {
		return errors.New("email: from is required, e.g. rein@example.com")
	}
	for _, a := range c.Approvers {
		if a.Tenant == "" || a.Key == "" || !strings.Contains(a.Address, "@") || strings.ContainsAny(a.Address, "\r\n<>,") {
			return fmt.Errorf("email: approver %+v: give tenant, key and one address", a)
		}
	}
	if c.LinkTTL <= 0 {
		c.LinkTTL = 15 * time.Minute
	}
	return nil
}

// Store is what e-mailed approval links need of rein's store: the voter's
// key, and the audit log for the votes they refuse.
type Store interface {
	notify.Keys
	notify.Appender
}

// Mailer sends the approval e-mails and answers their links.
type Mailer struct {
	Config   Config
	Secret   []byte // signs links; at least 32 bytes
	BaseURL  string
	Store    Store
	Pipeline *pipeline.Pipeline
	Log      *slog.Logger
	Now      func() time.Time
	// Session, when set, returns the key of a signed-in console user: a
	// link opened in a browser signed in as someone else is refused.
	Session func(w http.ResponseWriter, r *http.Request) (*rein.Key, bool)

	mu   sync.Mutex
	used map[string]int64 // nonce -> expiry of links already used
	// forged and linked limit the audit entries of refused link pages:
	// made-up tokens, and genuine links refused (used, expired, ...).
	forged, linked notify.Limiter
}

func (m *Mailer) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// recipient is an eligible approver of one approval.
type recipient struct {
	Approver
	key *rein.Key
}

// recipients are the configured approvers that may vote on a and have not.
func (m *Mailer) recipients(ctx context.Context, a *rein.Approval) []recipient {
	var out []recipient
	for _, ap := range m.Config.Approvers {
		if ap.Tenant != a.Tenant {
			continue
		}
		key, err := notify.KeyOf(ctx, m.Store, notify.Identity{Tenant: ap.Tenant, Key: ap.Key})
		if err != nil {
			m.Log.Warn("e-mail approver has no usable key", "err", err)
			continue
		}
		if !notify.Eligible(a, key) || notify.VotedOnCurrent(a, key) {
			continue
		}
		out = append(out, recipient{ap, key})
	}
	return out
}

// link returns a fresh link for r to vote on a; only, when set, is the one
// vote it may cast.
func (m *Mailer) link(a *rein.Approval, r recipient, only ...string) (string, time.Time) {
	exp := m.now().Add(m.Config.LinkTTL)
	if a.ExpiresAt.Before(exp) {
		exp = a.ExpiresAt
	}
	l := Link{Approval: a.ID, ActionHash: a.ActionHash, Tenant: a.Tenant, Key: r.key.Name, KeyID: r.key.ID, Expires: exp.Unix()}
	if len(only) > 0 {
		l.Only = only[0]
	}
	return m.BaseURL + "/approve/" + seal(m.Secret, l), exp
}

// Announce writes to every eligible approver with an address.
func (m *Mailer) Announce(ctx context.Context, a *rein.Approval, _ []string) error {
	return m.each(ctx, a, "Approval needed")
}

// Remind writes again, with fresh links, to those who have not voted.
func (m *Mailer) Remind(ctx context.Context, a *rein.Approval, _ []string) error {
	return m.each(ctx, a, "Reminder: approval needed")
}

// Revise writes again, with fresh links, to every eligible approver who has
// not voted on the edited action: the edit made a new revision, which the
// e-mail shows with what changed, first. Approvals of the revision before
// no longer count, so those who gave them are written to as well.
func (m *Mailer) Revise(ctx context.Context, a *rein.Approval, _ []string) error {
	if a.Status != rein.StatusPending {
		return nil
	}
	return m.each(ctx, a, "Edited, approval needed again")
}

// Update sends nothing: an approver learns the outcome from the link page
// and the console; one e-mail per vote would teach people to ignore them.
func (m *Mailer) Update(ctx context.Context, a *rein.Approval) error { return nil }

func (m *Mailer) each(ctx context.Context, a *rein.Approval, what string) error {
	var errs []error
	for _, r := range m.recipients(ctx, a) {
		subject, body := m.letter(a, r, what)
		if err := m.send(r.Address, subject, body); err != nil {
			errs = append(errs, fmt.Errorf("e-mail to %s: %w", r.Address, err))
		}
	}
	return errors.Join(errs...)
}

// letter is the e-mail to r about a: what is asked, its risk tags and the
// rule that asked, the version of the action (an edit's changes first, then
// the arguments as they will run: see layout), and r's link, whose page
// shows the current version when it is opened. The link can
// approve only when the e-mail shows the whole action and the approval needs
// no step-up; otherwise it can only reject, and the e-mail sends the
// approver to the console to decide (to confirm with a passkey).
func (m *Mailer) letter(a *rein.Approval, r recipient, what string) (string, string) {
	show := layout(a, m.tools(a))
	subject := fmt.Sprintf("%s: %s wants to run %s", what, oneLine(notify.Visible(a.Agent)), oneLine(show.Tool))
	console := m.BaseURL + "/approvals/" + url.PathEscape(a.ID)
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants to run %s (session %s).\n\n%s\n%s%s\nApprovals: %s\nExpires: %s\n\n",
		oneLine(notify.Visible(a.Agent)), oneLine(show.Tool), oneLine(notify.Visible(a.Session)), riskText(a), versionText(a), show.text(),
		notify.Progress(a), a.ExpiresAt.UTC().Format(time.RFC1123))
	if a.StepUp {
		link, exp := m.link(a, r, approval.Reject)
		fmt.Fprintf(&b, "Approving needs a passkey confirmation, which only the console takes. Confirm in rein:\n%s\n\nTo reject it from here (this link is yours alone, works once, until %s, and cannot approve):\n%s\n",
			console, exp.UTC().Format(time.RFC1123), link)
		return subject, b.String()
	}
	if show.Full {
		link, exp := m.link(a, r)
		fmt.Fprintf(&b, "Review and decide (this link is yours alone, works once, until %s):\n%s\n\nOr open the console: %s\n",
			exp.UTC().Format(time.RFC1123), link, console)
		return subject, b.String()
	}
	link, exp := m.link(a, r, approval.Reject)
	fmt.Fprintf(&b, "Open the approval in the console to read it in full and decide:\n%s\n\nTo reject it from here (this link is yours alone, works once, until %s, and cannot approve):\n%s\n",
		console, exp.UTC().Format(time.RFC1123), link)
	return subject, b.String()
}

// Digest writes each configured approver the pending approvals they may
// decide, each with its own link.
func (m *Mailer) Digest(ctx context.Context, pending []*rein.Approval, _ []string) error {
	var d digest
	for _, a := range pending {
		for _, r := range m.recipients(ctx, a) {
			d.add(r.Address, m.digestItem(a, r))
		}
	}
	return d.send(m, "Approvals waiting for you: %d", "digest")
}

// digest collects, per address, the items of one digest e-mail, in the
// order the addresses first come.
type digest struct {
	order []string
	items map[string]*strings.Builder
	count map[string]int
}

func (d *digest) add(addr, item string) {
	if d.items == nil {
		d.items, d.count = map[string]*strings.Builder{}, map[string]int{}
	}
	b, ok := d.items[addr]
	if !ok {
		b = &strings.Builder{}
		d.items[addr] = b
		d.order = append(d.order, addr)
	}
	d.count[addr]++
	b.WriteString(item)
}

// send mails each address its items; subject has a %d for their number.
func (d *digest) send(m *Mailer, subject, what string) error {
	var errs []error
	for _, addr := range d.order {
		if err := m.send(addr, fmt.Sprintf(subject, d.count[addr]), d.items[addr].String()); err != nil {
			errs = append(errs, fmt.Errorf("%s to %s: %w", what, addr, err))
		}
	}
	return errors.Join(errs...)
}

// digestItem is one approval in r's digest, with r's link. The link can
// approve only when the link page can show the whole action.
func (m *Mailer) digestItem(a *rein.Approval, r recipient) string {
	show := layout(a, m.tools(a))
	item := fmt.Sprintf("- %s wants to run %s (%s; risk: %s), expires %s\n", oneLine(notify.Visible(a.Agent)), oneLine(show.Tool), notify.Progress(a),
		oneLine(strings.Join(a.Risk, ", ")), a.ExpiresAt.UTC().Format(time.RFC1123))
	if a.Revision > 1 {
		item += fmt.Sprintf("  EDITED by %s (revision %d): %s\n", oneLine(editor(a)), a.Revision, oneLine(strings.Join(notify.ChangeLines(a), "; ")))
	}
	if a.StepUp {
		link, _ := m.link(a, r, approval.Reject)
		return item + fmt.Sprintf("  Approving needs a passkey confirmation: confirm in rein, %s/approvals/%s\n  Reject only: %s\n",
			m.BaseURL, url.PathEscape(a.ID), link)
	}
	if show.Full {
		link, _ := m.link(a, r)
		return item + "  " + link + "\n"
	}
	link, _ := m.link(a, r, approval.Reject)
	return item + fmt.Sprintf("  The arguments are too long to show by e-mail (%d bytes): decide in the console, %s/approvals/%s\n  Reject only: %s\n",
		show.Size, m.BaseURL, url.PathEscape(a.ID), link)
}

// send delivers one text/plain message.
func (m *Mailer) send(to, subject, body string) error {
	var msg bytes.Buffer
	var id [12]byte
	rand.Read(id[:])
	host, _, _ := strings.Cut(m.Config.From[strings.LastIndex(m.Config.From, "@")+1:], ">")
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@%s>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\nAuto-Submitted: auto-generated\r\n\r\n",
		m.Config.From, to, mime.QEncoding.Encode("utf-8", subject), m.now().UTC().Format(time.RFC1123Z),
		base64.RawURLEncoding.EncodeToString(id[:]), host)
	msg.WriteString(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n"))
	var auth smtp.Auth
	if m.Config.Username != "" {
		h, _, _ := net.SplitHostPort(m.Config.SMTP)
		auth = smtp.PlainAuth("", m.Config.Username, m.Config.Password, h)
	}
	return smtp.SendMail(m.Config.SMTP, auth, addrOnly(m.Config.From), []string{to}, msg.Bytes())
}

// addrOnly is the address of "Name <addr>" or of a bare addr.
func addrOnly(s string) string {
	if i := strings.LastIndex(s, "<"); i >= 0 {
		return strings.TrimSuffix(s[i+1:], ">")
	}
	return s
}

// oneLine keeps a value the agent chose from adding lines (headers) to the
// message.
func oneLine(s string) string {
	return clip(strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r < 0x20 {
			return ' '
		}
		return r
	}, s), 300)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
