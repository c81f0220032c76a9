package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/sandbox"
)

func init() {
	register(&command{name: "run", summary: "run a command (an agent, a build) contained: files of its workspace only, network only through rein",
		args: "[--profile NAME] [--workspace DIR] [--session S] [--hooks=false] [--unconfined] -- COMMAND [ARG...]",
		example: `  export REIN_KEY=rein_...   # the agent's key; the contained command never sees it
  rein run -- make test
  rein run --profile coding -- sh -c 'go build ./... && go test ./...'
  export ANTHROPIC_API_KEY=sk-ant-...   # Claude Code's own credential: passes to claude only
  rein run --workspace ~/src/app --session fix-42 -- claude -p "fix the failing test"
  rein run --hooks=false -- claude -p "fix the failing test" --dangerously-skip-permissions
  rein run --resolver 10.0.0.53:53 -- npm ci   # resolve allowed names with your resolver
  rein run --unconfined -- make test   # no containment, on the record (a kernel without Landlock)

The profile (what the command may read besides its workspace, which
variables pass) is the policy's: rein answers with the one in force, so the
policy's author decides; "coding" is built in when the policy names none.

Inside, the command reads and writes its workspace (secrets such as .env are
masked, files that arm later execution such as .git/hooks are read only),
reads the system paths of the profile, and reaches the network only through
rein's egress proxy: every new destination is a net.connect check. The exit
status is the command's; 2 when containment cannot be set up (nothing
runs then, unless --unconfined says to run it without, which is recorded
and which policy sees as not contained); 137 when
people stopped the session (a lock on it, e.g. the console's Stop): rein
then kills every process of the run at once (rein answers its wait as
soon as the lock is made).

For claude (Claude Code) and codex, rein run also wires their hooks to rein: every tool
call is a check in the run's session, through a relay of the run that adds
its key (the hooks hold none) and forwards nothing but hook checks. Its
model credential passes (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or
CLAUDE_CODE_OAUTH_TOKEN; OPENAI_API_KEY or CODEX_API_KEY for codex), and a
model endpoint on this machine named by ANTHROPIC_BASE_URL or
OPENAI_BASE_URL (http://127.0.0.1:4000) is forwarded to, exactly that one.
See docs/containment.md.`,
		run: runRun})
	register(&command{name: sandboxInit, summary: "(internal) the contained side of rein run", run: func(_ context.Context, e *env, args []string) int {
		if len(args) != 1 {
			fmt.Fprintln(e.stderr, "rein "+sandboxInit+" is started by rein run, not by hand")
			return exitUsage
		}
		return sandbox.Init(args[0])
	}})
}

const sandboxInit = "sandbox-init"

func runRun(ctx context.Context, e *env, args []string) int {
	// Everything after "--" is the command, flags and all.
	var command []string
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			break
		}
	}
	fs := flags(e, "rein run", commandNamed("run"))
	newClient := clientFlags(e, fs)
	profile := fs.String("profile", "coding", "a containment profile of the policy in force (rein answers with what it reads and passes)")
	resolver := fs.String("resolver", e.getenv("REIN_RESOLVER"), "the DNS server (host:port) the egress proxy resolves allowed names with, e.g. your corporate resolver (default $REIN_RESOLVER, else the system's)")
	workspace := fs.String("workspace", "", "the directory the command may read and write (default: the current directory)")
	session := fs.String("session", "", "the rein session the run's checks belong to (default: a new one)")
	unconfined := fs.Bool("unconfined", false, "run COMMAND WITHOUT containment, on the record (sandbox.started with unconfined; policy sees it as not contained): for a machine without Landlock, user namespaces or seccomp, on a person's explicit say")
	hooks := fs.Bool("hooks", true, "wire the hooks of a Claude Code (claude) or Codex (codex) COMMAND to rein, in the run's session (--hooks=false: containment only)")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		command = append(pos, command...)
	}
	if len(command) == 0 {
		fmt.Fprintln(e.stderr, "rein run: name the command after --: rein run -- make test")
		return exitUsage
	}
	if _, err := exec.LookPath(command[0]); err != nil {
		fmt.Fprintf(e.stderr, "rein run: %v\n", err)
		return 127
	}
	c := newClient()
	if *session == "" {
		*session = rein.NewID("run")
	}
	if *unconfined {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, n := range []string{"profile", "resolver", "hooks"} {
			if set[n] {
				fmt.Fprintf(e.stderr, "rein run: --%s has no meaning with --unconfined: nothing contains the command\n", n)
				return exitUsage
			}
		}
		return runUnconfined(ctx, e, c, command, *workspace, *session)
	}
	r, code := contain(e, "rein run", c, *profile, *workspace, *session, *resolver)
	if r == nil {
		return code
	}
	defer r.close()
	agent, err := containAgent(command, os.Environ(), r.private, filepath.Dir(r.sock), c, *session, *hooks)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein run: %v\n", err)
		return exitUsage
	}
	defer agent.Close()
	r.forward, r.files, r.pass = agent.forward, agent.files, agent.pass
	start := client.SandboxStart{Runner: rein.RunnerRun, Command: command, Agent: agent.record.Agent, Hooks: agent.record.Hooks,
		Credentials: agent.record.Credentials, ModelEndpoint: agent.record.ModelEndpoint, Resolver: *resolver}
	if err := r.record(ctx, start); err != nil {
		return fail(e, "rein run", err)
	}
	status, stop := r.run(ctx, command, e.stdin, e.stdout, e.stderr)
	r.end(ctx, status, stop)
	return status
}

// decideConnect asks rein whether the contained run may connect to
// host:port: a net.connect check in the run's session, held while people
// decide an ask (at most five minutes). Only allow connects; a modify that
// changes the destination is refused (the proxy connects where it was asked
// or nowhere).
func decideConnect(ctx context.Context, c *client.Client, session, host string, port int) (egress.Verdict, error) {
	args, _ := json.Marshal(map[string]any{"host": host, "port": port})
	res, err := c.Check(ctx, rein.CheckRequest{Tool: egress.Tool, Args: args, Session: session, WaitMS: rein.MaxWaitMS})
	if err != nil {
		return egress.Verdict{}, err
	}
	v := egress.Verdict{Reason: res.Reason, CheckID: res.ID}
	switch res.Decision {
	case rein.Allow:
		v.Allowed = true
	case rein.Modify:
		if rein.ArgsHash(args) == rein.ArgsHash(res.Args) { // the same destination, however encoded
			v.Allowed = true
		} else {
			v.Reason = "policy would change the destination (" + string(res.Args) + "); the proxy connects only where it was asked"
		}
	case rein.Ask:
		v.Reason = "no approval in time: " + res.Reason
	}
	return v, nil
}

// startContained starts session contained and returns the profile in
// force: the policy's, as rein answers it, never a table of this machine's,
// so that the policy's author decides what the run reads. The paths are
// checked again here, where they are applied: a path the policy names may
// be a symlink on this machine that leads where no profile reads.
func startContained(ctx context.Context, c *client.Client, session string, st client.SandboxStart) (sandbox.Profile, error) {
	s, err := c.StartSandbox(ctx, session, st)
	if err != nil {
		return sandbox.Profile{}, err
	}
	var p sandbox.Profile
	if sb := s.Sandbox; sb == nil || sb.Profile != st.Profile || len(sb.Read) == 0 {
		err = fmt.Errorf("rein answered without the profile %s in force (a server older than this rein run?); upgrade the server", st.Profile)
	} else {
		p = sandbox.Profile{Name: sb.Profile, Read: sb.Read, Env: sb.Env, Limits: sb.Limits}
		err = checkHere(p)
	}
	if err != nil { // nothing runs: the session's record says so
		c.EndSandbox(context.WithoutCancel(ctx), session, client.SandboxEnd{ExitStatus: exitUsage, Quarantined: []string{}})
		return p, err
	}
	return p, nil
}

// checkHere applies the profile rules of rein (rein.CheckProfileRead and
// CheckProfileEnv) to p on this machine, through its symlinks.
func checkHere(p sandbox.Profile) error {
	for _, r := range p.Read {
		if err := rein.CheckProfileRead(r); err != nil {
			return fmt.Errorf("profile %s: read %v", p.Name, err)
		}
		if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
			if err := rein.CheckProfileRead(real); err != nil {
				return fmt.Errorf("profile %s: %s is a symlink on this machine to %s, which no profile reads: %v", p.Name, r, real, err)
			}
		}
	}
	for _, v := range p.Env {
		if err := rein.CheckProfileEnv(v); err != nil {
			return fmt.Errorf("profile %s: env %v", p.Name, err)
		}
	}
	return nil
}

// quarantine moves the files that arm later execution which the run
// created (those that existed were read only) out of the workspace, into
// rein's state directory, and says where: nothing the contained command
// wrote runs later outside containment until a person has looked.
func quarantine(e *env, ws, session string, before sandbox.Walls) []string {
	after, err := sandbox.FindWalls(ws)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein run: cannot look for files that arm later execution after the run: %v\n", err)
		return nil
	}
	created := sandbox.Created(before, after)
	if len(created) == 0 {
		return []string{}
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, _ := os.UserHomeDir()
		state = filepath.Join(home, ".local", "state")
	}
	dir := filepath.Join(state, "rein", "quarantine", session)
	moved, err := sandbox.Quarantine(ws, dir, created)
	var out []string
	for from, to := range moved {
		fmt.Fprintf(e.stderr, "rein run: %s arms later execution and was created by the contained run; moved to %s (review it, then move it back)\n", from, to)
		out = append(out, from)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "rein run: %v\n", err)
	}
	sort.Strings(out)
	return out
}
