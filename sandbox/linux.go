//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// Detect reads what the kernel and the system offer.
func Detect() Features {
	var f Features
	f.Bwrap, _ = exec.LookPath("bwrap")
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil {
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		f.UserNamespaces = n > 0
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" && os.Geteuid() != 0 {
		f.UserNamespaces = false
	}
	// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
	v, _, errno := syscall.Syscall(444, uintptr(unsafe.Pointer(nil)), 0, 1)
	if errno == 0 {
		f.LandlockABI = int(v)
	}
	f.Seccomp = seccomp.Supported()
	return f
}

// Inside paths: where the run's own pieces appear in the sandbox.
const (
	insideSelf  = "/.rein/rein"
	insideRun   = "/.rein/run"
	insideHome  = "/home/agent"
	initCommand = "sandbox-init"
)

// inner is what the rein process inside the sandbox is told.
type inner struct {
	// Ports are the loopback ports it listens on inside (the egress
	// proxy's first, then Spec.Forward's), whose listeners it hands out.
	Ports     []int    `json:"ports"`
	Read      []string `json:"read"`
	Write     []string `json:"write"`
	Command   []string `json:"command"`
	Workspace string   `json:"workspace"`
	// Notify is the socket of rein run outside that receives the
	// notification descriptor of the filter on writing calls and the
	// listeners of Ports.
	Notify string `json:"notify"`
	// Limits are applied to this process just before it becomes the
	// command (and so to all the command starts).
	Limits *Limits `json:"limits,omitempty"`
}

// Command builds the contained run: bubblewrap builds a new root from
// exactly the paths allowed, in new user, mount, pid, network, IPC and UTS
// namespaces (no route out: only loopback), with every capability dropped
// and no new user namespaces; inside, rein applies Landlock and seccomp,
// hands its listeners and the filter's descriptor to s.NotifySocket, then
// becomes the command. The caller seeds the home first (SeedHome).
func Command(s Spec, f Features, w Walls) (*exec.Cmd, error) {
	if m := f.Missing(); m != "" {
		return nil, fmt.Errorf("containment cannot be set up: %s", m)
	}
	if s.NotifySocket == "" || filepath.Dir(s.NotifySocket) != filepath.Dir(s.ProxySocket) {
		return nil, fmt.Errorf("the socket %q is not in the run's directory %s", s.NotifySocket, filepath.Dir(s.ProxySocket))
	}
	home := filepath.Join(s.Private, "home")
	masked := filepath.Join(s.Private, "masked")
	for _, d := range []string{home, filepath.Join(s.Private, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(masked, nil, 0o000); err != nil && !os.IsExist(err) {
		return nil, err
	}
	os.Chmod(masked, 0o000)

	args := []string{
		"--unshare-user", "--uid", "1000", "--gid", "1000", "--disable-userns", "--assert-userns-disabled",
		"--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "rein-sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
	}
	var read []string
	for _, p := range s.Profile.Read {
		if exists(p) {
			args = append(args, "--ro-bind", p, p)
			read = append(read, p)
		}
	}
	// The command's own package, when it lives outside what the profile
	// and the workspace show (an npm or virtualenv install in a home).
	if len(s.Command) > 0 {
		if dir := packageDir(s.Command[0]); dir != "" && !under(dir, read) && !under(dir, []string{s.Workspace}) {
			args = append(args, "--ro-bind", dir, dir)
			read = append(read, dir)
		}
	}
	args = append(args, "--bind", s.Workspace, s.Workspace, "--bind", home, insideHome)
	for _, p := range w.ReadOnly {
		args = append(args, "--ro-bind", p, p)
	}
	for _, p := range w.Masked {
		args = append(args, "--ro-bind", masked, p)
	}
	args = append(args, "--ro-bind", s.Self, insideSelf, "--bind", filepath.Dir(s.ProxySocket), insideRun)
	for _, f := range s.Files {
		args = append(args, "--ro-bind", f.Src, f.Dst)
		read = append(read, f.Dst)
	}
	ports := []int{s.ProxyPort}
	for _, f := range s.Forward {
		ports = append(ports, f.Port)
	}
	for _, kv := range append(Env(s.Profile, s.Environ, insideHome, s.ProxyPort), s.Pass...) {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	dir := s.Dir
	if dir == "" || !under(dir, []string{s.Workspace}) {
		dir = s.Workspace
	}
	args = append(args, "--chdir", dir)
	in := inner{Ports: ports, Read: read, Write: []string{s.Workspace, "/tmp", insideHome}, Command: s.Command, Workspace: s.Workspace,
		Notify: filepath.Join(insideRun, filepath.Base(s.NotifySocket)), Limits: s.Profile.Limits}
	spec, _ := json.Marshal(in)
	args = append(args, "--", insideSelf, initCommand, string(spec))
	cmd := exec.Command(f.Bwrap, args...)
	cmd.Env = []string{}
	return cmd, nil
}

// SeedHome gives the private home of a run (in private, Spec.Private)
// what work needs from the real one: the git identity, and nothing else.
// It runs git once, so rein run calls it while it waits for rein.
func SeedHome(private string) error {
	home := filepath.Join(private, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	out, err := exec.Command("git", "config", "--global", "--null", "--get-regexp", `^user\.(name|email)$`).Output()
	if err != nil {
		return nil // no git, or no identity: the home stays empty
	}
	if cfg := gitIdentity(out); cfg != "" {
		return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600)
	}
	return nil
}

// gitIdentity is the .gitconfig of user.name and user.email read from the
// output of git config --null --get-regexp (entries "key\nvalue\x00"; the
// last of a key wins, as for git config --get). A value git itself would
// need quoting or escaping for is left out.
func gitIdentity(out []byte) string {
	v := map[string]string{}
	for _, e := range strings.Split(string(out), "\x00") {
		k, val, ok := strings.Cut(e, "\n")
		val = strings.TrimSpace(val)
		if ok && (k == "user.name" || k == "user.email") && val != "" && !strings.ContainsAny(val, "\n\"\\") {
			v[k] = val
		}
	}
	var cfg strings.Builder
	for _, k := range []string{"user.name", "user.email"} {
		if v[k] != "" {
			_, key, _ := strings.Cut(k, ".")
			fmt.Fprintf(&cfg, "[user]\n\t%s = \"%s\"\n", key, v[k])
		}
	}
	return cfg.String()
}

// packageDir is the directory of the installed package an executable
// belongs to: node_modules/<pkg> for an npm install, the virtualenv for a
// Python one, else the executable's directory.
func packageDir(name string) string {
	p, err := exec.LookPath(name)
	if err == nil {
		p, err = filepath.Abs(p) // ./run.sh: a directory bound at "." would be the root inside
	}
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if i := strings.LastIndex(p, "/node_modules/"); i >= 0 {
		rest := p[i+len("/node_modules/"):]
		parts := strings.SplitN(rest, "/", 3)
		n := 1
		if strings.HasPrefix(parts[0], "@") && len(parts) > 1 {
			n = 2
		}
		return p[:i+len("/node_modules/")] + strings.Join(parts[:n], "/")
	}
	dir := filepath.Dir(p)
	if filepath.Base(dir) == "bin" && exists(filepath.Join(filepath.Dir(dir), "pyvenv.cfg")) {
		return filepath.Dir(dir)
	}
	return dir
}

// under reports whether p is one of dirs or inside one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// denied are the system calls a contained command never makes: other
// processes' memory, mounts and namespaces, kernel keyrings, BPF, module
// loading, and other ways around the walls.
var denied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree",
	"fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot", "acct", "syslog",
	"iopl", "ioperm", "quotactl", "fanotify_init", "personality",
	// io_uring's operations (open, rename, unlink, ...) never pass through
	// the system calls the other filters see.
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// Init is the rein process inside the sandbox (the hidden command
// sandbox-init): it listens on the loopback ports inside (the egress
// proxy's, the forwarded ones), applies Landlock (filesystem: read the
// profile's paths, write the workspace, home and temp; no abstract Unix
// sockets or signals outside the sandbox) and seccomp, hands the listeners
// and the filter's descriptor to rein run outside (which carries each
// connection to its socket), applies the profile's limits and becomes the
// command: one rein process inside, and none left once the command runs.
func Init(spec string) int {
	var in inner
	if err := json.Unmarshal([]byte(spec), &in); err != nil || len(in.Command) == 0 || len(in.Ports) == 0 || in.Notify == "" {
		fmt.Fprintln(os.Stderr, "rein sandbox-init: bad specification")
		return 2
	}
	var listeners []*os.File
	for _, port := range in.Ports {
		l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			fmt.Fprintf(os.Stderr, "rein run: cannot listen inside on 127.0.0.1:%d: %v\n", port, err)
			return 2
		}
		f, err := l.File() // a descriptor of its own, close-on-exec
		l.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "rein run: cannot listen inside on 127.0.0.1:%d: %v\n", port, err)
			return 2
		}
		listeners = append(listeners, f)
	}
	// What the command runs is found before the walls stand (the same
	// PATH and files either way): its absence is the command's exit 127.
	path, err := exec.LookPath(in.Command[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "rein run: %v\n", err)
		return 127
	}

	rules := []landlock.Rule{
		landlock.RODirs("/.rein").IgnoreIfMissing(),
		landlock.RODirs("/proc").IgnoreIfMissing(),
		landlock.RWDirs("/dev").WithIoctlDev().IgnoreIfMissing(),
	}
	for _, p := range in.Read {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			rules = append(rules, landlock.ROFiles(p))
		} else {
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		}
	}
	for _, p := range in.Write {
		rules = append(rules, landlock.RWDirs(p).WithRefer().IgnoreIfMissing())
	}
	if err := landlock.V6.RestrictPaths(rules...); err != nil {
		fmt.Fprintf(os.Stderr, "rein run: Landlock could not be applied, so nothing runs: %v\n", err)
		return 2
	}
	if err := landlock.V6.RestrictScoped(); err != nil {
		fmt.Fprintf(os.Stderr, "rein run: Landlock scopes could not be applied, so nothing runs: %v\n", err)
		return 2
	}
	filter := seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls:      []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: denied}},
	}}
	if err := seccomp.LoadFilter(filter); err != nil {
		fmt.Fprintf(os.Stderr, "rein run: seccomp could not be applied, so nothing runs: %v\n", err)
		return 2
	}
	if err := installArchFilter(); err != nil {
		fmt.Fprintf(os.Stderr, "rein run: seccomp could not be applied, so nothing runs: %v\n", err)
		return 2
	}
	fd, err := installNotify()
	if err == nil {
		fds := []int{fd}
		for _, f := range listeners {
			fds = append(fds, int(f.Fd()))
		}
		err = sendFDs(in.Notify, fds)
		syscall.Close(fd)
	}
	for _, f := range listeners {
		f.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rein run: the writes the walls refuse could not be put on the record, so nothing runs: %v\n", err)
		return 2
	}
	// Nothing of this process passes to the command but its standard
	// streams: every other descriptor closes at exec.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintf(os.Stderr, "rein run: %v\n", err)
		return 2
	}
	var l Limits
	if in.Limits != nil {
		l = *in.Limits
	}
	return execLimited(path, in.Command, os.Environ(), l)
}

// carry carries every connection to a port inside (the egress proxy's,
// the hooks' relay's, a model endpoint's), accepted on l, to its Unix
// socket, until l is closed.
func carry(l net.Listener, socket string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("unix", socket)
			if err != nil {
				io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { io.Copy(up, c); up.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
			go func() { io.Copy(c, up); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

// execLimited applies the limits l to this process, each as the soft and
// the hard limit and never above the hard limit in force (an unprivileged
// process cannot raise it), then becomes the command path (argv, env). It
// returns only when that fails: 2 when a limit cannot be applied (nothing
// runs), 126 when exec fails.
func execLimited(path string, args, env []string, l Limits) int {
	// The collector is off from here on: a smaller address space must not
	// meet a collection of this process's own.
	const mib = 1 << 20
	limits := []struct {
		res  int
		name string
		v    int64
	}{
		{unix.RLIMIT_NPROC, "processes", l.Processes}, {unix.RLIMIT_NOFILE, "open_files", l.OpenFiles},
		{unix.RLIMIT_CPU, "cpu_seconds", l.CPUSeconds}, {unix.RLIMIT_FSIZE, "file_size_mb", l.FileSizeMB * mib},
		{unix.RLIMIT_AS, "memory_mb", l.MemoryMB * mib},
	}
	debug.SetGCPercent(-1)
	for _, r := range limits {
		if r.v <= 0 {
			continue
		}
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(r.res, &cur); err != nil {
			fmt.Fprintf(os.Stderr, "rein run: limit %s: %v\n", r.name, err)
			return 2
		}
		v := min(uint64(r.v), cur.Max)
		// syscall's Setrlimit, so that Exec keeps a limit of open files
		// (without one, Exec gives back the limit rein started with).
		if err := syscall.Setrlimit(r.res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			fmt.Fprintf(os.Stderr, "rein run: the profile's limit %s could not be applied, so nothing runs: %v\n", r.name, err)
			return 2
		}
	}
	err := syscall.Exec(path, args, env)
	fmt.Fprintf(os.Stderr, "rein run: %s: %v\n", path, err)
	return 126
}
