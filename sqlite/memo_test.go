package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// revokeBound is the documented bound (docs/scale.md) on how long a key
// revoked by another process keeps authenticating here: the idle writer's
// poll of PRAGMA data_version, plus room for a loaded machine.
const revokeBound = externalPoll + 400*time.Millisecond

func testKey(tenant, name string) *rein.Key {
	id := rein.NewID("key")
	return &rein.Key{ID: id, Name: name, Tenant: tenant, Roles: []rein.Role{rein.RoleAgent}, Groups: []string{},
		SecretHash: rein.HashSecret("secret-" + id), CreatedAt: time.Now().UTC()}
}

// waitGone polls KeyBySecretHash until the key no longer authenticates and
// returns how long that took after start, failing the test past bound.
func waitGone(t *testing.T, db *DB, k *rein.Key, start time.Time, bound time.Duration) time.Duration {
	t.Helper()
	for {
		_, err := db.KeyBySecretHash(context.Background(), k.SecretHash)
		if errors.Is(err, rein.ErrNotFound) {
			return time.Since(start)
		}
		if err != nil {
			t.Fatalf("authenticate: %v", err)
		}
		if time.Since(start) > bound {
			t.Fatalf("key %s still authenticates %v after another connection revoked it (bound %v)", k.ID, time.Since(start), bound)
		}
		time.Sleep(time.Millisecond)
	}
}

// A key revoked through another connection to the same file (another rein
// process, a replica on the same disk) stops authenticating here within the
// bound, although this store remembered it.
func TestKeyRevokedByAnotherConnectionStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	ctx := context.Background()
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	k := testKey("acme", "bot")
	if err := a.CreateKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 { // remembered by a
		if _, err := a.KeyBySecretHash(ctx, k.SecretHash); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if err := b.RevokeKey(ctx, k.ID, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	took := waitGone(t, a, k, start, revokeBound)
	t.Logf("stopped authenticating %v after the other connection's revoke", took)
}

// The same across processes: a child process (this test binary) opens the
// file and revokes the key while this one keeps authenticating with it.
func TestKeyRevokedByAnotherProcessStops(t *testing.T) {
	if path := os.Getenv("REIN_TEST_REVOKE_DB"); path != "" {
		revokeAsChild(t, path, os.Getenv("REIN_TEST_REVOKE_KEY"))
		return
	}
	path := filepath.Join(t.TempDir(), "rein.db")
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k := testKey("acme", "bot")
	if err := db.CreateKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.KeyBySecretHash(ctx, k.SecretHash); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeyRevokedByAnotherProcessStops$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REIN_TEST_REVOKE_DB="+path, "REIN_TEST_REVOKE_KEY="+k.ID)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	// The child has exited, so its commit is durable: from now on the bound runs.
	took := waitGone(t, db, k, time.Now(), revokeBound)
	t.Logf("stopped authenticating %v after the other process's revoke", took)
	// While the store is busy writing, the check happens at each transaction.
	k2 := testKey("acme", "bot2")
	if err := db.CreateKey(ctx, k2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.KeyBySecretHash(ctx, k2.SecretHash); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a stream of writes
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				db.Append(ctx, &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindServerStarted, Actor: "t", Subject: "x", Data: map[string]any{}})
			}
		}
	}()
	cmd = exec.Command(os.Args[0], "-test.run=^TestKeyRevokedByAnotherProcessStops$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REIN_TEST_REVOKE_DB="+path, "REIN_TEST_REVOKE_KEY="+k2.ID)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	took = waitGone(t, db, k2, time.Now(), revokeBound)
	close(stop)
	<-done
	t.Logf("under writes: stopped authenticating %v after the other process's revoke", took)
}

// revokeAsChild is the other process of TestKeyRevokedByAnotherProcessStops:
// it opens the same file and revokes the key.
func revokeAsChild(t *testing.T, path, id string) {
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.RevokeKey(context.Background(), id, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
}

// Sessions remembered here are forgotten when another connection records
// into them: the counters and repeats read next are the stored ones.
func TestSessionChangedByAnotherConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	ctx := context.Background()
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := func(db *DB, id, hash string) {
		r := &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: id, Decision: rein.Allow, ActionHash: hash},
			Tenant: "acme", CreatedAt: time.Now(), KeyID: "key_1", Check: rein.CheckInput{Tool: "t", Session: "run", Agent: "bot"}}
		if _, err := db.RecordCheck(ctx, r, nil, nil, []*rein.Entry{{TS: r.CreatedAt, Tenant: "acme", Kind: rein.KindCheck, Actor: "bot", Subject: id, Data: map[string]any{}}}); err != nil {
			t.Fatal(err)
		}
	}
	rec(a, "chk_1", "sha256:x")
	if s, n, err := a.SessionState(ctx, "acme", "run", "sha256:y"); err != nil || s.Checks != 1 || n != 0 {
		t.Fatalf("after one check: %+v %d %v", s, n, err)
	}
	rec(b, "chk_2", "sha256:y")
	deadline := time.Now().Add(revokeBound)
	for {
		s, n, err := a.SessionState(ctx, "acme", "run", "sha256:y")
		if err != nil {
			t.Fatal(err)
		}
		if s.Checks == 2 && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("another connection's check is not seen after %v: %+v, %d repeats", revokeBound, s, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Repeats answered from memory agree with the database for every action,
// including those the filter must send to the database (seen before) and
// many distinct ones.
func TestSessionRepeatsFromMemoryMatchTheStore(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	want := map[string]int64{}
	for i := range 600 {
		hash := fmt.Sprintf("sha256:%d", i%450) // 150 actions checked twice
		r := &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: fmt.Sprintf("chk_%04d", i), Decision: rein.Allow, ActionHash: hash},
			Tenant: "acme", CreatedAt: time.Now(), KeyID: "key_1", Check: rein.CheckInput{Tool: "t", Session: "run", Agent: "bot"}}
		s, n, err := db.SessionState(ctx, "acme", "run", hash)
		if err != nil {
			t.Fatal(err)
		}
		if n != want[hash] || (i > 0 && s.Checks != int64(i)) {
			t.Fatalf("check %d: %d repeats of %s, want %d; session %+v", i, n, hash, want[hash], s)
		}
		if _, err := db.RecordCheck(ctx, r, nil, nil, []*rein.Entry{{TS: r.CreatedAt, Tenant: "acme", Kind: rein.KindCheck, Actor: "bot", Subject: r.ID, Data: map[string]any{}}}); err != nil {
			t.Fatal(err)
		}
		want[hash]++
	}
	if e := db.memo.sessions[sessionID{"acme", "run"}]; e == nil || e.seen == nil {
		t.Fatalf("the session is not remembered with its actions: %+v", e)
	}
}

// Two stores on one file (two processes) appending in turn keep the audit
// log's indexes contiguous: a writer that remembers the log's next index
// reads it again after the other's commits.
func TestAuditIndexesContiguousAcrossConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	ctx := context.Background()
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e := func() *rein.Entry {
		return &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindServerStarted, Actor: "t", Subject: "x", Data: map[string]any{}}
	}
	for i := range 30 {
		db := a
		if i%3 == 2 {
			db = b
		}
		if err := db.Append(ctx, e(), e()); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	got, err := a.Entries(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Fatalf("%d entries, want 60", len(got))
	}
	for i, x := range got {
		if x.Index != int64(i) {
			t.Fatalf("entry %d has index %d", i, x.Index)
		}
	}
}
