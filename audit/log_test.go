package audit_test

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// testLog is a log held in memory, signed like rein's: what receipts and
// witnesses are tested against.
type testLog struct {
	origin  string
	signer  note.Signer
	vkey    string
	entries [][]byte
	tree    *audit.Tree
}

func newTestLog(t testing.TB, origin string) *testLog {
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{origin: origin, signer: signer, vkey: vkey, tree: &audit.Tree{}}
}

// forkOf is a log with the same origin and key as l but its own entries.
func (l *testLog) fork() *testLog {
	return &testLog{origin: l.origin, signer: l.signer, vkey: l.vkey, tree: &audit.Tree{}}
}

// add appends n check entries whose reason says which branch wrote them.
func (l *testLog) add(t testing.TB, n int, branch string) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for range n {
		i := int64(len(l.entries))
		e := &rein.Entry{TS: t0.Add(time.Duration(i) * time.Millisecond), Tenant: "acme", Kind: rein.KindCheck,
			Actor: "builder", Subject: fmt.Sprintf("chk_%d", i), PolicyVersion: "sha256:00",
			Data: map[string]any{"tool": "shell.exec", "decision": "allow", "reason": branch}}
		b, err := e.Encode(i)
		if err != nil {
			t.Fatal(err)
		}
		l.entries = append(l.entries, b)
		if err := l.tree.AppendLeaf(tlog.RecordHash(b)); err != nil {
			t.Fatal(err)
		}
	}
}

// checkpoint signs the checkpoint of the whole log.
func (l *testLog) checkpoint(t testing.TB) []byte {
	root, err := l.tree.Root(l.tree.Size())
	if err != nil {
		t.Fatal(err)
	}
	signed, err := audit.Sign(audit.Checkpoint{Origin: l.origin, Size: l.tree.Size(), Root: root}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// receipt is the receipt of entry index against the checkpoint signed.
func (l *testLog) receipt(t testing.TB, index int64, signed []byte) *audit.Receipt {
	c, _, err := audit.Open(signed, l.known(t))
	if err != nil {
		t.Fatal(err)
	}
	proof, err := tlog.ProveRecord(c.Size, index, l.tree)
	if err != nil {
		t.Fatal(err)
	}
	return &audit.Receipt{Entry: l.entries[index], Index: index, Proof: proof, Checkpoint: signed}
}

func (l *testLog) known(t testing.TB) note.Verifiers {
	known, err := audit.Verifiers(l.vkey)
	if err != nil {
		t.Fatal(err)
	}
	return known
}
