package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/transparency-dev/witness/persistence/inmemory"
	"github.com/transparency-dev/witness/witness"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/client"
)

// startWitness runs transparency-dev's witness (the library behind
// omniwitness) on loopback, following the log l, and returns its URL.
func startWitness(t *testing.T, l *testLog, w *testWitness) string {
	logV, err := note.NewVerifier(l.vkey)
	if err != nil {
		t.Fatal(err)
	}
	wit, err := witness.New(context.Background(), witness.Opts{
		Persistence: inmemory.New(),
		Signers:     []note.Signer{w.signer},
		VerifierForLog: func(_ context.Context, origin string) (note.Verifier, bool, error) {
			return logV, origin == l.origin, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", witness.NewHTTPHandler(wit).AddCheckpoint)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveProofs answers rein's consistency-proof endpoint from l's tree, as
// the submitter asks rein for the proof a witness needs.
func serveProofs(t *testing.T, l *testLog) *client.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		old, _ := strconv.ParseInt(r.URL.Query().Get("old"), 10, 64)
		n, _ := strconv.ParseInt(r.URL.Query().Get("new"), 10, 64)
		proof, err := tlog.ProveTree(n, old, l.tree)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		hs := make([]string, len(proof))
		for i, h := range proof {
			hs[i] = h.String()
		}
		json.NewEncoder(w).Encode(map[string]any{"old": old, "new": n, "hashes": hs})
	}))
	t.Cleanup(srv.Close)
	return client.New(srv.URL, "")
}

// TestRealWitnessCosigns submits rein checkpoints to two running witnesses:
// they cosign a growing log (the second time after a consistency proof
// from the size they hold), the cosigned checkpoint meets the policy's
// quorum, and they refuse a fork and a stale checkpoint.
func TestRealWitnessCosigns(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, "rein/dep_witnessed")
	w1, w2 := newTestWitness(t, "w1.example/witness"), newTestWitness(t, "w2.example/witness")
	text := fmt.Sprintf("log %s\nwitness W1 %s %s\nwitness W2 %s %s\ngroup both all W1 W2\nquorum both\n",
		l.vkey, w1.vkey, startWitness(t, l, w1), w2.vkey, startWitness(t, l, w2))
	p, err := audit.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	c := serveProofs(t, l)

	l.add(t, 10, "main")
	first := l.checkpoint(t)
	if _, err := p.Check(first); err == nil {
		t.Fatal("an uncosigned checkpoint met the quorum")
	}
	cosigned, errs := c.WitnessAll(ctx, p, first)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, err := p.Check(cosigned); err != nil || len(got) != 2 {
		t.Fatalf("after witnessing at 10: %v, %v", got, err)
	}

	l.add(t, 15, "main")
	second := l.checkpoint(t)
	cosigned, errs = c.WitnessAll(ctx, p, second)
	if len(errs) > 0 {
		t.Fatalf("after growing to 25: %v", errs)
	}
	if _, err := p.Check(cosigned); err != nil {
		t.Fatal(err)
	}
	// A receipt against the cosigned checkpoint verifies under the policy.
	r := l.receipt(t, 12, cosigned)
	if got, err := audit.VerifyReceipt(r, audit.ReceiptOptions{Policy: p}); err != nil || len(got.Witnesses) != 2 {
		t.Fatalf("cosigned receipt: %+v, %v", got, err)
	}
	if _, err := audit.VerifyReceipt(l.receipt(t, 12, second), audit.ReceiptOptions{Policy: p}); err == nil {
		t.Fatal("a receipt without cosignatures met the quorum")
	}

	// Stale: the witnesses have cosigned 25 entries; 10 is in their past.
	var stale *client.StaleError
	if _, err := c.Witness(ctx, p.Witnesses[0], first); !errors.As(err, &stale) || stale.Size != 25 {
		t.Fatalf("stale checkpoint: %v", err)
	}

	// A fork: same origin and key, other entries. The witness refuses it.
	f := l.fork()
	f.add(t, 30, "fork")
	fc := serveProofs(t, f)
	_, err = fc.Witness(ctx, p.Witnesses[0], f.checkpoint(t))
	if err == nil || !strings.Contains(err.Error(), "422") {
		t.Fatalf("forked checkpoint: %v; want the witness's 422", err)
	}
}
