package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/client"
)

// runUnconfined runs command without containment, on the person's explicit
// --unconfined: the session is recorded as such (sandbox.started with
// unconfined, then sandbox.ended), policy sees it as not contained, and a
// lock on it still ends the command and its process group. Only rein's own
// variables are kept from it (REIN_KEY, REIN_SERVER): everything else of
// the caller's files, network and environment is within its reach, and
// rein run says so before it starts.
func runUnconfined(ctx context.Context, e *env, c *client.Client, command []string, workspace, session string) int {
	ws := workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein run: workspace: %v\n", err)
		return exitUsage
	}
	if _, err := c.StartSandbox(ctx, session, client.SandboxStart{Unconfined: true, Workspace: ws, Command: command}); err != nil {
		return fail(e, "rein run", err)
	}
	fmt.Fprintf(e.stderr, "rein run: --unconfined: %s runs WITHOUT containment (your files, network and environment are within its reach); recorded in session %s\n",
		command[0], session)
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = ws
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REIN_KEY=") && !strings.HasPrefix(kv, "REIN_SERVER=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &containment{e: e, what: "rein run", c: c, session: session, started: time.Now()}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.stderr, "rein run: %v\n", err)
		r.endUnconfined(ctx, exitUsage, "")
		return exitUsage
	}
	watch, stopWatch := context.WithCancel(ctx)
	stopped := make(chan string, 1)
	go func() {
		if l := r.watchStop(watch, cmd.Process); l != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the command's whole process group
			stopped <- l.ID
			return
		}
		stopped <- ""
	}()
	err = cmd.Wait()
	stopWatch()
	stop := <-stopped
	status := 0
	var ee *exec.ExitError
	switch {
	case stop != "":
		fmt.Fprintf(e.stderr, "rein run: stopped (lock %s); the command's process group was killed\n", stop)
		status = exitStopped
	case errors.As(err, &ee):
		if w, ok := ee.Sys().(syscall.WaitStatus); ok && w.Signaled() {
			status = 128 + int(w.Signal())
		} else {
			status = ee.ExitCode()
		}
	case err != nil:
		fmt.Fprintf(e.stderr, "rein run: %v\n", err)
		status = exitUsage
	}
	r.endUnconfined(ctx, status, stop)
	return status
}

// endUnconfined records how the unconfined command ended (sandbox.ended).
func (r *containment) endUnconfined(ctx context.Context, status int, stop string) {
	end := client.SandboxEnd{ExitStatus: status, DurationMS: time.Since(r.started).Milliseconds(), Quarantined: []string{}, StoppedBy: stop}
	if err := r.c.EndSandbox(context.WithoutCancel(ctx), r.session, end); err != nil {
		fmt.Fprintf(r.e.stderr, "rein run: the end of the unconfined session could not be recorded: %v\n", err)
	}
}
