package contained

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// env is a running rein with a policy and named keys: agents (builder) in
// tenant acme and an approver (alice) who reads the record.
type env struct {
	s     *harness.Server
	admin string
	keys  map[string]string
}

// startRein serves policy with a fresh data directory and creates the keys.
func startRein(t *testing.T, policy string) *env {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, pol, policy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	e := &env{s: s, admin: s.AdminKey(), keys: map[string]string{}}
	for _, k := range []struct{ name, roles string }{{"builder", `"agent"`}, {"alice", `"approver"`}} {
		code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", e.admin, []byte(fmt.Sprintf(
			`{"name":%q,"tenant":"acme","roles":[%s],"groups":["oncall"]}`, k.name, k.roles)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", k.name, code, body)
		}
		var created struct{ Key string }
		json.Unmarshal(body, &created)
		e.keys[k.name] = created.Key
	}
	return e
}

// entries is the whole audit log, one JSON entry each.
func (e *env) entries(t testing.TB) [][]byte {
	t.Helper()
	return harness.AllEntries(t, e.s, e.admin)
}

// writeFile writes data to p, making its directories.
func writeFile(t testing.TB, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// section is the output after "== name" up to the next section.
func section(out, name string) string {
	_, rest, _ := strings.Cut(out, "== "+name+"\n")
	s, _, _ := strings.Cut(rest, "\n== ")
	return s
}

// runTimeout bounds one contained run: it builds and runs real programs
// (a Go build, an agent CLI), which a busy machine slows down.
const runTimeout = 4 * time.Minute

// reinRun is harness.ReinWithInput with runTimeout and the command's
// output kept when it is cut short.
func reinRun(t testing.TB, env []string, input string, args ...string) harness.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Bin, args...)
	cmd.Dir = harness.ModuleRoot
	cmd.Env = harness.CleanEnv(env...)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := harness.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("rein %s did not finish within %s\n%s", strings.Join(args, " "), runTimeout, r)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.Code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run rein %s: %v", strings.Join(args, " "), err)
	}
	return r
}
