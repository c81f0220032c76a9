package http_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/reinhq/rein/pipeline"
)

const secretPolicy = `version: 1
default: deny
rules:
  - {id: all, when: 'true', decision: allow}
`

// TestAuditArgsKeepSecretsOut: a credential in a check's arguments reaches
// the audit log only as its hash (by default), or not at all (hashes), or
// as it is when the operator says so (values).
func TestAuditArgsKeepSecretsOut(t *testing.T) {
	e := newEnv(t, secretPolicy)
	token := "ghp_" + strings.Repeat("A1b2C3d4", 5)
	sum := sha256.Sum256([]byte(`"` + token + `"`))
	tokenHash := "sha256:" + hex.EncodeToString(sum[:])
	e.pipe.AuditArgs = []pipeline.ArgsRule{{Tool: "vault.*", Store: pipeline.ArgsHashes}, {Tool: "debug.*", Store: pipeline.ArgsValues}}
	for _, c := range []struct {
		tool        string
		wantValue   bool
		wantHash    bool
		wantArgs    bool
		wantRedacts bool
	}{
		{"http.post", false, true, true, true},
		{"vault.write", false, false, false, false},
		{"debug.echo", true, false, true, false},
	} {
		before := e.entryCount()
		e.check("acme-agent", map[string]any{"tool": c.tool, "args": map[string]any{"url": "https://example.com",
			"headers": map[string]any{"Authorization": "token " + token}, "items": []any{"a", token}}})
		raw, err := e.store.Entries(e.ctx, int64(before), 1)
		if err != nil || len(raw) != 1 {
			t.Fatal(err)
		}
		body := string(raw[0].Bytes)
		if got := strings.Contains(body, token); got != c.wantValue {
			t.Errorf("%s: the token is in the entry: %v, want %v\n%s", c.tool, got, c.wantValue, body)
		}
		if got := strings.Contains(body, tokenHash); got != c.wantHash {
			t.Errorf("%s: the token's hash is in the entry: %v, want %v\n%s", c.tool, got, c.wantHash, body)
		}
		data := e.entry(int64(before))["data"].(map[string]any)
		if _, ok := data["args"]; ok != c.wantArgs {
			t.Errorf("%s: args kept: %v, want %v", c.tool, ok, c.wantArgs)
		}
		if _, ok := data["args_hash"]; ok == c.wantArgs {
			t.Errorf("%s: args_hash present: %v", c.tool, ok)
		}
		if _, ok := data["args_redacted"]; ok != c.wantRedacts {
			t.Errorf("%s: args_redacted present: %v, want %v", c.tool, ok, c.wantRedacts)
		}
		if c.wantHash && !strings.Contains(body, `"url":"https://example.com"`) {
			t.Errorf("%s: redaction also removed ordinary arguments: %s", c.tool, body)
		}
	}
}

// TestAuditEntriesTenantScope: an auditor reads its tenant's entries in
// full, other tenants' as leaf hashes only, and the deployment's entries
// that concern everyone (the global policy) in full.
func TestAuditEntriesTenantScope(t *testing.T) {
	e := newEnv(t, secretPolicy)
	e.check("acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "acme-secret-plan"}})
	e.check("globex-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "globex-secret-plan"}})
	r := e.do("GET", "/v1/audit/entries?start=0&limit=10000", "acme-auditor", nil)
	wantStatus(t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q", ct)
	}
	body := string(r.Body)
	if !strings.Contains(body, "acme-secret-plan") || strings.Contains(body, "globex-secret-plan") {
		t.Fatalf("acme's auditor sees the wrong entries:\n%s", body)
	}
	if strings.Contains(body, `"name":"root"`) {
		t.Errorf("acme's auditor reads the deployment's key entries")
	}
	if !strings.Contains(body, `"kind":"policy.updated"`) {
		t.Errorf("acme's auditor cannot read the global policy's entry")
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != e.entryCount() {
		t.Fatalf("%d lines for %d entries: hidden entries must keep their place", len(lines), e.entryCount())
	}
	hidden := 0
	for _, l := range lines {
		if strings.HasPrefix(l, `{"index":`) && strings.Contains(l, `"leaf_hash":`) {
			hidden++
		}
	}
	if hidden == 0 {
		t.Error("no entry was hidden from acme's auditor")
	}
	root := string(e.do("GET", "/v1/audit/entries?start=0&limit=10000", "root", nil).Body)
	if !strings.Contains(root, "globex-secret-plan") || !strings.Contains(root, "acme-secret-plan") {
		t.Error("the admin of tenant * does not see every entry")
	}
	wantError(t, e.do("GET", "/v1/audit/entries", "acme-agent", nil), 403, "forbidden")
	wantError(t, e.do("GET", "/v1/audit/entries?limit=0", "acme-auditor", nil), 400, "bad_request")
}
