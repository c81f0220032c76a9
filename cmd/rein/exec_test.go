package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"testing"

	"github.com/reinhq/rein"
)

// TestShellLine: the check names exactly what sh runs: each word comes back
// from sh -c as it was given, whatever it holds; a word sh cannot carry is
// refused.
func TestShellLine(t *testing.T) {
	for _, words := range [][]string{
		{"make", "test"},
		{"rm", "-rf", "./build dir"},
		{"echo", "$HOME", "`id`", "$(id)", "a;b", "it's", `"q"`, "*", "~"},
		{"sh", "-c", "go build ./... && go test ./..."},
		{"printf", `a\nb`},
	} {
		line, err := shellLine(words)
		if err != nil {
			t.Fatalf("%q: %v", words, err)
		}
		// sh prints each word back on its own line.
		out, err := exec.Command("sh", "-c", "for w in "+line+"; do printf '%s\\n' \"$w\"; done").Output()
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		for _, w := range words {
			want += w + "\n"
		}
		if string(out) != want {
			t.Errorf("%q quoted as %s came back as %q", words, line, out)
		}
	}
	if _, err := shellLine([]string{"a\x00b"}); err == nil {
		t.Error("a NUL byte was quoted")
	}
}

// TestRefusal: only a run answer runs; every other answer says why not.
func TestRefusal(t *testing.T) {
	asked := []byte(`{"command":"make"}`)
	for _, c := range []struct {
		d   rein.Decision
		run bool
	}{{rein.Allow, true}, {rein.Modify, true}, {rein.Deny, false}, {rein.Ask, false}, {rein.Throttle, false}, {"maybe", false}} {
		ans := rein.AnswerFor(c.d, "why", asked, asked, nil, nil)
		if got := refusal(ans, "r") == ""; got != c.run {
			t.Errorf("%s: runs %v", c.d, got)
		}
	}
}

// TestOutputHash counts and hashes what passes.
func TestOutputHash(t *testing.T) {
	o := newOutputHash()
	o.Write([]byte("out-"))
	o.Write([]byte("line\n"))
	sum := sha256.Sum256([]byte("out-line\n"))
	if o.n != 9 || o.sum() != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("%d %s", o.n, o.sum())
	}
}
