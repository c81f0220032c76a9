// Package sandbox contains a command and everything it spawns: it sees only
// its workspace (read and write), a private home and temp directory, and
// the system paths its profile names (read only); secrets in the workspace
// are masked and files that arm later execution are read only; it has no
// network but rein's egress proxy, no privilege, no reach into other
// processes. It is the one place rein uses the kernel's mechanisms
// (namespaces through bubblewrap, Landlock, seccomp); the rest of rein
// decides, this package only builds the walls.
package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Spec is one contained run.
type Spec struct {
	Profile   Profile
	Workspace string   // absolute; read and written
	Dir       string   // the working directory inside (default: Workspace)
	Command   []string // resolved by the caller's PATH
	Environ   []string // the caller's environment; filtered by the profile
	// Private is a directory of the caller's (mode 0700) that holds the
	// run's home, temp and proxy socket.
	Private string
	// ProxySocket is the Unix socket rein's egress proxy listens on, inside
	// Private; ProxyPort the loopback port it is announced on inside.
	ProxySocket string
	ProxyPort   int
	// NotifySocket, in the same directory as ProxySocket, is where rein
	// run receives (Receive) the descriptor of the filter that hands its
	// Supervisor every write the walls refuse, and the listeners of the
	// loopback ports inside.
	NotifySocket string
	// Self is the rein binary, run inside to apply Landlock, seccomp and
	// the limits before it becomes the contained command.
	Self string
	// Forward are further loopback ports inside, each carried to a Unix
	// socket of rein run's: the relay of the agent's hooks, a model
	// endpoint on this machine.
	Forward []Forward
	// Files are files of the caller's shown read only inside, at a path of
	// their own (an agent's managed settings).
	Files []File
	// Pass are variables (KEY=VALUE) set inside as they are, after the
	// profile's filter: what rein run chose for a known agent CLI (its
	// model credential and settings), never the caller's environment as a
	// whole.
	Pass []string
}

// Forward carries connections to 127.0.0.1:Port inside to Socket outside.
type Forward struct {
	Port   int
	Socket string
}

// File is Src of the caller's, read only at Dst inside.
type File struct {
	Src, Dst string
}

// Features is what the kernel offers, and what a contained run needs.
type Features struct {
	Bwrap          string // path of bubblewrap
	UserNamespaces bool
	LandlockABI    int
	Seccomp        bool
}

// MinLandlockABI is the Landlock version a contained run needs: 6 scopes
// abstract Unix sockets and signals to the sandbox.
const MinLandlockABI = 6

// Missing names what the kernel or the system lacks for containment, or "".
func (f Features) Missing() string {
	var miss []string
	if f.Bwrap == "" {
		miss = append(miss, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
	}
	if !f.UserNamespaces {
		miss = append(miss, "unprivileged user namespaces are off (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)")
	}
	if f.LandlockABI < MinLandlockABI {
		miss = append(miss, fmt.Sprintf("Landlock ABI %d or later is needed, the kernel offers %d (Linux 6.12+, with lsm=landlock)", MinLandlockABI, f.LandlockABI))
	}
	if !f.Seccomp {
		miss = append(miss, "seccomp filters are not available")
	}
	return strings.Join(miss, "; ")
}

// String says which features are in force, for the audit record.
func (f Features) String() string {
	return fmt.Sprintf("bubblewrap user+mount+pid+net+ipc+uts namespaces, Landlock ABI %d (filesystem, abstract Unix sockets, signals), seccomp, no_new_privs", f.LandlockABI)
}

// scanLimit bounds the walk through the workspace for masked and
// exec-config files.
const scanLimit = 200_000

// Walls are the paths inside the workspace a run must not see (Masked) or
// must not change (ReadOnly), found by walking it. Directories that only
// tools regenerate (node_modules, .git/objects) are not descended into.
type Walls struct {
	Masked   []string
	ReadOnly []string
}

// FindWalls walks the workspace. A workspace too large to walk is an error:
// the run would otherwise start with secrets unmasked.
func FindWalls(workspace string) (Walls, error) {
	var w Walls
	n := 0
	err := filepath.WalkDir(workspace, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == workspace {
				return err
			}
			return nil // unreadable: the contained run cannot read it either
		}
		n++
		if n > scanLimit {
			return fmt.Errorf("the workspace holds more than %d files; contain a smaller directory (--workspace)", scanLimit)
		}
		rel, _ := filepath.Rel(workspace, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		// A secret is masked wherever it lies, inside a read-only directory
		// too, and even when it also arms later execution (a .npmrc with a
		// token): hiding it wins over showing it read only.
		if !d.IsDir() && Masked(d.Name()) && (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) {
			w.Masked = append(w.Masked, p)
			return nil
		}
		if ExecConfig(rel) && !underAny(p, w.ReadOnly) {
			w.ReadOnly = append(w.ReadOnly, p) // a directory: read only as a whole
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "objects":
				if d.Name() == "node_modules" || strings.HasSuffix(rel, ".git/objects") {
					return fs.SkipDir
				}
			}
		}
		return nil
	})
	sort.Strings(w.Masked)
	sort.Strings(w.ReadOnly)
	return w, err
}

// Env is the environment of the contained command: PATH, TERM, LANG,
// LC_* and what the profile names from environ, never a variable shaped like
// a secret; then the private HOME and TMPDIR and the proxy variables.
func Env(p Profile, environ []string, home string, proxyPort int) []string {
	keep := map[string]bool{"PATH": true, "TERM": true, "LANG": true, "LANGUAGE": true}
	for _, k := range p.Env {
		keep[k] = true
	}
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || secretShaped(k) {
			continue
		}
		if keep[k] || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	proxy := fmt.Sprintf("http://127.0.0.1:%d", proxyPort)
	out = append(out, "HOME="+home, "TMPDIR=/tmp", "USER=agent", "LOGNAME=agent", "REIN_CONTAINED=1")
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		out = append(out, k+"="+proxy)
	}
	// Loopback inside is the sandbox's own: it holds only rein's forwarders
	// and what the command itself starts, never a host outside.
	out = append(out, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1")
	sort.Strings(out)
	return out
}

// exists reports whether p exists (without following a final symlink).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Created are the exec-config paths of after that were not in before: files
// that arm later execution, made by the run (it could not change those that
// existed, which were read only).
func Created(before, after Walls) []string {
	had := map[string]bool{}
	for _, p := range before.ReadOnly {
		had[p] = true
	}
	var out []string
	for _, p := range after.ReadOnly {
		if !had[p] && !underAny(p, before.ReadOnly) {
			out = append(out, p)
		}
	}
	return out
}

// underAny reports whether p is inside one of dirs.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// Quarantine moves the paths (inside workspace) to the same relative paths
// under dir, outside the workspace, so that nothing runs them until a
// person has looked; it returns where each went.
func Quarantine(workspace, dir string, paths []string) (map[string]string, error) {
	moved := map[string]string{}
	for _, p := range paths {
		rel, err := filepath.Rel(workspace, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		to := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return moved, err
		}
		if err := os.Rename(p, to); err != nil {
			return moved, fmt.Errorf("quarantine %s: %w", p, err)
		}
		moved[p] = to
	}
	return moved, nil
}

// Attempt is a write the walls refuse.
type Attempt struct {
	Op    string   // open, rename, unlink, mkdir, link, symlink, mknod, truncate
	Paths []string // inside the sandbox, absolute, resolved as the kernel would
	Walls string   // why the walls refuse it
	// Refused is the first of Paths the walls refuse.
	Refused string
	// Flags are an open's flags that say how it writes (O_WRONLY,
	// O_CREAT, O_TRUNC, O_APPEND, ...); none for other calls.
	Flags []string
	// Unresolved: Paths are as the process named them, since rein could
	// not resolve them as the kernel would (through /proc of another
	// process, or more symbolic links than the kernel follows); refused.
	Unresolved bool
	// Approvable: rein carries the write out for the process once people
	// approved it (an exec-config file of the workspace, opened, renamed,
	// removed or made).
	Approvable bool
}

// Verdict answers an attempt: Carry when people approved exactly this
// write; Done, when set, is told how carrying it out went.
type Verdict struct {
	Carry bool
	Done  func(err error)
}

// Supervisor answers the notifications of a contained run's filter.
type Supervisor struct {
	Workspace string
	Walls     Walls
	// Decide is asked about every write the walls refuse (at most
	// MaxAttempts of a run; more are refused unrecorded, said once by
	// Flood). It answers without waiting for people (a blocked write fails
	// at once); Carry only for a write people already approved.
	Decide func(ctx context.Context, a Attempt) Verdict
	Flood  func(n int)

	attempts atomic.Int64
	flood    sync.Once
}

// MaxAttempts bounds how many refused writes of one run are recorded.
const MaxAttempts = 2000
