package serve

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/mail"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/slack"
	"github.com/reinhq/rein/webhook"
	"github.com/reinhq/rein/webpush"
)

// checkNotify validates the slack, email and notify sections. Their
// secrets may come from the environment instead of the file:
// REIN_SLACK_BOT_TOKEN, REIN_SLACK_SIGNING_SECRET, REIN_SMTP_PASSWORD.
func checkNotify(cfg *Config) error {
	if cfg.Slack != nil {
		if v := os.Getenv("REIN_SLACK_BOT_TOKEN"); v != "" {
			cfg.Slack.BotToken = v
		}
		if v := os.Getenv("REIN_SLACK_SIGNING_SECRET"); v != "" {
			cfg.Slack.SigningSecret = v
		}
		if err := cfg.Slack.Check(); err != nil {
			return err
		}
	}
	if cfg.Email != nil {
		if v := os.Getenv("REIN_SMTP_PASSWORD"); v != "" {
			cfg.Email.Password = v
		}
		if err := cfg.Email.Check(); err != nil {
			return err
		}
	}
	for i, r := range cfg.Notify.Routes {
		if len(r.Slack) > 0 && cfg.Slack == nil {
			return fmt.Errorf("notify route %d names Slack channels, but no slack section is configured", i+1)
		}
		if r.Email && cfg.Email == nil {
			return fmt.Errorf("notify route %d sends e-mail, but no email section is configured", i+1)
		}
		for _, w := range r.Webhooks {
			if !slices.ContainsFunc(cfg.Webhooks, func(t *webhook.Target) bool { return t.Name == w }) {
				return fmt.Errorf("notify route %d: no webhook is named %q", i+1, w)
			}
		}
	}
	if err := cfg.Push.Check(); err != nil {
		return err
	}
	return cfg.Notify.Check()
}

// notifications are the channels that bring approvals to approvers and
// reviews after the fact to reviewers.
type notifications struct {
	routing notify.Routing
	slack   *slack.App
	mail    *mail.Mailer
	store   rein.Store
	log     *slog.Logger
	channel string
	// push sends Web Push messages (nil: disabled), notifier announces
	// approvals with it.
	push     *webpush.Sender
	notifier *webpush.Notifier
}

func newNotifications(cfg Config, store rein.Store, pipe *pipeline.Pipeline, base string, consoleSecret []byte, web *console.Console, log *slog.Logger) *notifications {
	n := &notifications{routing: cfg.Notify, store: store, log: log}
	if ps, ok := store.(webpush.Store); ok && !cfg.Push.Disabled {
		// The VAPID key is derived from the console secret, which replicas
		// share: each signs for the subscriptions any of them took.
		if key, err := webpush.KeyFromSecret(consoleSecret); err != nil {
			log.Error("Web Push is off: no VAPID key", "err", err)
		} else {
			subject := cfg.Push.Subject
			if subject == "" {
				subject = base
			}
			n.push = &webpush.Sender{VAPID: &webpush.VAPID{Key: key, Subject: subject}, Services: cfg.Push.Services}
			n.notifier = &webpush.Notifier{Sender: n.push, Store: ps, BaseURL: base, Log: log}
		}
	}
	if cfg.Slack != nil {
		n.slack = &slack.App{Config: *cfg.Slack, Pipeline: pipe, Store: store, BaseURL: base, Log: log}
		n.channel = cfg.Slack.Channel
	}
	if cfg.Email != nil {
		// The link secret is derived from the console secret, which replicas
		// share: a link mailed by one is accepted by all.
		m := hmac.New(sha256.New, consoleSecret)
		m.Write([]byte("rein approval links v1"))
		n.mail = &mail.Mailer{Config: *cfg.Email, Secret: m.Sum(nil), BaseURL: base, Store: store, Pipeline: pipe, Log: log,
			Session: func(w http.ResponseWriter, r *http.Request) (*rein.Key, bool) {
				// Who is signed in, only: the link page's POST carries the
				// link's own CSRF token, not the console's, so the session
				// is read as for a GET.
				ro := r.Clone(r.Context())
				ro.Method = http.MethodGet
				k, ok, err := web.Authenticate(w, ro)
				return k, ok && err == nil && k != nil
			}}
	}
	return n
}

func (n *notifications) slackHandler() http.Handler {
	if n.slack == nil {
		return nil
	}
	return n.slack
}

func (n *notifications) linkHandler() http.Handler {
	if n.mail == nil {
		return nil
	}
	return n.mail
}

// run starts the dispatcher when a channel is configured.
func (n *notifications) run(ctx context.Context, bus *events.Bus) {
	if n.slack == nil && n.mail == nil && n.notifier == nil {
		return
	}
	d := &notify.Dispatcher{Bus: bus, Store: n.store, Reviews: n.store, Routing: n.routing, Log: n.log}
	if n.slack != nil {
		d.Slack = n.slack
		if n.channel != "" {
			d.SlackDefault = []string{n.channel}
		}
	}
	if n.mail != nil {
		d.Email = n.mail
	}
	if n.notifier != nil {
		d.Push = n.notifier
	}
	d.Run(ctx)
}

// webhookRoute keeps an approval event from a webhook that the routes do
// not name for it. With no routes, every webhook gets what its own filters
// let through; review events always do (routes name webhooks for
// approvals only).
func (n *notifications) webhookRoute(target string, e *events.Event) bool {
	if len(n.routing.Routes) == 0 || (e.Type != events.ApprovalCreated && e.Type != events.ApprovalUpdated) {
		return true
	}
	var a rein.Approval
	if json.Unmarshal(e.Data, &a) != nil {
		return true
	}
	return slices.Contains(n.routing.For(&a, notify.Channels{}).Webhooks, target)
}
