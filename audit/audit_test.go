package audit

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestCheckpointRoundTrip(t *testing.T) {
	c := Checkpoint{Origin: "rein/dep_1", Size: 42, Root: tlog.RecordHash([]byte("x"))}
	got, err := ParseCheckpoint(c.Body())
	if err != nil || got != c {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "rein\n42\n", "rein\n-1\nAAAA\n", "rein\n042\n" + strings.Repeat("A", 43) + "=\n", "rein\n1\nnot-base64\n", "\n1\n" + strings.Repeat("A", 43) + "=\n"} {
		if _, err := ParseCheckpoint(bad); err == nil {
			t.Errorf("ParseCheckpoint(%q) accepted", bad)
		}
	}
}

func TestSplitNotes(t *testing.T) {
	one := "origin\n1\nroot\n\n— key sig1\n"
	two := "origin\n2\nroot2\n\n— key sig2\n— other sig3\n"
	got := SplitNotes([]byte(one + "\n" + two))
	if len(got) != 2 || string(got[0]) != one || string(got[1]) != two {
		t.Fatalf("SplitNotes = %q", got)
	}
}

func TestEntryIndex(t *testing.T) {
	cases := map[string]int64{
		`{"actor":"a","data":{"index":5,"kind":"x"},"index":7,"kind":"check","v":1}`: 7,
		`{"actor":"a","data":{"index":5},"kind":"check","v":1}`:                      -1,
		`{"actor":"a","data":{},"xindex":7,"kind":"check","v":1}`:                    -1,
		`{"actor":"a","index":7,"kind":"check","v":2}`:                               -1,
	}
	for line, want := range cases {
		got, err := entryIndex([]byte(line))
		if (want < 0) != (err != nil) || (want >= 0 && got != want) {
			t.Errorf("entryIndex(%s) = %d, %v; want %d", line, got, err, want)
		}
	}
}

// TestVerify runs the verifier on a generated bundle, untouched and with
// one change of each kind.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	vkey := writeBundle(t, dir, 1000, 100)
	known, _ := Verifiers(vkey)
	entries, _ := os.ReadFile(filepath.Join(dir, "entries.ndjson"))
	cps, _ := os.ReadFile(filepath.Join(dir, "checkpoints.txt"))
	run := func(e []byte) (*Report, error) {
		return Verify(Bundle{Entries: bufio.NewReader(bytes.NewReader(e)), Checkpoints: cps}, Options{Known: known})
	}
	rep, err := run(entries)
	if err != nil || rep.Entries != 1000 || rep.Checkpoints != 10 || rep.Latest.Size != 1000 {
		t.Fatalf("untouched bundle: %+v %v", rep, err)
	}
	lines := bytes.Split(bytes.TrimSuffix(entries, []byte("\n")), []byte("\n"))
	join := func(ls [][]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }
	clone := func() [][]byte { return append([][]byte(nil), lines...) }
	changed := clone()
	changed[450] = bytes.Replace(changed[450], []byte(`"allow"`), []byte(`"allox"`), 1)
	deleted := append(clone()[:450:450], lines[451:]...)
	swapped := clone()
	swapped[450], swapped[451] = swapped[451], swapped[450]
	for name, c := range map[string]struct {
		e     []byte
		index int64
	}{
		"changed": {join(changed), 400}, "deleted": {join(deleted), 450}, "swapped": {join(swapped), 450},
		"truncated": {join(lines[:990]), 990},
	} {
		_, err := run(c.e)
		f, ok := err.(*Failure)
		if !ok || f.Index != c.index {
			t.Errorf("%s: %v; want a failure at index %d", name, err, c.index)
		}
	}
}
