package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os/exec"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

// exitNotRun is rein exec's exit status when rein did not allow the command
// (deny, a rejected or expired approval, no decision in time, throttle):
// nothing ran. 77 is sysexits' EX_NOPERM, which commands rarely use.
const exitNotRun = 77

func init() {
	register(&command{name: "exec", summary: "check one shell command, then run exactly what rein allowed, contained, and record its exit status and output hash",
		args: "[--profile NAME] [--workspace DIR] [--session S] [--intent TEXT] [--wait 10m] -- COMMAND [ARG...]",
		example: `  export REIN_KEY=rein_...   # an agent key that the agent itself does not hold
  rein exec -- make test
  rein exec --intent "clean the build" -- rm -rf ./build
  rein exec --wait 30m -- sh -c 'go build ./... && go test ./...'

rein exec makes the shell.exec check for exactly COMMAND (its words quoted
for the shell: {"command": "rm -rf ./build"}) in a session it contains
itself, waits while people decide an ask, and runs what rein allowed —
an approver's edit or a modify rule's command, never the original after an
edit — with sh -c, contained like rein run. The output streams as it comes;
the result recorded with the check says executed_by "rein", the exit status,
and the SHA-256 and length of standard output and, apart, standard error.
Exit status: the command's; 77 when rein did not allow it (nothing ran);
137 when people stopped the session; 2 when containment cannot be set up.`,
		run: runExec})
}

func runExec(ctx context.Context, e *env, args []string) int {
	var words []string
	for i, a := range args {
		if a == "--" {
			args, words = args[:i], args[i+1:]
			break
		}
	}
	fs := flags(e, "rein exec", commandNamed("exec"))
	newClient := clientFlags(e, fs)
	profile := fs.String("profile", "coding", "a containment profile of the policy in force (rein answers with what it reads and passes)")
	resolver := fs.String("resolver", e.getenv("REIN_RESOLVER"), "the DNS server (host:port) the egress proxy resolves allowed names with (default $REIN_RESOLVER, else the system's)")
	workspace := fs.String("workspace", "", "the directory the command may read and write (default: the current directory)")
	session := fs.String("session", "", "a new rein session for the check and the run (default: a new one)")
	intent := fs.String("intent", "", "what the command is for, shown to approvers")
	wait := fs.Duration("wait", 10*time.Minute, "on ask, how long to wait for people to decide")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	words = append(pos, words...)
	if len(words) == 0 {
		fmt.Fprintln(e.stderr, "rein exec: name the command after --: rein exec -- make test")
		return exitUsage
	}
	if *wait <= 0 {
		fmt.Fprintln(e.stderr, "rein exec: --wait must be positive")
		return exitUsage
	}
	line, err := shellLine(words)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein exec: %v\n", err)
		return exitUsage
	}
	if _, err := exec.LookPath("sh"); err != nil {
		fmt.Fprintf(e.stderr, "rein exec: %v\n", err)
		return 127
	}
	c := newClient()
	if *session == "" {
		*session = rein.NewID("exec")
	}
	r, code := contain(e, "rein exec", c, *profile, *workspace, *session, *resolver)
	if r == nil {
		return code
	}
	defer r.close()
	// The session is contained before the check, so that policy sees
	// sandbox.contained, and belongs to this one command.
	if err := r.record(ctx, client.SandboxStart{Runner: rein.RunnerExec, Command: []string{"sh", "-c", line}, Resolver: *resolver}); err != nil {
		return fail(e, "rein exec", err)
	}
	asked, _ := json.Marshal(map[string]string{"command": line})
	checkID, run, refused := decideExec(ctx, e, c, rein.CheckRequest{Tool: "shell.exec", Args: asked, Session: *session, Intent: *intent}, *wait)
	if refused != "" {
		fmt.Fprintf(e.stderr, "rein exec: not run: %s\n", refused)
		r.end(ctx, exitNotRun, nil)
		return exitNotRun
	}
	if run.Changed {
		fmt.Fprintf(e.stderr, "rein exec: runs the command as rein allowed it, not as asked: %s\n", run.Args)
	}
	var runArgs struct {
		Command string `json:"command"`
	}
	if err := rein.DecodeStrict(run.Args, &runArgs, "command"); err != nil || runArgs.Command == "" {
		fmt.Fprintf(e.stderr, "rein exec: not run: the allowed arguments %s are not one shell command ({\"command\": \"...\"})\n", run.Args)
		r.end(ctx, exitNotRun, nil)
		return exitNotRun
	}
	out, errOut := newOutputHash(), newOutputHash()
	status, stop := r.run(ctx, []string{"sh", "-c", runArgs.Command}, e.stdin, io.MultiWriter(e.stdout, out), io.MultiWriter(e.stderr, errOut))
	res := client.Result{Status: "succeeded", Summary: fmt.Sprintf("exit status %d", status), Args: run.Args, ExecutedBy: rein.ExecutedByRein,
		ExitStatus: &status, StdoutSHA256: out.sum(), StdoutBytes: &out.n, StderrSHA256: errOut.sum(), StderrBytes: &errOut.n}
	if status != 0 {
		res.Status = "failed"
	}
	if stop != nil {
		res.Summary += ", stopped by lock " + stop.ID
	}
	if err := c.Report(context.WithoutCancel(ctx), checkID, res); err != nil {
		fmt.Fprintf(e.stderr, "rein exec: the result could not be recorded: %v\n", err)
	} else {
		fmt.Fprintf(e.stderr, "rein exec: exit status %d; stdout %s (%d bytes), stderr %s (%d bytes); recorded with check %s\n",
			status, res.StdoutSHA256, out.n, res.StderrSHA256, errOut.n, checkID)
	}
	r.end(ctx, status, stop)
	return status
}

// decideExec asks rein about the command and, on ask, waits for people. It
// returns the check that allows the command (the one that used the grant,
// after an approval) and what to run, or why nothing runs.
func decideExec(ctx context.Context, e *env, c *client.Client, req rein.CheckRequest, wait time.Duration) (string, rein.Answer, string) {
	res, err := c.Check(ctx, req)
	if err != nil {
		return "", rein.Answer{}, fmt.Sprintf("rein could not decide: %v", err)
	}
	ans := res.Answer(req.Args)
	if ans.Do != rein.DoWait {
		return res.ID, ans, refusal(ans, res.Rule)
	}
	a := res.Approval
	fmt.Fprintf(e.stderr, "rein exec: waiting up to %s for approval %s (%s): %s\n  %s\n", wait, a.ID, res.Rule, res.Reason, a.URL)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := c.WaitDecision(wctx, a.ID)
	if w == nil {
		return "", rein.Answer{}, fmt.Sprintf("waiting for approval %s failed: %v", a.ID, err)
	}
	if w.Decision == rein.Ask {
		return "", rein.Answer{}, fmt.Sprintf("approval %s was not decided within %s", a.ID, wait)
	}
	ans = w.Answer(req.Args)
	id := w.UseCheckID
	if id == "" {
		id = res.ID
	}
	return id, ans, refusal(ans, res.Rule)
}

// refusal is why an answer does not run the command, "" when it does.
func refusal(ans rein.Answer, rule string) string {
	switch ans.Do {
	case rein.DoRun:
		return ""
	case rein.DoRetry:
		return fmt.Sprintf("%s (rate limited; retry in %s)", decisionLine(ans.Decision, rule, ans.Reason), ans.RetryAfter)
	}
	return decisionLine(ans.Decision, rule, ans.Reason)
}

// shellLine quotes words for sh so that the check names exactly what runs.
func shellLine(words []string) (string, error) {
	q := make([]string, len(words))
	for i, w := range words {
		s, err := syntax.Quote(w, syntax.LangPOSIX)
		if err != nil {
			return "", fmt.Errorf("argument %d cannot be passed to sh: %v", i+1, err)
		}
		q[i] = s
	}
	return strings.Join(q, " "), nil
}

// outputHash counts and hashes one output stream as it passes.
type outputHash struct {
	h hash.Hash
	n int64
}

func newOutputHash() *outputHash { return &outputHash{h: sha256.New()} }

func (o *outputHash) Write(p []byte) (int, error) {
	o.h.Write(p)
	o.n += int64(len(p))
	return len(p), nil
}

func (o *outputHash) sum() string { return "sha256:" + hex.EncodeToString(o.h.Sum(nil)) }
