package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
)

// pgCluster is a set of `rein serve` replicas sharing one PostgreSQL
// schema, one audit signing key and one admin key.
type pgCluster struct {
	t        testing.TB
	db       string // the --db URL
	policy   string
	env      []string // REIN_AUDIT_KEY and REIN_ADMIN_KEY
	admin    string
	verifier string
}

func newPGCluster(t testing.TB, policy string) *pgCluster {
	t.Helper()
	return newPGClusterAt(t, testenv.Postgres(t), policy)
}

func newPGClusterAt(t testing.TB, db, policy string) *pgCluster {
	t.Helper()
	c := &pgCluster{t: t, db: db, policy: filepath.Join(t.TempDir(), "policy.yaml"), admin: "admin-" + strings.Repeat("k", 24)}
	writeFile(t, c.policy, policy)
	r := rein(t, nil, "audit", "keygen")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "PRIVATE+KEY+rein+") {
		t.Fatalf("rein audit keygen: %s", r)
	}
	c.verifier = strings.TrimSpace(r.stderr)
	c.env = []string{"REIN_AUDIT_KEY=" + strings.TrimSpace(r.stdout), "REIN_ADMIN_KEY=" + c.admin}
	return c
}

// start runs one more replica.
func (c *pgCluster) start() *server {
	c.t.Helper()
	return startServer(c.t, c.t.TempDir(), c.env, "--db", c.db, "--policy", c.policy)
}

// key creates a key as admin on s and returns its secret.
func (c *pgCluster) key(s *server, name, tenant, roles, groups string) string {
	c.t.Helper()
	code, body := httpDo(c.t, "POST", s.URL+"/v1/keys", c.admin, []byte(fmt.Sprintf(
		`{"name":%q,"tenant":%q,"roles":[%s],"groups":[%s]}`, name, tenant, roles, groups)), "application/json")
	if code != 201 {
		c.t.Fatalf("create key %s: %d %s", name, code, body)
	}
	var created struct{ Key string }
	json.Unmarshal(body, &created)
	return created.Key
}

// verify exports the audit log through s and verifies it offline.
func (c *pgCluster) verify(s *server) string {
	c.t.Helper()
	sealedCheckpoint(c.t, s, c.admin, int64(len(allEntries(c.t, s, c.admin))))
	bundle := c.t.TempDir()
	if r := rein(c.t, s.clientEnv(c.admin), "audit", "export", "--out", bundle); r.code != 0 {
		c.t.Fatalf("rein audit export: %s", r)
	}
	r := rein(c.t, nil, "audit", "verify", bundle, "--key", c.verifier)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "OK") {
		c.t.Fatalf("rein audit verify: %s", r)
	}
	return r.stdout
}

func postJSON(t testing.TB, url, key, body string, v any) int {
	t.Helper()
	code, b := httpDo(t, "POST", url, key, []byte(body), "application/json")
	if v != nil {
		json.Unmarshal(b, v)
	}
	return code
}

// TestPostgresSmoke: rein serve --db postgres://… refuses to start without
// a shared signing key, then runs the approval tour, keeps everything over
// a restart, and its audit log verifies offline.
func TestPostgresSmoke(t *testing.T) {
	c := newPGCluster(t, approvalsPolicy)
	r := rein(t, []string{"REIN_ADMIN_KEY=" + c.admin}, "serve", "--db", c.db, "--data", t.TempDir(), "--listen", "127.0.0.1:0")
	if r.code == 0 || !strings.Contains(r.stderr, "rein audit keygen") {
		t.Fatalf("serve on PostgreSQL without a shared signing key: %s", r)
	}
	s := c.start()
	builder := c.key(s, "builder", "acme", `"agent"`, ``)
	alice := c.key(s, "alice", "acme", `"approver"`, `"oncall"`)

	var ask answer
	if code := postJSON(t, s.URL+"/v1/check", builder, `{"tool":"deploy","session":"s1","args":{"svc":"api"}}`, &ask); code != 200 || ask.Decision != "ask" {
		t.Fatalf("deploy: %d %+v", code, ask)
	}
	if code := postJSON(t, s.URL+"/v1/approvals/"+ask.Approval.ID+"/votes", alice, `{"vote":"approve"}`, nil); code != 200 {
		t.Fatalf("approve: %d", code)
	}
	var w map[string]any
	getJSON(t, s.URL+"/v1/approvals/"+ask.Approval.ID+"/wait?timeout_ms=5000", builder, &w)
	if w["decision"] != "allow" {
		t.Fatalf("wait after approval: %v", w)
	}
	var rec struct {
		ID         string `json:"id"`
		AuditIndex int64  `json:"audit_index"`
	}
	getJSON(t, s.URL+"/v1/checks/"+ask.ID, builder, &rec)
	entries := allEntries(t, s, c.admin)
	if rec.AuditIndex <= 0 || rec.AuditIndex >= int64(len(entries)) || !strings.Contains(string(entries[rec.AuditIndex]), ask.ID) {
		t.Fatalf("check %s has audit index %d; the log has %d entries", ask.ID, rec.AuditIndex, len(entries))
	}
	s.stop()

	s = c.start()
	getJSON(t, s.URL+"/v1/checks/"+ask.ID, builder, &rec)
	var again answer
	if code := postJSON(t, s.URL+"/v1/check", builder, `{"tool":"deploy","session":"s1","args":{"svc":"api"}}`, &again); code != 200 || again.Decision != "ask" || again.Approval.ID == ask.Approval.ID {
		t.Fatalf("after a restart, the consumed grant must not allow again: %d %+v", code, again)
	}
	sealedCheckpoint(t, s, c.admin, int64(len(entries))+2)
	c.verify(s)
}

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }
