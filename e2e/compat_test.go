package e2e

import (
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// The names below keep the tests of rein run's containment (run_test.go,
// containment_docs_test.go) as they were written; every other test of the
// package calls e2e/internal/harness directly.

// moduleRoot is harness.ModuleRoot.
var moduleRoot string

// result is what one CLI invocation did (harness.Result).
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return harness.Result{Code: r.code, Stdout: r.stdout, Stderr: r.stderr}.String()
}

// rein is harness.Rein.
func rein(t testing.TB, env []string, args ...string) result {
	t.Helper()
	r := harness.Rein(t, env, args...)
	return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr}
}

// writeFile is harness.WriteFile.
func writeFile(t testing.TB, path, data string) { t.Helper(); harness.WriteFile(t, path, data) }

// getJSON is harness.GetJSON.
func getJSON(t testing.TB, url, key string, v any) { t.Helper(); harness.GetJSON(t, url, key, v) }

// server is a running rein serve (harness.Server).
type server struct{ *harness.Server }

func (s *server) clientEnv(key string) []string { return s.ClientEnv(key) }
func (s *server) adminKey() string              { s.T.Helper(); return s.AdminKey() }

// approvalEnv is harness.ApprovalEnv.
type approvalEnv struct {
	s    *server
	keys map[string]string
}

// newApprovalEnvWith is harness.NewApprovalEnvWith.
func newApprovalEnvWith(t *testing.T, data, policy string) *approvalEnv {
	t.Helper()
	e := harness.NewApprovalEnvWith(t, data, policy)
	return &approvalEnv{s: &server{e.S}, keys: e.Keys}
}

// allEntries is harness.AllEntries.
func allEntries(t testing.TB, s *server, key string) [][]byte {
	t.Helper()
	return harness.AllEntries(t, s.Server, key)
}
