package audit_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/reinhq/rein/audit"
)

// FuzzParseReceipt: any text either fails to parse or parses to a receipt
// that formats back to a text parsing to the same receipt.
func FuzzParseReceipt(f *testing.F) {
	l := newTestLog(f, "rein/fuzz")
	l.add(f, 9, "main")
	f.Add(l.receipt(f, 4, l.checkpoint(f)).Format())
	f.Add([]byte("c2sp.org/tlog-proof@v1\nindex 0\n\nx\n"))
	f.Add([]byte("c2sp.org/tlog-proof@v1\nextra \nindex 0\n\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		r, err := audit.ParseReceipt(text)
		if err != nil {
			return
		}
		again, err := audit.ParseReceipt(r.Format())
		if err != nil {
			t.Fatalf("a parsed receipt does not parse once formatted: %v", err)
		}
		if again.Index != r.Index || !bytes.Equal(again.Entry, r.Entry) || !slices.Equal(again.Proof, r.Proof) || !bytes.Equal(again.Checkpoint, r.Checkpoint) {
			t.Fatalf("round trip changed the receipt")
		}
	})
}

// FuzzParsePolicy: any text either fails to parse or gives a policy whose
// Check does not panic on a signed checkpoint.
func FuzzParsePolicy(f *testing.F) {
	l := newTestLog(f, "rein/fuzz")
	l.add(f, 3, "main")
	signed := l.checkpoint(f)
	w := newTestWitness(f, "w.example/w")
	f.Add([]byte("log " + l.vkey + "\nwitness W " + w.vkey + "\ngroup G any W\nquorum G\n"))
	f.Add([]byte("quorum none\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		p, err := audit.ParsePolicy(text)
		if err != nil {
			return
		}
		p.Check(signed)
		p.Check(w.cosign(t, signed))
	})
}
