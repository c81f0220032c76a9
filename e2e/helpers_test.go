package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// The tests of this package use the shared harness (e2e/internal/harness)
// through the names below.

var (
	// moduleRoot is the repository root; CLI commands run there, so paths
	// like examples/policy.yaml read as they do in the documentation.
	moduleRoot string
	// reinBin is the binary built once for the whole run.
	reinBin string
)

const (
	startTimeout    = harness.StartTimeout
	shutdownTimeout = harness.ShutdownTimeout
	commandTimeout  = harness.CommandTimeout
	reloadTimeout   = harness.ReloadTimeout
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, func() { moduleRoot, reinBin = harness.ModuleRoot, harness.Bin }))
}

// cleanEnv is the test process's environment without any REIN_* variable,
// so that a developer's own settings never leak into a test.
func cleanEnv(extra ...string) []string { return harness.CleanEnv(extra...) }

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer = harness.SyncBuffer

// server is a running `rein serve` (harness.Server).
type server struct {
	t      testing.TB
	URL    string // http://ADDR as printed by rein
	Data   string
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	exited chan struct{} // closed once the process exited and err is set
	err    error         // from Wait, valid once exited is closed
	h      *harness.Server
}

// startServer runs `rein serve --data DATA --listen 127.0.0.1:0 ARGS...`,
// reads the address it prints, and waits until /readyz answers 200.
// env entries (KEY=VALUE) are added to a clean environment.
func startServer(t testing.TB, data string, env []string, args ...string) *server {
	t.Helper()
	h := harness.StartServer(t, data, env, args...)
	s := &server{t: t, URL: h.URL, Data: h.Data, cmd: h.Cmd, stdout: h.Stdout, stderr: h.Stderr, exited: make(chan struct{}), h: h}
	go func() {
		<-h.Exited
		s.err = h.Err
		close(s.exited)
	}()
	return s
}

// stop sends SIGINT and requires a clean exit (code 0) within shutdownTimeout.
func (s *server) stop() {
	s.t.Helper()
	s.h.Stop()
	<-s.exited
}

// kill ends the process if a test left it running.
func (s *server) kill() {
	s.h.Kill()
	select {
	case <-s.exited:
	case <-time.After(shutdownTimeout):
	}
}

// adminKey reads <data>/admin.key.
func (s *server) adminKey() string { s.t.Helper(); return s.h.AdminKey() }

// clientEnv is the environment of a CLI user talking to s with key.
func (s *server) clientEnv(key string) []string {
	return []string{"REIN_SERVER=" + s.URL, "REIN_KEY=" + key}
}

// result is what one CLI invocation did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return harness.Result{Code: r.code, Stdout: r.stdout, Stderr: r.stderr}.String()
}

// rein runs the CLI in the module root with a clean environment plus env.
func rein(t testing.TB, env []string, args ...string) result {
	t.Helper()
	r := harness.Rein(t, env, args...)
	return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr}
}

var httpClient = harness.HTTPClient

// httpDo sends one request; key may be empty (no Authorization header).
// The answer is checked against the OpenAPI document.
func httpDo(t testing.TB, method, url, key string, body []byte, contentType string) (int, []byte) {
	t.Helper()
	return harness.HTTPDo(t, method, url, key, body, contentType)
}

// checkAPIResponse fails the test when an answer of the API does not match
// the OpenAPI document.
func checkAPIResponse(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	harness.CheckAPIResponse(t, req, resp, body)
}

// getJSON fetches url and decodes a 200 answer into v.
func getJSON(t testing.TB, url, key string, v any) { t.Helper(); harness.GetJSON(t, url, key, v) }

// checkAnswer is the part of a check response the tests look at.
type checkAnswer struct {
	ID            string         `json:"id"`
	Decision      string         `json:"decision"`
	Reason        string         `json:"reason"`
	Rule          string         `json:"rule"`
	PolicyVersion string         `json:"policy_version"`
	Args          map[string]any `json:"args"`
	Approval      *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"approval"`
}

// checkJSON runs `rein check TOOL --args ARGS --output json` and decodes the answer.
func checkJSON(t *testing.T, env []string, tool, args string, extra ...string) (checkAnswer, result) {
	t.Helper()
	r := rein(t, env, append([]string{"check", tool, "--args", args, "--output", "json"}, extra...)...)
	var a checkAnswer
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		t.Fatalf("rein check %s --args %s --output json: not JSON: %v\n%s", tool, args, err, r)
	}
	return a, r
}

// createAgentKey runs `rein keys create NAME --role agent --tenant T --output json`
// as admin and returns the new secret.
func createAgentKey(t *testing.T, s *server, admin, name, tenant string) string {
	t.Helper()
	return harness.CreateAgentKey(t, s.clientEnv(admin), name, tenant)
}

// writeFile writes data to path atomically (a rename), as editors do.
func writeFile(t testing.TB, path, data string) { t.Helper(); harness.WriteFile(t, path, data) }

// eventually polls cond until it returns "" or the timeout passes, then
// fails with the last reason cond gave.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	harness.Eventually(t, timeout, what, cond)
}

// freeAddr returns a local address where nothing listens.
func freeAddr(t *testing.T) string { t.Helper(); return harness.FreeAddr(t) }
