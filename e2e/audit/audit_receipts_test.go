package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	tlog "github.com/transparency-dev/formats/log"
	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/witness/persistence/inmemory"
	"github.com/transparency-dev/witness/witness"
	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein/audit"
)

// startAuditWitness runs transparency-dev's witness on loopback, following
// the log origin signed by vkey, and returns its URL and cosigning vkey.
func startAuditWitness(t *testing.T, origin, vkey, name string) (string, string) {
	t.Helper()
	skey, wvkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	logV, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	wit, err := witness.New(context.Background(), witness.Opts{Persistence: inmemory.New(), Signers: []note.Signer{signer},
		VerifierForLog: func(_ context.Context, o string) (note.Verifier, bool, error) { return logV, o == origin, nil }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", witness.NewHTTPHandler(wit).AddCheckpoint)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, wvkey
}

// TestAuditReceiptsAndWitnesses: a check's receipt verifies offline, for
// the agent that made the check too; cosigned by a running witness it meets
// a policy's quorum; an export carries OTLP and OCSF renderings and its
// latest checkpoint meets the policy.
func TestAuditReceiptsAndWitnesses(t *testing.T) {
	data := t.TempDir()
	s, admin, vkey := auditServer(t, data, nil)
	agent := harness.AgentKey(t, s, admin, "builder", "default")
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/check", agent, []byte(`{"tool":"fs.read","args":{"path":"README.md"}}`), "application/json")
	if code != 200 {
		t.Fatalf("check: %d %s", code, body)
	}
	var ans harness.CheckAnswer
	json.Unmarshal(body, &ans)
	doChecks(t, s, admin, 5)
	harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	dir := t.TempDir()

	// The agent fetches its check's receipt; anyone with the verifier key checks it.
	r := harness.Rein(t, s.ClientEnv(agent), "audit", "receipt", ans.ID)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "c2sp.org/tlog-proof@v1\n") {
		t.Fatalf("rein audit receipt: %s", r)
	}
	receipt := filepath.Join(dir, "check.tlog-proof")
	harness.WriteFile(t, receipt, r.Stdout)
	if r := harness.Rein(t, nil, "audit", "verify-receipt", receipt, "--key", vkey, "--entry"); r.Code != 0 ||
		!strings.HasPrefix(r.Stdout, "OK: entry ") || !strings.Contains(r.Stdout, "check "+ans.ID) {
		t.Fatalf("verify-receipt: %s", r)
	}
	if err := verifyReceiptElsewhere(r.Stdout, vkey); err != nil {
		t.Fatalf("transparency-dev's code rejects the served receipt: %v", err)
	}
	if r := harness.Rein(t, nil, "audit", "verify-receipt", receipt, "--key", vkey, "--subject", ans.ID); r.Code != 0 {
		t.Fatalf("verify-receipt --subject of its own check: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify-receipt", receipt, "--key", vkey, "--subject", "chk_other"); r.Code != 1 || !strings.Contains(r.Stdout, "not \"chk_other\"") {
		t.Fatalf("verify-receipt --subject of another check: %s", r)
	}
	tampered := filepath.Join(dir, "tampered.tlog-proof")
	rc, _ := audit.ParseReceipt([]byte(r.Stdout))
	rc.Entry = bytes.Replace(rc.Entry, []byte("README.md"), []byte("README.mx"), 1)
	harness.WriteFile(t, tampered, string(rc.Format()))
	if r := harness.Rein(t, nil, "audit", "verify-receipt", tampered, "--key", vkey); r.Code != 1 || !strings.HasPrefix(r.Stdout, "FAILED") {
		t.Fatalf("verify-receipt of a changed entry: %s", r)
	}
	if code, _ := harness.HTTPDo(t, "GET", s.URL+"/v1/checks/chk_nope/receipt", agent, nil, ""); code != 404 {
		t.Fatalf("receipt of an unknown check: %d", code)
	}

	// Two witnesses and a policy needing both.
	_, cpText := harness.HTTPDo(t, "GET", s.URL+"/v1/audit/checkpoint", admin, nil, "")
	cp, err := audit.ParseCheckpoint(harness.NoteText(cpText))
	if err != nil {
		t.Fatal(err)
	}
	u1, k1 := startAuditWitness(t, cp.Origin, vkey, "w1.example/witness")
	u2, k2 := startAuditWitness(t, cp.Origin, vkey, "w2.example/witness")
	policy := filepath.Join(dir, "witnesses.policy")
	harness.WriteFile(t, policy, fmt.Sprintf("log %s\nwitness W1 %s %s\nwitness W2 %s %s\ngroup both all W1 W2\nquorum both\n", vkey, k1, u1, k2, u2))
	if r := harness.Rein(t, nil, "audit", "verify-receipt", receipt, "--policy", policy); r.Code != 1 || !strings.Contains(r.Stdout, "quorum") {
		t.Fatalf("an uncosigned receipt under the policy: %s", r)
	}
	r = harness.Rein(t, s.ClientEnv(agent), "audit", "receipt", ans.ID, "--policy", policy)
	if r.Code != 0 {
		t.Fatalf("cosigned receipt: %s", r)
	}
	harness.WriteFile(t, receipt, r.Stdout)
	if r := harness.Rein(t, nil, "audit", "verify-receipt", receipt, "--policy", policy); r.Code != 0 || !strings.Contains(r.Stdout, "cosigned by W1, W2") {
		t.Fatalf("verify-receipt --policy: %s", r)
	}

	// More entries; the witnesses follow with a consistency proof from rein.
	doChecks(t, s, admin, 5)
	harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	if r := harness.Rein(t, s.ClientEnv(admin), "audit", "witness", "--policy", policy, "--out", filepath.Join(dir, "latest")); r.Code != 0 ||
		!strings.Contains(r.Stdout, "by W1, W2") {
		t.Fatalf("rein audit witness: %s", r)
	}
	// Beside the server: each new checkpoint is offered as it comes.
	follow := filepath.Join(dir, "follow.cosigned")
	cmd := exec.Command(harness.Bin, "audit", "witness", "--policy", policy, "--out", follow, "--every", "100ms")
	cmd.Dir, cmd.Env = harness.ModuleRoot, harness.CleanEnv(s.ClientEnv(admin)...)
	var out harness.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	doChecks(t, s, admin, 3)
	want := harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	policyText, _ := os.ReadFile(policy)
	pol, err := audit.ParsePolicy(policyText)
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 10*time.Second, "the follower cosigns the newest checkpoint", func() string {
		b, err := os.ReadFile(follow)
		if err != nil {
			return err.Error()
		}
		c, err := audit.ParseCheckpoint(harness.NoteText(b))
		if err != nil || c.Size < want {
			return fmt.Sprintf("cosigned size %d, want %d (%v)\n%s", c.Size, want, err, out.String())
		}
		if _, err := pol.Check(b); err != nil {
			return err.Error()
		}
		return ""
	})
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the follower did not stop cleanly: %v\n%s", err, out.String())
	}

	bundle := filepath.Join(dir, "bundle")
	if r := harness.Rein(t, s.ClientEnv(admin), "audit", "export", "--out", bundle, "--format", "otlp,ocsf", "--policy", policy); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify", bundle, "--policy", policy); r.Code != 0 || !strings.Contains(r.Stdout, "cosigned by W1, W2") {
		t.Fatalf("verify --policy: %s", r)
	}
	plain := filepath.Join(dir, "plain")
	if r := harness.Rein(t, s.ClientEnv(admin), "audit", "export", "--out", plain); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	if r := harness.Rein(t, nil, "audit", "verify", plain, "--policy", policy); r.Code != 1 || !strings.Contains(r.Stdout, "quorum") {
		t.Fatalf("verify --policy of an uncosigned bundle: %s", r)
	}
	for name, want := range map[string]string{"logs.otlp.jsonl": `"resourceLogs"`, "events.ocsf.jsonl": `"class_uid":6003`} {
		f, err := os.Open(filepath.Join(bundle, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		lines, found := 0, false
		for sc.Scan() {
			lines++
			found = found || strings.Contains(sc.Text(), want)
			if !json.Valid(sc.Bytes()) {
				t.Errorf("%s line %d is not JSON", name, lines)
			}
		}
		f.Close()
		if lines == 0 || !found {
			t.Errorf("%s: %d lines, %q found %v", name, lines, want, found)
		}
	}
}

// verifyReceiptElsewhere checks a receipt without rein's code: the text is
// split as the tlog-proof spec says, the checkpoint opened with
// transparency-dev/formats, the inclusion proof checked with
// transparency-dev/merkle.
func verifyReceiptElsewhere(text, vkey string) error {
	head, cp, ok := strings.Cut(text, "\n\n")
	lines := strings.Split(head, "\n")
	if !ok || len(lines) < 3 || lines[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(lines[1], "extra ") || !strings.HasPrefix(lines[2], "index ") {
		return fmt.Errorf("not a tlog-proof with extra data: %q", head)
	}
	entry, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(lines[1], "extra "))
	if err != nil {
		return err
	}
	index, err := strconv.ParseUint(strings.TrimPrefix(lines[2], "index "), 10, 64)
	if err != nil {
		return err
	}
	hashes := b64sErr(lines[3:])
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return err
	}
	c, _, _, err := tlog.ParseCheckpoint([]byte(cp), v.Name(), v)
	if err != nil {
		return err
	}
	return proof.VerifyInclusion(rfc6962.DefaultHasher, index, c.Size, rfc6962.DefaultHasher.HashLeaf(entry), hashes, c.Hash)
}

func b64sErr(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i], _ = base64.StdEncoding.DecodeString(s)
	}
	return out
}
