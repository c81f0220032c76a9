//go:build linux

package sandbox

// Writes the walls refuse, told to rein. The rein process inside the
// sandbox installs, before it runs the command, a seccomp filter that hands
// every system call which may write a path (open and openat with a write
// flag, openat2, creat, rename, unlink, mkdir, link, symlink, mknod,
// truncate) to a supervisor outside: rein run, which receives the filter's
// notification descriptor over a socket of the run's directory. Reads never
// leave the kernel (the filter tests the open flags). The supervisor reads
// the path from the process's memory, resolves it in the sandbox's own
// tree (through /proc/PID/root), and:
//
//   - a path the walls let the process write (the workspace but for its
//     exec-config and masked files, the private home and temp, /dev): the
//     call continues and the kernel decides (Landlock, the read-only
//     mounts); nothing is recorded;
//   - a path the walls refuse: the attempt is a check (Decide); the call
//     fails with EACCES, or continues where the walls are the kernel's alone
//     (outside the workspace) so that Landlock answers;
//   - an exec-config file of the workspace that people approved for exactly
//     this path: rein opens it itself (openat2 beneath the workspace, no
//     symlinks) and hands the descriptor to the process, or renames,
//     removes or makes it for the process.
//
// A decision of the supervisor never widens what the kernel allows but
// through that last, approved case: every other answer either continues the
// call into Landlock or refuses it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structures of seccomp user notification (linux/seccomp.h),
// which golang.org/x/sys/unix does not define.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

type seccompNotifAddfd struct {
	ID         uint64
	Flags      uint32
	SrcFD      uint32
	NewFD      uint32
	NewFDFlags uint32
}

// openHow is struct open_how, as openat2 reads it from the process.
type openHow struct {
	Flags, Mode, Resolve uint64
}

// pathArg is where a call names a path it writes: the argument holding
// the path and the one holding its directory descriptor (-1: the cwd).
type pathArg struct{ dirfd, path int }

// call is a system call the filter hands to the supervisor.
type call struct {
	op    string
	paths []pathArg
	flags int  // the argument with open flags; -1: the call always writes
	mode  int  // the argument with the mode of a created file; -1: none
	how   bool // openat2: flags and mode are in the struct open_how of args[2]
	fixed int  // the flags of a call that has none (creat)
}

// genericCalls are the writing calls of every architecture.
var genericCalls = map[int]call{
	unix.SYS_OPENAT:    {op: "open", paths: []pathArg{{0, 1}}, flags: 2, mode: 3},
	unix.SYS_OPENAT2:   {op: "open", paths: []pathArg{{0, 1}}, flags: -1, mode: -1, how: true},
	unix.SYS_RENAMEAT:  {op: "rename", paths: []pathArg{{0, 1}, {2, 3}}, flags: -1, mode: -1},
	unix.SYS_RENAMEAT2: {op: "rename", paths: []pathArg{{0, 1}, {2, 3}}, flags: -1, mode: -1},
	unix.SYS_UNLINKAT:  {op: "unlink", paths: []pathArg{{0, 1}}, flags: -1, mode: -1},
	unix.SYS_MKDIRAT:   {op: "mkdir", paths: []pathArg{{0, 1}}, flags: -1, mode: 2},
	unix.SYS_LINKAT:    {op: "link", paths: []pathArg{{2, 3}}, flags: -1, mode: -1},
	unix.SYS_SYMLINKAT: {op: "symlink", paths: []pathArg{{1, 2}}, flags: -1, mode: -1},
	unix.SYS_MKNODAT:   {op: "mknod", paths: []pathArg{{0, 1}}, flags: -1, mode: -1},
	unix.SYS_TRUNCATE:  {op: "truncate", paths: []pathArg{{-1, 0}}, flags: -1, mode: -1},
}

// writeFlags are the open flags that make an open a write.
const writeFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// calls are the writing calls of this architecture.
func calls() map[int]call {
	m := map[int]call{}
	for k, v := range genericCalls {
		m[k] = v
	}
	for k, v := range legacyCalls {
		m[k] = v
	}
	return m
}

// bpf is one instruction with symbolic jump targets.
type bpf struct {
	code   uint16
	k      uint32
	jt, jf string
	label  string
}

// notifyFilter is the program: calls of another architecture fail with
// ENOSYS (archFilter refuses them too), the writing calls are handed to the
// supervisor, an open only when its flags write.
func notifyFilter() ([]unix.SockFilter, error) {
	if nativeArch == 0 {
		return nil, errors.New("recording refused writes is built for amd64 and arm64 only")
	}
	const (
		ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	prog := []bpf{
		{code: ldW, k: 4},
		{code: jeq, k: nativeArch, jf: "other"},
		{code: ldW, k: 0},
	}
	if x32Bit != 0 { // x32 calls name the same files by other numbers
		prog = append(prog, bpf{code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, k: x32Bit, jt: "notify"})
	}
	var tested []bpf
	for nr, c := range calls() {
		if c.flags < 0 {
			prog = append(prog, bpf{code: jeq, k: uint32(nr), jt: "notify"})
			continue
		}
		l := "flags" + strconv.Itoa(nr)
		prog = append(prog, bpf{code: jeq, k: uint32(nr), jt: l})
		tested = append(tested,
			bpf{code: ldW, k: uint32(16 + 8*c.flags), label: l}, // the low half of the argument
			bpf{code: jset, k: writeFlags, jt: "notify", jf: "allow"})
	}
	prog = append(prog, bpf{code: ret, k: unix.SECCOMP_RET_ALLOW})
	prog = append(prog, tested...) // classic BPF jumps only forward
	prog = append(prog, bpf{code: ret, k: unix.SECCOMP_RET_USER_NOTIF, label: "notify"})
	prog = append(prog, bpf{code: ret, k: unix.SECCOMP_RET_ALLOW, label: "allow"})
	prog = append(prog, bpf{code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS), label: "other"})
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		f := unix.SockFilter{Code: in.code, K: in.k}
		for _, j := range []struct {
			to  string
			set *uint8
		}{{in.jt, &f.Jt}, {in.jf, &f.Jf}} {
			if j.to == "" {
				continue
			}
			d := at[j.to] - i - 1
			if d < 0 || d > 255 {
				return nil, fmt.Errorf("filter jump to %s out of range", j.to)
			}
			*j.set = uint8(d)
		}
		out[i] = f
	}
	return out, nil
}

// installArchFilter refuses (ENOSYS) every call made through another
// architecture's entry (i386's int 0x80 on amd64, say): the other filters
// name calls by this architecture's numbers, so another ABI's calls would
// pass them all.
func installArchFilter() error {
	if nativeArch == 0 {
		return errors.New("the system-call filter is built for amd64 and arm64 only")
	}
	const (
		ldW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ldW, K: 4}, // seccomp_data.arch
		{Code: jeq, K: nativeArch, Jt: 0, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := unix.SECCOMP_FILTER_FLAG_TSYNC
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, 1 /* SECCOMP_SET_MODE_FILTER */, uintptr(flags), uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp architecture filter: %w", errno)
	}
	return nil
}

// installNotify loads the filter on every thread of this process (and so
// on the command it starts) and returns the notification descriptor.
func installNotify() (int, error) {
	prog, err := notifyFilter()
	if err != nil {
		return -1, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, 1 /* SECCOMP_SET_MODE_FILTER */, uintptr(flags), uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp user notification: %w", errno)
	}
	return int(fd), nil
}

// sendFDs hands fds to rein run, listening on socket.
func sendFDs(socket string, fds []int) error {
	c, err := net.DialTimeout("unix", socket, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_, _, err = c.(*net.UnixConn).WriteMsgUnix([]byte{1}, unix.UnixRights(fds...), nil)
	return err
}

// Handoff is what the sandbox's rein process hands to rein run once its
// walls stand and before it becomes the command: the notification
// descriptor of the filter on writing calls (for a Supervisor) and the
// listeners of the loopback ports inside, whose connections rein run
// carries to their sockets outside.
type Handoff struct {
	Notify    int
	listeners []net.Listener
}

// Receive accepts the one connection of the sandbox's rein process on l
// and takes what it hands over for the run s: the notification descriptor,
// then one listener for s.ProxyPort and one for each of s.Forward, each
// carried to its socket until Close. l is closed then, so that nothing
// else can hand rein a descriptor.
func Receive(l *net.UnixListener, s Spec) (*Handoff, error) {
	defer l.Close()
	c, err := l.AcceptUnix()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	want := 2 + len(s.Forward)
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*want))
	_, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("the sandbox sent no notification descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != want {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("the sandbox sent %d descriptors, not the %d of its filter and ports", len(fds), want)
	}
	h := &Handoff{Notify: fds[0]}
	sockets := []string{s.ProxySocket}
	for _, f := range s.Forward {
		sockets = append(sockets, f.Socket)
	}
	for i, fd := range fds[1:] {
		f := os.NewFile(uintptr(fd), "listener")
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, fd := range fds[i+2:] {
				unix.Close(fd)
			}
			h.Close()
			unix.Close(h.Notify)
			return nil, fmt.Errorf("the sandbox handed over no listener for its port: %v", err)
		}
		h.listeners = append(h.listeners, ln)
		go carry(ln, sockets[i])
	}
	return h, nil
}

// Close stops carrying the sandbox's connections (those under way go on
// until either side closes them). The notification descriptor is the
// Supervisor's to close.
func (h *Handoff) Close() {
	for _, l := range h.listeners {
		l.Close()
	}
}

// Serve answers notifications on fd until ctx ends or no process of the
// sandbox is left; it closes fd.
func (s *Supervisor) Serve(ctx context.Context, fd int) {
	defer unix.Close(fd)
	var wg sync.WaitGroup
	defer wg.Wait()
	table := calls()
	for ctx.Err() == nil {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 200)
		if err != nil && err != unix.EINTR {
			return
		}
		if n == 0 || err != nil {
			continue
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process of the sandbox is left
		}
		var req seccompNotif
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); errno != 0 {
			if errno == unix.ENOENT || errno == unix.EINTR {
				continue // the process went away meanwhile
			}
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.answer(ctx, fd, &req, table)
		}()
	}
}

// answer handles one notification.
func (s *Supervisor) answer(ctx context.Context, fd int, req *seccompNotif, table map[int]call) {
	c, ok := table[int(req.Data.Nr)]
	if !ok || req.Data.Arch != nativeArch {
		respond(fd, req.ID, -int32(unix.ENOSYS), 0) // an x32 call: refused
		return
	}
	p := proc{pid: int(req.PID)}
	defer p.close()
	flags, mode := c.fixed, uint32(0)
	if c.flags >= 0 {
		flags = int(int32(req.Data.Args[c.flags]))
	}
	if c.mode >= 0 {
		mode = uint32(req.Data.Args[c.mode])
	}
	if c.how {
		var how openHow
		if err := p.read(req.Data.Args[2], unsafe.Slice((*byte)(unsafe.Pointer(&how)), unsafe.Sizeof(how))); err != nil {
			respond(fd, req.ID, -int32(unix.EACCES), 0) // unread, so unrecorded: refused
			return
		}
		flags, mode = int(how.Flags), uint32(how.Mode)
	}
	if c.op == "open" && (c.flags >= 0 || c.how) && !openWrites(flags) {
		cont(fd, req.ID)
		return
	}
	var paths, unresolved []string
	for _, a := range c.paths {
		raw, err := p.string(req.Data.Args[a.path])
		if err != nil {
			respond(fd, req.ID, -int32(unix.EACCES), 0) // unread, so unrecorded: refused
			return
		}
		dirfd := int32(unix.AT_FDCWD)
		if a.dirfd >= 0 {
			dirfd = int32(req.Data.Args[a.dirfd])
		}
		follow := c.op == "open" && flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL
		resolved, ok := p.resolve(dirfd, raw, follow)
		if !ok {
			unresolved = append(unresolved, raw)
		}
		paths = append(paths, resolved)
	}
	// The path read belongs to the process that made the call only while
	// the notification is still pending.
	if !valid(fd, req.ID) {
		return
	}
	a, refused := s.classify(c.op, paths)
	if len(unresolved) > 0 {
		// Its name would be a guess: the attempt is recorded under the
		// name the process gave, and refused.
		a = Attempt{Op: c.op, Paths: unresolved, Refused: unresolved[0], Unresolved: true,
			Walls: unresolved[0] + " cannot be resolved as the kernel would for the process (through /proc of another process, or more than 40 symbolic links): refused"}
		refused = true
	}
	if !refused {
		cont(fd, req.ID)
		return
	}
	if c.op == "open" {
		a.Flags = openFlags(flags)
	}
	if n := s.attempts.Add(1); n > MaxAttempts {
		s.flood.Do(func() {
			if s.Flood != nil {
				s.Flood(MaxAttempts)
			}
		})
		s.refuse(fd, req.ID, a)
		return
	}
	v := s.Decide(ctx, a)
	if !v.Carry || !a.Approvable || !valid(fd, req.ID) {
		s.refuse(fd, req.ID, a)
		return
	}
	err := s.carry(fd, req, c, a, flags, mode)
	if v.Done != nil {
		v.Done(err)
	}
}

// openWrites reports whether open flags write.
func openWrites(flags int) bool {
	if flags&unix.O_PATH != 0 {
		return false
	}
	return flags&unix.O_ACCMODE != unix.O_RDONLY || flags&(unix.O_CREAT|unix.O_TRUNC) != 0
}

// openFlags names the flags of an open that say how it writes: the access
// mode, then O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_TMPFILE, O_NOFOLLOW as
// set (an approver tells a truncation from an append).
func openFlags(flags int) []string {
	out := []string{"O_RDONLY"}
	switch flags & unix.O_ACCMODE {
	case unix.O_WRONLY:
		out[0] = "O_WRONLY"
	case unix.O_RDWR:
		out[0] = "O_RDWR"
	}
	for _, f := range []struct {
		bit  int
		name string
	}{{unix.O_CREAT, "O_CREAT"}, {unix.O_EXCL, "O_EXCL"}, {unix.O_TRUNC, "O_TRUNC"}, {unix.O_APPEND, "O_APPEND"},
		{unix.O_TMPFILE &^ unix.O_DIRECTORY, "O_TMPFILE"}, {unix.O_NOFOLLOW, "O_NOFOLLOW"}} {
		if flags&f.bit == f.bit {
			out = append(out, f.name)
		}
	}
	return out
}

// refuse answers a refused write: EACCES for the workspace's read-only
// and masked files (the mounts refuse them in any case) and for a path
// that could not be resolved, else the call continues into Landlock,
// which refuses what it does not allow.
func (s *Supervisor) refuse(fd int, id uint64, a Attempt) {
	if a.Unresolved {
		respond(fd, id, -int32(unix.EACCES), 0)
		return
	}
	for _, p := range a.Paths {
		if under(p, []string{s.Workspace}) {
			respond(fd, id, -int32(unix.EACCES), 0)
			return
		}
	}
	cont(fd, id)
}

// writable are the sandbox's own places the process writes freely.
var writable = []string{"/tmp", insideHome, "/dev"}

// classify says whether the walls refuse the write to paths, and why.
func (s *Supervisor) classify(op string, paths []string) (Attempt, bool) {
	a := Attempt{Op: op, Paths: paths, Approvable: true}
	var why []string
	for _, p := range paths {
		switch {
		case under(p, s.Walls.Masked):
			why = append(why, p+" is a masked secret of the workspace")
			a.Refused = first(a.Refused, p)
			a.Approvable = false
		case under(p, s.Walls.ReadOnly):
			why = append(why, p+" arms later execution (exec-config): read only inside rein run")
			a.Refused = first(a.Refused, p)
		case under(p, []string{s.Workspace}) && p != s.Workspace:
			continue
		case under(p, writable) || procFD(p):
			continue
		default:
			why = append(why, p+" is outside the workspace: rein run writes only the workspace and its private home and temp")
			a.Refused = first(a.Refused, p)
			a.Approvable = false
		}
	}
	if len(why) == 0 {
		return a, false
	}
	switch op {
	case "open", "mkdir":
		// Carried by rein itself on approval: the write lands in the same
		// file (the read-only mount over it stays), or a new directory.
	default:
		// A rename or unlink is never carried: either would move or remove
		// a file a read-only mount or a mask is attached to (the kernel then
		// detaches that mount), and a renamed directory or a hard-linked
		// file would carry more than the approver saw.
		a.Approvable = false
	}
	a.Walls = strings.Join(why, "; ")
	return a, true
}

// first is a, or b when a is empty.
func first(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// procFD reports whether p is a descriptor of a process (/proc/self/fd/1):
// the kernel decides on the file it stands for.
func procFD(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return len(parts) >= 3 && parts[0] == "proc" && (parts[2] == "fd" || parts[2] == "task")
}

// carry does the approved write for the process: the workspace is the
// same path outside as inside; every path is opened beneath it, without
// symlinks or magic links, so that the write lands on exactly the approved
// path whatever the process does meanwhile.
func (s *Supervisor) carry(fd int, req *seccompNotif, c call, a Attempt, flags int, mode uint32) error {
	ws, err := unix.Open(s.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		respond(fd, req.ID, -int32(unix.EACCES), 0)
		return err
	}
	defer unix.Close(ws)
	const safe = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, s.Workspace), "/") }
	// parent opens the directory of p and returns it with p's last name.
	parent := func(p string) (int, string, error) {
		dir, base := path.Split(rel(p))
		if base == "" || base == "." || base == ".." {
			return -1, "", unix.EINVAL
		}
		if dir == "" {
			dir = "."
		}
		d, err := unix.Openat2(ws, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: safe})
		return d, base, err
	}
	fail := func(err error) error {
		errno := unix.EACCES
		var e unix.Errno
		if errors.As(err, &e) && e != unix.ELOOP && e != unix.EXDEV {
			errno = e
		}
		respond(fd, req.ID, -int32(errno), 0)
		return err
	}
	switch a.Op {
	case "open":
		keep := flags & (unix.O_ACCMODE | unix.O_CREAT | unix.O_EXCL | unix.O_TRUNC | unix.O_APPEND)
		if flags&unix.O_TMPFILE == unix.O_TMPFILE {
			return fail(unix.EACCES)
		}
		f, err := unix.Openat2(ws, rel(a.Paths[0]), &unix.OpenHow{Flags: uint64(keep | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Mode: uint64(mode & 0o755), Resolve: safe})
		if err != nil {
			return fail(err)
		}
		defer unix.Close(f)
		var st unix.Stat_t
		if err := unix.Fstat(f, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fail(unix.EACCES) // only ever a regular file's descriptor, never a directory's
		}
		add := seccompNotifAddfd{ID: req.ID, Flags: unix.SECCOMP_ADDFD_FLAG_SEND, SrcFD: uint32(f)}
		if flags&unix.O_CLOEXEC != 0 {
			add.NewFDFlags = unix.O_CLOEXEC
		}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&add))); errno != 0 {
			return fail(errno) // answered, so the call does not hang
		}
		return nil
	case "mkdir":
		d, name, err := parent(a.Paths[0])
		if err != nil {
			return fail(err)
		}
		defer unix.Close(d)
		if err := unix.Mkdirat(d, name, mode&0o755); err != nil {
			return fail(err)
		}
	default:
		return fail(unix.EACCES)
	}
	respond(fd, req.ID, 0, 0)
	return nil
}

func cont(fd int, id uint64) { respond(fd, id, 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE) }

func respond(fd int, id uint64, errno int32, flags uint32) {
	resp := seccompNotifResp{ID: id, Error: errno, Flags: flags}
	unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// valid reports whether the notification id is still pending (its process
// has not gone, so what was read of it was its).
func valid(fd int, id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// proc reads a notifying process's memory and resolves its paths.
type proc struct {
	pid int
	mem *os.File
}

func (p *proc) close() {
	if p.mem != nil {
		p.mem.Close()
	}
}

func (p *proc) read(addr uint64, b []byte) error {
	if p.mem == nil {
		f, err := os.Open("/proc/" + strconv.Itoa(p.pid) + "/mem")
		if err != nil {
			return err
		}
		p.mem = f
	}
	n, err := p.mem.ReadAt(b, int64(addr))
	if n == len(b) {
		return nil
	}
	return err
}

// string reads a NUL-terminated path, page by page (a path may end just
// before an unmapped page).
func (p *proc) string(addr uint64) (string, error) {
	var out []byte
	for len(out) < unix.PathMax {
		n := 4096 - int(addr%4096)
		b := make([]byte, n)
		if err := p.read(addr, b); err != nil {
			return "", err
		}
		if i := strings.IndexByte(string(b), 0); i >= 0 {
			return string(append(out, b[:i]...)), nil
		}
		out = append(out, b...)
		addr += uint64(n)
	}
	return "", unix.ENAMETOOLONG
}

// maxSymlinks is how many symbolic links the kernel follows in resolving
// one path (MAXSYMLINKS) before the call fails with ELOOP.
const maxSymlinks = 40

// resolve is the path the process's call names (raw, relative to dirfd),
// resolved in its root as the kernel would resolve it for the process: its
// symlinks followed (the last one too when follow), and /proc's magic links
// of the process itself (/proc/self/cwd, /proc/self/fd/N, /proc/self/root,
// and the same through /proc/thread-self or the process's own pid) read for
// it. ok is false for a path it cannot resolve so, whose name would be
// wrong: through /proc of another process, or more links than the kernel
// follows.
func (p *proc) resolve(dirfd int32, raw string, follow bool) (string, bool) {
	base := "/"
	if !strings.HasPrefix(raw, "/") {
		link := "cwd"
		if dirfd != unix.AT_FDCWD {
			link = "fd/" + strconv.Itoa(int(dirfd))
		}
		if b, err := os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/" + link); err == nil && strings.HasPrefix(b, "/") {
			base = b
		}
	}
	full := base + "/" + raw
	root, err := unix.Open("/proc/"+strconv.Itoa(p.pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return path.Clean(full), false
	}
	defer unix.Close(root)
	for range maxSymlinks + 1 {
		var ok bool
		if full, ok = p.magic(full); !ok {
			return path.Clean(full), false
		}
		dir, name := path.Split(strings.TrimRight(full, "/"))
		real, err := realDir(root, dir)
		if err == unix.ELOOP { // a magic link on the way, or a loop
			return path.Clean(full), false
		}
		if name == "" || name == "." || name == ".." {
			return path.Clean(real + "/" + name), true
		}
		at := path.Join(real, name)
		if !follow {
			return at, true
		}
		target, err := readlinkIn(root, at)
		if err != nil {
			return at, true // not a symlink (or not there: created as named)
		}
		if strings.HasPrefix(target, "/") {
			full = target
		} else {
			full = real + "/" + target
		}
	}
	return path.Clean(full), false // more links than the kernel follows
}

// magic rewrites a path through /proc's magic links of the process itself
// (cwd, root, fd/N followed by more names) to what they lead to for the
// process. /proc/PID/fd/N alone is left as it is (the descriptor
// reopened). ok is false for the magic links of another process.
func (p *proc) magic(full string) (string, bool) {
	var parts []string
	for _, s := range strings.Split(full, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	if len(parts) < 3 || parts[0] != "proc" {
		return full, true
	}
	who, rest := parts[1], parts[2:]
	if rest[0] == "task" && len(rest) >= 3 { // a thread's, as its process's
		rest = rest[2:]
	}
	kind, more := rest[0], rest[1:]
	if (kind != "cwd" && kind != "root" && kind != "fd") || (kind == "fd" && len(more) <= 1) {
		return full, true
	}
	if who != "self" && who != "thread-self" && who != p.nsPID() {
		if _, err := strconv.Atoi(who); err == nil {
			return full, false
		}
		return full, true
	}
	var to string
	switch kind {
	case "root":
		to = "/"
	case "cwd":
		to, _ = os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/cwd")
	case "fd":
		to, _ = os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/fd/" + more[0])
		more = more[1:]
	}
	if !strings.HasPrefix(to, "/") {
		return full, false
	}
	return to + "/" + strings.Join(more, "/"), true
}

// nsPID is the process's pid in its own pid namespace (the sandbox's), as
// /proc inside names it; "" when unknown.
func (p *proc) nsPID() string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" {
			return f[len(f)-1]
		}
	}
	return ""
}

// realDir is dir resolved in the process's root (its symlinks followed),
// or dir cleaned when it does not exist there; the error is openat2's
// (ELOOP: a magic link on the way, or too many links).
func realDir(root int, dir string) (string, error) {
	d, err := unix.Openat2(root, strings.TrimPrefix(path.Clean("/"+dir), "/")+"/.", &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return path.Clean("/" + dir), err
	}
	defer unix.Close(d)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(d))
	if err != nil || !strings.HasPrefix(real, "/") {
		return path.Clean("/" + dir), nil
	}
	return real, nil
}

// readlinkIn reads the symlink at p (resolved in root), if it is one.
func readlinkIn(root int, p string) (string, error) {
	dir, name := path.Split(p)
	d, err := unix.Openat2(root, strings.TrimPrefix(path.Clean("/"+dir), "/")+"/.", &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return "", err
	}
	defer unix.Close(d)
	b := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(d, name, b)
	if err != nil {
		return "", err
	}
	return string(b[:n]), nil
}
