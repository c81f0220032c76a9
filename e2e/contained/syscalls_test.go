package contained

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
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
#include <unistd.h>
#include <sys/syscall.h>

int main(void) {
	long r;
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(136), "b"(0xffffffffL) : "memory");
	printf("i386-personality %ld\n", r);
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
// refused. The same program outside shows what the kernel allows without
// rein (logged: a kernel without IA32 emulation refuses int 0x80 itself).
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
	if out, err := exec.Command(bin).Output(); err == nil {
		t.Logf("outside rein run: i386 personality %d, io_uring_setup errno %d, native personality errno %d",
			value(string(out), "i386-personality"), value(string(out), "io_uring_setup"), value(string(out), "native-personality"))
	}

	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home)
	r := reinRun(t, env, "", "run", "--workspace", ws, "--session", "abi-1", "--", bin)
	if r.Code != 0 {
		t.Fatalf("rein run of the probe: exit %d\n%s", r.Code, r)
	}
	if got := value(r.Stdout, "i386-personality"); got != -38 {
		t.Errorf("i386 personality inside rein run returned %d, want -38 (ENOSYS): calls through another ABI pass the filters", got)
	}
	if got := value(r.Stdout, "io_uring_setup"); got != 1 {
		t.Errorf("io_uring_setup inside rein run: errno %d, want 1 (EPERM): io_uring is reachable", got)
	}
	if got := value(r.Stdout, "native-personality"); got != 1 {
		t.Errorf("native personality inside rein run: errno %d, want 1 (EPERM)", got)
	}
}
