package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/client"
)

// BenchmarkGuard is one guarded action end to end through the Go client:
// a check over loopback HTTP to an in-process rein (decided, recorded
// durably in the audit log) and the action run with rein's arguments.
func BenchmarkGuard(b *testing.B) {
	c := client.New(serverURL, agentKey)
	ctx := context.Background()
	args := map[string]any{"path": "README.md"}
	fn := func(context.Context, json.RawMessage) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Guard(ctx, "fs.read", args, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGuardParallel is BenchmarkGuard from GOMAXPROCS goroutines at once.
func BenchmarkGuardParallel(b *testing.B) {
	c := client.New(serverURL, agentKey)
	ctx := context.Background()
	args := map[string]any{"path": "README.md"}
	fn := func(context.Context, json.RawMessage) error { return nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Guard(ctx, "fs.read", args, fn); err != nil {
				b.Fatal(err)
			}
		}
	})
}
