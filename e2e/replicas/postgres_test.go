package replicas

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestPostgresSmoke: rein serve --db postgres://… refuses to start without
// a shared signing key, then runs the approval tour, keeps everything over
// a restart, and its audit log verifies offline.
func TestPostgresSmoke(t *testing.T) {
	c := harness.NewPGCluster(t, harness.ApprovalsPolicy)
	r := harness.Rein(t, []string{"REIN_ADMIN_KEY=" + c.Admin}, "serve", "--db", c.DB, "--data", t.TempDir(), "--listen", "127.0.0.1:0")
	if r.Code == 0 || !strings.Contains(r.Stderr, "rein audit keygen") {
		t.Fatalf("serve on PostgreSQL without a shared signing key: %s", r)
	}
	s := c.Start()
	builder := c.Key(s, "builder", "acme", `"agent"`, ``)
	alice := c.Key(s, "alice", "acme", `"approver"`, `"oncall"`)

	var ask harness.Answer
	if code := harness.PostJSON(t, s.URL+"/v1/check", builder, `{"tool":"deploy","session":"s1","args":{"svc":"api"}}`, &ask); code != 200 || ask.Decision != "ask" {
		t.Fatalf("deploy: %d %+v", code, ask)
	}
	if code := harness.PostJSON(t, s.URL+"/v1/approvals/"+ask.Approval.ID+"/votes", alice, `{"vote":"approve"}`, nil); code != 200 {
		t.Fatalf("approve: %d", code)
	}
	var w map[string]any
	harness.GetJSON(t, s.URL+"/v1/approvals/"+ask.Approval.ID+"/wait?timeout_ms=5000", builder, &w)
	if w["decision"] != "allow" {
		t.Fatalf("wait after approval: %v", w)
	}
	var rec struct {
		ID         string `json:"id"`
		AuditIndex int64  `json:"audit_index"`
	}
	harness.GetJSON(t, s.URL+"/v1/checks/"+ask.ID, builder, &rec)
	entries := harness.AllEntries(t, s, c.Admin)
	if rec.AuditIndex <= 0 || rec.AuditIndex >= int64(len(entries)) || !strings.Contains(string(entries[rec.AuditIndex]), ask.ID) {
		t.Fatalf("check %s has audit index %d; the log has %d entries", ask.ID, rec.AuditIndex, len(entries))
	}
	s.Stop()

	s = c.Start()
	harness.GetJSON(t, s.URL+"/v1/checks/"+ask.ID, builder, &rec)
	var again harness.Answer
	if code := harness.PostJSON(t, s.URL+"/v1/check", builder, `{"tool":"deploy","session":"s1","args":{"svc":"api"}}`, &again); code != 200 || again.Decision != "ask" || again.Approval.ID == ask.Approval.ID {
		t.Fatalf("after a restart, the consumed grant must not allow again: %d %+v", code, again)
	}
	harness.SealedCheckpoint(t, s, c.Admin, int64(len(entries))+2)
	c.Verify(s)
}

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }
