package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// check makes a check record.
func check(id, tenant, keyID, requestID, session, actionHash string, d rein.Decision) *rein.CheckRecord {
	return &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: d, Reason: "r", ActionHash: actionHash, Args: json.RawMessage(`{"a":1}`), Risk: []string{}},
		Tenant: tenant, CreatedAt: t0, KeyID: keyID, Facts: map[string]any{}, Shadow: []rein.ShadowMatch{},
		Check: rein.CheckInput{Tool: "shell.exec", Agent: "builder", Session: session, RequestID: requestID, Args: json.RawMessage(`{"a":1}`)}}
}

func checkEntry(rec *rein.CheckRecord) []*rein.Entry {
	return []*rein.Entry{{TS: rec.CreatedAt, Tenant: rec.Tenant, Kind: rein.KindCheck, Actor: "builder", Subject: rec.ID, Data: map[string]any{"decision": string(rec.Decision)}}}
}

func recordCheckIdempotency(t *testing.T, s rein.Store) {
	s.Append(ctx, entry(rein.KindServerStarted, "boot"))
	first, err := s.RecordCheck(ctx, check("chk_1", "acme", "key_1", "r1", "", "sha256:x", rein.Allow), nil, nil, checkEntry(check("chk_1", "acme", "", "", "", "", rein.Allow)))
	if err != nil || first.AuditIndex != 1 {
		t.Fatalf("%+v %v; want audit index 1", first, err)
	}
	again, err := s.RecordCheck(ctx, check("chk_2", "acme", "key_1", "r1", "", "sha256:x", rein.Allow), nil, nil, checkEntry(check("chk_2", "acme", "", "", "", "", rein.Allow)))
	if !errors.Is(err, rein.ErrDuplicateRequest) || again == nil || again.ID != "chk_1" || again.AuditIndex != 1 {
		t.Fatalf("duplicate request_id: %+v %v", again, err)
	}
	if es := entries(t, s); len(es) != 2 {
		t.Errorf("a replayed request must not write audit entries: %d", len(es))
	}
	got, err := s.CheckByRequestID(ctx, "key_1", "r1")
	if err != nil || got.ID != "chk_1" || got.KeyID != "key_1" || got.AuditIndex != 1 || string(got.Args) != `{"a":1}` {
		t.Errorf("by request id: %+v %v", got, err)
	}
	if got, err := s.CheckByID(ctx, "chk_1"); err != nil || got.AuditIndex != 1 || got.Tenant != "acme" || !got.CreatedAt.Equal(t0) {
		t.Errorf("by id: %+v %v", got, err)
	}
	if _, err := s.CheckByID(ctx, "chk_2"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("chk_2 must not exist: %v", err)
	}
	// Another key may use the same request_id.
	if _, err := s.RecordCheck(ctx, check("chk_3", "acme", "key_2", "r1", "", "sha256:x", rein.Allow), nil, nil, nil); err != nil {
		t.Errorf("the same request_id from another key: %v", err)
	}
}

func concurrentRequestID(t *testing.T, s rein.Store) {
	const n = 8
	var wg sync.WaitGroup
	var recorded atomic.Int32
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := check(fmt.Sprintf("chk_%d", i), "acme", "key_1", "same", "", "sha256:x", rein.Allow)
			got, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec))
			switch {
			case err == nil:
				recorded.Add(1)
			case !errors.Is(err, rein.ErrDuplicateRequest):
				t.Errorf("check %d: %v", i, err)
				return
			}
			ids[i] = got.ID
		}()
	}
	wg.Wait()
	if recorded.Load() != 1 {
		t.Fatalf("%d checks recorded with one request_id; want 1", recorded.Load())
	}
	for i := range ids {
		if ids[i] != ids[0] {
			t.Errorf("callers were told different checks: %v", ids)
		}
	}
	if es := entries(t, s); len(es) != 1 {
		t.Errorf("%d entries, want 1", len(es))
	}
}

// failedWritesLeaveNothing: many writers at once; a write that fails after
// changing rows leaves nothing behind, the others are all durable, and the
// audit indexes stay contiguous.
func failedWritesLeaveNothing(t *testing.T, s rein.Store) {
	const n = 90
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := newKey("acme", "", rein.RoleAgent)
			k.ID = fmt.Sprintf("key_%d", i)
			switch i % 3 {
			case 0: // writes the key, then fails encoding its entry
				k.Name = fmt.Sprintf("broken-%d", i)
				errs[i] = s.CreateKey(ctx, k, &rein.Entry{Kind: rein.KindKeyCreated, Data: make(chan int)})
			case 1:
				errs[i] = s.Append(ctx, entry(rein.KindServerStarted, fmt.Sprint(i)))
			case 2: // all the same name: exactly one wins
				k.Name = "dup"
				errs[i] = s.CreateKey(ctx, k, entry(rein.KindKeyCreated, k.ID))
			}
		}()
	}
	wg.Wait()
	dupWins := 0
	for i, err := range errs {
		switch i % 3 {
		case 0:
			if err == nil {
				t.Fatalf("job %d: a failing write reported success", i)
			}
			if _, err := s.KeyByID(ctx, fmt.Sprintf("key_%d", i)); !errors.Is(err, rein.ErrNotFound) {
				t.Errorf("write %d failed but its key row stayed: %v", i, err)
			}
		case 1:
			if err != nil {
				t.Errorf("append %d: %v", i, err)
			}
		case 2:
			if err == nil {
				dupWins++
			} else if rein.ErrorCode(err) != rein.ECodeConflict {
				t.Errorf("write %d: %v, want a conflict", i, err)
			}
		}
	}
	if dupWins != 1 {
		t.Errorf("%d keys named dup were created; want 1", dupWins)
	}
	if es := entries(t, s); len(es) != n/3+1 {
		t.Fatalf("%d entries; want %d", len(es), n/3+1)
	}
}

// checksList: Checks filters by tenant, decision, agent (with sub-agents),
// tool, session and time, newest first, continues after a cursor, and
// returns each check's reported result.
func checksList(t *testing.T, s rein.Store) {
	record := func(id, tenant, agent, tool, session string, d rein.Decision, at time.Time) *rein.CheckRecord {
		rec := check(id, tenant, "key_1", "", session, "sha256:"+id, d)
		rec.Check.Agent, rec.Check.Tool, rec.CreatedAt = agent, tool, at
		if _, err := s.RecordCheck(ctx, rec, nil, nil, checkEntry(rec)); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	first := record("chk_1", "acme", "builder", "fs.read", "run-1", rein.Allow, t0)
	record("chk_2", "acme", "builder/sub", "shell.exec", "run-1", rein.Deny, t0.Add(time.Minute))
	record("chk_3", "acme", "builder_x", "fs.read", "run-2", rein.Allow, t0.Add(2*time.Minute))
	record("chk_4", "globex", "builder", "fs.read", "run-1", rein.Allow, t0.Add(3*time.Minute))
	if err := s.RecordResult(ctx, first, &rein.CheckResult{Status: "succeeded", Summary: "ok"}, entry(rein.KindCheckResult, first.ID)); err != nil {
		t.Fatal(err)
	}
	ids := func(tenant string, f rein.CheckFilter) string {
		t.Helper()
		list, err := s.Checks(ctx, tenant, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range list {
			out = append(out, c.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		tenant string
		f      rein.CheckFilter
		want   string
	}{
		{"acme", rein.CheckFilter{}, "chk_3 chk_2 chk_1"},
		{rein.AllTenants, rein.CheckFilter{}, "chk_4 chk_3 chk_2 chk_1"},
		{"acme", rein.CheckFilter{Decision: rein.Deny}, "chk_2"},
		{"acme", rein.CheckFilter{Agent: "builder"}, "chk_2 chk_1"},
		{"acme", rein.CheckFilter{Agent: "builder/sub"}, "chk_2"},
		{"acme", rein.CheckFilter{Tool: "fs.read", Session: "run-1"}, "chk_1"},
		{"acme", rein.CheckFilter{Since: t0.Add(time.Minute)}, "chk_3 chk_2"},
		{"acme", rein.CheckFilter{Until: t0.Add(time.Minute)}, "chk_1"},
		{"acme", rein.CheckFilter{Limit: 1, Before: "chk_3"}, "chk_2"},
		{"other", rein.CheckFilter{}, ""},
	} {
		if got := ids(c.tenant, c.f); got != c.want {
			t.Errorf("Checks(%q, %+v) = %q, want %q", c.tenant, c.f, got, c.want)
		}
	}
	list, _ := s.Checks(ctx, "acme", rein.CheckFilter{Session: "run-1", Tool: "fs.read"})
	if len(list) != 1 || list[0].Result == nil || list[0].Result.Summary != "ok" {
		t.Errorf("the reported result does not come with the check: %+v", list)
	}
	if got, err := s.CheckByID(ctx, "chk_2"); err != nil || got.Result != nil {
		t.Errorf("a check without a result: %+v %v", got, err)
	}
}

// RecordRewriter is the one-time rewrite of stored records both stores
// offer (the redaction of secrets kept before rein redacted them).
type RecordRewriter interface {
	RewriteRecords(ctx context.Context, name string, change func(table string, record []byte) []byte) (int, error)
}

// rewriteRecordsOnce: every check, approval and review record passes
// through the change once; what it returns replaces the record, the rest of
// the record (an approval's grant TTL) is kept, and a second run of the
// same rewrite changes nothing.
func rewriteRecordsOnce(t *testing.T, s rein.Store) {
	rw, ok := s.(RecordRewriter)
	if !ok {
		t.Fatal("the store cannot rewrite its records")
	}
	a := newApproval("apr_rw", "acme", "sha256:rw", t0.Add(time.Hour))
	a.Args = json.RawMessage(`{"token":"PLAIN-SECRET"}`)
	rec := check("chk_rw", "acme", "key_1", "", "s1", a.ActionHash, rein.Ask)
	rec.Args, rec.Check.Args = a.Args, a.Args
	a.CheckID = rec.ID
	if _, err := s.RecordCheck(ctx, rec, a, nil, append(checkEntry(rec), entry(rein.KindApprovalCreated, a.ID))); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	change := func(table string, record []byte) []byte {
		seen[table]++
		if !bytes.Contains(record, []byte("PLAIN-SECRET")) {
			return nil
		}
		return bytes.ReplaceAll(record, []byte("PLAIN-SECRET"), []byte("REDACTED"))
	}
	n, err := rw.RewriteRecords(ctx, "test-rewrite", change)
	if err != nil || n != 2 || seen["checks"] != 1 || seen["approvals"] != 1 {
		t.Fatalf("rewrite: %d changed, %v; seen %v", n, err, seen)
	}
	got, err := s.CheckByID(ctx, rec.ID)
	if err != nil || string(got.Args) != `{"token":"REDACTED"}` || string(got.Check.Args) != `{"token":"REDACTED"}` {
		t.Fatalf("the rewritten check: %v %+v", err, got)
	}
	ga, err := s.Approval(ctx, a.ID)
	if err != nil || string(ga.Args) != `{"token":"REDACTED"}` || ga.GrantTTL != a.GrantTTL {
		t.Fatalf("the rewritten approval: %v %+v", err, ga)
	}
	if n, err := rw.RewriteRecords(ctx, "test-rewrite", change); err != nil || n != 0 {
		t.Fatalf("the same rewrite again: %d changed, %v", n, err)
	}
}
