//go:build linux

package sandbox

import (
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
