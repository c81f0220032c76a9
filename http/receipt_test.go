package http_test

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein/audit"
)

// TestReceipts: a check's receipt is a tlog-proof that verifies offline;
// it is served to whoever may read the check (the agent that made it, the
// tenant's auditor), to no one else, and only once a checkpoint covers it.
func TestReceipts(t *testing.T) {
	e := newEnv(t, secretPolicy)
	skey, vkey, err := note.GenerateKey(rand.Reader, "rein/dep_http")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	known, _ := audit.Verifiers(vkey)
	sealer := &audit.Sealer{Store: e.store, Origin: "rein/dep_http", Signer: signer, Known: known, Now: time.Now}

	res := e.check("acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "plan.md"}})
	id, index := str(res, "id"), integer(t, res["audit_index"])
	wantError(t, e.do("GET", "/v1/checks/"+id+"/receipt", "acme-agent", nil), 503, "unavailable")
	if _, err := sealer.Seal(e.ctx); err != nil {
		t.Fatal(err)
	}

	verify := func(who, path string) *audit.VerifiedReceipt {
		t.Helper()
		r := e.do("GET", path, who, nil)
		wantStatus(t, r, 200)
		rc, err := audit.ParseReceipt(r.Body)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", who, path, err, r.Body)
		}
		v, err := audit.VerifyReceipt(rc, audit.ReceiptOptions{Known: known, Origin: "rein/dep_http"})
		if err != nil {
			t.Fatalf("%s %s: %v", who, path, err)
		}
		return v
	}
	v := verify("acme-agent", "/v1/checks/"+id+"/receipt")
	if v.Index != index || decodeObject(t, v.Entry)["subject"] != id || decodeObject(t, v.Entry)["kind"] != "check" {
		t.Fatalf("the receipt is for %d %s, want the check's entry %d", v.Index, v.Entry, index)
	}
	verify("acme-auditor", "/v1/checks/"+id+"/receipt")
	verify("acme-auditor", fmt.Sprintf("/v1/audit/receipts/%d", index))
	verify("root", fmt.Sprintf("/v1/audit/receipts/%d", index))

	for _, c := range []struct{ who, path string }{
		{"acme-agent2", "/v1/checks/" + id + "/receipt"}, // another agent's check
		{"globex-auditor", "/v1/checks/" + id + "/receipt"},
		{"globex-auditor", fmt.Sprintf("/v1/audit/receipts/%d", index)}, // another tenant's entry
		{"acme-auditor", "/v1/checks/chk_none/receipt"},
		{"acme-auditor", "/v1/audit/receipts/99999"},
	} {
		wantError(t, e.do("GET", c.path, c.who, nil), 404, "not_found")
	}
	wantError(t, e.do("GET", "/v1/audit/receipts/x", "acme-auditor", nil), 400, "bad_request")
	wantStatus(t, e.do("GET", fmt.Sprintf("/v1/audit/receipts/%d", index), "acme-agent", nil), 403)

	// A later check waits for the next checkpoint.
	later := e.check("acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "later.md"}})
	wantError(t, e.do("GET", "/v1/checks/"+str(later, "id")+"/receipt", "acme-agent", nil), 503, "unavailable")
	if _, err := sealer.Seal(e.ctx); err != nil {
		t.Fatal(err)
	}
	if v := verify("acme-agent", "/v1/checks/"+str(later, "id")+"/receipt"); v.Index != integer(t, later["audit_index"]) {
		t.Fatalf("later receipt for %d", v.Index)
	}
}
