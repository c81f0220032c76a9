// Package harness runs the real rein for the end-to-end test packages
// under e2e/: it builds the binary once per test binary, starts `rein
// serve`, runs the CLI, and checks every API answer against the OpenAPI
// document, and holds the environments the packages share (approvals,
// MCP, the console, PostgreSQL clusters, audit and event readers). The
// suite is split into packages (e2e, e2e/console, e2e/gateway, e2e/sdk,
// ...) so that go test runs them side by side, each far from go test's
// time limit.
package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	// ModuleRoot is the repository root; CLI commands run there, so paths
	// like examples/policy.yaml read as they do in the documentation.
	ModuleRoot string
	// Bin is the rein binary built once for the whole run.
	Bin string
)

// How long the steps of a test may take.
const (
	StartTimeout    = 20 * time.Second
	ShutdownTimeout = 10 * time.Second
	CommandTimeout  = 30 * time.Second
	ReloadTimeout   = 10 * time.Second
)

// Main is a test package's TestMain: it sets the run's limits, builds rein,
// calls ready (which may copy ModuleRoot and Bin) and runs the tests. It
// returns the exit code.
func Main(m *testing.M, ready func()) int {
	flag.Parse()
	// The suite drives real servers, browsers and Node.js clients; on a
	// busy two-core machine a package can outlast go test's default of 10
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
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 2
	}
	ModuleRoot = root
	dir, err := os.MkdirTemp("", "rein-e2e-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 2
	}
	defer os.RemoveAll(dir)
	Bin = filepath.Join(dir, "rein")
	if err := build(Bin); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 2
	}
	if ready != nil {
		ready()
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

// moduleRoot is the nearest directory above the working directory (the
// test package's) that holds rein's go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/reinhq/rein\n") {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("cannot find rein's go.mod above the test's directory")
		}
		dir = up
	}
}

// CleanEnv is the test process's environment without any REIN_* variable,
// so that a developer's own settings never leak into a test, plus extra.
func CleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REIN_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// build builds rein to bin. The packages of a run (go test ./... runs them
// side by side) share one build: each builds into the same file of the
// module's directory in the user's cache, one at a time, where go build
// relinks only when the sources changed, and takes a hard link (or a copy)
// of it, so that a later build never replaces a binary a package is using.
// Linking rein is most of a build when nothing changed: a minute on a busy
// two-core machine, which every package paid before it could start.
func build(bin string) error {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(ModuleRoot))
	dir := filepath.Join(cache, "rein-e2e", "bin-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %v", dir, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	shared := filepath.Join(dir, "rein")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", shared, "./cmd/rein")
	cmd.Dir = ModuleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/rein failed: %v\n%s", err, out)
	}
	if os.Link(shared, bin) == nil {
		return nil
	}
	src, err := os.Open(shared)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
