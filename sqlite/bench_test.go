package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// benchEntry is shaped like a check's audit entry (about 600 bytes).
func benchEntry() *rein.Entry {
	return &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindCheck, Actor: "builder", Subject: rein.NewID("chk"),
		PolicyVersion: "sha256:4f1c0e8b1a5d9c2e7f3a6b8d0c4e2f1a9b7d5c3e1f0a2b4c6d8e0f1a3b5c7d9e",
		Data: map[string]any{"tool": "shell.exec", "args": map[string]any{"command": "rm -rf ./build"}, "session": "run-42",
			"risk": []string{"shell.destructive"}, "rule": "shell-destructive", "decision": "ask",
			"reason":      "destructive shell commands need an on-call approval",
			"action_hash": "sha256:9a1c0e8b1a5d9c2e7f3a6b8d0c4e2f1a9b7d5c3e1f0a2b4c6d8e0f1a3b5c7d9e"}}
}

func openBench(b *testing.B) *DB {
	db, err := Open(context.Background(), filepath.Join(b.TempDir(), "rein.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkAppendGroupCommit: many callers each append one entry and wait
// until it is durable (synchronous=FULL); the writer commits whatever has
// gathered in one transaction.
func BenchmarkAppendGroupCommit(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	b.SetParallelism(64)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := db.Append(ctx, benchEntry()); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
	batches, jobs := db.BatchStats()
	b.ReportMetric(float64(jobs)/float64(batches), "entries/batch")
}

// BenchmarkAppendRawBatched is the ceiling: one caller inserting encoded
// entries into the same table, N per transaction, with no waiting callers.
// 1000 per transaction is the ceiling proper; 64 is about the batch group
// commit reaches with 128 callers, to show what its batch size costs.
func BenchmarkAppendRawBatched(b *testing.B) {
	for _, per := range []int{1000, 64} {
		b.Run(fmt.Sprintf("per-tx=%d", per), func(b *testing.B) { rawBatched(b, per) })
	}
}

func rawBatched(b *testing.B, per int) {
	db := openBench(b)
	ctx := context.Background()
	enc, err := benchEntry().Encoding()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; {
		err := db.tx(ctx, func(tx *wtx) error {
			stmt, err := tx.conn.PrepareContext(ctx, "INSERT INTO audit_entries (idx, tenant, kind, body) VALUES (?, ?, ?, ?)")
			if err != nil {
				return err
			}
			defer stmt.Close()
			for n := 0; n < per && i < b.N; n, i = n+1, i+1 {
				if _, err := stmt.ExecContext(ctx, int64(i), enc.Tenant, enc.Kind, enc.At(int64(i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}
