package audit

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein"
)

// writeBundle writes a bundle of n check-shaped entries with a checkpoint
// every `every` entries, and returns its directory and verifier key.
func writeBundle(tb testing.TB, dir string, n, every int64) string {
	skey, vkey, err := note.GenerateKey(rand.Reader, "rein/bench")
	if err != nil {
		tb.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	f, err := os.Create(filepath.Join(dir, "entries.ndjson"))
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cps, err := os.Create(filepath.Join(dir, "checkpoints.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	tree := &Tree{}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := int64(0); i < n; i++ {
		e := &rein.Entry{TS: t0.Add(time.Duration(i) * time.Millisecond), Tenant: "acme", Kind: rein.KindCheck, Actor: "builder",
			Subject: fmt.Sprintf("chk_%026d", i), PolicyVersion: "sha256:4f1c0e8b1a5d9c2e7f3a6b8d0c4e2f1a9b7d5c3e1f0a2b4c6d8e0f1a3b5c7d9e",
			Data: map[string]any{"tool": "shell.exec", "args": map[string]any{"command": fmt.Sprintf("ls ./build/%d", i)},
				"session": "run-42", "risk": []string{}, "rule": "reads", "decision": "allow", "reason": "reading is fine",
				"action_hash": "sha256:9a1c0e8b1a5d9c2e7f3a6b8d0c4e2f1a9b7d5c3e1f0a2b4c6d8e0f1a3b5c7d9e"}}
		b, err := e.Encode(i)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(b)
		w.WriteByte('\n')
		if err := tree.AppendLeaf(leafHash(b)); err != nil {
			tb.Fatal(err)
		}
		if (i+1)%every == 0 || i+1 == n {
			root, _ := tree.Root(i + 1)
			signed, err := Sign(Checkpoint{Origin: "rein/bench", Size: i + 1, Root: root}, signer)
			if err != nil {
				tb.Fatal(err)
			}
			if i+1 > every {
				cps.WriteString("\n")
			}
			cps.Write(signed)
		}
	}
	w.Flush()
	f.Close()
	cps.Close()
	return vkey
}

// BenchmarkVerifyMillion verifies a bundle of 1,000,000 entries (about
// 600 MB, a checkpoint every 10,000 entries) read from disk: canonical form
// and index of every entry, the tree rebuilt, every checkpoint's root,
// signature and consistency.
func BenchmarkVerifyMillion(b *testing.B) {
	dir := b.TempDir()
	vkey := writeBundle(b, dir, 1_000_000, 10_000)
	known, err := Verifiers(vkey)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cps, _ := os.ReadFile(filepath.Join(dir, "checkpoints.txt"))
		f, err := os.Open(filepath.Join(dir, "entries.ndjson"))
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Verify(Bundle{Entries: bufio.NewReaderSize(f, 1<<20), Checkpoints: cps}, Options{Known: known})
		f.Close()
		if err != nil || rep.Entries != 1_000_000 {
			b.Fatalf("verify: %v %+v", err, rep)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/verify")
}
