package serve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/mail"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/slack"
	"github.com/reinhq/rein/webhook"
)

func TestCheckNotify(t *testing.T) {
	hook := &webhook.Target{Name: "pager", URL: "https://pager.example", Format: "slack"}
	slackCfg := func() *slack.Config { return &slack.Config{BotToken: "xoxb-1", SigningSecret: "s"} }
	mailCfg := func() *mail.Config { return &mail.Config{SMTP: "127.0.0.1:25", From: "rein@example.com"} }
	cases := []struct {
		name string
		cfg  Config
		want string // "" accepted, else part of the error
	}{
		{"nothing configured", Config{}, ""},
		{"slack and email", Config{Slack: slackCfg(), Email: mailCfg()}, ""},
		{"slack without a token", Config{Slack: &slack.Config{SigningSecret: "s"}}, "bot_token"},
		{"email without from", Config{Email: &mail.Config{SMTP: "127.0.0.1:25"}}, "from"},
		{"email header injection", Config{Email: &mail.Config{SMTP: "127.0.0.1:25", From: "a@b\r\nBcc: x@y"}}, "from"},
		{"route to slack without slack", Config{Notify: notify.Routing{Routes: []notify.Route{{Slack: []string{"C1"}}}}}, "no slack section"},
		{"route to email without email", Config{Notify: notify.Routing{Routes: []notify.Route{{Email: true}}}}, "no email section"},
		{"route to an unknown webhook", Config{Webhooks: []*webhook.Target{hook}, Notify: notify.Routing{Routes: []notify.Route{{Webhooks: []string{"pagr"}}}}}, `no webhook is named "pagr"`},
		{"route to a known webhook", Config{Webhooks: []*webhook.Target{hook}, Notify: notify.Routing{Routes: []notify.Route{{Webhooks: []string{"pager"}}}}}, ""},
		{"route for reviews", Config{Slack: slackCfg(), Notify: notify.Routing{Routes: []notify.Route{{For: []string{notify.ForReviews}, Reviewers: []string{"group:security"}, Slack: []string{"C1"}}}}}, ""},
		{"route for reviews to slack without slack", Config{Notify: notify.Routing{Routes: []notify.Route{{Reviewers: []string{"group:security"}, Slack: []string{"C1"}}}}}, "no slack section"},
		{"route for reviews to a webhook", Config{Webhooks: []*webhook.Target{hook}, Notify: notify.Routing{Routes: []notify.Route{{For: []string{notify.ForReviews}, Webhooks: []string{"pager"}}}}}, "their own events filter"},
	}
	for _, c := range cases {
		err := checkNotify(&c.cfg)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	t.Setenv("REIN_SLACK_SIGNING_SECRET", "from-env")
	cfg := Config{Slack: slackCfg()}
	if err := checkNotify(&cfg); err != nil || cfg.Slack.SigningSecret != "from-env" {
		t.Errorf("signing secret from the environment: %v %q", err, cfg.Slack.SigningSecret)
	}
}

func TestWebhookRoute(t *testing.T) {
	n := &notifications{routing: notify.Routing{Routes: []notify.Route{{Rules: []string{"pay*"}, Webhooks: []string{"finance"}}}}}
	ev := func(typ string, a *rein.Approval) *events.Event {
		b, _ := json.Marshal(a)
		return &events.Event{Type: typ, Data: b}
	}
	pay := &rein.Approval{ID: "apr_1", Rule: "pay"}
	deploy := &rein.Approval{ID: "apr_2", Rule: "deploy"}
	cases := []struct {
		target string
		e      *events.Event
		want   bool
	}{
		{"finance", ev(events.ApprovalCreated, pay), true},
		{"ops", ev(events.ApprovalCreated, pay), false},
		{"finance", ev(events.ApprovalUpdated, deploy), false},
		{"ops", &events.Event{Type: events.Decision, Data: []byte(`{}`)}, true}, // only approvals are routed
		{"ops", &events.Event{Type: events.ReviewCreated, Data: []byte(`{"id":"rev_1","rule":"pay"}`)}, true},
	}
	for i, c := range cases {
		if got := n.webhookRoute(c.target, c.e); got != c.want {
			t.Errorf("case %d (%s %s): %v", i, c.target, c.e.Type, got)
		}
	}
	open := &notifications{}
	if !open.webhookRoute("ops", ev(events.ApprovalCreated, deploy)) {
		t.Error("with no routes a webhook gets every approval its filters let through")
	}
}
