package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// TestIntegratingReplicaPlacesItsBatches: the replica that integrates the
// log places its batches' entries itself, without the outbox, at
// contiguous indexes that its checks' records point to; a batch that finds
// another integrator's term in the head changes nothing, and checks
// recorded while the replica is being deposed go through the outbox to
// the next integrator, with nothing lost.
func TestIntegratingReplicaPlacesItsBatches(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	deadline := time.Now().Add(10 * time.Second)
	for !db.Leading() {
		if time.Now().After(deadline) {
			t.Fatal("the only replica did not become the integrator")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, stmt := range []string{
		"CREATE TABLE outbox_rows (seq bigint)",
		`CREATE FUNCTION count_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO outbox_rows VALUES (NEW.seq); RETURN NEW; END $$`,
		"CREATE TRIGGER count_outbox AFTER INSERT ON audit_outbox FOR EACH ROW EXECUTE FUNCTION count_outbox()",
	} {
		if _, err := db.pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	outboxRows := func() int { return queryOne[int](t, db, "SELECT count(*) FROM outbox_rows") }
	headSize := func() int64 { return queryOne[int64](t, db, "SELECT size FROM audit_head WHERE one = 1") }
	record := func(id string) *rein.CheckRecord {
		return &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: rein.Allow, Reason: "r", ActionHash: "sha256:" + id,
			Args: json.RawMessage(`{"a":1}`), Risk: []string{}},
			Tenant: "acme", CreatedAt: time.Now().UTC(), KeyID: "key_1", Facts: map[string]any{}, Shadow: []rein.ShadowMatch{},
			Check: rein.CheckInput{Tool: "shell.exec", Agent: "builder", Session: "s-" + id[len(id)-1:], Args: json.RawMessage(`{"a":1}`)}}
	}
	entry := func(rec *rein.CheckRecord) []*rein.Entry {
		return []*rein.Entry{{TS: rec.CreatedAt, Tenant: rec.Tenant, Kind: rein.KindCheck, Actor: "builder", Subject: rec.ID}}
	}
	var all []*rein.CheckRecord
	recordMany := func(prefix string, n int) {
		t.Helper()
		out := make([]*rein.CheckRecord, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := record(fmt.Sprintf("chk_%s_%d", prefix, i))
				got, err := db.RecordCheck(ctx, rec, nil, nil, entry(rec))
				if err != nil {
					t.Errorf("%s: %v", rec.ID, err)
					return
				}
				out[i] = got
			}()
		}
		wg.Wait()
		all = append(all, out...)
	}
	// Every check's index holds its own entry, the log is contiguous, and
	// the head counts exactly what is in it.
	verify := func() {
		t.Helper()
		es, err := db.Entries(ctx, 0, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range es {
			if e.Index != int64(i) {
				t.Fatalf("position %d of the log holds index %d", i, e.Index)
			}
		}
		if size := headSize(); size != int64(len(es)) {
			t.Fatalf("head size %d, %d entries", size, len(es))
		}
		seen := map[int64]string{}
		for _, rec := range all {
			if rec == nil {
				continue
			}
			if other, ok := seen[rec.AuditIndex]; ok {
				t.Fatalf("%s and %s were both answered with index %d", other, rec.ID, rec.AuditIndex)
			}
			seen[rec.AuditIndex] = rec.ID
			if rec.AuditIndex < 0 || rec.AuditIndex >= int64(len(es)) || !bytes.Contains(es[rec.AuditIndex].Bytes, []byte(`"`+rec.ID+`"`)) {
				t.Fatalf("%s: index %d does not hold its entry", rec.ID, rec.AuditIndex)
			}
			stored, err := db.CheckByID(ctx, rec.ID)
			if err != nil || stored.AuditIndex != rec.AuditIndex {
				t.Fatalf("%s read back: %v, index %d; answered %d", rec.ID, err, stored.AuditIndex, rec.AuditIndex)
			}
		}
	}

	recordMany("a", 40)
	verify()
	if n := outboxRows(); n != 0 {
		t.Errorf("%d entries went through the outbox on the integrating replica; want none", n)
	}

	// A batch in a term that is not the head's changes nothing.
	size := headSize()
	stale := record("chk_stale_0")
	encs, err := rein.EncodeEntries(entry(stale))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(stale)
	job := &batchJob{ctx: ctx, rec: stale, body: string(body), encs: encs, done: make(chan batchDone, 1)}
	if _, err := db.writeBatch(ctx, []*batchJob{job}, db.leading.term.Load()+1000); !errors.Is(err, errDeposed) {
		t.Fatalf("a batch in another term: %v, want errDeposed", err)
	}
	if _, err := db.CheckByID(ctx, stale.ID); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("the refused batch left its check: %v", err)
	}
	verify()
	if es, _ := db.Entries(ctx, 0, 10000); int64(len(es)) != size {
		t.Errorf("the refused batch changed the log: %d entries, %d before", len(es), size)
	}

	// Deposed (another integrator's term in the head) while recording.
	if _, err := db.pool.Exec(ctx, "UPDATE audit_head SET term = term + 1 WHERE one = 1"); err != nil {
		t.Fatal(err)
	}
	recordMany("b", 20)
	verify()
	if n := outboxRows(); n == 0 {
		t.Error("no entry went through the outbox while the replica was deposed")
	}
}
