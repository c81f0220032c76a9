package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// TestRewriteLeavesNothingInTheFiles: after a rewrite replaced a value,
// neither the database file nor its WAL holds it any more (free pages and
// old frames would otherwise keep it).
func TestRewriteLeavesNothingInTheFiles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rein.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	secret := []byte("PLANTED-4f1e9c-SECRET")
	for i := range 50 {
		id := "chk_" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		rec := &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: rein.Allow, ActionHash: "sha256:" + id,
			Args: json.RawMessage(`{"token":"` + string(secret) + `"}`), Risk: []string{}}, Tenant: "acme", CreatedAt: time.Now(), KeyID: "k",
			Facts: map[string]any{}, Shadow: []rein.ShadowMatch{}, Check: rein.CheckInput{Tool: "t", Agent: "a", Args: json.RawMessage(`{"token":"` + string(secret) + `"}`)}}
		if _, err := db.RecordCheck(ctx, rec, nil, nil, []*rein.Entry{{TS: time.Now(), Tenant: "acme", Kind: rein.KindCheck, Subject: id, Data: map[string]any{}}}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.RewriteRecords(ctx, "t", func(_ string, r []byte) []byte {
		if !bytes.Contains(r, secret) {
			return nil
		}
		return bytes.ReplaceAll(r, secret, []byte("[redacted]"))
	})
	if err != nil || n != 50 {
		t.Fatalf("rewrite: %d, %v", n, err)
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, secret) {
			t.Errorf("%s still holds the replaced value", filepath.Base(f))
		}
	}
}
