package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein"
)

// BenchmarkCheck runs the whole in-process pipeline (no HTTP): identity,
// facts, policy and a durable record with its audit entry in SQLite
// (WAL, synchronous=FULL, one transaction per check).
func BenchmarkCheck(b *testing.B) {
	f := setup(b, testPolicy)
	req := &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"src/main.go"}`), Session: "s1"}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec, err := f.p.Check(ctx, f.key, req)
		if err != nil || rec.Decision != rein.Allow {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckParallel is the same with 64 concurrent callers, whose
// records the store commits in shared transactions (group commit).
func BenchmarkCheckParallel(b *testing.B) {
	f := setup(b, testPolicy)
	b.SetParallelism(32)
	req := &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"src/main.go"}`), Session: "s1"}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.p.Check(context.Background(), f.key, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
