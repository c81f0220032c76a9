package contained

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// limitsPolicy has a profile with small resource limits.
const limitsPolicy = `version: 1
profiles:
  tight:
    read: [/usr, /bin, /lib, /lib64, /etc/ld.so.cache, /etc/passwd]
    limits: {processes: 64, memory_mb: 512, open_files: 256, cpu_seconds: 30, file_size_mb: 8}
rules: []
`

// forkBomb forks children that wait, until fork fails, and says how many.
const forkBomb = `import os, time
n = 0
kids = []
try:
    for i in range(5000):
        p = os.fork()
        if p == 0:
            time.sleep(60)
            os._exit(0)
        kids.append(p)
        n += 1
except OSError as e:
    print("fork refused after", n, "children:", e, flush=True)
for k in kids:
    os.kill(k, 9)
    os.waitpid(k, 0)
print("forked", n, flush=True)
`

// TestRunLimits: a profile's limits hold for the contained command and
// all it starts: a fork bomb stops at the processes limit (rein run
// started as an ordinary user; the kernel exempts root's processes from
// RLIMIT_NPROC, which rein run says), a memory hog gets no memory past the
// limit, a file stops growing at the file size limit, and getrlimit shows
// each limit inside.
func TestRunLimits(t *testing.T) {
	e := startRein(t, limitsPolicy)
	// An ordinary user (nobody) runs rein run: the workspace, its home and
	// rein's binary are its own to use.
	root := t.TempDir()
	os.Chmod(root, 0o755)
	for d := filepath.Dir(root); d != "/" && d != "/tmp"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	ws, home, bin := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "rein")
	b, err := os.ReadFile(harness.Bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "bomb.py"), forkBomb)
	for _, d := range []string{ws, home} {
		os.MkdirAll(d, 0o755)
		if out, err := exec.Command("chown", "-R", "65534:65534", d).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	script := `/usr/bin/python3 -c 'import resource as r; print("limits", *[r.getrlimit(x)[0] for x in (r.RLIMIT_NPROC, r.RLIMIT_NOFILE, r.RLIMIT_AS, r.RLIMIT_CPU, r.RLIMIT_FSIZE)])'
/usr/bin/python3 bomb.py
/usr/bin/python3 -c 'b = bytearray(1 << 30); print("ALLOCATED")' 2>&1 | tail -1
dd if=/dev/zero of=big bs=1M count=20 2>&1 | tail -1; echo "big: $(stat -c %s big)"`
	run := func(asNobody bool) harness.Result {
		args := []string{bin, "run", "--profile", "tight", "--workspace", ws, "--", "/bin/sh", "-c", script}
		if asNobody {
			args = append([]string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"}, args...)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = ws, harness.CleanEnv(append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "XDG_STATE_HOME="+home)...)
		out, err := cmd.CombinedOutput()
		r := harness.Result{Stdout: string(out)}
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run(true)
	out := r.Stdout
	for _, want := range []string{"limits 64 256 536870912 30 8388608", "fork refused after", "MemoryError", fmt.Sprintf("big: %d", 8<<20)} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, out)
		}
	}
	var forked int
	for _, line := range strings.Split(out, "\n") {
		fmt.Sscanf(line, "forked %d", &forked)
	}
	if forked == 0 || forked >= 64 || strings.Contains(out, "ALLOCATED") {
		t.Errorf("the fork bomb made %d processes (limit 64), or the memory hog got its gigabyte:\n%s", forked, out)
	}
	if r := run(false); !strings.Contains(r.Stdout, "does not hold for a run started as root") {
		t.Errorf("rein run started as root does not say that the processes limit does not hold:\n%s", r.Stdout)
	}
}
