package http_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein"
	reinhttp "github.com/reinhq/rein/http"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/sqlite"
)

// A key that has been used (and so is remembered by the store) is refused
// with 401 by the very next request after its revocation through the API,
// and within the documented bound (docs/scale.md: 100 ms, 500 ms allowed here
// for a loaded machine) after another process on the same SQLite file
// revokes it.
func TestRevokedKeyIsRefusedAfterUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	ctx := context.Background()
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	active := &policy.Active{}
	pol, err := policy.Compile([]byte(globalPolicy))
	if err != nil {
		t.Fatal(err)
	}
	active.Set("", pol)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pipe := &pipeline.Pipeline{Store: store, Policies: active, Log: log}
	api := withStores(&reinhttp.Server{Pipeline: pipe, Policies: active, Log: log}, store)
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	defer pipe.StopWaiting()
	defer api.Stop()

	newKey := func(name string, roles ...rein.Role) (*rein.Key, string) {
		secret, hash := rein.NewSecret()
		k := &rein.Key{ID: rein.NewID("key"), Name: name, Tenant: "acme", Roles: roles, Groups: []string{},
			CreatedAt: time.Now().UTC(), SecretHash: hash}
		if err := store.CreateKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		return k, secret
	}
	do := func(method, path, secret string, body string) int {
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	check := `{"tool":"fs.read","args":{"path":"README.md"}}`
	_, admin := newKey("admin", rein.RoleAdmin)

	// Revoked through the API.
	bot, botSecret := newKey("bot", rein.RoleAgent)
	for range 20 {
		if code := do("POST", "/v1/check", botSecret, check); code != http.StatusOK {
			t.Fatalf("check before the revocation: %d", code)
		}
	}
	if code := do("DELETE", "/v1/keys/"+bot.ID, admin, ""); code != http.StatusNoContent {
		t.Fatalf("revoke: %d", code)
	}
	if code := do("POST", "/v1/check", botSecret, check); code != http.StatusUnauthorized {
		t.Fatalf("the first check after the revocation answered %d, want 401", code)
	}

	// Revoked by another process writing the same file (another connection:
	// the store cannot tell it from another process).
	bot2, bot2Secret := newKey("bot2", rein.RoleAgent)
	for range 20 {
		if code := do("POST", "/v1/check", bot2Secret, check); code != http.StatusOK {
			t.Fatalf("check before the revocation: %d", code)
		}
	}
	other, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.RevokeKey(ctx, bot2.ID, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for do("POST", "/v1/check", bot2Secret, check) != http.StatusUnauthorized {
		if time.Since(start) > 500*time.Millisecond {
			t.Fatalf("a key revoked by another process still authenticates %v later", time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("refused %v after the other process's revocation", time.Since(start))
}
