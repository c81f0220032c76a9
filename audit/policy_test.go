package audit_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	fnote "github.com/transparency-dev/formats/note"
	fwitness "github.com/transparency-dev/formats/witness"
	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein/audit"
)

// testWitness is a cosigner key pair in the C2SP vkey format.
type testWitness struct {
	name, skey, vkey string
	signer           note.Signer
}

func newTestWitness(t testing.TB, name string) *testWitness {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	return &testWitness{name: name, skey: skey, vkey: vkey, signer: s}
}

// cosign adds w's cosignature/v1 to a signed checkpoint.
func (w *testWitness) cosign(t testing.TB, signed []byte) []byte {
	text, _, _ := strings.Cut(string(signed), "\n\n")
	one, err := note.Sign(&note.Note{Text: text + "\n"}, w.signer)
	if err != nil {
		t.Fatal(err)
	}
	_, sig, _ := strings.Cut(string(one), "\n\n")
	return append(append([]byte(nil), signed...), sig...)
}

func TestParsePolicyFollowsTheSpec(t *testing.T) {
	l := newTestLog(t, "rein/dep_policy")
	a, b := newTestWitness(t, "w.example/a"), newTestWitness(t, "w.example/b")
	ok := []string{
		"quorum none\n",
		"# a comment\n  \nlog " + l.vkey + "\nquorum none\n",
		"witness A " + a.vkey + "\nquorum A\n",
		"witness A " + a.vkey + " https://a.example/\nwitness B\t" + b.vkey + "\ngroup G 2 A B\nquorum G\n",
		"witness A " + a.vkey + "\nwitness B " + b.vkey + "\ngroup G any A B\ngroup H all G\nquorum H\n",
	}
	for _, p := range ok {
		if _, err := audit.ParsePolicy([]byte(p)); err != nil {
			t.Errorf("rejected %q: %v", p, err)
		}
	}
	bad := map[string]string{
		"no quorum":           "witness A " + a.vkey + "\n",
		"two quorums":         "quorum none\nquorum none\n",
		"undefined quorum":    "quorum A\n",
		"quorum before def":   "quorum A\nwitness A " + a.vkey + "\n",
		"group before def":    "group G any A\nwitness A " + a.vkey + "\nquorum G\n",
		"k too large":         "witness A " + a.vkey + "\ngroup G 2 A\nquorum G\n",
		"k zero":              "witness A " + a.vkey + "\ngroup G 0 A\nquorum G\n",
		"k leading zero":      "witness A " + a.vkey + "\ngroup G 01 A\nquorum G\n",
		"member twice":        "witness A " + a.vkey + "\ngroup G any A A\nquorum G\n",
		"empty group":         "group G any\nquorum none\n",
		"name twice":          "witness A " + a.vkey + "\nwitness A " + b.vkey + "\nquorum A\n",
		"keyword as name":     "witness none " + a.vkey + "\nquorum none\n",
		"duplicate key":       "witness A " + a.vkey + "\nwitness B " + strings.Replace(a.vkey, "w.example/a", "w.example/c", 1) + "\nquorum none\n",
		"bad key":             "witness A notakey\nquorum none\n",
		"unknown keyword":     "monitor M x\nquorum none\n",
		"control character":   "quorum none\r\n",
		"none as a member":    "witness A " + a.vkey + "\ngroup G any A none\nquorum G\n",
		"log with two urls":   "log " + l.vkey + " https://a https://b\nquorum none\n",
		"witness with no key": "witness A\nquorum none\n",
	}
	for name, p := range bad {
		if _, err := audit.ParsePolicy([]byte(p)); err == nil {
			t.Errorf("%s: accepted %q", name, p)
		}
	}
}

// TestPolicyQuorum checks the quorum against every subset of three
// witnesses' cosignatures, and against transparency-dev/formats' own
// policy code on the same file.
func TestPolicyQuorum(t *testing.T) {
	l := newTestLog(t, "rein/dep_policy")
	l.add(t, 5, "main")
	signed := l.checkpoint(t)
	ws := []*testWitness{newTestWitness(t, "w.example/x1"), newTestWitness(t, "w.example/x2"), newTestWitness(t, "w.example/y1")}
	text := fmt.Sprintf("log %s\nwitness X1 %s https://x1.example\nwitness X2 %s https://x2.example\nwitness Y1 %s https://y1.example\n"+
		"group X any X1 X2\ngroup XY all X Y1\nquorum XY\n", l.vkey, ws[0].vkey, ws[1].vkey, ws[2].vkey)
	p, err := audit.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := fwitness.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for mask := 0; mask < 8; mask++ {
		cp := signed
		for i, w := range ws {
			if mask&(1<<i) != 0 {
				cp = w.cosign(t, cp)
			}
		}
		want := mask&4 != 0 && mask&3 != 0
		_, err := p.Check(cp)
		if (err == nil) != want {
			t.Errorf("cosigned by %03b: Check = %v, want satisfied %v", mask, err, want)
		}
		if theirs.Satisfied(cp) != want {
			t.Errorf("cosigned by %03b: transparency-dev/formats disagrees with the expected %v", mask, want)
		}
	}
	// A cosignature by a key not in the policy, under a witness's name, counts for nothing.
	impostor := newTestWitness(t, "w.example/y1")
	if _, err := p.Check(impostor.cosign(t, ws[0].cosign(t, signed))); err == nil {
		t.Error("an impostor's cosignature satisfied the quorum")
	}
	// The policy's log must have signed the checkpoint.
	other := newTestLog(t, "rein/dep_policy")
	other.add(t, 5, "main")
	if _, err := p.Check(ws[2].cosign(t, ws[0].cosign(t, other.checkpoint(t)))); err == nil {
		t.Error("a checkpoint of a log not in the policy passed")
	}
}

// TestMLDSACosignatures: a policy may name ML-DSA-44 witnesses
// (tlog-cosignature's recommended algorithm for new cosigners).
func TestMLDSACosignatures(t *testing.T) {
	l := newTestLog(t, "rein/dep_policy")
	l.add(t, 3, "main")
	skey, vkey, err := fnote.GenerateMLDSAKey("pq.example/w")
	if err != nil {
		t.Fatal(err)
	}
	s, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := audit.ParsePolicy([]byte("witness PQ " + vkey + "\nquorum PQ\n"))
	if err != nil {
		t.Fatal(err)
	}
	signed := l.checkpoint(t)
	if _, err := p.Check(signed); err == nil {
		t.Fatal("the quorum passed with no cosignature")
	}
	w := &testWitness{name: "pq.example/w", signer: s}
	if got, err := p.Check(w.cosign(t, signed)); err != nil || len(got) != 1 || got[0] != "PQ" {
		t.Fatalf("ML-DSA-44 cosignature: %v, %v", got, err)
	}
}

// TestVerifyBundleWithPolicy: a bundle passes under a policy only when its
// latest checkpoint carries the quorum; the policy's log line stands in
// for --key.
func TestVerifyBundleWithPolicy(t *testing.T) {
	l := newTestLog(t, "rein/dep_bundle")
	w := newTestWitness(t, "w.example/w")
	l.add(t, 5, "main")
	first := l.checkpoint(t)
	l.add(t, 5, "main")
	latest := l.checkpoint(t)
	p, err := audit.ParsePolicy([]byte(fmt.Sprintf("log %s\nwitness W %s\nquorum W\n", l.vkey, w.vkey)))
	if err != nil {
		t.Fatal(err)
	}
	entries := append(bytes.Join(l.entries, []byte("\n")), '\n')
	run := func(latest []byte) (*audit.Report, error) {
		cps := append(append(bytes.Clone(first), '\n'), latest...)
		return audit.Verify(audit.Bundle{Entries: bytes.NewReader(entries), Checkpoints: cps}, audit.Options{Policy: p})
	}
	if _, err := run(latest); err == nil || !strings.Contains(err.Error(), "quorum") {
		t.Fatalf("uncosigned latest checkpoint: %v", err)
	}
	rep, err := run(w.cosign(t, latest))
	if err != nil || len(rep.Witnesses) != 1 || rep.Witnesses[0] != "W" || rep.Entries != 10 {
		t.Fatalf("cosigned: %+v, %v", rep, err)
	}
	if _, err := audit.Verify(audit.Bundle{Entries: bytes.NewReader(entries), Checkpoints: latest}, audit.Options{}); err == nil {
		t.Fatal("a bundle verified with no key at all")
	}
}
