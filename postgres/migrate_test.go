package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/internal/storesql"
	"github.com/reinhq/rein/internal/testenv"
)

// TestLogFromBeforeEntriesWrittenOnce: a log written before entries were
// written once (the integrator copied each outbox row into audit_entries
// and deleted it) keeps every entry, with its exact bytes, after the
// migration; an entry still waiting in the outbox then is placed next, and
// the sealer signs a checkpoint whose root is the tree of all of them.
func TestLogFromBeforeEntriesWrittenOnce(t *testing.T) {
	ctx := context.Background()
	url := testenv.Postgres(t)
	conn, err := pgx.Connect(ctx, url[:strings.Index(url, "&pool_max_conns")])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The schema as it was, at migration 13.
	all, err := storesql.Pending(migrations, "migrations", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE rein_schema (version INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.Version > 13 {
			break
		}
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO rein_schema VALUES ($1)", m.Version); err != nil {
			t.Fatal(err)
		}
	}
	// Three entries placed the old way, and one waiting in the outbox.
	entry := func(s string) *rein.EntryEncoding {
		enc, err := (&rein.Entry{TS: time.Unix(1_800_000_000, 0), Tenant: "acme", Kind: rein.KindCheck, Actor: "builder", Subject: s}).Encoding()
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	var want [][]byte
	for i := range 3 {
		enc := entry(string(rune('a' + i)))
		body := enc.At(int64(i))
		want = append(want, body)
		if _, err := conn.Exec(ctx, "INSERT INTO audit_entries (idx, tenant, kind, body, outbox_seq) VALUES ($1, $2, $3, $4, $5)",
			i, enc.Tenant, enc.Kind, body, 100+i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "UPDATE audit_head SET size = 3"); err != nil {
		t.Fatal(err)
	}
	waiting := entry("d")
	head, tail := waiting.Parts()
	if _, err := conn.Exec(ctx, "INSERT INTO audit_outbox (tenant, kind, head, tail) VALUES ($1, $2, $3, $4)", waiting.Tenant, waiting.Kind, head, tail); err != nil {
		t.Fatal(err)
	}
	want = append(want, waiting.At(3))

	db, err := Open(ctx, url, nil) // migrates, and integrates
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sk, vk, err := note.GenerateKey(rand.Reader, "rein/migrate")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(sk)
	verifier, _ := note.NewVerifier(vk)
	sealer := &audit.Sealer{Store: db, Origin: "rein/migrate", Signer: signer, Known: note.VerifierList(verifier), Now: time.Now}
	deadline := time.Now().Add(10 * time.Second)
	for queryOne[int64](t, db, "SELECT size FROM audit_head WHERE one = 1") < 4 {
		if time.Now().After(deadline) {
			t.Fatal("the entry waiting in the outbox was not placed after the migration")
		}
		time.Sleep(20 * time.Millisecond)
	}
	es, err := db.Entries(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(want) {
		t.Fatalf("%d entries after the migration, want %d", len(es), len(want))
	}
	for i, e := range es {
		if e.Index != int64(i) || !bytes.Equal(e.Bytes, want[i]) {
			t.Fatalf("entry %d (index %d): %s, want %s", i, e.Index, e.Bytes, want[i])
		}
	}
	c, err := sealer.Seal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if root := treeRoot(t, want); c.Size != 4 || c.Root != root {
		t.Fatalf("checkpoint of size %d, root %x; want size 4, root %x", c.Size, c.Root, root)
	}
}

// treeRoot is the RFC 6962 root of the records, computed apart from the
// store.
func treeRoot(t *testing.T, records [][]byte) tlog.Hash {
	t.Helper()
	var stored []tlog.Hash
	read := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for k, x := range idx {
			out[k] = stored[x]
		}
		return out, nil
	})
	for i, r := range records {
		hs, err := tlog.StoredHashes(int64(i), r, read)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, hs...)
	}
	root, err := tlog.TreeHash(int64(len(records)), read)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
