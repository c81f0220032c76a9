package contained

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// syscallsProbe calls what the system-call filters must hold, and prints
// each raw result: personality through i386's entry point (int 0x80, call
// 136), which a filter naming amd64's numbers would never see; io_uring,
// whose operations open, rename and unlink without those calls (a NULL
// params pointer: EFAULT when io_uring is reachable); and the native
// personality, which the walls refuse.
const syscallsProbe = `#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "i386") == 0) {
		long r;
		__asm__ volatile ("int $0x80" : "=a"(r) : "a"(136), "b"(0xffffffffL) : "memory");
		printf("i386-personality %ld\n", r);
		return 0;
	}
	long u = syscall(425, 1, 0);
	printf("io_uring_setup %d\n", u < 0 ? errno : 0);
	long p = syscall(SYS_personality, 0xffffffffL);
	printf("native-personality %d\n", p < 0 ? errno : 0);
	return 0;
}
`

// TestRunRefusesOtherABIs: inside rein run, a call through i386's entry
// point fails (ENOSYS, 38) instead of passing every filter, io_uring cannot
// be set up (EPERM, 1, not EFAULT), and the native personality call stays
// refused. The i386 call runs in a process of its own (the probe's "i386"
// mode): a kernel without IA32 emulation answers int 0x80 with SIGSEGV
// before any filter sees it, outside rein run as inside; there the
// process must die the same way inside (the call never runs), which the
// test says in its log.
func TestRunRefusesOtherABIs(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Fatalf("this probe is amd64 code; the suite runs on amd64 (GOARCH %s)", runtime.GOARCH)
	}
	e := startRein(t, runPolicy)
	ws, home := t.TempDir(), t.TempDir()
	src := filepath.Join(ws, "probe.c")
	writeFile(t, src, syscallsProbe)
	bin := filepath.Join(ws, "probe")
	if out, err := exec.Command("gcc", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc (the machine's C compiler builds the probe): %v\n%s", err, out)
	}
	value := func(out, name string) int {
		m := regexp.MustCompile(`(?m)^` + name + ` (-?\d+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the probe printed no %s:\n%s", name, out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// Outside: what the kernel does without rein.
	noIA32 := false
	out, err := exec.Command(bin, "i386").Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGSEGV:
		noIA32 = true
		t.Logf("outside rein run: int 0x80 is refused by the kernel itself (SIGSEGV: no IA32 emulation)")
	case err != nil:
		t.Fatalf("the i386 probe outside rein run: %v\n%s", err, out)
	default:
		t.Logf("outside rein run: i386 personality %d", value(string(out), "i386-personality"))
	}
	if out, err := exec.Command(bin).Output(); err == nil {
		t.Logf("outside rein run: io_uring_setup errno %d, native personality errno %d",
			value(string(out), "io_uring_setup"), value(string(out), "native-personality"))
	}

	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home)
	r := reinRun(t, env, "", "run", "--workspace", ws, "--session", "abi-1", "--", bin)
	if r.Code != 0 {
		t.Fatalf("rein run of the probe: exit %d\n%s", r.Code, r)
	}
	if got := value(r.Stdout, "io_uring_setup"); got != 1 {
		t.Errorf("io_uring_setup inside rein run: errno %d, want 1 (EPERM): io_uring is reachable", got)
	}
	if got := value(r.Stdout, "native-personality"); got != 1 {
		t.Errorf("native personality inside rein run: errno %d, want 1 (EPERM)", got)
	}

	r = reinRun(t, env, "", "run", "--workspace", ws, "--session", "abi-2", "--", bin, "i386")
	if noIA32 {
		// The kernel kills the process at int 0x80: rein run reports the
		// signal (128 + 11), and nothing was printed after the call.
		if r.Code != 128+int(syscall.SIGSEGV) || strings.Contains(r.Stdout, "i386-personality") {
			t.Errorf("i386 probe inside rein run on a kernel without IA32 emulation: exit %d, want %d (SIGSEGV as outside)\n%s", r.Code, 128+int(syscall.SIGSEGV), r)
		}
		return
	}
	if r.Code != 0 {
		t.Fatalf("rein run of the i386 probe: exit %d\n%s", r.Code, r)
	}
	if got := value(r.Stdout, "i386-personality"); got != -38 {
		t.Errorf("i386 personality inside rein run returned %d, want -38 (ENOSYS): calls through another ABI pass the filters", got)
	}
}
