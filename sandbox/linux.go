//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
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
	Socket    string    `json:"socket"`
	Port      int       `json:"port"`
	Forward   []Forward `json:"forward,omitempty"`
	Read      []string  `json:"read"`
	Write     []string  `json:"write"`
	Command   []string  `json:"command"`
	Workspace string    `json:"workspace"`
	// Notify is the socket of the supervisor outside that receives the
	// notification descriptor of the filter on writing calls.
	Notify string `json:"notify"`
	// Limits are applied to the command (and so to all it starts) by a
	// rein process of its own that then becomes the command.
	Limits *Limits `json:"limits,omitempty"`
}

// Command builds the contained run: bubblewrap builds a new root from
// exactly the paths allowed, in new user, mount, pid, network, IPC and UTS
// namespaces (no route out: only loopback), with every capability dropped
// and no new user namespaces; inside, rein applies Landlock and seccomp and
// runs the command.
func Command(s Spec, f Features, w Walls) (*exec.Cmd, error) {
	if m := f.Missing(); m != "" {
		return nil, fmt.Errorf("containment cannot be set up: %s", m)
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
	seedHome(home)

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
	var forward []Forward
	for _, f := range s.Forward {
		if filepath.Dir(f.Socket) != filepath.Dir(s.ProxySocket) {
			return nil, fmt.Errorf("the socket %s is not in the run's directory %s", f.Socket, filepath.Dir(s.ProxySocket))
		}
		forward = append(forward, Forward{Port: f.Port, Socket: filepath.Join(insideRun, filepath.Base(f.Socket))})
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
	in := inner{Socket: filepath.Join(insideRun, filepath.Base(s.ProxySocket)), Port: s.ProxyPort, Forward: forward, Read: read,
		Write: []string{s.Workspace, "/tmp", insideHome}, Command: s.Command, Workspace: s.Workspace, Limits: s.Profile.Limits}
	if s.NotifySocket != "" {
		if filepath.Dir(s.NotifySocket) != filepath.Dir(s.ProxySocket) {
			return nil, fmt.Errorf("the socket %s is not in the run's directory %s", s.NotifySocket, filepath.Dir(s.ProxySocket))
		}
		in.Notify = filepath.Join(insideRun, filepath.Base(s.NotifySocket))
	}
	spec, _ := json.Marshal(in)
	args = append(args, "--", insideSelf, initCommand, string(spec))
	cmd := exec.Command(f.Bwrap, args...)
	cmd.Env = []string{}
	return cmd, nil
}

// seedHome gives the private home what work needs from the real one: the
// git identity, and nothing else.
func seedHome(home string) {
	var cfg strings.Builder
	for _, k := range []string{"user.name", "user.email"} {
		if out, err := exec.Command("git", "config", "--global", "--get", k).Output(); err == nil {
			v := strings.TrimSpace(string(out))
			if v != "" && !strings.ContainsAny(v, "\n\"\\") {
				name, key, _ := strings.Cut(k, ".")
				fmt.Fprintf(&cfg, "[%s]\n\t%s = \"%s\"\n", name, key, v)
			}
		}
	}
	if cfg.Len() > 0 {
		os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg.String()), 0o600)
	}
}

// packageDir is the directory of the installed package an executable
// belongs to: node_modules/<pkg> for an npm install, the virtualenv for a
// Python one, else the executable's directory.
func packageDir(name string) string {
	p, err := exec.LookPath(name)
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
// sandbox-init): it carries the egress proxy's port to its Unix socket,
// applies Landlock (filesystem: read the profile's paths, write the
// workspace, home and temp; no abstract Unix sockets or signals outside the
// sandbox) and seccomp, then runs the command and exits with its status.
func Init(spec string) int {
	var in inner
	if err := json.Unmarshal([]byte(spec), &in); err != nil || len(in.Command) == 0 {
		fmt.Fprintln(os.Stderr, "rein sandbox-init: bad specification")
		return 2
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(in.Port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "rein run: the egress proxy cannot listen inside: %v\n", err)
		return 2
	}
	go forward(l, in.Socket)
	for _, f := range in.Forward {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(f.Port))
		if err != nil {
			fmt.Fprintf(os.Stderr, "rein run: cannot listen inside on 127.0.0.1:%d: %v\n", f.Port, err)
			return 2
		}
		go forward(l, f.Socket)
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
	if in.Notify != "" {
		fd, err := installNotify()
		if err == nil {
			err = sendFD(in.Notify, fd)
			syscall.Close(fd)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "rein run: the writes the walls refuse could not be put on the record, so nothing runs: %v\n", err)
			return 2
		}
	}

	cmd := exec.Command(in.Command[0], in.Command[1:]...)
	if in.Limits != nil && *in.Limits != (Limits{}) {
		// Not this process's own limits: its threads count towards the
		// processes of the run, and it must stay able to make them.
		l, _ := json.Marshal(in.Limits)
		cmd = exec.Command(insideSelf, append([]string{LimitsCommand, string(l), "--"}, in.Command...)...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "rein run: %v\n", err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// forward carries every connection to a port inside (the egress proxy's,
// the hooks' relay's, a model endpoint's) to its Unix socket outside.
func forward(l net.Listener, socket string) {
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

// LimitsCommand is the hidden command that applies a run's limits to
// itself and then becomes the contained command.
const LimitsCommand = "sandbox-limits"

// ExecLimited is LimitsCommand: args are the limits (JSON), "--" and the
// command. Each limit is set as the soft and the hard limit, never above
// the hard limit in force (an unprivileged process cannot raise it).
func ExecLimited(args []string) int {
	var l Limits
	if len(args) < 3 || args[1] != "--" || json.Unmarshal([]byte(args[0]), &l) != nil {
		fmt.Fprintln(os.Stderr, "rein "+LimitsCommand+" is started by rein run, not by hand")
		return 2
	}
	path, err := exec.LookPath(args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "rein run: %v\n", err)
		return 127
	}
	// Everything execve needs is made before the limits: a smaller
	// address space or file size must not meet this process's own
	// allocations (the collector is off from here on).
	argv0, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 127
	}
	argv, err := syscall.SlicePtrFromStrings(args[2:])
	if err != nil {
		return 127
	}
	envv, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return 127
	}
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
		var cur unix.Rlimit
		if err := unix.Getrlimit(r.res, &cur); err != nil {
			fmt.Fprintf(os.Stderr, "rein run: limit %s: %v\n", r.name, err)
			return 2
		}
		v := min(uint64(r.v), cur.Max)
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			fmt.Fprintf(os.Stderr, "rein run: the profile's limit %s could not be applied, so nothing runs: %v\n", r.name, err)
			return 2
		}
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(argv0)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	err = errno
	fmt.Fprintf(os.Stderr, "rein run: %v\n", err)
	return 126
}
