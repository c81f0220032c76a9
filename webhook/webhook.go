// Package webhook delivers rein's events to configured HTTP endpoints,
// signed the Standard Webhooks way (webhook-id, webhook-timestamp,
// webhook-signature: v1,<base64 HMAC-SHA256>), or as Slack-compatible
// messages. Each target has its own worker that follows the event stream,
// delivers in order and retries with exponential backoff; a slow or dead
// receiver holds up only its own deliveries, never a decision.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/notify"
	reinslack "github.com/reinhq/rein/slack"
)

// Target is one configured receiver.
type Target struct {
	Name   string   `yaml:"name"`
	URL    string   `yaml:"url"`
	Secret string   `yaml:"secret"` // whsec_<base64>; required for the standard format
	Events []string `yaml:"events"` // default: every type but decision
	// Tenant limits the target to these tenants' events (events.Event.For):
	// their own records and deployment-wide changes. Default: every tenant.
	Tenant []string `yaml:"tenants"`
	Format string   `yaml:"format"` // standard (default) or slack
	// MaxAttempts, Backoff (first wait, doubled each retry) and Timeout
	// (per attempt); defaults 6, 1s, 10s.
	MaxAttempts int           `yaml:"max_attempts"`
	Backoff     time.Duration `yaml:"backoff"`
	Timeout     time.Duration `yaml:"timeout"`

	key []byte
}

// Check validates a target and fills in its defaults.
func (t *Target) Check() error {
	if !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://") {
		return fmt.Errorf("webhook %q: url must be http:// or https://", t.Name)
	}
	if t.Name == "" {
		t.Name = t.URL
	}
	switch t.Format {
	case "":
		t.Format = "standard"
	case "standard", "slack":
	default:
		return fmt.Errorf("webhook %q: format %q: use standard or slack", t.Name, t.Format)
	}
	if t.Format == "standard" || t.Secret != "" {
		raw, ok := strings.CutPrefix(t.Secret, "whsec_")
		key, err := base64.StdEncoding.DecodeString(raw)
		if !ok || err != nil || len(key) < 16 {
			return fmt.Errorf("webhook %q: secret must be whsec_ followed by at least 16 bytes in base64", t.Name)
		}
		t.key = key
	}
	for _, e := range t.Events {
		if !slices.Contains(events.Types, e) {
			return fmt.Errorf("webhook %q: event %q is not one of %s", t.Name, e, strings.Join(events.Types, ", "))
		}
	}
	if t.MaxAttempts <= 0 {
		t.MaxAttempts = 6
	}
	if t.Backoff <= 0 {
		t.Backoff = time.Second
	}
	if t.Timeout <= 0 {
		t.Timeout = 10 * time.Second
	}
	return nil
}

func (t *Target) wants(e *events.Event) bool {
	if e.Remote { // the replica that published it delivers it
		return false
	}
	if len(t.Events) == 0 {
		if e.Type == events.Decision {
			return false
		}
	} else if !slices.Contains(t.Events, e.Type) {
		return false
	}
	return len(t.Tenant) == 0 || slices.ContainsFunc(t.Tenant, e.For)
}

// Sign returns the webhook-signature value for a message.
func Sign(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.", id, ts)
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Delivery is one attempt, as the delivery log keeps it.
type Delivery = rein.WebhookDelivery

// Log is where deliveries are recorded.
type Log interface {
	LogDelivery(ctx context.Context, d *Delivery) error
}

// Sender runs one worker per target.
type Sender struct {
	Targets []*Target
	Bus     *events.Bus
	Log     Log
	Logger  *slog.Logger
	BaseURL string // links in Slack messages
	Client  *http.Client
	// Route, when set, may keep an event from a target (approval routing:
	// an approval goes to the webhooks its routes name).
	Route func(target string, e *events.Event) bool
}

// Run delivers until ctx ends. Events published before Run are not sent.
func (s *Sender) Run(ctx context.Context) {
	if s.Client == nil {
		s.Client = &http.Client{}
	}
	start := s.Bus.Last()
	for _, t := range s.Targets {
		go s.worker(ctx, t, start)
	}
}

func (s *Sender) worker(ctx context.Context, t *Target, last int64) {
	ch := s.Bus.Subscribe()
	defer s.Bus.Unsubscribe(ch)
	for {
		list, _ := s.Bus.Since(last, func(e *events.Event) bool {
			return t.wants(e) && (s.Route == nil || s.Route(t.Name, e))
		})
		if len(list) > 0 && list[0].ID > last+1 && last > 0 {
			s.Logger.Warn("webhook receiver fell more than the event ring behind; events were skipped", "target", t.Name, "from", last+1, "to", list[0].ID-1)
		}
		for _, e := range list {
			s.deliver(ctx, t, &e)
			last = e.ID
			if ctx.Err() != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// deliver sends one event, retrying with exponential backoff.
func (s *Sender) deliver(ctx context.Context, t *Target, e *events.Event) {
	body, err := s.body(t, e)
	if err != nil {
		s.Logger.Error("webhook body could not be built", "target", t.Name, "event", e.ID, "err", err)
		return
	}
	id := "msg_" + rein.NewID("evt")[4:]
	wait := t.Backoff
	for attempt := 1; attempt <= t.MaxAttempts; attempt++ {
		d := s.attempt(ctx, t, e, id, attempt, body)
		if s.Log != nil {
			if err := s.Log.LogDelivery(context.WithoutCancel(ctx), d); err != nil {
				s.Logger.Error("webhook delivery log", "err", err)
			}
		}
		if d.Delivered {
			return
		}
		if attempt == t.MaxAttempts {
			s.Logger.Error("webhook delivery failed; giving up", "target", t.Name, "event", e.ID, "type", e.Type, "attempts", attempt, "err", d.Error)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (s *Sender) attempt(ctx context.Context, t *Target, e *events.Event, id string, n int, body []byte) *Delivery {
	d := &Delivery{Target: t.Name, MessageID: id, EventID: e.ID, EventType: e.Type, Attempt: n, At: time.Now().UTC()}
	actx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, "POST", t.URL, bytes.NewReader(body))
	if err != nil {
		d.Error = withoutURL(err).Error()
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "rein/"+rein.Version)
	if t.key != nil {
		ts := time.Now().Unix()
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("webhook-signature", Sign(t.key, id, ts, body))
	}
	res, err := s.Client.Do(req)
	d.TookMS = time.Since(d.At).Milliseconds()
	if err != nil {
		d.Error = withoutURL(err).Error()
		if errors.Is(err, context.DeadlineExceeded) {
			d.Error = fmt.Sprintf("no answer within %s", t.Timeout)
		}
		return d
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	d.Status = res.StatusCode
	d.Delivered = res.StatusCode >= 200 && res.StatusCode < 300
	if !d.Delivered {
		d.Error = res.Status
	}
	return d
}

// withoutURL is err with the URL it names cut to scheme and host: a
// target's URL can itself be the secret (a Slack incoming webhook's path,
// a token in the query), and delivery errors are kept, listed and logged.
func withoutURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	short := "the target's URL"
	if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
		short = u.Scheme + "://" + u.Host + "/…"
	}
	return &url.Error{Op: ue.Op, URL: short, Err: ue.Err}
}

// body is the message for a target: the Standard Webhooks payload shape
// ({type, timestamp, data}), or a Slack message.
func (s *Sender) body(t *Target, e *events.Event) ([]byte, error) {
	if t.Format == "slack" {
		return json.Marshal(slackMessage(e, s.BaseURL))
	}
	return json.Marshal(map[string]any{"type": e.Type, "timestamp": e.At.Format(time.RFC3339Nano),
		"data": e.Data, "event_id": e.ID})
}

// riskTags are the risk tags of an approval or review event as message
// text, " [tag, tag]", or a note that none were derived: a message without
// tags must not read as harmless by leaving them out.
func riskTags(d map[string]any) string {
	list, _ := d["risk"].([]any)
	var tags []string
	for _, t := range list {
		if s, ok := t.(string); ok {
			tags = append(tags, s)
		}
	}
	if len(tags) == 0 {
		return " [risk: none derived from the arguments]"
	}
	return " [risk: " + reinslack.Text(strings.Join(tags, ", ")) + "]"
}

// slackMessage renders an event as Slack's text + blocks, with a link to
// the console page of the approval or question it is about (a person
// follows it in a browser; the API's /v1/ address would answer 401 JSON). Every value taken from the event
// (agent, tool, session, reason, a question's text) is written with
// slack.Text or slack.Code, so that an agent cannot make the message link,
// mention or format anything.
func slackMessage(e *events.Event, base string) map[string]any {
	var d map[string]any
	json.Unmarshal(e.Data, &d)
	str := func(k string) string { s, _ := d[k].(string); return reinslack.Text(s) }
	code := func(k string) string { s, _ := d[k].(string); return reinslack.Code(s) }
	id, _ := d["id"].(string)
	var text, link string
	switch e.Type {
	case events.ApprovalCreated:
		text = fmt.Sprintf("Approval needed: *%s* wants to run %s (session %s)%s: %s", str("agent"), code("tool"), str("session"), riskTags(d), str("reason"))
		link = base + "/approvals/" + url.PathEscape(id)
	case events.ApprovalUpdated:
		text = fmt.Sprintf("Approval %s for %s by *%s*%s is now *%s*", str("id"), code("tool"), str("agent"), riskTags(d), str("status"))
		link = base + "/approvals/" + url.PathEscape(id)
	case events.ReviewCreated, events.ReviewUpdated:
		var r rein.Review
		json.Unmarshal(e.Data, &r)
		why, _ := json.Marshal(d["why"])
		var whys []string
		json.Unmarshal(why, &whys)
		what := fmt.Sprintf("*%s* ran %s (session %s)", str("agent"), code("tool"), str("session"))
		if r.Kind == "session" {
			what = fmt.Sprintf("session %s of *%s*", str("session"), str("agent"))
		}
		text = fmt.Sprintf("Review after the fact: %s%s: %s", what, riskTags(d), reinslack.Text(strings.Join(whys, "; ")))
		if e.Type == events.ReviewUpdated {
			text = fmt.Sprintf("Review %s (%s) marked *%s* by %s: %s", str("id"), what, str("status"), str("decided_by"), str("message"))
		}
		link = notify.ReviewPage(base, &r)
	case events.QuestionCreated:
		text = fmt.Sprintf("Question from *%s*: %s", str("agent"), str("text"))
		link = base + "/questions/" + url.PathEscape(id)
	case events.QuestionUpdated:
		text = fmt.Sprintf("Question %s is now *%s*", str("id"), str("status"))
		link = base + "/questions/" + url.PathEscape(id)
	case events.LockUpdated:
		text = fmt.Sprintf("Lock %s: %s", str("id"), str("reason"))
	case events.PolicyUpdated:
		text = fmt.Sprintf("Policy updated: version %s", str("version"))
	default:
		text = fmt.Sprintf("%s: *%s* %s → *%s* (%s)", reinslack.Text(e.Type), str("agent"), code("tool"), str("decision"), str("reason"))
	}
	// verbatim: Slack does not turn bare URLs, channel names or mentions in
	// the text into links; the link below is rein's own.
	blocks := []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text, "verbatim": true}}}
	if link != "" {
		link = reinslack.Text(link)
		blocks = append(blocks, map[string]any{"type": "context", "elements": []any{
			map[string]any{"type": "mrkdwn", "text": fmt.Sprintf("<%s|Open in rein>", link)}}})
		text += " " + link
	}
	return map[string]any{"text": text, "blocks": blocks}
}
