// Package testenv finds or installs the real software that rein's
// integration tests run against: Node.js packages from npm (each test area
// keeps a package.json and package-lock.json of its own) and Debian's
// Chromium for the console's browser tests.
//
// The README's test command is plain `go test ./...`; these helpers make it
// work on a fresh machine by installing what is missing, once, and fail the
// test with the command to run by hand when that is not possible. They never
// skip: a missing dependency is a failure, not a pass.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// installTimeout bounds one npm ci or apt-get install.
const installTimeout = 10 * time.Minute

var (
	mu   sync.Mutex
	done = map[string]error{}
)

// NodeModules makes sure dir (a directory holding package.json and
// package-lock.json) has its node_modules installed with `npm ci`, and
// returns dir as an absolute path. It is safe to call from many tests and
// many test binaries at once: a file lock serialises installs, and an
// install is skipped when node_modules is newer than the lock file.
func NodeModules(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("testenv: npm is required for %s (install Node.js 22 or later)", abs)
	}
	mu.Lock()
	defer mu.Unlock()
	if err, ok := done[abs]; ok {
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	err = npmCI(abs)
	done[abs] = err
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func npmCI(dir string) error {
	lockPath := filepath.Join(dir, "package-lock.json")
	if _, err := os.Stat(lockPath); err != nil {
		return fmt.Errorf("testenv: %s has no package-lock.json: %v", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".npm-install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("testenv: %v", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("testenv: lock %s: %v", dir, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)

	if fresh(dir) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testenv: `npm ci` in %s failed: %v\n%s\nrun it by hand to see why", dir, err, out)
	}
	// npm ci writes node_modules/.package-lock.json; touch it so that
	// fresh() compares against the time of this install.
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "node_modules", ".package-lock.json"), now, now)
	return nil
}

// fresh reports whether dir's node_modules was installed after the last
// change to its package-lock.json.
func fresh(dir string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	return installed.ModTime().After(lock.ModTime())
}

// Chromium returns the path of Debian's Chromium, installing the chromium
// package with apt-get when it is missing and the tests run as root. It
// fails the test with the command to run otherwise.
func Chromium(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	const hint = "install Debian's Chromium: sudo apt-get install -y chromium"
	if os.Geteuid() != 0 {
		t.Fatalf("testenv: chromium not found; %s", hint)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Fatalf("testenv: chromium not found and apt-get is not available; %s", hint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	for _, args := range [][]string{{"update", "-q"}, {"install", "-y", "-q", "--no-install-recommends", "chromium"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("testenv: apt-get %v failed: %v\n%s\n%s", args, err, out, hint)
		}
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("testenv: chromium still not found after apt-get install: %v", err)
	}
	return p
}

// Python returns the path of python3, failing the test when there is none.
func Python(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("testenv: python3 is required (Debian: apt-get install -y python3)")
	}
	return p
}
