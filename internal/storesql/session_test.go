package storesql

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/reinhq/rein"
)

// fakeSessions is a fakeTx with sessions: stored holds the sessions
// LoadSession finds; raced, when set, is inserted by "another transaction"
// the first time InsertSession is called.
type fakeSessions struct {
	fakeTx
	stored   map[string]*rein.Session
	raced    *rein.Session
	inserted []*rein.Session
	saved    []*rein.Session
}

func (t *fakeSessions) LoadSession(_ context.Context, tenant, id string) (*rein.Session, error) {
	s := t.stored[tenant+"/"+id]
	if s == nil {
		return nil, nil
	}
	c := *s
	return &c, nil
}

func (t *fakeSessions) InsertSession(_ context.Context, s *rein.Session) (bool, error) {
	if t.raced != nil {
		t.stored[t.raced.Tenant+"/"+t.raced.ID], t.raced = t.raced, nil
		return false, nil
	}
	c := *s
	t.inserted = append(t.inserted, &c)
	return true, nil
}

func (t *fakeSessions) SaveSession(_ context.Context, s *rein.Session) error {
	c := *s
	t.saved = append(t.saved, &c)
	return nil
}

func countCheck(s *rein.Session) error { s.Checks++; return nil }

func TestChangeSession(t *testing.T) {
	ctx := context.Background()
	tx := &fakeSessions{stored: map[string]*rein.Session{"t/s1": {ID: "s1", Tenant: "t", Checks: 2}}}
	s, err := ChangeSession(ctx, tx, "t", "s1", nil, countCheck)
	if err != nil || s.Checks != 3 || len(tx.saved) != 1 || tx.saved[0].Checks != 3 || len(tx.inserted) != 0 {
		t.Fatalf("existing session: %+v %v saved %v inserted %v", s, err, tx.saved, tx.inserted)
	}

	if _, err := ChangeSession(ctx, tx, "t", "none", nil, countCheck); !errors.Is(err, rein.ErrNotFound) || len(tx.saved) != 1 || len(tx.inserted) != 0 {
		t.Fatalf("missing session without fresh: %v, want ErrNotFound and nothing written", err)
	}

	fresh := &rein.Session{ID: "s2", Tenant: "t", Agent: "a"}
	s, err = ChangeSession(ctx, tx, "t", "s2", fresh, countCheck)
	if err != nil || s.Checks != 1 || s.Agent != "a" || len(tx.inserted) != 1 || tx.inserted[0].Checks != 1 {
		t.Fatalf("fresh session: %+v %v inserted %v", s, err, tx.inserted)
	}
	if fresh.Checks != 0 {
		t.Fatalf("fresh itself changed: %+v", fresh)
	}

	refused := errors.New("refused")
	n := len(tx.saved)
	if _, err := ChangeSession(ctx, tx, "t", "s1", nil, func(*rein.Session) error { return refused }); !errors.Is(err, refused) || len(tx.saved) != n {
		t.Fatalf("refused change: %v, saved %d times", err, len(tx.saved)-n)
	}
}

// A session another transaction inserts between the read and the insert
// is read again and changed, not overwritten with fresh.
func TestChangeSessionInsertedMeanwhile(t *testing.T) {
	ctx := context.Background()
	tx := &fakeSessions{stored: map[string]*rein.Session{}, raced: &rein.Session{ID: "s1", Tenant: "t", Checks: 5}}
	s, err := ChangeSession(ctx, tx, "t", "s1", &rein.Session{ID: "s1", Tenant: "t"}, countCheck)
	if err != nil || s.Checks != 6 || len(tx.inserted) != 0 || len(tx.saved) != 1 || tx.saved[0].Checks != 6 {
		t.Fatalf("raced: %+v %v inserted %v saved %v", s, err, tx.inserted, tx.saved)
	}
}

func TestRecordResult(t *testing.T) {
	ctx := context.Background()
	cost := 7.0
	rec := &rein.CheckRecord{Tenant: "t", Check: rein.CheckInput{Session: "s1", Cost: 2}}
	rec.ID, rec.Decision = "c1", rein.Allow
	e := &rein.Entry{Kind: "k"}
	tx := &fakeSessions{stored: map[string]*rein.Session{"t/s1": {ID: "s1", Tenant: "t", Cost: 10}}}
	if err := RecordResult(ctx, tx, "update", rec, &rein.CheckResult{Cost: &cost}, []byte(`{}`), e); err != nil {
		t.Fatal(err)
	}
	if len(tx.execs) != 1 || tx.execs[0][0] != "update" || tx.execs[0][1] != "{}" || tx.execs[0][2] != "c1" {
		t.Fatalf("update = %v", tx.execs)
	}
	if len(tx.saved) != 1 || tx.saved[0].Cost != 15 { // 10 - 2 declared + 7 reported
		t.Fatalf("session cost: %v", tx.saved)
	}
	if len(tx.appends) != 1 || tx.appends[0][0] != e {
		t.Fatalf("entry not appended: %v", tx.appends)
	}

	denied := *rec
	denied.Decision = rein.Deny
	tx.saved = nil
	if err := RecordResult(ctx, tx, "update", &denied, &rein.CheckResult{Cost: &cost}, []byte(`{}`), e); err != nil || len(tx.saved) != 0 {
		t.Fatalf("a denied check's cost counted: %v %v", tx.saved, err)
	}
}

func TestRecordResultTwice(t *testing.T) {
	tx := &fakeSessions{fakeTx: fakeTx{rowsAffected: new(int64)}}
	err := RecordResult(context.Background(), tx, "update", &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: "c1"}}, &rein.CheckResult{}, []byte(`{}`), &rein.Entry{})
	var re *rein.Error
	if !errors.As(err, &re) || re.Code != rein.ECodeConflict || len(tx.appends) != 0 {
		t.Fatalf("second result: %v, appended %v; want a conflict and nothing appended", err, tx.appends)
	}
}

func TestPending(t *testing.T) {
	fsys := fstest.MapFS{
		"m/001_init.sql": {Data: []byte("one")},
		"m/002_more.sql": {Data: []byte("two")},
		"m/010_late.sql": {Data: []byte("ten")},
	}
	got, err := Pending(fsys, "m", 1)
	if err != nil || len(got) != 2 || got[0] != (Migration{2, "002_more.sql", "two"}) || got[1] != (Migration{10, "010_late.sql", "ten"}) {
		t.Fatalf("pending after 1: %+v %v", got, err)
	}
	if got, err := Pending(fsys, "m", 10); err != nil || len(got) != 0 {
		t.Fatalf("pending after 10: %+v %v", got, err)
	}
	fsys["m/x_bad.sql"] = &fstest.MapFile{Data: []byte("bad")}
	if _, err := Pending(fsys, "m", 10); err == nil {
		t.Fatal("a migration not named after its number accepted")
	}
}
