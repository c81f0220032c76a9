package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

// PostgresURL is the server the PostgreSQL tests use: the local one
// (trust authentication, database test), or REIN_TEST_POSTGRES.
func PostgresURL() string {
	if u := os.Getenv("REIN_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// Postgres creates a schema of its own for the test (dropped when the test
// ends) and returns a URL whose search_path selects it, so that tests never
// see each other's data. PostgreSQL is part of the test environment: when
// it does not answer, the test fails saying how to start it.
func Postgres(t testing.TB) string {
	t.Helper()
	hold(t, syscall.LOCK_SH)
	return schema(t)
}

// PostgresExclusive is Postgres for a test that stops or restarts the
// server: it waits until no other test (in any test binary on this
// machine) uses PostgreSQL, and keeps the others waiting until it ends.
// The test must leave PostgreSQL running.
func PostgresExclusive(t testing.TB) string {
	t.Helper()
	hold(t, syscall.LOCK_EX)
	return schema(t)
}

// hold takes the PostgreSQL test lock (shared or exclusive) until the test
// ends.
func hold(t testing.TB, how int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "rein-test-postgres.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("PostgreSQL test lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		t.Fatalf("PostgreSQL test lock: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

func schema(t testing.TB) string {
	t.Helper()
	base := PostgresURL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("PostgreSQL is not reachable at %s: %v\nstart it (e.g. pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start), or set REIN_TEST_POSTGRES", base, err)
	}
	defer conn.Close(context.Background())
	schema := strings.ToLower(strings.ReplaceAll(rein.NewID("t"), "-", "_"))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	// A small pool per store: test binaries run side by side, each with
	// several stores (replicas), on one server of 100 connections.
	return fmt.Sprintf("%s%ssearch_path=%s&pool_max_conns=8", base, sep, schema)
}
