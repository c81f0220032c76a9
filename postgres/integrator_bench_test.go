package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/internal/testenv"
)

// BenchmarkIntegratorCeiling measures the integrator alone: how many
// check-shaped entries (about 600 bytes) per second it gives their indexes
// when the outbox already holds them (no writer competes). It is the
// ceiling of one replica set's audit log: every other replica's checks
// pass through this one loop (docs/scale.md).
//
//	go test ./postgres -run '^$' -bench IntegratorCeiling -benchtime 5x
func BenchmarkIntegratorCeiling(b *testing.B) {
	const perRound = 40_000
	url := testenv.Postgres(b)
	ctx := context.Background()
	db, err := Open(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(10 * time.Second); !db.Leading(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("this store never became the integrator")
		}
	}
	e := &rein.Entry{TS: time.Now(), Tenant: "bench", Kind: rein.KindCheck, Actor: "agent", Subject: "chk_x",
		Data: map[string]any{"tool": "payments.transfer", "reason": strings.Repeat("r", 300), "decision": "allow"}}
	enc, err := e.Encoding()
	if err != nil {
		b.Fatal(err)
	}
	head, tail := enc.Parts()
	var placed time.Duration
	for i := 0; i < b.N; i++ {
		var start int64
		if err := db.pool.QueryRow(ctx, "SELECT size FROM audit_head WHERE one = 1").Scan(&start); err != nil {
			b.Fatal(err)
		}
		// Fill the outbox in one transaction: the integrator sees all of it at once.
		if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO audit_outbox (tenant, kind, head, tail)
				SELECT $1, $2, $3, $4 FROM generate_series(1, $5)`, enc.Tenant, enc.Kind, head, tail, perRound)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		db.outboxKick <- struct{}{}
		for {
			var size int64
			if err := db.pool.QueryRow(ctx, "SELECT size FROM audit_head WHERE one = 1").Scan(&size); err != nil {
				b.Fatal(err)
			}
			if size >= start+perRound {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		placed += time.Since(t0)
	}
	b.ReportMetric(float64(perRound*b.N)/placed.Seconds(), "entries/s")
}
