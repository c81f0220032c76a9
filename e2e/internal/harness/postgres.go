package harness

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
)

// PGCluster is a set of `rein serve` replicas sharing one PostgreSQL
// schema, one audit signing key and one admin key.
type PGCluster struct {
	T        testing.TB
	DB       string // the --db URL
	Policy   string
	Env      []string // REIN_AUDIT_KEY and REIN_ADMIN_KEY
	Admin    string
	Verifier string
}

// NewPGCluster is a cluster on a fresh schema of the local PostgreSQL
// (testenv.Postgres) with policy.
func NewPGCluster(t testing.TB, policy string) *PGCluster {
	t.Helper()
	return NewPGClusterAt(t, testenv.Postgres(t), policy)
}

// NewPGClusterAt is a cluster on the database at the URL db.
func NewPGClusterAt(t testing.TB, db, policy string) *PGCluster {
	t.Helper()
	c := &PGCluster{T: t, DB: db, Policy: filepath.Join(t.TempDir(), "policy.yaml"), Admin: "admin-" + strings.Repeat("k", 24)}
	WriteFile(t, c.Policy, policy)
	r := Rein(t, nil, "audit", "keygen")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "PRIVATE+KEY+rein+") {
		t.Fatalf("rein audit keygen: %s", r)
	}
	c.Verifier = strings.TrimSpace(r.Stderr)
	c.Env = []string{"REIN_AUDIT_KEY=" + strings.TrimSpace(r.Stdout), "REIN_ADMIN_KEY=" + c.Admin}
	return c
}

// Start runs one more replica.
func (c *PGCluster) Start() *Server {
	c.T.Helper()
	return StartServer(c.T, c.T.TempDir(), c.Env, "--db", c.DB, "--policy", c.Policy)
}

// Key creates a key as admin on s and returns its secret.
func (c *PGCluster) Key(s *Server, name, tenant, roles, groups string) string {
	c.T.Helper()
	code, body := HTTPDo(c.T, "POST", s.URL+"/v1/keys", c.Admin, []byte(fmt.Sprintf(
		`{"name":%q,"tenant":%q,"roles":[%s],"groups":[%s]}`, name, tenant, roles, groups)), "application/json")
	if code != 201 {
		c.T.Fatalf("create key %s: %d %s", name, code, body)
	}
	var created struct{ Key string }
	json.Unmarshal(body, &created)
	return created.Key
}

// Verify exports the audit log through s and verifies it offline.
func (c *PGCluster) Verify(s *Server) string {
	c.T.Helper()
	SealedCheckpoint(c.T, s, c.Admin, int64(len(AllEntries(c.T, s, c.Admin))))
	bundle := c.T.TempDir()
	if r := Rein(c.T, s.ClientEnv(c.Admin), "audit", "export", "--out", bundle); r.Code != 0 {
		c.T.Fatalf("rein audit export: %s", r)
	}
	r := Rein(c.T, nil, "audit", "verify", bundle, "--key", c.Verifier)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "OK") {
		c.T.Fatalf("rein audit verify: %s", r)
	}
	return r.Stdout
}

// PostJSON posts body as JSON and decodes the answer into v (when not nil).
func PostJSON(t testing.TB, url, key, body string, v any) int {
	t.Helper()
	code, b := HTTPDo(t, "POST", url, key, []byte(body), "application/json")
	if v != nil {
		json.Unmarshal(b, v)
	}
	return code
}
