package audit

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
	_ "modernc.org/sqlite"

	"github.com/reinhq/rein/audit"
)

const auditPolicy = `version: 1
default: deny
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
`

// auditServer starts a server with the audit policy and returns it with its
// admin key and the verifier key of its checkpoints.
func auditServer(t *testing.T, data string, env []string) (*harness.Server, string, string) {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, auditPolicy)
	s := harness.StartServer(t, data, env, "--policy", pol)
	admin := s.AdminKey()
	var keys struct{ Keys []struct{ Verifier string } }
	harness.GetJSON(t, s.URL+"/v1/audit/keys", admin, &keys)
	if len(keys.Keys) == 0 {
		t.Fatal("no audit signing key published")
	}
	return s, admin, keys.Keys[len(keys.Keys)-1].Verifier
}

func doChecks(t *testing.T, s *harness.Server, key string, n int) {
	t.Helper()
	for i := range n {
		code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/check", key, []byte(fmt.Sprintf(`{"tool":"fs.read","args":{"path":"f%d"}}`, i)), "application/json")
		if code != 200 {
			t.Fatalf("check: %d %s", code, body)
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
		harness.WriteFile(t, filepath.Join(out, name), string(b))
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
	harness.WriteFile(t, path, strings.Join(edit(lines), "\n")+"\n")
}

// TestAuditTamperBattery exports a real bundle, verifies it, and then
// checks that every kind of tampering is reported.
func TestAuditTamperBattery(t *testing.T) {
	data := t.TempDir()
	s, admin, vkey := auditServer(t, data, nil)
	doChecks(t, s, admin, 40)
	size := harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	bundle := filepath.Join(t.TempDir(), "bundle")
	cli := s.ClientEnv(admin)
	if r := harness.Rein(t, cli, "audit", "export", "--out", bundle); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	pin := filepath.Join(t.TempDir(), "pinned.checkpoint")
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", vkey, "--pin", pin); r.Code != 0 || !strings.HasPrefix(r.Stdout, "OK") {
		t.Fatalf("verify of an untouched bundle: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", vkey, "--trusted", pin); r.Code != 0 {
		t.Fatalf("verify against its own pin: %s", r)
	}
	if r := harness.Rein(t, cli, "audit", "keys"); r.Code != 0 || strings.TrimSpace(r.Stdout) != vkey {
		t.Fatalf("rein audit keys: %s (want %s)", r, vkey)
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
				if c, _ := audit.ParseCheckpoint(harness.NoteText(n)); c.Size <= int64(mid) {
					keep = append(keep, n)
				}
			}
			harness.WriteFile(t, filepath.Join(dir, "checkpoints.txt"), string(bytes.Join(keep, []byte("\n"))))
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
			c, _ := audit.ParseCheckpoint(harness.NoteText(notes[len(notes)-1]))
			forged, err := audit.Sign(c, otherSigner)
			if err != nil {
				t.Fatal(err)
			}
			notes[len(notes)-1] = forged
			harness.WriteFile(t, filepath.Join(dir, "checkpoints.txt"), string(bytes.Join(notes, []byte("\n"))))
		}, nil, "does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyBundle(t, bundle)
			c.tamper(dir)
			r := harness.Rein(t, nil, append([]string{"audit", "verify", dir, "--key", vkey}, c.extra...)...)
			if r.Code != 1 || !strings.Contains(r.Stdout, "FAILED") || !strings.Contains(r.Stdout, c.want) {
				t.Fatalf("tampering (%s) not reported as wanted (%q): %s", c.name, c.want, r)
			}
		})
	}
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", otherVkey); r.Code != 1 {
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
		c, _ := audit.ParseCheckpoint(harness.NoteText(audit.SplitNotes(cps)[0]))
		origin = c.Origin
	}
	cfg := filepath.Join(t.TempDir(), "rein.yaml")
	harness.WriteFile(t, cfg, "audit_origin: "+origin+"\n")
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, auditPolicy)
	fork := harness.StartServer(t, t.TempDir(), []string{"REIN_AUDIT_KEY=" + strings.TrimSpace(string(skey))}, "--config", cfg, "--policy", pol)
	forkAdmin := fork.AdminKey()
	doChecks(t, fork, forkAdmin, 3)
	harness.SealedCheckpoint(t, fork, forkAdmin, harness.AuditSize(t, fork, forkAdmin))
	_, forked := harness.HTTPDo(t, "GET", fork.URL+"/v1/audit/checkpoint", forkAdmin, nil, "")
	forkPin := filepath.Join(t.TempDir(), "forked.checkpoint")
	harness.WriteFile(t, forkPin, string(forked))
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", vkey, "--trusted", forkPin); r.Code != 1 || !strings.Contains(r.Stdout, "rewritten") {
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

func b64s(t *testing.T, ss []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestAuditProofsWithSecondImplementation checks the inclusion and
// consistency proofs the API serves with github.com/transparency-dev/merkle,
// an implementation independent of the one rein builds on, against roots
// taken from signed checkpoints, and leaf hashes computed from the entries.
func TestAuditProofsWithSecondImplementation(t *testing.T) {
	s, admin, vkey := auditServer(t, t.TempDir(), nil)
	doChecks(t, s, admin, 10)
	old := harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	_, oldNote := harness.HTTPDo(t, "GET", s.URL+"/v1/audit/checkpoint", admin, nil, "")
	doChecks(t, s, admin, 27)
	size := harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	_, newNote := harness.HTTPDo(t, "GET", s.URL+"/v1/audit/checkpoint", admin, nil, "")
	known, err := audit.Verifiers(vkey)
	if err != nil {
		t.Fatal(err)
	}
	oldCP, _, err := audit.Open(oldNote, known)
	if err != nil {
		t.Fatal(err)
	}
	newCP, _, err := audit.Open(newNote, known)
	if err != nil || newCP.Size != size {
		t.Fatalf("latest checkpoint: %v %+v", err, newCP)
	}
	_, entries := harness.HTTPDo(t, "GET", fmt.Sprintf("%s/v1/audit/entries?start=0&limit=%d", s.URL, size), admin, nil, "")
	lines := bytes.Split(bytes.TrimSuffix(entries, []byte("\n")), []byte("\n"))
	if int64(len(lines)) < size {
		t.Fatalf("%d entries for a checkpoint of %d", len(lines), size)
	}
	h := rfc6962.DefaultHasher
	for index := int64(0); index < size; index++ {
		var p struct {
			LeafHash string   `json:"leaf_hash"`
			Hashes   []string `json:"hashes"`
		}
		harness.GetJSON(t, fmt.Sprintf("%s/v1/audit/proof/inclusion?index=%d&size=%d", s.URL, index, size), admin, &p)
		leaf := h.HashLeaf(lines[index])
		if base64.StdEncoding.EncodeToString(leaf) != p.LeafHash {
			t.Fatalf("entry %d: served leaf hash differs from the hash of its bytes", index)
		}
		if err := proof.VerifyInclusion(h, uint64(index), uint64(size), leaf, b64s(t, p.Hashes), newCP.Root[:]); err != nil {
			t.Fatalf("inclusion proof of %d in %d: %v", index, size, err)
		}
		// A proof for one entry does not prove another.
		if index > 0 {
			if err := proof.VerifyInclusion(h, uint64(index), uint64(size), h.HashLeaf(lines[index-1]), b64s(t, p.Hashes), newCP.Root[:]); err == nil {
				t.Fatalf("the proof of %d also proved entry %d", index, index-1)
			}
		}
	}
	var c struct {
		Hashes []string `json:"hashes"`
	}
	harness.GetJSON(t, fmt.Sprintf("%s/v1/audit/proof/consistency?old=%d&new=%d", s.URL, old, size), admin, &c)
	if err := proof.VerifyConsistency(h, uint64(old), uint64(size), b64s(t, c.Hashes), oldCP.Root[:], newCP.Root[:]); err != nil {
		t.Fatalf("consistency proof %d -> %d: %v", old, size, err)
	}
	bad := oldCP.Root
	bad[0] ^= 1
	if err := proof.VerifyConsistency(h, uint64(old), uint64(size), b64s(t, c.Hashes), bad[:], newCP.Root[:]); err == nil {
		t.Fatal("the consistency proof also held for a different old root")
	}
	for _, q := range []string{"index=-1", "index=" + fmt.Sprint(size), "index=0&size=" + fmt.Sprint(size+1000), "index=x"} {
		if code, body := harness.HTTPDo(t, "GET", s.URL+"/v1/audit/proof/inclusion?"+q, admin, nil, ""); code != 400 {
			t.Errorf("inclusion %s: %d %s; want 400", q, code, body)
		}
	}
}

// TestAuditCrash runs checks from many clients, kills the server with
// SIGKILL mid-load, restarts it, and proves every audit_index that was
// returned to a client is in the log with its check, and that the log
// verifies.
func TestAuditCrash(t *testing.T) {
	data := t.TempDir()
	s, admin, vkey := auditServer(t, data, nil)
	type acked struct {
		id    string
		index int64
	}
	var mu sync.Mutex
	var got []acked
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, body, err := tryHTTP("POST", s.URL+"/v1/check", admin, []byte(fmt.Sprintf(`{"tool":"fs.read","args":{"path":"w%d-%d"}}`, w, i)))
				if err != nil || code != 200 {
					continue // the server is gone: nothing was acknowledged
				}
				var a struct {
					ID         string `json:"id"`
					AuditIndex int64  `json:"audit_index"`
				}
				if json.Unmarshal(body, &a) == nil {
					mu.Lock()
					got = append(got, acked{a.ID, a.AuditIndex})
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	s.Kill()
	close(stop)
	wg.Wait()
	if len(got) < 50 {
		t.Fatalf("only %d checks were acknowledged before the kill", len(got))
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, auditPolicy)
	s = harness.StartServer(t, data, nil, "--policy", pol)
	size := harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	lines := harness.AllEntries(t, s, admin)
	for _, a := range got {
		if a.index >= int64(len(lines)) {
			t.Fatalf("check %s was acknowledged with audit_index %d, but the log has %d entries", a.id, a.index, len(lines))
		}
		var e struct{ Kind, Subject string }
		json.Unmarshal(lines[a.index], &e)
		if e.Kind != "check" || e.Subject != a.id {
			t.Fatalf("audit_index %d holds %s %s, not check %s", a.index, e.Kind, e.Subject, a.id)
		}
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	if r := harness.Rein(t, s.ClientEnv(admin), "audit", "export", "--out", bundle); r.Code != 0 {
		t.Fatalf("export after the crash: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", vkey); r.Code != 0 {
		t.Fatalf("verify after the crash: %s", r)
	}
	t.Logf("%d acknowledged checks survived the kill; log of %d entries verifies", len(got), size)
}

// tryHTTP is httpDo without failing the test on connection errors.
func tryHTTP(method, url, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := harness.HTTPClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// TestAuditDatabaseTamper changes the database behind rein's back: the
// triggers refuse UPDATE and DELETE; with them dropped, a changed or
// deleted row is caught by the next export's verification.
func TestAuditDatabaseTamper(t *testing.T) {
	for _, c := range []struct{ name, sql, want string }{
		{"changed entry", `UPDATE audit_entries SET body = replace(body, '"fs.read"', '"fs.reaD"') WHERE idx = 5`, "do not give the root"},
		{"deleted entry", `DELETE FROM audit_entries WHERE idx = 5`, "index 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			s, admin, vkey := auditServer(t, data, nil)
			doChecks(t, s, admin, 12)
			s.Stop() // a graceful stop seals the last entries
			db, err := sql.Open("sqlite", filepath.Join(data, "rein.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(c.sql); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Fatalf("the trigger did not refuse %q: %v", c.sql, err)
			}
			for _, stmt := range []string{"DROP TRIGGER audit_entries_no_update", "DROP TRIGGER audit_entries_no_delete", c.sql} {
				if _, err := db.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			db.Close()
			pol := filepath.Join(t.TempDir(), "policy.yaml")
			harness.WriteFile(t, pol, auditPolicy)
			s = harness.StartServer(t, data, nil, "--policy", pol)
			harness.SealedCheckpoint(t, s, admin, 1)
			time.Sleep(1500 * time.Millisecond) // the restart's own entries are sealed
			bundle := filepath.Join(t.TempDir(), "bundle")
			if r := harness.Rein(t, s.ClientEnv(admin), "audit", "export", "--out", bundle); r.Code != 0 {
				t.Fatalf("export: %s", r)
			}
			if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", vkey); r.Code != 1 || !strings.Contains(r.Stdout, c.want) {
				t.Fatalf("the tampered database was not reported (%q): %s", c.want, r)
			}
		})
	}
}

// TestAuditKeyRotation: after rein audit rotate-key, the log verifies with
// both keys and not with the old one alone, and the rotation entry carries a
// statement signed by both keys.
func TestAuditKeyRotation(t *testing.T) {
	s, admin, oldKey := auditServer(t, t.TempDir(), nil)
	doChecks(t, s, admin, 5)
	cli := s.ClientEnv(admin)
	r := harness.Rein(t, cli, "audit", "rotate-key")
	newKey := strings.TrimSpace(r.Stdout)
	if r.Code != 0 || newKey == "" || newKey == oldKey {
		t.Fatalf("rotate-key: %s", r)
	}
	doChecks(t, s, admin, 5)
	harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	if r := harness.Rein(t, cli, "audit", "keys"); r.Code != 0 || strings.TrimSpace(r.Stdout) != oldKey+"\n"+newKey {
		t.Fatalf("rein audit keys after rotation: %s", r)
	}
	var stmt string
	for _, l := range harness.AllEntries(t, s, admin) {
		var e struct {
			Kind string
			Data struct{ Old, New, Statement string }
		}
		json.Unmarshal(l, &e)
		if e.Kind == "signing_key.rotated" {
			if e.Data.Old != oldKey || e.Data.New != newKey {
				t.Fatalf("rotation entry names %s -> %s", e.Data.Old, e.Data.New)
			}
			stmt = e.Data.Statement
		}
	}
	both, _ := audit.Verifiers(oldKey, newKey)
	n, err := note.Open([]byte(stmt), both)
	if err != nil || len(n.Sigs) != 2 {
		t.Fatalf("the rotation statement is not signed by both keys: %v (%d signatures)", err, len(n.Sigs))
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	if r := harness.Rein(t, cli, "audit", "export", "--out", bundle); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", oldKey, "--key", newKey); r.Code != 0 {
		t.Fatalf("verify with both keys: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--key", oldKey); r.Code != 1 {
		t.Fatalf("verify with the old key alone passed: %s", r)
	}
	if code, _ := harness.HTTPDo(t, "POST", s.URL+"/v1/audit/rotate-key", harness.AgentKey(t, s, admin, "acme-admin-ish", "acme"), nil, ""); code != 403 {
		t.Fatalf("an agent key rotated the signing key: %d", code)
	}
}
