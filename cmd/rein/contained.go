package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/sandbox"
)

// exitStopped is the exit status of a contained run that people stopped
// (a lock on its session): 128 + SIGKILL, as for any process killed so.
const exitStopped = 128 + int(syscall.SIGKILL)

// stopWait is how long one question of a contained run to rein, whether
// its session was stopped, waits for the answer: rein answers at once when
// a lock stops it. stopPoll is how often it asks when rein does not wait
// (or cannot be reached).
const (
	stopWait = 25 * time.Second
	stopPoll = 500 * time.Millisecond
)

// containment is what rein run and rein exec share: a workspace and its
// walls, the egress proxy on a Unix socket the sandbox sees, the session
// the run's checks belong to, and the private directory that holds the
// sandbox's home.
type containment struct {
	// pendingWrite is the approval of a refused write that waits for
	// people (keepAsking): one at a time per run.
	asking       sync.Mutex
	pendingWrite string
	e            *env
	what         string // "rein run", "rein exec": the prefix of messages
	c            *client.Client
	profile      string          // the name asked for
	prof         sandbox.Profile // the policy's, as rein answered at record
	ws, cwd      string
	session      string
	features     sandbox.Features
	// prepared is closed once walls are found and the private home is
	// seeded (prepErr says how that went): work done while rein answers
	// record, awaited before anything runs.
	prepared chan struct{}
	prepErr  error
	walls    sandbox.Walls
	self     string
	private  string
	sock     string
	proxy    net.Listener
	// notify receives the descriptor of the sandbox's filter on writing
	// calls: every write the walls refuse is a check (decideWrite).
	notify  *net.UnixListener
	started time.Time
	// What an agent CLI needs inside (rein run's relay and credentials):
	// further ports carried out, files shown, variables passed.
	forward []sandbox.Forward
	files   []sandbox.File
	pass    []string
}

// contain prepares a contained run in workspace (default: the current
// directory) with the named profile of the policy (applied once rein
// answers with it, at record), and starts the egress proxy, resolving
// allowed names with resolver (host:port; "": the system's). It returns nil
// and the exit status when containment cannot be set up: nothing runs
// unconfined.
func contain(e *env, what string, c *client.Client, profile, workspace, session, resolver string) (*containment, int) {
	r := &containment{e: e, what: what, c: c, session: session, profile: profile}
	r.cwd, _ = os.Getwd()
	ws := workspace
	if ws == "" {
		ws = r.cwd
	}
	ws, err := filepath.Abs(ws)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: workspace: %v\n", what, err)
		return nil, exitUsage
	}
	if ws == "/" || ws == os.Getenv("HOME") {
		fmt.Fprintf(e.stderr, "%s: %s cannot be the workspace: contain a project directory (--workspace)\n", what, ws)
		return nil, exitUsage
	}
	r.ws = ws
	r.features = sandbox.Detect()
	if m := r.features.Missing(); m != "" {
		fmt.Fprintf(e.stderr, "%s: containment cannot be set up, so nothing runs: %s\n", what, m)
		return nil, exitUsage
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: cannot find rein's own binary: %v\n", what, err)
		return nil, exitUsage
	}
	r.self = self
	if r.private, err = os.MkdirTemp("", "rein-run-"); err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", what, err)
		return nil, exitUsage
	}
	// The walls of the workspace and the private home (git's identity: a
	// process of git's) are made while rein answers record.
	r.prepared = make(chan struct{})
	go func() {
		defer close(r.prepared)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); sandbox.SeedHome(r.private) }()
		r.walls, r.prepErr = sandbox.FindWalls(ws)
		wg.Wait()
	}()
	// The egress proxy, outside, on a Unix socket that the sandbox sees.
	sockDir := filepath.Join(r.private, "run")
	if err := os.MkdirAll(sockDir, 0o700); err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", what, err)
		r.close()
		return nil, exitUsage
	}
	r.sock = filepath.Join(sockDir, "proxy.sock")
	if r.proxy, err = net.Listen("unix", r.sock); err != nil {
		fmt.Fprintf(e.stderr, "%s: the egress proxy cannot listen: %v\n", what, err)
		r.close()
		return nil, exitUsage
	}
	// The sandbox's user (mapped from the caller's) connects to it.
	os.Chmod(r.sock, 0o600)
	if r.notify, err = net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(sockDir, "notify.sock"), Net: "unix"}); err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", what, err)
		r.close()
		return nil, exitUsage
	}
	proxy := &egress.Proxy{
		Decide: func(ctx context.Context, host string, port int) (egress.Verdict, error) {
			return decideConnect(ctx, c, session, host, port)
		},
		Report: func(ctx context.Context, id string, ok bool, address, summary string) {
			status := "succeeded"
			if !ok {
				status = "failed"
			}
			c.Report(ctx, id, client.Result{Status: status, Summary: summary, Address: address})
		},
		Blocked: func(host string, port int, why string) {
			fmt.Fprintf(e.stderr, "%s: connection to %s:%d refused: %s\n", what, host, port, why)
		},
	}
	if resolver != "" {
		if proxy.Resolve, err = egress.DNSResolver(resolver); err != nil {
			fmt.Fprintf(e.stderr, "%s: --resolver: %v\n", what, err)
			r.close()
			return nil, exitUsage
		}
	}
	go proxy.Serve(r.proxy)
	return r, 0
}

func (r *containment) close() {
	if r.prepared != nil {
		<-r.prepared // nothing is left writing into the private directory
	}
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.notify != nil {
		r.notify.Close()
	}
	os.RemoveAll(r.private)
}

// record starts the session contained (sandbox.started), so that policy
// sees sandbox.contained in its checks: rein refuses a session that already
// ran outside. The profile applied is the one rein answers with (the
// policy's). It returns once the walls of the workspace are found too: when
// they cannot be, the session ends at once with exit status 2 and nothing
// runs.
func (r *containment) record(ctx context.Context, start client.SandboxStart) error {
	start.Profile, start.Workspace, start.Features = r.profile, r.ws, r.features.String()
	prof, err := startContained(ctx, r.c, r.session, start)
	if err != nil {
		return err
	}
	<-r.prepared
	if r.prepErr != nil {
		r.c.EndSandbox(context.WithoutCancel(ctx), r.session, client.SandboxEnd{ExitStatus: exitUsage, Quarantined: []string{}})
		return r.prepErr
	}
	r.prof, r.started = prof, time.Now()
	return nil
}

// run runs command in the sandbox with the given standard streams and
// returns its exit status. While it runs, it watches the session: once a
// lock stops it, every process of the sandbox is killed (the sandbox is a
// pid namespace: its first process takes every other with it) and the
// status is exitStopped, with the lock.
func (r *containment) run(ctx context.Context, command []string, stdin io.Reader, stdout, stderr io.Writer) (int, *rein.Lock) {
	spec := sandbox.Spec{Profile: r.prof, Workspace: r.ws, Dir: r.cwd, Command: command, Environ: os.Environ(), Private: r.private,
		ProxySocket: r.sock, ProxyPort: 3128, Self: r.self, Forward: r.forward, Files: r.files, Pass: r.pass,
		NotifySocket: r.notify.Addr().String()}
	if l := r.prof.Limits; l != nil && l.Processes > 0 && os.Getuid() == 0 {
		fmt.Fprintf(r.e.stderr, "%s: the profile's limit of %d processes does not hold for a run started as root (the kernel exempts root's processes from RLIMIT_NPROC); start rein run as an ordinary user\n", r.what, l.Processes)
	}
	cmd, err := sandbox.Command(spec, r.features, r.walls)
	if err != nil {
		fmt.Fprintf(r.e.stderr, "%s: %v\n", r.what, err)
		return exitUsage, nil
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(r.e.stderr, "%s: starting the sandbox: %v\n", r.what, err)
		return exitUsage, nil
	}
	watch, stopWatch := context.WithCancel(ctx)
	stopped := make(chan *rein.Lock, 1)
	go func() { stopped <- r.watchStop(watch, cmd.Process) }()
	supervised := make(chan struct{})
	go func() {
		defer close(supervised)
		h, err := sandbox.Receive(r.notify, spec)
		if err != nil {
			return // the sandbox did not start: its rein process refused to run anything
		}
		defer h.Close()
		sup := &sandbox.Supervisor{Workspace: r.ws, Walls: r.walls, Decide: r.decideWrite, Flood: func(n int) {
			fmt.Fprintf(r.e.stderr, "%s: the command made more than %d writes the walls refuse; the rest are refused without a check\n", r.what, n)
		}}
		sup.Serve(watch, h.Notify)
	}()
	err = cmd.Wait()
	r.notify.Close()
	stopWatch()
	<-supervised
	stop := <-stopped
	var ee *exec.ExitError
	switch {
	case stop != nil:
		fmt.Fprintf(r.e.stderr, "%s: stopped by %s (lock %s): %s; every process of the run was killed\n", r.what, stop.CreatedBy, stop.ID, stop.Reason)
		return exitStopped, stop
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	case err != nil:
		fmt.Fprintf(r.e.stderr, "%s: %v\n", r.what, err)
		return exitUsage, nil
	}
	return 0, nil
}

// decideWrite makes a write the walls refused a check of the run's
// session: tool fs.write, args {"path", "operation", "walls"} (and "from"
// and "to" for a rename), recorded like any check. The call never waits
// for people: a blocked write fails at once (containment.md). What people
// approve opens the path later: rein carries a write out for the process
// only where the walls allow that (an exec-config file of the workspace)
// and the check is allowed through an approval people already gave, with
// exactly these arguments (the agent tries again after the approval).
func (r *containment) decideWrite(ctx context.Context, a sandbox.Attempt) sandbox.Verdict {
	args := map[string]any{"path": a.Refused, "operation": a.Op, "walls": a.Walls}
	if a.Op == "rename" && len(a.Paths) == 2 {
		args["from"], args["to"] = a.Paths[0], a.Paths[1]
	}
	if len(a.Flags) > 0 {
		args["flags"] = a.Flags
	}
	if a.Unresolved {
		args["unresolved"] = true
	}
	raw, _ := json.Marshal(args)
	res, err := r.c.Check(ctx, rein.CheckRequest{Tool: "fs.write", Args: raw, Session: r.session})
	if err != nil {
		fmt.Fprintf(r.e.stderr, "%s: %s of %s refused (%s); rein could not be asked: %v\n", r.what, a.Op, a.Refused, a.Walls, err)
		return sandbox.Verdict{}
	}
	if res.Decision == rein.Ask && res.Approval != nil && !r.keepAsking(ctx, res.Approval.ID, a.Approvable) {
		// Another refused write of this run already waits for people, or
		// this one could never be carried out: it is withdrawn, so that a
		// loop of writes cannot fill approvers' inboxes.
		if _, err := r.c.Cancel(context.WithoutCancel(ctx), res.Approval.ID); err != nil {
			fmt.Fprintf(r.e.stderr, "%s: the approval %s of a refused write could not be withdrawn: %v\n", r.what, res.Approval.ID, err)
		}
	}
	carry := a.Approvable && res.Decision == rein.Allow && res.Approval != nil && rein.ArgsHash(raw) == rein.ArgsHash(res.Args)
	if !carry {
		fmt.Fprintf(r.e.stderr, "%s: %s of %s refused: %s; rein: %s (%s)\n", r.what, a.Op, a.Refused, a.Walls, res.Decision, res.Reason)
		if res.Decision.Allows() { // policy allowed what the walls refuse: the record says it did not happen
			r.c.Report(context.WithoutCancel(ctx), res.ID, client.Result{Status: "failed", Summary: "refused by rein run's walls: " + a.Walls})
		}
		return sandbox.Verdict{}
	}
	return sandbox.Verdict{Carry: true, Done: func(err error) {
		res2 := client.Result{Status: "succeeded", Summary: fmt.Sprintf("rein run carried out the %s of %s for the contained command (approval %s)", a.Op, a.Refused, res.Approval.ID)}
		if err != nil {
			res2 = client.Result{Status: "failed", Summary: fmt.Sprintf("rein run could not carry out the approved %s of %s: %v", a.Op, a.Refused, err)}
		}
		fmt.Fprintf(r.e.stderr, "%s: %s\n", r.what, res2.Summary)
		r.c.Report(context.WithoutCancel(ctx), res.ID, res2)
	}}
}

// keepAsking says whether the approval id, asked for a refused write, may
// wait for people: only for a write rein could carry out, and one at a
// time per run (while an earlier one is pending, later ones are not).
func (r *containment) keepAsking(ctx context.Context, id string, approvable bool) bool {
	if !approvable {
		return false
	}
	r.asking.Lock()
	defer r.asking.Unlock()
	if r.pendingWrite != "" {
		if a, err := r.c.Approval(ctx, r.pendingWrite); err != nil || a.Status == rein.StatusPending {
			return false
		}
	}
	r.pendingWrite = id
	return true
}

// watchStop waits on the session until ctx ends (a long poll of rein,
// answered as soon as a lock stops the session); when a lock stops it, it
// kills the sandbox and returns the lock. An answer that comes back
// sooner than stopPoll without a stop (a server that does not wait), or
// rein unreachable for a while, turns it into polling every stopPoll; rein
// unreachable does not stop the run (the contained command cannot reach
// anything but through rein anyway); it is said once.
func (r *containment) watchStop(ctx context.Context, p *os.Process) *rein.Lock {
	warned := false
	for ctx.Err() == nil {
		asked := time.Now()
		qctx, cancel := context.WithTimeout(ctx, stopWait+10*time.Second)
		st, err := r.c.WaitSandbox(qctx, r.session, stopWait.Milliseconds())
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !warned:
			fmt.Fprintf(r.e.stderr, "%s: cannot ask rein whether the session was stopped (it keeps asking): %v\n", r.what, err)
			warned = true
		case err == nil && st.Stop != nil:
			p.Signal(syscall.SIGKILL)
			return st.Stop
		}
		if d := stopPoll - time.Since(asked); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
	}
	return nil
}

// end records how the contained command ended (sandbox.ended), after
// moving out of the workspace the files that arm later execution which
// the run created, and withdrawing the approval of a refused write that
// still waits for people: no process of the run is left to try the write
// again.
func (r *containment) end(ctx context.Context, status int, stop *rein.Lock) {
	r.withdrawPending(context.WithoutCancel(ctx))
	moved := quarantine(r.e, r.ws, r.session, r.walls)
	end := client.SandboxEnd{ExitStatus: status, DurationMS: time.Since(r.started).Milliseconds(), Quarantined: moved}
	if stop != nil {
		end.StoppedBy = stop.ID
	}
	if err := r.c.EndSandbox(context.WithoutCancel(ctx), r.session, end); err != nil {
		fmt.Fprintf(r.e.stderr, "%s: the end of the contained session could not be recorded: %v\n", r.what, err)
	}
}

// withdrawPending cancels the approval of a refused write of the run that
// still waits for people (rein records the cancellation), and says so.
func (r *containment) withdrawPending(ctx context.Context) {
	r.asking.Lock()
	id := r.pendingWrite
	r.pendingWrite = ""
	r.asking.Unlock()
	if id == "" {
		return
	}
	if a, err := r.c.Approval(ctx, id); err == nil && a.Status != rein.StatusPending {
		return
	}
	if _, err := r.c.Cancel(ctx, id); err != nil {
		fmt.Fprintf(r.e.stderr, "%s: the approval %s of a refused write still waits for people after the run ended; it could not be withdrawn: %v\n", r.what, id, err)
		return
	}
	fmt.Fprintf(r.e.stderr, "%s: the approval %s of a refused write was withdrawn: the run ended before people decided\n", r.what, id)
}
