package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/internal/testenv"
)

// secretsPolicy: one rule per decision, so that every decision meets the
// same planted secrets.
const secretsPolicy = `version: 1
rules:
  - {id: read, when: 'tool == "http.get"', decision: allow, review: {reviewers: ["group:finance"]}}
  - {id: strip, when: 'tool == "http.post"', decision: modify, modify: {remove: ["headers.Authorization"]}}
  - {id: pay, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"]}}
  - {id: no-delete, when: 'tool == "http.delete"', decision: deny, reason: "no deletes"}
`

// plantedArgs are arguments with a unique secret in every position the
// risk analysis tags: a header, a named key, a nested password, a token in
// a list, a cloud secret key and a token inside a command line. It returns
// the arguments and the secrets.
func plantedArgs(t *testing.T, label string) (string, []string) {
	rnd := func(n int) string {
		b := make([]byte, n)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	alnum := func(n int) string {
		const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, n)
		rand.Read(b)
		for i := range b {
			b[i] = chars[int(b[i])%len(chars)]
		}
		return string(b)
	}
	secrets := []string{
		"Bearer zq" + rnd(16),               // headers.Authorization
		"k" + rnd(16),                       // api_key
		"Pw-" + alnum(18),                   // config.db.password
		"t" + rnd(16),                       // items.0.token
		alnum(40),                           // aws_secret_access_key
		"ghp_" + alnum(36),                  // inside command
		"sk-ant-api03-" + alnum(40) + "-xY", // a key in a note's text
	}
	args := map[string]any{
		"url":                   "https://api.example.com/" + label,
		"headers":               map[string]any{"Authorization": secrets[0], "Accept": "application/json"},
		"api_key":               secrets[1],
		"config":                map[string]any{"db": map[string]any{"password": secrets[2], "host": "db.internal"}},
		"items":                 []any{map[string]any{"token": secrets[3]}, "plain"},
		"aws_secret_access_key": secrets[4],
		"command":               "git push https://x:" + secrets[5] + "@github.com/acme/app.git main",
		"note":                  "use " + secrets[6] + " for the summary",
		"amount":                50,
	}
	b, _ := json.Marshal(args)
	return string(b), secrets
}

// leakFinder searches text for the planted secrets, in clear and in
// base64 at every alignment (standard and URL alphabets).
type leakFinder struct {
	needles map[string]string // what to search for -> what it is
}

func newLeakFinder(secrets []string) *leakFinder {
	f := &leakFinder{needles: map[string]string{}}
	for _, s := range secrets {
		f.needles[s] = s
		// A Bearer's token alone, too.
		if tok, ok := strings.CutPrefix(s, "Bearer "); ok {
			f.needles[tok] = s
		}
		for pad := 0; pad < 3; pad++ {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				e := enc.EncodeToString(append(bytes.Repeat([]byte{0}, pad), s...))
				// Drop the characters that depend on the bytes around it.
				e = strings.TrimRight(e, "=")
				start := (pad*8 + 5) / 6
				if len(e) > start+2 {
					f.needles[e[start:len(e)-2]] = s + " (base64)"
				}
			}
		}
	}
	return f
}

// find returns what of the secrets where holds, if any.
func (f *leakFinder) find(where string, text []byte) []string {
	var hits []string
	for n, what := range f.needles {
		if len(n) >= 12 && bytes.Contains(text, []byte(n)) {
			hits = append(hits, fmt.Sprintf("%s holds %q", where, what))
		}
	}
	return hits
}

// capture is a byte sink shared by goroutines.
type capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// TestSecretsNeverLeaveInClear plants unique secrets in every argument
// position for every decision (allow, modify, ask then approve, edit and
// reject, deny), with the event stream, a webhook, Slack and e-mail
// configured, on SQLite and on PostgreSQL. The agent gets exactly the
// arguments it must run, secrets included; every other place rein keeps or
// sends anything is searched for them, in clear and in base64: every API
// answer an approver, auditor or admin reads, the event stream, webhook
// bodies, Slack calls, e-mails, the audit export (entries, OTLP, OCSF), the
// server log, metrics and the raw database files.
func TestSecretsNeverLeaveInClear(t *testing.T) {
	mp := startMailpit(t)
	t.Run("sqlite", func(t *testing.T) { secretsNeverLeave(t, mp, "") })
	t.Run("postgres", func(t *testing.T) { secretsNeverLeave(t, mp, testenv.Postgres(t)) })
}

func secretsNeverLeave(t *testing.T, mp *mailpit, pg string) {
	api := &slackAPI{t: t}
	slackSrv := httptest.NewServer(api)
	defer slackSrv.Close()
	hook := newReceiver(t, 0, nil)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	harness.WriteFile(t, pol, secretsPolicy)
	addr := harness.FreeAddr(t)
	cfg := filepath.Join(dir, "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf(`base_url: http://%s
webhooks:
  - {name: all, url: %q, secret: "whsec_%s"}
slack:
  bot_token: %s
  signing_secret: %s
  channel: C0APPROVALS
  api_url: %s/api/
email:
  smtp: %s
  from: "rein <rein@example.com>"
  approvers:
    - {tenant: acme, key: carol, address: carol@example.com}
    - {tenant: acme, key: dave, address: dave@example.com}
`, addr, hook.srv.URL, base64.StdEncoding.EncodeToString([]byte("a-webhook-secret-of-32-bytes!!!!")), slackBotToken, slackSecret, slackSrv.URL, mp.smtp))
	data := filepath.Join(dir, "data")
	args := []string{"--policy", pol, "--config", cfg, "--listen", addr}
	var env []string
	admin := ""
	if pg != "" {
		c := harness.NewPGClusterAt(t, pg, secretsPolicy)
		env, admin = c.Env, c.Admin
		args = append(args, "--db", pg)
	}
	s := harness.StartServer(t, data, env, args...)
	if admin == "" {
		admin = s.AdminKey()
	}
	key := func(name, roles, groups string) string {
		code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", admin, []byte(fmt.Sprintf(
			`{"name":%q,"tenant":"acme","roles":[%s],"groups":[%s]}`, name, roles, groups)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", name, code, body)
		}
		var k struct{ Key string }
		json.Unmarshal(body, &k)
		return k.Key
	}
	agent, carol, dave := key("builder", `"agent"`, ``), key("carol", `"approver"`, `"finance"`), key("dave", `"approver"`, `"finance"`)
	auditor := key("auditor", `"auditor"`, ``)

	// The event stream, read raw from before the first check.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stream capture
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+carol)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("subscribe: %v", err)
	}
	go func() { io.Copy(&stream, res.Body); res.Body.Close() }()

	var all []string
	var checkIDs, approvalIDs []string
	ask := func(tool, label string) (map[string]any, []string) {
		t.Helper()
		a, secrets := plantedArgs(t, label)
		all = append(all, secrets...)
		var ans map[string]any
		if code := harness.PostJSON(t, s.URL+"/v1/check", agent, fmt.Sprintf(`{"tool":%q,"session":"sx","args":%s}`, tool, a), &ans); code != 200 {
			t.Fatalf("check %s: %d %v", tool, code, ans)
		}
		checkIDs = append(checkIDs, ans["id"].(string))
		if ap, ok := ans["approval"].(map[string]any); ok {
			approvalIDs = append(approvalIDs, ap["id"].(string))
		}
		return ans, secrets
	}
	// runs says that the agent was answered with exactly the secrets it
	// must run with.
	runs := func(what string, got any, secrets []string, without ...string) {
		t.Helper()
		b, _ := json.Marshal(got)
		for _, sec := range secrets {
			if !bytes.Contains(b, []byte(sec)) && !slicesContains(without, sec) {
				t.Errorf("%s: the agent was not given %q to run: %s", what, sec, b)
			}
		}
		for _, sec := range without {
			if bytes.Contains(b, []byte(sec)) {
				t.Errorf("%s: the agent was given %q, which policy removed", what, sec)
			}
		}
	}

	ans, sec := ask("http.get", "allow")
	if ans["decision"] != "allow" {
		t.Fatalf("allow: %v", ans)
	}
	runs("allow", ans["args"], sec)
	ans, sec = ask("http.post", "modify")
	if ans["decision"] != "modify" {
		t.Fatalf("modify: %v", ans)
	}
	runs("modify", ans["args"], sec, sec[0])
	ans, _ = ask("http.delete", "deny")
	if ans["decision"] != "deny" {
		t.Fatalf("deny: %v", ans)
	}

	vote := func(who, id, body string) map[string]any {
		t.Helper()
		var a map[string]any
		if code := harness.PostJSON(t, s.URL+"/v1/approvals/"+id+"/votes", who, body, &a); code != 200 {
			t.Fatalf("vote %s on %s: %d %v", body, id, code, a)
		}
		return a
	}
	wait := func(id string) map[string]any {
		t.Helper()
		var w map[string]any
		harness.GetJSON(t, s.URL+"/v1/approvals/"+id+"/wait?timeout_ms=5000", agent, &w)
		return w
	}

	// ask, then approve.
	ans, sec = ask("pay", "approve")
	id := ans["approval"].(map[string]any)["id"].(string)
	vote(carol, id, `{"vote":"approve","revision":1}`)
	w := wait(id)
	if w["decision"] != "allow" {
		t.Fatalf("the approved wait: %v", w)
	}
	runs("approved", w["args"], sec)

	// ask, then an edit that changes the amount and keeps every redaction.
	ans, sec = ask("pay", "edit")
	id = ans["approval"].(map[string]any)["id"].(string)
	var shown map[string]any
	harness.GetJSON(t, s.URL+"/v1/approvals/"+id, carol, &shown)
	edited := shown["args"].(map[string]any)
	edited["amount"] = 40
	eb, _ := json.Marshal(edited)
	vote(dave, id, fmt.Sprintf(`{"vote":"edit","revision":1,"args":%s}`, eb)) // an edit is an approval: quorum 1
	w = wait(id)
	if w["decision"] != "allow" || w["args"].(map[string]any)["amount"] != float64(40) {
		t.Fatalf("the edited wait: %v", w)
	}
	runs("edited", w["args"], sec)

	// ask, then reject.
	ans, _ = ask("pay", "reject")
	vote(carol, ans["approval"].(map[string]any)["id"].(string), `{"vote":"reject","message":"no"}`)

	// Results the agent reports name the arguments by their hash: they
	// match what it ran.
	f := newLeakFinder(all)
	var leaks []string
	look := func(where string, b []byte) { leaks = append(leaks, f.find(where, b)...) }

	// Every API answer a person or an auditor reads.
	for _, k := range []struct{ who, key string }{{"approver", carol}, {"auditor", auditor}, {"admin", admin}} {
		for _, path := range []string{"/v1/checks", "/v1/approvals", "/v1/approvals?status=consumed", "/v1/approvals?status=rejected",
			"/v1/sessions/sx", "/v1/sessions/sx/checks", "/v1/reviews", "/v1/audit/entries", "/v1/audit/checkpoint"} {
			_, b := harness.HTTPDo(t, "GET", s.URL+path, k.key, nil, "")
			look(k.who+" GET "+path, b)
		}
		for _, id := range checkIDs {
			_, b := harness.HTTPDo(t, "GET", s.URL+"/v1/checks/"+id, k.key, nil, "")
			look(k.who+" GET /v1/checks/"+id, b)
		}
		for _, id := range approvalIDs {
			_, b := harness.HTTPDo(t, "GET", s.URL+"/v1/approvals/"+id, k.key, nil, "")
			look(k.who+" GET /v1/approvals/"+id, b)
		}
	}
	// The agent's own reads of what rein keeps.
	for _, id := range checkIDs {
		_, b := harness.HTTPDo(t, "GET", s.URL+"/v1/checks/"+id, agent, nil, "")
		look("agent GET /v1/checks/"+id, b)
	}
	_, b := harness.HTTPDo(t, "GET", s.URL+"/metrics", "", nil, "")
	look("GET /metrics", b)

	// The export, in every format.
	harness.SealedCheckpoint(t, s, admin, int64(len(harness.AllEntries(t, s, admin))))
	bundle := filepath.Join(t.TempDir(), "bundle")
	if r := harness.Rein(t, s.ClientEnv(admin), "audit", "export", "--out", bundle, "--format", "native,otlp,ocsf"); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	filepath.WalkDir(bundle, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			look("export "+filepath.Base(p), b)
		}
		return nil
	})

	// Webhooks, Slack, e-mail: wait for what each was sent.
	harness.Eventually(t, 15*time.Second, "the webhook gets the approvals and the review", func() string {
		n := 0
		for _, r := range hook.bodies() {
			if bytes.Contains(r.body, []byte(`"approval.created"`)) || bytes.Contains(r.body, []byte(`"review.created"`)) {
				n++
			}
		}
		if n < 4 {
			return fmt.Sprintf("%d of 4", n)
		}
		return ""
	})
	for _, r := range hook.bodies() {
		look("webhook body", r.body)
	}
	harness.Eventually(t, 15*time.Second, "Slack gets the approvals", func() string {
		if n := len(api.of("chat.postMessage")); n < 3 {
			return fmt.Sprintf("%d messages", n)
		}
		return ""
	})
	api.mu.Lock()
	for _, c := range api.calls {
		b, _ := json.Marshal(map[string]any{"form": c.form, "json": c.json})
		look("Slack "+c.method, b)
	}
	api.mu.Unlock()
	harness.Eventually(t, 15*time.Second, "e-mails arrive", func() string {
		if n := len(mp.messages("carol@example.com")); n < 3 {
			return fmt.Sprintf("%d e-mails", n)
		}
		return ""
	})
	for _, to := range []string{"carol@example.com", "dave@example.com"} {
		for _, m := range mp.messages(to) {
			res, err := http.Get("http://" + mp.api + "/api/v1/message/" + m.ID + "/raw")
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			look("e-mail to "+to, raw)
		}
	}

	cancel()
	time.Sleep(200 * time.Millisecond)
	if ev := stream.Bytes(); !bytes.Contains(ev, []byte("approval.created")) {
		t.Errorf("the event stream carried no approval: %.300s", ev)
	} else {
		look("event stream", ev)
	}

	// The server log, and the database files.
	s.Stop()
	look("server stdout", []byte(s.Stdout.String()))
	look("server stderr", []byte(s.Stderr.String()))
	if pg == "" {
		filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				look("data file "+filepath.Base(p), b)
			}
			return nil
		})
	} else {
		pgFiles(t, look)
	}
	if len(leaks) > 0 {
		t.Fatalf("secrets in clear:\n%s", strings.Join(leaks, "\n"))
	}
}

// pgFiles passes every file of the local PostgreSQL server's data directory
// (tables, WAL) to look, after a checkpoint has written out what it holds.
func pgFiles(t *testing.T, look func(string, []byte)) {
	t.Helper()
	psql := func(q string) string {
		out, err := exec.Command("psql", testenv.PostgresURL(), "-qtAc", q).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %s: %v %s", q, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	psql("CHECKPOINT")
	dir := psql("SHOW data_directory")
	n := 0
	for _, sub := range []string{"base", "pg_wal", "global"} {
		filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, err := os.ReadFile(p); err == nil {
					n++
					look("PostgreSQL file "+strings.TrimPrefix(p, dir), b)
				}
			}
			return nil
		})
	}
	if n == 0 {
		t.Fatalf("no PostgreSQL data file could be read in %s (the test reads them as the user that runs it)", dir)
	}
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
