package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestLockStopsAgentMidRun: rein stop denies the agent's next check, turns
// its pending approval invalidated and its unused grant unusable, leaves
// other agents alone, and rein unlock restores service.
func TestLockStopsAgentMidRun(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, harness.LocksPolicy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	admin := e.S.AdminKey()
	adminCLI := e.S.ClientEnv(admin)

	if a := e.Check("builder", "fs.read", "run", `{"path":"a"}`); a.Decision != "allow" {
		t.Fatalf("before the lock: %+v", a)
	}
	pending := e.Check("builder", "deploy", "p1", `{}`)
	granted := e.Check("builder", "deploy", "g1", `{}`)
	if code, m := e.Vote("alice", granted.Approval.ID, "approve", ""); code != 200 || m["status"] != "approved" {
		t.Fatalf("approve: %d %v", code, m)
	}

	r := harness.Rein(t, adminCLI, "stop", "--agent", "builder", "--tenant", "acme", "--reason", "incident 42: runaway agent")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "lck_") {
		t.Fatalf("rein stop: %s", r)
	}
	lockID := strings.SplitN(r.Stdout, ":", 2)[0]

	a := e.Check("builder", "fs.read", "run", `{"path":"a"}`)
	if a.Decision != "deny" || !strings.Contains(a.Reason, "incident 42") || !strings.Contains(a.Reason, lockID) {
		t.Fatalf("the agent's next check under the lock: %+v", a)
	}
	if a := e.Check("builder", "fs.read", "run", `{"path":"a"}`); a.Decision != "deny" {
		t.Fatalf("a second check under the lock: %+v", a)
	}
	for _, id := range []string{pending.Approval.ID, granted.Approval.ID} {
		var got struct{ Status string }
		harness.GetJSON(t, e.S.URL+"/v1/approvals/"+id, e.Keys["alice"], &got)
		if got.Status != "invalidated" {
			t.Errorf("approval %s under the lock is %s, want invalidated", id, got.Status)
		}
	}
	if a := e.Check("builder", "deploy", "g1", `{}`); a.Decision != "deny" {
		t.Fatalf("the grant approved before the lock was used: %+v", a)
	}
	if code, m := e.Wait("builder", granted.Approval.ID, 0); code != 200 || m["decision"] != "deny" {
		t.Fatalf("wait on the grant under the lock: %d %v", code, m)
	}
	if a := e.Check("builder2", "fs.read", "run", `{"path":"a"}`); a.Decision != "allow" {
		t.Fatalf("another agent under a lock on builder: %+v", a)
	}
	if r := harness.Rein(t, e.S.ClientEnv(e.Keys["alice"]), "locks"); r.Code != 0 || !strings.Contains(r.Stdout, lockID) || !strings.Contains(r.Stdout, "incident 42") {
		t.Errorf("rein locks: %s", r)
	}
	// Only admins lock and unlock; another tenant's admin does not see it.
	if code, _ := harness.HTTPDo(t, "POST", e.S.URL+"/v1/locks", e.Keys["builder"], []byte(`{"target":{},"reason":"x"}`), "application/json"); code != http.StatusForbidden {
		t.Errorf("an agent created a lock: %d", code)
	}
	otherAdmin := createKey(t, e.S, admin, "other-admin", "other", "admin")
	if code, _ := harness.HTTPDo(t, "DELETE", e.S.URL+"/v1/locks/"+lockID, otherAdmin, nil, ""); code != http.StatusNotFound {
		t.Errorf("another tenant's admin removed the lock: %d, want 404", code)
	}

	if r := harness.Rein(t, adminCLI, "unlock", lockID); r.Code != 0 {
		t.Fatalf("rein unlock: %s", r)
	}
	if a := e.Check("builder", "fs.read", "run", `{"path":"a"}`); a.Decision != "allow" {
		t.Fatalf("after unlock: %+v", a)
	}
	if r := harness.Rein(t, adminCLI, "unlock", lockID); r.Code != 1 {
		t.Errorf("unlocking twice: %s", r)
	}

	// A tool lock that lifts itself.
	if r := harness.Rein(t, adminCLI, "stop", "--tool", "payments.*", "--tenant", "acme", "--for", "1s", "--reason", "provider outage"); r.Code != 0 {
		t.Fatalf("rein stop --tool: %s", r)
	}
	if a := e.Check("builder", "payments.transfer", "run", `{"amount":1}`); a.Decision != "deny" {
		t.Fatalf("payments under a tool lock: %+v", a)
	}
	if a := e.Check("builder", "fs.read", "run", `{"path":"b"}`); a.Decision != "allow" {
		t.Fatalf("reads under a payments lock: %+v", a)
	}
	time.Sleep(1200 * time.Millisecond)
	if a := e.Check("builder", "payments.transfer", "run", `{"amount":1}`); a.Decision != "allow" {
		t.Fatalf("payments after the lock expired: %+v", a)
	}

	// The lock's life is in the audit log.
	var kinds []string
	for _, l := range harness.AllEntries(t, e.S, admin) {
		var x struct{ Kind, Subject string }
		json.Unmarshal(l, &x)
		if x.Subject == lockID {
			kinds = append(kinds, x.Kind)
		}
	}
	if fmt.Sprint(kinds) != "[lock.created lock.removed]" {
		t.Errorf("audit entries of the lock: %v", kinds)
	}
}

// createKey makes a key with one role through the API and returns its secret.
func createKey(t *testing.T, s *harness.Server, admin, name, tenant, role string) string {
	t.Helper()
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", admin, []byte(fmt.Sprintf(`{"name":%q,"tenant":%q,"roles":[%q]}`, name, tenant, role)), "application/json")
	if code != 201 {
		t.Fatalf("create key %s: %d %s", name, code, body)
	}
	var k struct{ Key string }
	json.Unmarshal(body, &k)
	return k.Key
}
