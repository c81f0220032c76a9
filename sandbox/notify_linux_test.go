//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenWrites: reads never count as writes (the filter tests the same
// flags), every way to open for writing does.
func TestOpenWrites(t *testing.T) {
	for flags, want := range map[int]bool{
		unix.O_RDONLY: false, unix.O_RDONLY | unix.O_CLOEXEC | unix.O_DIRECTORY: false, unix.O_PATH | unix.O_WRONLY: false,
		unix.O_WRONLY: true, unix.O_RDWR: true, unix.O_RDONLY | unix.O_CREAT: true, unix.O_RDONLY | unix.O_TRUNC: true,
		unix.O_WRONLY | unix.O_APPEND | unix.O_CREAT: true, unix.O_TMPFILE | unix.O_WRONLY: true,
	} {
		if got := openWrites(flags); got != want {
			t.Errorf("openWrites(%#x) = %v, want %v", flags, got, want)
		}
	}
}

// TestClassify: the supervisor refuses exactly what the walls refuse and
// says why; only opening or making an exec-config path of the workspace is
// approvable (a rename or unlink would detach the walls' mounts).
func TestClassify(t *testing.T) {
	s := &Supervisor{Workspace: "/w", Walls: Walls{ReadOnly: []string{"/w/.git/config", "/w/.git/hooks", "/w/.vscode"}, Masked: []string{"/w/.env"}}}
	for _, c := range []struct {
		op      string
		paths   []string
		refused bool
		approve bool
		why     string
	}{
		{"open", []string{"/w/main.go"}, false, false, ""},
		{"open", []string{"/w/.git/index"}, false, false, ""},
		{"open", []string{"/tmp/x"}, false, false, ""},
		{"open", []string{"/home/agent/.cache/go/x"}, false, false, ""},
		{"open", []string{"/dev/null"}, false, false, ""},
		{"open", []string{"/proc/self/fd/1"}, false, false, ""},
		{"open", []string{"/w/.git/hooks/pre-commit"}, true, true, "exec-config"},
		{"open", []string{"/w/.git/hooks"}, true, true, "exec-config"},
		{"mkdir", []string{"/w/.vscode/x"}, true, true, "exec-config"},
		{"rename", []string{"/w/.git/config.lock", "/w/.git/config"}, true, false, "exec-config"},
		{"unlink", []string{"/w/.git/hooks/pre-commit"}, true, false, "exec-config"},
		{"symlink", []string{"/w/.git/hooks/post-checkout"}, true, false, "exec-config"},
		{"open", []string{"/w/.env"}, true, false, "masked"},
		{"open", []string{"/w"}, true, false, "outside"},
		{"open", []string{"/etc/passwd"}, true, false, "outside"},
		{"open", []string{"/.rein/run/x"}, true, false, "outside"},
		{"open", []string{"/wx/a"}, true, false, "outside"},
		{"open", []string{"/proc/sys/kernel/x"}, true, false, "outside"},
		{"rename", []string{"/w/a", "/etc/a"}, true, false, "outside"},
	} {
		a, refused := s.classify(c.op, c.paths)
		if refused != c.refused || a.Approvable != c.approve && refused || !strings.Contains(a.Walls, c.why) {
			t.Errorf("%s %v: refused %v approvable %v walls %q; want %v %v %q", c.op, c.paths, refused, a.Approvable, a.Walls, c.refused, c.approve, c.why)
		}
		if refused && !strings.Contains(a.Walls, a.Refused) {
			t.Errorf("%s %v: refused path %q not named in %q", c.op, c.paths, a.Refused, a.Walls)
		}
	}
}

// TestNotifyFilter: the program is well formed (every jump forward and in
// range, ends in a return) and names every writing call.
func TestNotifyFilter(t *testing.T) {
	prog, err := notifyFilter()
	if err != nil {
		t.Fatal(err)
	}
	if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K {
		t.Errorf("the program does not end in a return: %+v", last)
	}
	named := map[uint32]bool{}
	for i, in := range prog {
		if in.Code&0x07 == unix.BPF_JMP && (i+1+int(in.Jt) >= len(prog) || i+1+int(in.Jf) >= len(prog)) {
			t.Errorf("instruction %d jumps out of the program", i)
		}
		if in.Code == unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K {
			named[in.K] = true
		}
	}
	for nr := range calls() {
		if !named[uint32(nr)] {
			t.Errorf("system call %d is not in the filter", nr)
		}
	}
}

// TestResolve: a path is named as the kernel resolves it for the process
// that made the call: through a chain of symbolic links longer than eight,
// through /proc's magic links of the process itself (/proc/self/cwd,
// /proc/self/fd/N/..., /proc/thread-self, its own pid); never as a wrong
// name: a chain longer than the kernel follows, or another process's
// /proc, is unresolved.
func TestResolve(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	// link0 -> link1 -> ... -> linkN -> real/target
	chain := func(name string, n int) string {
		os.Symlink(filepath.Join(dir, "real", "target"), filepath.Join(dir, fmt.Sprintf("%s%d", name, n)))
		for i := n - 1; i >= 0; i-- {
			os.Symlink(fmt.Sprintf("%s%d", name, i+1), filepath.Join(dir, fmt.Sprintf("%s%d", name, i)))
		}
		return filepath.Join(dir, name+"0")
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cwd, _ := os.Getwd()
	p := proc{pid: os.Getpid()}
	for _, c := range []struct {
		raw    string
		follow bool
		want   string
		ok     bool
	}{
		{chain("short", 3), true, filepath.Join(dir, "real", "target"), true},
		{chain("long", 12), true, filepath.Join(dir, "real", "target"), true},
		{chain("loop", maxSymlinks+1), true, "", false},
		{filepath.Join(dir, "long0"), false, filepath.Join(dir, "long0"), true},
		{"/proc/self/cwd/x", true, filepath.Join(cwd, "x"), true},
		{"/proc/thread-self/cwd/x", true, filepath.Join(cwd, "x"), true},
		{fmt.Sprintf("/proc/self/fd/%d/real/y", d.Fd()), true, filepath.Join(dir, "real", "y"), true},
		{fmt.Sprintf("/proc/%d/fd/%d/real/y", os.Getpid(), d.Fd()), true, filepath.Join(dir, "real", "y"), true},
		{"/proc/self/root" + dir + "/real/z", true, filepath.Join(dir, "real", "z"), true},
		{fmt.Sprintf("/proc/%d/cwd/x", os.Getppid()), true, "", false},
	} {
		got, ok := p.resolve(unix.AT_FDCWD, c.raw, c.follow)
		if ok != c.ok || (c.ok && got != c.want) {
			t.Errorf("resolve(%q) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
	// A descriptor itself (/dev/stdout's target) is reopened, not a magic
	// link to resolve further.
	if got, ok := p.magic("/proc/self/fd/1"); !ok || got != "/proc/self/fd/1" {
		t.Errorf("magic(/proc/self/fd/1) = %q, %v", got, ok)
	}
}

// TestOpenFlags: an open's flags are named as an approver reads them.
func TestOpenFlags(t *testing.T) {
	for flags, want := range map[int]string{
		unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC:  "O_WRONLY O_CREAT O_TRUNC",
		unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND: "O_WRONLY O_CREAT O_APPEND",
		unix.O_RDWR:                    "O_RDWR",
		unix.O_RDONLY | unix.O_TRUNC:   "O_RDONLY O_TRUNC",
		unix.O_TMPFILE | unix.O_WRONLY: "O_WRONLY O_TMPFILE",
		unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW: "O_WRONLY O_CREAT O_EXCL O_NOFOLLOW",
	} {
		if got := strings.Join(openFlags(flags), " "); got != want {
			t.Errorf("openFlags(%#o) = %q, want %q", flags, got, want)
		}
	}
}
