package webhook

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/events"
)

// receiver collects the bodies posted to it.
type receiver struct {
	mu     sync.Mutex
	bodies []string
	got    chan string
}

func newReceiver(t *testing.T) (*receiver, *httptest.Server) {
	r := &receiver{got: make(chan string, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		r.got <- string(b)
	}))
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) until(t *testing.T, marker string) []string {
	t.Helper()
	var seen []string
	for {
		select {
		case b := <-r.got:
			seen = append(seen, b)
			if strings.Contains(b, marker) {
				return seen
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no delivery with %q; got %v", marker, seen)
		}
	}
}

// A webhook of tenant globex gets globex's records and deployment-wide
// changes, never a record of tenant "*" (a check made with a key that
// administers every tenant) nor another tenant's.
func TestWebhookTenantScope(t *testing.T) {
	rec, srv := newReceiver(t)
	target := &Target{Name: "globex", URL: srv.URL, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Tenant: []string{"globex"},
		Events: events.Types, Backoff: time.Millisecond}
	if err := target.Check(); err != nil {
		t.Fatal(err)
	}
	bus := &events.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	(&Sender{Targets: []*Target{target}, Bus: bus, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Run(ctx)

	bus.Publish(events.Decision, "*", map[string]any{"agent": "root", "args": "root-only-secret"})
	bus.Publish(events.ApprovalCreated, "*", map[string]any{"agent": "root", "args": "root-only-secret"})
	bus.Publish(events.Decision, "acme", map[string]any{"agent": "acme-agent", "args": "acme-secret"})
	bus.Publish(events.LockUpdated, "*", map[string]any{"reason": "global-lock"})
	bus.Publish(events.Decision, "globex", map[string]any{"agent": "globex-agent", "args": "globex-marker"})

	seen := rec.until(t, "globex-marker")
	if len(seen) != 2 || !strings.Contains(seen[0], "global-lock") {
		t.Errorf("deliveries %v: want the lock of every tenant, then globex's decision", seen)
	}
	for _, b := range seen {
		if strings.Contains(b, "root-only-secret") || strings.Contains(b, "acme-secret") {
			t.Errorf("the globex webhook got another tenant's record: %s", b)
		}
	}
}

func TestWantsTenant(t *testing.T) {
	all := &Target{Events: events.Types}
	some := &Target{Events: events.Types, Tenant: []string{"globex"}}
	for _, c := range []struct {
		t      *Target
		typ    string
		tenant string
		want   bool
	}{
		{all, events.Decision, "*", true},
		{all, events.Decision, "acme", true},
		{some, events.Decision, "*", false},
		{some, events.ApprovalCreated, "*", false},
		{some, events.QuestionCreated, "*", false},
		{some, events.Decision, "acme", false},
		{some, events.Decision, "globex", true},
		{some, events.PolicyUpdated, "*", true},
		{some, events.LockUpdated, "*", true},
	} {
		e := &events.Event{Type: c.typ, Tenant: c.tenant, Data: json.RawMessage(`{}`)}
		if got := c.t.wants(e); got != c.want {
			t.Errorf("target tenants %v, %s of %q: %v, want %v", c.t.Tenant, c.typ, c.tenant, got, c.want)
		}
	}
}

// Agent-controlled values reach Slack as text: no links, no mentions, no
// escape from a code span (Slack API docs, Escaping text).
func TestSlackMessageEscapesAgentValues(t *testing.T) {
	hostile := map[string]any{
		"id":      "apr_1",
		"agent":   "bot <!channel> & <@U024BE7LH>",
		"tool":    "x` *approved by security* `y",
		"session": "<https://evil.example/login|Click to approve>",
		"reason":  "@here @Channel @everyone look at <!subteam^S123>",
		"text":    "a & b < c > d",
	}
	for _, typ := range events.Types {
		raw, _ := json.Marshal(hostile)
		msg := slackMessage(&events.Event{Type: typ, Data: raw}, "https://rein.example")
		section := msg["blocks"].([]any)[0].(map[string]any)["text"].(map[string]any)
		if section["verbatim"] != true {
			t.Errorf("%s: section text is not verbatim", typ)
		}
		for _, text := range []string{msg["text"].(string), section["text"].(string)} {
			// The only < and > left are those of rein's own link.
			rest := strings.Replace(text, "<https://rein.example/v1/", "", 1)
			if strings.ContainsAny(rest, "<>") {
				t.Errorf("%s: unescaped < or > from an agent value: %q", typ, text)
			}
			for _, m := range []string{"@here", "@Channel", "@everyone", "@channel"} {
				if strings.Contains(text, m) {
					t.Errorf("%s: a live %s mention: %q", typ, m, text)
				}
			}
			if strings.Contains(text, "& ") || strings.Contains(text, "&<") {
				t.Errorf("%s: unescaped &: %q", typ, text)
			}
			if strings.Count(text, "`")%2 != 0 || strings.Contains(text, "x` ") {
				t.Errorf("%s: the tool name ends its code span: %q", typ, text)
			}
		}
	}
	raw, _ := json.Marshal(hostile)
	msg := slackMessage(&events.Event{Type: events.ApprovalCreated, Data: raw}, "https://rein.example")
	want := "Approval needed: *bot &lt;!channel&gt; &amp; &lt;@U024BE7LH&gt;* wants to run `xˋ *approved by security* ˋy` (session &lt;https://evil.example/login|Click to approve&gt;) [risk: none derived from the arguments]: @\u2060here @\u2060Channel @\u2060everyone look at &lt;!subteam^S123&gt; https://rein.example/approvals/apr_1"
	if msg["text"] != want {
		t.Errorf("text\n got %q\nwant %q", msg["text"], want)
	}
}

// TestSlackMessageRiskTags: approval and review messages carry the risk
// tags, escaped like the rest of the text, or say that none were derived.
func TestSlackMessageRiskTags(t *testing.T) {
	cases := []struct {
		typ  string
		data map[string]any
		want []string
	}{
		{events.ApprovalCreated, map[string]any{"id": "apr_1", "agent": "bot", "tool": "Bash", "reason": "r", "risk": []string{"shell.pipe_to_shell", "<!channel> & @here"}},
			[]string{"[risk: shell.pipe_to_shell, &lt;!channel&gt; &amp; @\u2060here]", "https://rein.example/approvals/apr_1"}},
		{events.ApprovalUpdated, map[string]any{"id": "apr_1", "agent": "bot", "tool": "Bash", "status": "approved", "risk": []string{"destructive"}},
			[]string{"by *bot* [risk: destructive] is now *approved*"}},
		{events.ApprovalCreated, map[string]any{"id": "apr_2", "agent": "bot", "tool": "ls", "risk": []string{}},
			[]string{"[risk: none derived from the arguments]"}},
		{events.ReviewCreated, map[string]any{"id": "rev_1", "kind": "check", "agent": "bot", "tool": "Bash", "session": "s1", "risk": []string{"shell"}, "why": []string{"result failed", "<!here>"}},
			[]string{"Review after the fact: *bot* ran `Bash` (session s1) [risk: shell]: result failed; &lt;!here&gt;", "https://rein.example/reviews/rev_1"}},
		{events.ReviewUpdated, map[string]any{"id": "rev_2", "kind": "session", "agent": "bot", "session": "s2", "status": "concern", "decided_by": "sam", "message": "no"},
			[]string{"Review rev_2 (session s2 of *bot*) marked *concern* by sam: no"}},
	}
	for _, c := range cases {
		raw, _ := json.Marshal(c.data)
		msg := slackMessage(&events.Event{Type: c.typ, Data: raw}, "https://rein.example")
		for _, w := range c.want {
			if !strings.Contains(msg["text"].(string), w) {
				t.Errorf("%s: %q lacks %q", c.typ, msg["text"], w)
			}
		}
	}
}

// TestADeliveryErrorKeepsTheTargetURLSecret: a target's URL can itself be
// the secret (a Slack incoming webhook's path, a token in the query), so
// the error of a failed delivery, kept and listed by GET
// /v1/webhooks/deliveries and logged, names the target by scheme and host
// only.
func TestADeliveryErrorKeepsTheTargetURLSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	addr := srv.URL
	srv.Close() // refused from now on
	s := &Sender{Client: &http.Client{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	target := &Target{Name: "sl", URL: strings.Replace(addr, "http://", "http://u:HookPw-9f8e@", 1) + "/services/T0A/B0B/SlackHookSecret123?token=QueryTok-55aa", Timeout: 2 * time.Second}
	d := s.attempt(context.Background(), target, &events.Event{ID: 1, Type: "approval.created"}, "msg_1", 1, []byte("{}"))
	if d.Delivered || d.Error == "" {
		t.Fatalf("a delivery to a closed server: %+v", d)
	}
	for _, secret := range []string{"HookPw-9f8e", "SlackHookSecret123", "QueryTok-55aa"} {
		if strings.Contains(d.Error, secret) {
			t.Errorf("the delivery error holds %s: %s", secret, d.Error)
		}
	}
	if !strings.Contains(d.Error, strings.TrimPrefix(addr, "http://")) {
		t.Errorf("the delivery error does not name the host: %s", d.Error)
	}
}
