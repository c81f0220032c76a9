package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"
)

var (
	// moduleRoot is the repository root; CLI commands run there, so paths
	// like examples/policy.yaml read as they do in the documentation.
	moduleRoot string
	// reinBin is the binary built once for the whole run.
	reinBin string
)

const (
	startTimeout    = 20 * time.Second
	shutdownTimeout = 10 * time.Second
	commandTimeout  = 30 * time.Second
	reloadTimeout   = 10 * time.Second
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The suite drives real servers, browsers and Node.js clients; on a
	// busy two-core machine it can outlast go test's default of 10
	// minutes while every test is progressing. Unless another timeout was
	// asked for, allow it 30.
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == (10*time.Minute).String() {
		f.Value.Set((30 * time.Minute).String())
	}
	// go test itself stops a package's tests 11 minutes in, whatever the
	// flag above says, so the long tests run side by side: they mostly
	// wait (on Chromium, Node.js and their own servers; the suite keeps
	// two cores about a third busy when they run one by one). Unless
	// another number was asked for, four at a time instead of one per
	// core.
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == strconv.Itoa(runtime.GOMAXPROCS(0)) && runtime.GOMAXPROCS(0) < 4 {
		f.Value.Set("4")
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot find the module root next to the e2e directory: %v\n", err)
		return 2
	}
	moduleRoot = root
	dir, err := os.MkdirTemp("", "rein-e2e-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 2
	}
	defer os.RemoveAll(dir)
	reinBin = filepath.Join(dir, "rein")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", reinBin, "./cmd/rein")
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/rein failed: %v\n%s", err, out)
		return 2
	}
	code := m.Run()
	if n := apiChecked.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d API answers checked against http/openapi.yaml\n", n)
		if os.Getenv("REIN_E2E_OPENAPI_COVERAGE") != "" {
			apiCovered.Range(func(k, v any) bool {
				fmt.Fprintf(os.Stderr, "e2e: checked %s %d\n", k, v.(*atomic.Int64).Load())
				return true
			})
		}
	}
	return code
}

// cleanEnv is the test process's environment without any REIN_* variable,
// so that a developer's own settings never leak into a test.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REIN_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a running `rein serve`.
type server struct {
	t      testing.TB
	URL    string // http://ADDR as printed by rein
	Data   string
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	exited chan struct{}
	err    error // from Wait, valid once exited is closed
}

// startServer runs `rein serve --data DATA --listen 127.0.0.1:0 ARGS...`,
// reads the address it prints, and waits until /readyz answers 200.
// env entries (KEY=VALUE) are added to a clean environment.
func startServer(t testing.TB, data string, env []string, args ...string) *server {
	t.Helper()
	s := &server{t: t, Data: data, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(reinBin, append([]string{"serve", "--data", data, "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Dir = moduleRoot
	s.cmd.Env = cleanEnv(env...)
	s.cmd.Stderr = s.stderr
	pipe, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start rein serve: %v", err)
	}
	t.Cleanup(s.kill)

	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.stdout.Write([]byte(line + "\n"))
			if a, ok := strings.CutPrefix(strings.TrimSpace(line), "rein is listening on "); ok {
				select {
				case addr <- a:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
		s.err = s.cmd.Wait()
		close(s.exited)
	}()

	select {
	case s.URL = <-addr:
	case <-s.exited:
		t.Fatalf("rein serve exited before listening (%v)\nstdout:\n%s\nstderr:\n%s", s.err, s.stdout, s.stderr)
	case <-time.After(startTimeout):
		t.Fatalf("rein serve printed no \"rein is listening on http://ADDR\" line within %s\nstdout:\n%s\nstderr:\n%s",
			startTimeout, s.stdout, s.stderr)
	}
	if !strings.HasPrefix(s.URL, "http://") {
		t.Fatalf("rein serve printed a listening address without http://: %q", s.URL)
	}
	s.waitReady()
	return s
}

func (s *server) waitReady() {
	s.t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last string
	for time.Now().Before(deadline) {
		code, body := httpDo(s.t, "GET", s.URL+"/readyz", "", nil, "")
		if code == http.StatusOK {
			return
		}
		last = fmt.Sprintf("%d %s", code, body)
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("%s/readyz did not answer 200 within %s; last answer: %s\nstderr:\n%s", s.URL, startTimeout, last, s.stderr)
}

// stop sends SIGINT and requires a clean exit (code 0) within shutdownTimeout.
func (s *server) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		s.t.Fatalf("send SIGINT to rein serve: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(shutdownTimeout):
		s.cmd.Process.Kill()
		<-s.exited
		s.t.Fatalf("rein serve did not exit within %s of SIGINT\nstderr:\n%s", shutdownTimeout, s.stderr)
	}
	if s.err != nil {
		s.t.Fatalf("rein serve did not shut down cleanly after SIGINT: %v (want exit code 0)\nstderr:\n%s", s.err, s.stderr)
	}
}

// kill ends the process if a test left it running.
func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Kill()
		select {
		case <-s.exited:
		case <-time.After(shutdownTimeout):
		}
	}
}

// adminKey reads <data>/admin.key.
func (s *server) adminKey() string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Data, "admin.key"))
	if err != nil {
		s.t.Fatalf("read admin key: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// result is what one CLI invocation did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// rein runs the CLI in the module root with a clean environment plus env.
func rein(t testing.TB, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, reinBin, args...)
	cmd.Dir = moduleRoot
	cmd.Env = cleanEnv(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rein %s did not finish within %s", strings.Join(args, " "), commandTimeout)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run rein %s: %v", strings.Join(args, " "), err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// clientEnv is the environment of a CLI user talking to s with key.
func (s *server) clientEnv(key string) []string {
	return []string{"REIN_SERVER=" + s.URL, "REIN_KEY=" + key}
}

var httpClient = &http.Client{Timeout: 15 * time.Second}

// httpDo sends one request; key may be empty (no Authorization header).
func httpDo(t testing.TB, method, url, key string, body []byte, contentType string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	checkAPIResponse(t, req, resp, b)
	return resp.StatusCode, b
}

// apiValidator checks answers against the API's OpenAPI document
// (http/openapi.yaml), loaded once per run. Strict: a field the document
// does not declare is a mismatch too.
var apiValidator = sync.OnceValues(func() (validator.Validator, error) {
	src, err := os.ReadFile(filepath.Join(moduleRoot, "http", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(src)
	if err != nil {
		return nil, err
	}
	ignore := []string{"$.headers.*"}
	for _, f := range freeForm {
		ignore = append(ignore, "$.body**."+f+".**", "$.body**."+f+"[**")
	}
	v, errs := validator.NewValidator(doc, config.WithStrictMode(), config.WithStrictIgnorePaths(ignore...),
		config.WithFormatAssertions(), config.WithBodyDecoder("application/x-ndjson", ndjsonDecoder))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return v, nil
})

// freeForm names the fields whose content belongs to the caller, the
// policy or the tool (arguments, facts, answers and forms, audit data):
// their schema says what they are, and strict checking stops at them.
var freeForm = []string{"args", "approved_args", "facts", "labels", "answer", "schema", "data", "payload",
	"policy_data", "parameter_overrides", "updatedInput",
	"options"} // WebAuthn's options, as the WebAuthn specification defines them

// ndjsonDecoder reads newline-delimited JSON as the array of its lines,
// as the document describes GET /v1/audit/entries.
var ndjsonDecoder = content.DecoderFunc(func(in *content.DecodeInput) (any, error) {
	out := []any{}
	sc := bufio.NewScanner(in.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %v", len(out)+1, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
})

// laxValidator checks answers whose whole body is free-form (the OpenAPI
// document itself) without strict mode.
var laxValidator = sync.OnceValues(func() (validator.Validator, error) {
	src, err := os.ReadFile(filepath.Join(moduleRoot, "http", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(src)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return v, nil
})

// apiChecked counts the answers checked; apiCovered counts them by
// operation and status (REIN_E2E_OPENAPI_COVERAGE=1 prints them).
var (
	apiChecked atomic.Int64
	apiCovered sync.Map
)

// apiTemplate turns a request path back into the document's path template,
// replacing ids (apr_..., chk_...) by {id}.
func apiTemplate(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 3 && parts[1] == "v1" &&
		slices.Contains([]string{"checks", "approvals", "questions", "sessions", "locks", "keys"}, parts[2]) {
		parts[3] = "{id}"
	}
	return strings.Join(parts, "/")
}

// apiValidatorMu serialises validations: the validator's caches are not
// documented as safe for concurrent use.
var apiValidatorMu sync.Mutex

// checkAPIResponse fails the test when an answer of the API does not match
// the OpenAPI document: a status code it does not list for the operation,
// a body that does not match the schema, or an operation that is not
// documented at all. Console pages (outside /v1/) are not API answers.
func checkAPIResponse(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	p := req.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/"), p == "/acs", p == "/healthz", p == "/readyz", p == "/metrics":
	default:
		return
	}
	load := apiValidator
	if p == "/v1/openapi.json" {
		load = laxValidator
	}
	v, err := load()
	if err != nil {
		t.Errorf("load the OpenAPI document: %v", err)
		return
	}
	copied := *resp
	copied.Body = io.NopCloser(bytes.NewReader(body))
	apiValidatorMu.Lock()
	ok, errs := v.ValidateHttpResponse(req, &copied)
	apiValidatorMu.Unlock()
	apiChecked.Add(1)
	c, _ := apiCovered.LoadOrStore(fmt.Sprintf("%s %s %d", req.Method, apiTemplate(p), resp.StatusCode), new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	if ok {
		return
	}
	what := fmt.Sprintf("%s %s answered %d %s", req.Method, p, resp.StatusCode, truncate(body, 600))
	for _, e := range errs {
		if e.IsPathMissingError() || e.IsOperationMissingError() {
			// Not an operation of the API: the server must say so in the
			// API's error shape, 404 (no such endpoint) or 405.
			var eb struct {
				Error struct{ Code string } `json:"error"`
			}
			if (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) &&
				json.Unmarshal(body, &eb) == nil && eb.Error.Code != "" {
				return
			}
			t.Errorf("OpenAPI: %s: the operation is not in http/openapi.yaml", what)
			return
		}
	}
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    at %s: %s", f.FieldPath, f.Reason)
		}
	}
	t.Errorf("OpenAPI: %s; it does not match http/openapi.yaml:%s", what, b.String())
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// getJSON fetches url and decodes a 200 answer into v.
func getJSON(t testing.TB, url, key string, v any) {
	t.Helper()
	code, body := httpDo(t, "GET", url, key, nil, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", url, body, err)
	}
}

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
	r := rein(t, s.clientEnv(admin), "keys", "create", name, "--role", "agent", "--tenant", tenant, "--output", "json")
	if r.code != 0 {
		t.Fatalf("rein keys create %s: %s", name, r)
	}
	var k struct {
		Key    string   `json:"key"`
		Name   string   `json:"name"`
		Tenant string   `json:"tenant"`
		Roles  []string `json:"roles"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &k); err != nil {
		t.Fatalf("rein keys create --output json: not JSON: %v\n%s", err, r)
	}
	if k.Key == "" || k.Name != name || k.Tenant != tenant || len(k.Roles) != 1 || k.Roles[0] != "agent" {
		t.Fatalf("rein keys create: unexpected key %+v\n%s", k, r)
	}
	return k.Key
}

// writeFile writes data to path atomically (a rename), as editors do.
func writeFile(t testing.TB, path, data string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it returns "" or the timeout passes, then
// fails with the last reason cond gave.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for {
		if why = cond(); why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %s; last: %s", what, timeout, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeAddr returns a local address where nothing listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
