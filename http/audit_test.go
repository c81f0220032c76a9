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
