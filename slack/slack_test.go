package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/sqlite"
)

const (
	botToken = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
	secret   = "8f742231b10e8888abcd99yyyzzz85a5"
)

const testPolicy = `version: 1
rules:
  - {id: deploys, when: 'tool == "deploy"', decision: ask, approval: {approvers: ["group:oncall"], quorum: 2, ttl: 1h}}
`

// call is one Web API call rein made.
type call struct {
	Method string
	Form   url.Values     // form-encoded calls
	JSON   map[string]any // JSON calls
}

// webAPI plays Slack's Web API on loopback. Every call is checked against
// the request shape Slack documents for the method (docs.slack.dev,
// reference/methods/chat.postMessage, chat.update, chat.postEphemeral,
// views.open, and the Block Kit reference for blocks and elements); a
// call that Slack would refuse fails the test.
type webAPI struct {
	t     *testing.T
	mu    sync.Mutex
	calls []call
	n     int
}

func (f *webAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	body, _ := io.ReadAll(r.Body)
	c := call{Method: method}
	fail := func(format string, args ...any) {
		t.Errorf("%s: "+format, append([]any{method}, args...)...)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":false,"error":"invalid_arguments"}`)
	}
	if r.Method != http.MethodPost {
		fail("method %s; the Web API takes POST", r.Method)
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/x-www-form-urlencoded":
		c.Form, _ = url.ParseQuery(string(body))
	case "application/json":
		if err := json.Unmarshal(body, &c.JSON); err != nil {
			fail("body is not JSON: %v", err)
			return
		}
	default:
		fail("content type %q", ct)
		return
	}
	if auth := r.Header.Get("Authorization"); auth != "Bearer "+botToken && (c.Form == nil || c.Form.Get("token") != botToken) {
		fail("no bot token (Authorization %q)", auth)
		return
	}
	get := func(k string) string {
		if c.Form != nil {
			return c.Form.Get(k)
		}
		s, _ := c.JSON[k].(string)
		return s
	}
	f.mu.Lock()
	f.n++
	ts := fmt.Sprintf("1700000000.%06d", f.n)
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	answer := map[string]any{"ok": true}
	switch method {
	case "chat.postMessage", "chat.update":
		if get("channel") == "" || (method == "chat.update" && get("ts") == "") {
			fail("channel and (for chat.update) ts are required")
			return
		}
		if get("text") == "" {
			fail("text is missing: Slack wants it as the notification fallback of blocks")
			return
		}
		if b := get("blocks"); b != "" {
			var blocks []map[string]any
			if err := json.Unmarshal([]byte(b), &blocks); err != nil {
				fail("blocks are not a JSON array: %v", err)
				return
			}
			if err := checkBlocks(blocks, 50); err != nil {
				fail("%v", err)
				return
			}
		}
		answer["channel"], answer["ts"] = get("channel"), ts
		if method == "chat.update" {
			answer["ts"] = get("ts")
		}
	case "chat.postEphemeral":
		if get("channel") == "" || get("user") == "" || get("text") == "" {
			fail("channel, user and text are required")
			return
		}
		answer["message_ts"] = ts
	case "views.open":
		if c.JSON == nil || get("trigger_id") == "" {
			fail("views.open takes JSON with trigger_id")
			return
		}
		view, _ := c.JSON["view"].(map[string]any)
		if err := checkModal(view); err != nil {
			fail("%v", err)
			return
		}
		answer["view"] = map[string]any{"id": "VMHU10V25", "type": "modal"}
	default:
		fail("a method rein should not call")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(answer)
}

func plainText(v any, max int) error {
	o, _ := v.(map[string]any)
	s, _ := o["text"].(string)
	if o["type"] != "plain_text" || s == "" || len([]rune(s)) > max {
		return fmt.Errorf("want plain_text of 1-%d characters, got %v", max, v)
	}
	return nil
}

// checkBlocks applies the Block Kit limits rein's messages and modals meet.
func checkBlocks(blocks []map[string]any, max int) error {
	if len(blocks) == 0 || len(blocks) > max {
		return fmt.Errorf("%d blocks; 1-%d allowed", len(blocks), max)
	}
	ids := map[string]bool{}
	for _, b := range blocks {
		id, _ := b["block_id"].(string)
		if id != "" && (ids[id] || len(id) > 255) {
			return fmt.Errorf("block_id %q repeated or too long", id)
		}
		ids[id] = true
		switch b["type"] {
		case "section":
			txt, _ := b["text"].(map[string]any)
			s, _ := txt["text"].(string)
			if s == "" || len([]rune(s)) > 3000 || (txt["type"] != "mrkdwn" && txt["type"] != "plain_text") {
				return fmt.Errorf("section text: %v", txt)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > 10 {
				return fmt.Errorf("context has %d elements; 1-10 allowed", len(els))
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > 25 {
				return fmt.Errorf("actions has %d elements; 1-25 allowed", len(els))
			}
			seen := map[string]bool{}
			for _, e := range els {
				el := e.(map[string]any)
				aid, _ := el["action_id"].(string)
				val, _ := el["value"].(string)
				style, _ := el["style"].(string)
				if el["type"] != "button" || aid == "" || len(aid) > 255 || seen[aid] || len(val) > 2000 ||
					(style != "" && style != "primary" && style != "danger") {
					return fmt.Errorf("button %v", el)
				}
				seen[aid] = true
				if err := plainText(el["text"], 75); err != nil {
					return fmt.Errorf("button text: %v", err)
				}
			}
		case "input":
			if err := plainText(b["label"], 2000); err != nil {
				return fmt.Errorf("input label: %v", err)
			}
			el, _ := b["element"].(map[string]any)
			if el["type"] != "plain_text_input" || el["action_id"] == "" || len(fmt.Sprint(el["initial_value"])) > 3000 {
				return fmt.Errorf("input element %v", el)
			}
		default:
			return fmt.Errorf("block type %v is not one rein uses", b["type"])
		}
	}
	return nil
}

func checkModal(v map[string]any) error {
	if v["type"] != "modal" {
		return fmt.Errorf("view type %v", v["type"])
	}
	if err := plainText(v["title"], 24); err != nil {
		return fmt.Errorf("title: %v", err)
	}
	for _, k := range []string{"submit", "close"} {
		if v[k] != nil {
			if err := plainText(v[k], 24); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
	}
	raw, _ := json.Marshal(v["blocks"])
	var blocks []map[string]any
	json.Unmarshal(raw, &blocks)
	if err := checkBlocks(blocks, 100); err != nil {
		return err
	}
	for _, b := range blocks {
		if b["type"] == "input" && v["submit"] == nil {
			return fmt.Errorf("a modal with an input block needs submit")
		}
	}
	if pm, _ := v["private_metadata"].(string); len(pm) > 3000 {
		return fmt.Errorf("private_metadata longer than 3000")
	}
	return nil
}

func (f *webAPI) of(method string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

type fixture struct {
	app   *App
	api   *webAPI
	srv   *httptest.Server // rein's interactivity endpoint
	store *sqlite.DB
	pipe  *pipeline.Pipeline
	agent *rein.Key
	keys  []*rein.Key
}

func setup(t *testing.T) *fixture {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pol, err := policy.Compile([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	active := &policy.Active{}
	active.Set("", pol)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus := &events.Bus{}
	pipe := &pipeline.Pipeline{Store: store, Policies: active, Log: log, Events: bus}
	keys := []*rein.Key{
		{ID: "key_agent", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}},
		{ID: "key_alice", Name: "alice", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}},
		{ID: "key_carol", Name: "carol", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}},
		{ID: "key_bob", Name: "bob", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_selfish", Name: "selfish", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent, rein.RoleApprover}, Groups: []string{"oncall"}},
	}
	for _, k := range keys {
		k.CreatedAt = time.Now()
		_, k.SecretHash = rein.NewSecret()
		if err := store.CreateKey(ctx, k, &rein.Entry{TS: time.Now(), Tenant: k.Tenant, Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID}); err != nil {
			t.Fatal(err)
		}
	}
	api := &webAPI{t: t}
	slackSrv := httptest.NewServer(api)
	t.Cleanup(slackSrv.Close)
	cfg := Config{BotToken: botToken, SigningSecret: secret, Channel: "C0123APPROVE", APIURL: slackSrv.URL + "/api/",
		Users: map[string]notify.Identity{
			"UALICE": {Tenant: "acme", Key: "alice"}, "UCAROL": {Tenant: "acme", Key: "carol"},
			"UBOB": {Tenant: "acme", Key: "bob"}, "UAGENT": {Tenant: "acme", Key: "builder"},
			"USELFISH": {Tenant: "acme", Key: "selfish"}, "UOTHER": {Tenant: "globex", Key: "olga"},
		}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	app := &App{Config: cfg, Pipeline: pipe, Store: store, BaseURL: "https://rein.example", Log: log}
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	ctx2, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	(&notify.Dispatcher{Bus: bus, Store: store, Slack: app, SlackDefault: []string{cfg.Channel}, Log: log}).Run(ctx2)
	return &fixture{app: app, api: api, srv: srv, store: store, pipe: pipe, agent: keys[0], keys: keys}
}

// sign is Slack's v0 signature: hex HMAC-SHA256 of "v0:<ts>:<body>" with
// the signing secret ("Verifying requests from Slack").
func sign(secret string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%d:%s", ts, body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

func payload(t *testing.T, file string, fill map[string]string) string {
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range fill {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return url.Values{"payload": {s}}.Encode()
}

// post sends a payload as Slack does: form-encoded, signed at ts.
func (f *fixture) post(t *testing.T, body string, ts int64, sig string) (int, string) {
	req, _ := http.NewRequest("POST", f.srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (f *fixture) press(t *testing.T, user, action, id string) (int, string) {
	msgs := f.api.of("chat.postMessage")
	if len(msgs) == 0 {
		t.Fatal("no message was posted")
	}
	body := payload(t, "block_actions.json", map[string]string{"USER": user, "ACTION": action, "APPROVAL": id,
		"CHANNEL": msgs[0].Form.Get("channel"), "TS": "1700000000.000001"})
	now := time.Now().Unix()
	return f.post(t, body, now, sign(secret, now, body))
}

func (f *fixture) ask(t *testing.T, args string) *rein.CheckRecord {
	rec, err := f.pipe.Check(context.Background(), f.agent, &rein.CheckRequest{Tool: "deploy", Args: json.RawMessage(args), Session: "s1"})
	if err != nil || rec.Decision != rein.Ask {
		t.Fatalf("check: %v %+v", err, rec)
	}
	waitFor(t, "the approval message", func() bool { return len(f.api.of("chat.postMessage")) > 0 })
	return rec
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// refusals returns the reasons of the approval.vote_refused entries.
func (f *fixture) refusals(t *testing.T) []string {
	es, err := f.store.Entries(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Kind != notify.KindVoteRefused {
			continue
		}
		var m struct {
			Actor string
			Data  struct{ Channel, Reason string }
		}
		json.Unmarshal(e.Bytes, &m)
		out = append(out, m.Actor+": "+m.Data.Reason)
	}
	return out
}

func TestSlackApproveWithButtons(t *testing.T) {
	f := setup(t)
	rec := f.ask(t, `{"service":"api","env":"prod"}`)
	id := rec.Approval.ID
	post := f.api.of("chat.postMessage")[0]
	if post.Form.Get("channel") != "C0123APPROVE" || !strings.Contains(post.Form.Get("blocks"), `"action_id":"rein_approve"`) ||
		!strings.Contains(post.Form.Get("blocks"), `"value":"`+id+`"`) || !strings.Contains(post.Form.Get("blocks"), "https://rein.example/approvals/"+id) ||
		!strings.Contains(post.Form.Get("blocks"), "0 of 2 approvals") {
		t.Fatalf("approval message: %v", post.Form)
	}
	if code, _ := f.press(t, "UALICE", actionApprove, id); code != 200 {
		t.Fatalf("alice's press: %d", code)
	}
	waitFor(t, "the message to show 1 of 2", func() bool {
		u := f.api.of("chat.update")
		return len(u) > 0 && strings.Contains(u[len(u)-1].Form.Get("blocks"), "1 of 2 approvals") && strings.Contains(u[len(u)-1].Form.Get("blocks"), "alice: approve")
	})
	if code, _ := f.press(t, "UCAROL", actionApprove, id); code != 200 {
		t.Fatalf("carol's press: %d", code)
	}
	a, err := f.store.Approval(context.Background(), id)
	if err != nil || a.Status != rein.StatusApproved || len(a.Votes) != 2 || a.Votes[0].By != "alice" || a.Votes[1].ByKey != "key_carol" {
		t.Fatalf("approval %+v %v", a, err)
	}
	waitFor(t, "the message to show the outcome without buttons", func() bool {
		u := f.api.of("chat.update")
		last := u[len(u)-1].Form
		return strings.Contains(last.Get("text"), "approved") && !strings.Contains(last.Get("blocks"), "rein_approve") &&
			last.Get("ts") == "1700000000.000001"
	})
	// The waiting agent's next check of the same action is allowed by the grant.
	again, err := f.pipe.Check(context.Background(), f.agent, &rein.CheckRequest{Tool: "deploy", Args: json.RawMessage(`{"service":"api","env":"prod"}`), Session: "s1"})
	if err != nil || again.Decision != rein.Allow {
		t.Errorf("after approval: %v %+v", err, again)
	}
	if r := f.refusals(t); len(r) != 0 {
		t.Errorf("refusals recorded for valid votes: %v", r)
	}
}

func TestSlackRefusals(t *testing.T) {
	f := setup(t)
	rec := f.ask(t, `{"service":"api"}`)
	id := rec.Approval.ID
	body := payload(t, "block_actions.json", map[string]string{"USER": "UALICE", "ACTION": actionApprove, "APPROVAL": id, "CHANNEL": "C0123APPROVE", "TS": "1700000000.000001"})
	now := time.Now().Unix()
	cases := []struct {
		name   string
		ts     int64
		sig    string
		reason string
	}{
		{"forged signature", now, sign("not-the-signing-secret", now, body), "does not match"},
		{"no signature", now, "", "no valid Slack signature"},
		{"stale timestamp", now - 6*60, sign(secret, now-6*60, body), "more than five minutes"},
		{"future timestamp", now + 6*60, sign(secret, now+6*60, body), "more than five minutes"},
	}
	for _, c := range cases {
		if code, _ := f.post(t, body, c.ts, c.sig); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", c.name, code)
		}
	}
	// A valid request counts once; the same bytes again are a replay.
	ts := time.Now().Unix()
	sig := sign(secret, ts, body)
	if code, _ := f.post(t, body, ts, sig); code != 200 {
		t.Fatalf("the genuine press: %d", code)
	}
	if code, _ := f.post(t, body, ts, sig); code != http.StatusUnauthorized {
		t.Errorf("replay: status %d, want 401", code)
	}
	// bob is an approver, but not of group oncall; UNOBODY is not mapped;
	// the agent's own identity cannot approve its request.
	f.press(t, "UBOB", actionApprove, id)
	f.press(t, "UNOBODY", actionApprove, id)
	f.press(t, "UAGENT", actionApprove, id)
	a, _ := f.store.Approval(context.Background(), id)
	if len(a.Votes) != 1 || a.Votes[0].By != "alice" || a.Status != rein.StatusPending {
		t.Errorf("votes %+v status %s: only alice's should count", a.Votes, a.Status)
	}
	got := strings.Join(f.refusals(t), "\n")
	for _, want := range []string{"unknown: the Slack signature does not match", "unknown: the request carries no valid Slack signature",
		"unknown: the request's timestamp is more than five minutes", "unknown: this request was received before (replayed)",
		"bob: forbidden: the voter matches none", "slack:UNOBODY: the Slack user is not mapped", "builder: "} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %q; refusals:\n%s", want, got)
		}
	}
	if e := f.api.of("chat.postEphemeral"); len(e) != 3 || e[0].Form.Get("user") != "UBOB" {
		t.Errorf("ephemeral answers to the refused users: %v", e)
	}
}

func TestSlackEditModal(t *testing.T) {
	f := setup(t)
	rec := f.ask(t, `{"service":"api","env":"prod"}`)
	id := rec.Approval.ID
	if code, _ := f.press(t, "UALICE", actionEdit, id); code != 200 {
		t.Fatalf("edit press: %d", code)
	}
	opens := f.api.of("views.open")
	if len(opens) != 1 {
		t.Fatalf("views.open calls: %d", len(opens))
	}
	view := opens[0].JSON["view"].(map[string]any)
	meta := view["private_metadata"].(string)
	raw, _ := json.Marshal(view["blocks"])
	if !strings.Contains(string(raw), `\"env\": \"prod\"`) || !strings.Contains(meta, id) {
		t.Fatalf("modal: %s meta %s", raw, meta)
	}
	submit := func(user, value string) (int, string) {
		mj, _ := json.Marshal(meta)
		vj, _ := json.Marshal(value)
		body := payload(t, "view_submission.json", map[string]string{"USER": user, "META": string(mj), "VALUE": string(vj)})
		now := time.Now().Unix()
		return f.post(t, body, now, sign(secret, now, body))
	}
	if code, out := submit("UALICE", "not json"); code != 200 || !strings.Contains(out, `"response_action":"errors"`) {
		t.Errorf("bad JSON: %d %s", code, out)
	}
	if code, out := submit("UALICE", `{"service":"api","env":"staging"}`); code != 200 || out != "" {
		t.Fatalf("edit: %d %s", code, out)
	}
	a, _ := f.store.Approval(context.Background(), id)
	if len(a.Votes) != 1 || a.Votes[0].Vote != "edit" || !strings.Contains(string(a.ApprovedArgs)+string(a.Votes[0].Args), "staging") {
		t.Errorf("edit vote: %+v", a.Votes)
	}
	// bob's form shows revision 1, which alice's edit replaced; he is no
	// approver either: refused either way.
	if code, out := submit("UBOB", `{"service":"api"}`); code != 200 || !strings.Contains(out, `"response_action":"errors"`) {
		t.Errorf("bob's edit: %d %s", code, out)
	}
	if a, _ := f.store.Approval(context.Background(), id); len(a.Votes) != 1 {
		t.Errorf("bob's edit was recorded: %+v", a.Votes)
	}
}

// Separation of duties holds in Slack: a person whose key asked (an agent
// key that is also an on-call approver) cannot approve their own request,
// and a user mapped to another tenant cannot see it.
func TestSlackSeparationOfDuties(t *testing.T) {
	f := setup(t)
	f.agent = f.keys[4] // selfish: agent and on-call approver
	rec := f.ask(t, `{"service":"api"}`)
	id := rec.Approval.ID
	f.press(t, "USELFISH", actionApprove, id)
	f.press(t, "UOTHER", actionApprove, id)
	a, _ := f.store.Approval(context.Background(), id)
	if len(a.Votes) != 0 {
		t.Fatalf("votes %+v: the asker's own vote counted", a.Votes)
	}
	got := strings.Join(f.refusals(t), "\n")
	for _, want := range []string{"selfish: forbidden: the key that asked cannot vote on its own request", "slack:UOTHER: identity globex/olga: no active key"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %q:\n%s", want, got)
		}
	}
}

// Slack's worked example ("Verifying requests from Slack", docs.slack.dev
// and api.slack.com/authentication/verifying-requests-from-slack): signing
// secret, timestamp, a slash command's body and the signature Slack sent.
const (
	docSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	docTS     = 1531420618
	docBody   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	docSig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

func TestSlackDocumentedSignature(t *testing.T) {
	// The tests' signer computes Slack's documented signature, so the
	// requests they sign are signed as Slack signs.
	if got := sign(docSecret, docTS, docBody); got != docSig {
		t.Fatalf("sign = %s, want Slack's %s", got, docSig)
	}
	f := setup(t) // its signing secret is the documented one
	// The documented request itself is from 2018: refused as stale.
	if code, _ := f.post(t, docBody, docTS, docSig); code != http.StatusUnauthorized {
		t.Errorf("the documented request: %d, want 401 (stale)", code)
	}
	// The same body signed now passes verification; it is a slash command,
	// not an interaction, so rein answers 400 without acting.
	now := time.Now().Unix()
	if code, body := f.post(t, docBody, now, sign(docSecret, now, docBody)); code != http.StatusBadRequest || !strings.Contains(body, "payload") {
		t.Errorf("the documented body signed now: %d %s", code, body)
	}
	// One changed byte in the body breaks the signature.
	tampered := strings.Replace(docBody, "roadrunner", "roadrunnes", 1)
	if code, _ := f.post(t, tampered, now, sign(docSecret, now, docBody)); code != http.StatusUnauthorized {
		t.Errorf("a tampered body: %d, want 401", code)
	}
}

// Reminders go in the thread of the approval's message; a digest lists
// what is pending with console links. Both pass the Web API's checks.
func TestSlackReminderAndDigest(t *testing.T) {
	f := setup(t)
	rec := f.ask(t, `{"service":"api"}`)
	a, _ := f.store.Approval(context.Background(), rec.Approval.ID)
	if err := f.app.Remind(context.Background(), a, []string{"C0123APPROVE"}); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Digest(context.Background(), []*rein.Approval{a}, []string{"C0DIGEST"}); err != nil {
		t.Fatal(err)
	}
	posts := f.api.of("chat.postMessage")
	if len(posts) != 3 {
		t.Fatalf("%d posts, want the approval, the reminder and the digest", len(posts))
	}
	first := posts[0].Form
	remind := posts[1].Form
	if remind.Get("thread_ts") == "" || remind.Get("channel") != first.Get("channel") || !strings.Contains(remind.Get("text"), "Reminder: approval "+a.ID) {
		t.Errorf("reminder: %v", remind)
	}
	digest := posts[2].Form
	if digest.Get("channel") != "C0DIGEST" || !strings.Contains(digest.Get("text"), "Pending approvals: 1") ||
		!strings.Contains(digest.Get("text"), "https://rein.example/approvals/"+a.ID) {
		t.Errorf("digest: %v", digest)
	}
}

// Anyone can send forged requests; their refusals are audited up to a
// rate, so that a flood cannot fill the audit log.
func TestSlackForgedFloodIsBounded(t *testing.T) {
	f := setup(t)
	now := time.Now().Unix()
	for i := 0; i < 75; i++ {
		body := fmt.Sprintf("payload=%d", i)
		if code, _ := f.post(t, body, now, sign("forged", now, body)); code != http.StatusUnauthorized {
			t.Fatalf("forged request %d: %d", i, code)
		}
	}
	if n := len(f.refusals(t)); n != 60 {
		t.Errorf("%d refusal entries for 75 forged requests, want 60 (the rest counted in the next)", n)
	}
}
