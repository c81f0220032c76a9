package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein/audit"
)

const auditPolicy = `version: 1
default: deny
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
`

// auditServer starts a server with the audit policy and returns it with its
// admin key and the verifier key of its checkpoints.
func auditServer(t *testing.T, data string, env []string) (*server, string, string) {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, pol, auditPolicy)
	s := startServer(t, data, env, "--policy", pol)
	admin := s.adminKey()
	var keys struct{ Keys []struct{ Verifier string } }
	getJSON(t, s.URL+"/v1/audit/keys", admin, &keys)
	if len(keys.Keys) == 0 {
		t.Fatal("no audit signing key published")
	}
	return s, admin, keys.Keys[len(keys.Keys)-1].Verifier
}

// sealedCheckpoint waits until the latest checkpoint covers at least n
// entries and returns its size.
func sealedCheckpoint(t *testing.T, s *server, key string, n int64) int64 {
	t.Helper()
	var size int64
	eventually(t, 10*time.Second, "a checkpoint covers the entries", func() string {
		code, body := httpDo(t, "GET", s.URL+"/v1/audit/checkpoint", key, nil, "")
		if code != 200 {
			return fmt.Sprintf("checkpoint: %d %s", code, body)
		}
		c, err := audit.ParseCheckpoint(noteText(body))
		if err != nil {
			return err.Error()
		}
		if size = c.Size; size < n {
			return fmt.Sprintf("checkpoint at %d, want %d", size, n)
		}
		return ""
	})
	return size
}

func noteText(signed []byte) string {
	text, _, _ := bytes.Cut(signed, []byte("\n\n"))
	return string(text) + "\n"
}

func doChecks(t *testing.T, s *server, key string, n int) {
	t.Helper()
	for i := range n {
		code, body := httpDo(t, "POST", s.URL+"/v1/check", key, []byte(fmt.Sprintf(`{"tool":"fs.read","args":{"path":"f%d"}}`, i)), "application/json")
		if code != 200 {
			t.Fatalf("check: %d %s", code, body)
		}
	}
}

func auditSize(t *testing.T, s *server, key string) int64 {
	t.Helper()
	var n int64
	for {
		_, body := httpDo(t, "GET", fmt.Sprintf("%s/v1/audit/entries?start=%d&limit=10000", s.URL, n), key, nil, "")
		lines := int64(bytes.Count(body, []byte("\n")))
		n += lines
		if lines < 10000 {
			return n
		}
	}
}

// copyBundle copies an exported bundle to a new directory for tampering.
func copyBundle(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	for _, name := range []string{"entries.ndjson", "checkpoints.txt", "keys.json", "manifest.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(out, name), string(b))
	}
	return out
}

func editLines(t *testing.T, dir, name string, edit func([]string) []string) {
	t.Helper()
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	writeFile(t, path, strings.Join(edit(lines), "\n")+"\n")
}

// TestAuditTamperBattery exports a real bundle, verifies it, and then
// checks that every kind of tampering is reported.
func TestAuditTamperBattery(t *testing.T) {
	data := t.TempDir()
	s, admin, vkey := auditServer(t, data, nil)
	doChecks(t, s, admin, 40)
	size := sealedCheckpoint(t, s, admin, auditSize(t, s, admin))
	bundle := filepath.Join(t.TempDir(), "bundle")
	cli := s.clientEnv(admin)
	if r := rein(t, cli, "audit", "export", "--out", bundle); r.code != 0 {
		t.Fatalf("export: %s", r)
	}
	pin := filepath.Join(t.TempDir(), "pinned.checkpoint")
	if r := rein(t, nil, "audit", "verify", bundle, "--key", vkey, "--pin", pin); r.code != 0 || !strings.HasPrefix(r.stdout, "OK") {
		t.Fatalf("verify of an untouched bundle: %s", r)
	}
	if r := rein(t, nil, "audit", "verify", bundle, "--key", vkey, "--trusted", pin); r.code != 0 {
		t.Fatalf("verify against its own pin: %s", r)
	}
	mid := int(size / 2)
	otherSigner, otherVkey := newNoteKey(t, "rein/impostor")
	cases := []struct {
		name   string
		tamper func(dir string)
		extra  []string
		want   string
	}{
		{"a changed byte in one entry", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string {
				l[mid] = strings.Replace(l[mid], `"fs.read"`, `"fs.reaD"`, 1)
				return l
			})
		}, nil, "do not give the root"},
		{"a deleted entry", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string { return append(l[:mid:mid], l[mid+1:]...) })
		}, nil, fmt.Sprintf("index %d", mid)},
		{"two entries swapped", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string { l[mid], l[mid+1] = l[mid+1], l[mid]; return l })
		}, nil, fmt.Sprintf("index %d", mid)},
		{"an inserted entry", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string {
				return append(l[:mid:mid], append([]string{l[mid]}, l[mid:]...)...)
			})
		}, nil, fmt.Sprintf("index %d", mid+1)},
		{"a re-encoded entry", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string { l[mid] = strings.Replace(l[mid], `{"actor"`, `{ "actor"`, 1); return l })
		}, nil, "canonical"},
		{"the tail cut off", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string { return l[:len(l)-3] })
		}, nil, "cut off"},
		{"the tail and its checkpoints cut off, against the pinned checkpoint", func(dir string) {
			editLines(t, dir, "entries.ndjson", func(l []string) []string { return l[:mid] })
			cps, _ := os.ReadFile(filepath.Join(dir, "checkpoints.txt"))
			var keep [][]byte
			for _, n := range audit.SplitNotes(cps) {
				if c, _ := audit.ParseCheckpoint(noteText(n)); c.Size <= int64(mid) {
					keep = append(keep, n)
				}
			}
			writeFile(t, filepath.Join(dir, "checkpoints.txt"), string(bytes.Join(keep, []byte("\n"))))
		}, []string{"--trusted", pin}, "cut off"},
		{"a checkpoint's root replaced", func(dir string) {
			editLines(t, dir, "checkpoints.txt", func(l []string) []string {
				for i := range l {
					if i > 1 && l[i-1] != "" && strings.HasSuffix(l[i], "=") && !strings.HasPrefix(l[i], "—") {
						l[i] = base64.StdEncoding.EncodeToString(make([]byte, 32))
						break
					}
				}
				return l
			})
		}, nil, "does not verify"},
		{"a checkpoint signed by another key", func(dir string) {
			cps, _ := os.ReadFile(filepath.Join(dir, "checkpoints.txt"))
			notes := audit.SplitNotes(cps)
			c, _ := audit.ParseCheckpoint(noteText(notes[len(notes)-1]))
			forged, err := audit.Sign(c, otherSigner)
			if err != nil {
				t.Fatal(err)
			}
			notes[len(notes)-1] = forged
			writeFile(t, filepath.Join(dir, "checkpoints.txt"), string(bytes.Join(notes, []byte("\n"))))
		}, nil, "does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyBundle(t, bundle)
			c.tamper(dir)
			r := rein(t, nil, append([]string{"audit", "verify", dir, "--key", vkey}, c.extra...)...)
			if r.code != 1 || !strings.Contains(r.stdout, "FAILED") || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("tampering (%s) not reported as wanted (%q): %s", c.name, c.want, r)
			}
		})
	}
	if r := rein(t, nil, "audit", "verify", bundle, "--key", otherVkey); r.code != 1 {
		t.Errorf("verify with an unrelated key passed: %s", r)
	}

	// A forked log signed with the same key and origin (a restored backup,
	// a rewritten database): its checkpoint is inconsistent with the pin.
	skey, err := os.ReadFile(filepath.Join(data, "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	var origin string
	if cps, err := os.ReadFile(filepath.Join(bundle, "checkpoints.txt")); err == nil {
		c, _ := audit.ParseCheckpoint(noteText(audit.SplitNotes(cps)[0]))
		origin = c.Origin
	}
	cfg := filepath.Join(t.TempDir(), "rein.yaml")
	writeFile(t, cfg, "audit_origin: "+origin+"\n")
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, pol, auditPolicy)
	fork := startServer(t, t.TempDir(), []string{"REIN_AUDIT_KEY=" + strings.TrimSpace(string(skey))}, "--config", cfg, "--policy", pol)
	forkAdmin := fork.adminKey()
	doChecks(t, fork, forkAdmin, 3)
	sealedCheckpoint(t, fork, forkAdmin, auditSize(t, fork, forkAdmin))
	_, forked := httpDo(t, "GET", fork.URL+"/v1/audit/checkpoint", forkAdmin, nil, "")
	forkPin := filepath.Join(t.TempDir(), "forked.checkpoint")
	writeFile(t, forkPin, string(forked))
	if r := rein(t, nil, "audit", "verify", bundle, "--key", vkey, "--trusted", forkPin); r.code != 1 || !strings.Contains(r.stdout, "rewritten") {
		t.Fatalf("a checkpoint of a forked log, signed by the same key, was not reported: %s", r)
	}
}

// newNoteKey makes an unrelated signing key.
func newNoteKey(t *testing.T, name string) (note.Signer, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return signer, vkey
}
