package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/hook"
)

func init() {
	register(&command{name: "hook", summary: "agent hooks that put an agent's tool calls through rein",
		sub: []*command{{name: "claude-code", summary: "Claude Code PreToolUse hook: reads the hook JSON on stdin, prints rein's decision",
			args: "[--on-ask wait|prompt|deny|defer] [--wait 50s] [--server URL] [--key KEY]",
			example: `  # .claude/settings.json (REIN_KEY is an agent key in Claude Code's environment):
  #   {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
  #     {"type": "command", "command": "rein hook claude-code --on-ask wait --wait 50s", "timeout": 60}]}]}}
  echo '{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' \
    | rein hook claude-code --on-ask deny`,
			run: runHookClaudeCode},
			{name: "codex", summary: "Codex PreToolUse / PermissionRequest / PostToolUse hook: reads the hook JSON on stdin, prints rein's decision",
				args: "[--on-ask wait|prompt|deny] [--wait 50s] [--server URL] [--key KEY]",
				example: `  # ~/.codex/hooks.json (REIN_KEY is an agent key in Codex's environment):
  #   {"hooks": {"PreToolUse": [{"matcher": ".*", "hooks": [
  #     {"type": "command", "command": "rein hook codex --on-ask wait --wait 50s", "timeout": 60}]}]}}
  echo '{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_1"}' \
    | rein hook codex --on-ask deny`,
				run: runHookCodex}}})
}

// hookSlack is the time the hook keeps beyond --wait for the round trip.
const hookSlack = 5 * time.Second

// runHookClaudeCode always exits 0 with valid hook JSON on stdout: Claude
// Code lets a tool run when its hook fails, so every failure here (bad
// flags, bad input, rein unreachable, a timeout) is printed as a deny.
func runHookClaudeCode(ctx context.Context, e *env, args []string) int {
	// Stdout carries the decision alone: flag errors and usage go to stderr,
	// except for an explicit --help.
	fe := *e
	if !wantsHelp(args) {
		fe.stdout = e.stderr
	}
	fs := flags(&fe, "rein hook claude-code", commandNamed("hook").sub[0])
	newClient := clientFlags(e, fs)
	onAsk := fs.String("on-ask", "wait", "on ask: wait (for the approval, up to --wait), prompt (let the user at the terminal decide), deny, or defer (headless claude -p: stop, resume after the approval)")
	wait := fs.Duration("wait", 50*time.Second, "with --on-ask wait, how long to hold the tool call (max 5m; keep it below the hook's timeout in settings.json)")
	_, code, ok := parse(fs, args)
	if !ok && code == exitOK { // --help
		return exitOK
	}
	// Every refusal is answered in the shape of the hook's event, so the
	// input is read before anything can go wrong.
	data, readErr := readHookInput(e)
	event := hook.EventOf(data)
	deny := func(reason string) int { return printHook(e, hook.DenyFor(event, reason)) }
	if !ok {
		return deny("the hook is misconfigured: bad flags (see rein hook claude-code --help)")
	}
	mode, err := hook.ParseOnAsk(*onAsk)
	if err != nil {
		return deny("the hook is misconfigured: " + err.Error())
	}
	if *wait < 0 || *wait > maxHookWait {
		return deny("the hook is misconfigured: --wait must be between 0 and 5m")
	}
	if readErr != nil {
		return deny("cannot read the hook input: " + readErr.Error())
	}
	in, err := hook.Parse(data)
	if err != nil {
		return deny(err.Error())
	}
	c := newClient()
	if c.Key == "" && !insideRun() {
		return deny("no API key: set REIN_KEY to an agent key in Claude Code's environment, or pass --key")
	}
	ctx, cancel := context.WithTimeout(ctx, *wait+hookSlack)
	defer cancel()
	if in.HookEventName == hook.EventPostToolUse {
		res := in.Result()
		if err := reportResult(ctx, c, in.RequestID(), client.Result{Status: res.Status, Summary: res.Summary, Args: res.Args}); err != nil {
			fmt.Fprintf(e.stderr, "rein: the result of tool call %s was not recorded: %v\n", in.ToolUseID, err)
		}
		return printHook(e, hook.Ended())
	}
	if in.HookEventName == hook.EventPermissionDenied {
		res := in.Denied()
		if err := reportResult(ctx, c, in.RequestID(), client.Result{Status: res.Status, Summary: res.Summary}); err != nil {
			fmt.Fprintf(e.stderr, "rein: the denial of tool call %s was not recorded: %v\n", in.ToolUseID, err)
		}
		return printHook(e, hook.Ended())
	}
	if in.HookEventName == hook.EventSessionEnd {
		// The server decides whether the session ends (not while an
		// approval in it is pending: a deferred call resumes it), as for
		// the http hook.
		if _, err := c.ClaudeCodeHook(ctx, data); err != nil {
			fmt.Fprintf(e.stderr, "rein: the end of session %s was not recorded: %v\n", in.SessionID, err)
		}
		return printHook(e, hook.Ended())
	}
	res, err := c.Check(ctx, *in.Check(mode, *wait))
	if err == nil && mode == hook.AskDefer && in.HookEventName == hook.EventPreToolUse && res.Decision == rein.Ask && res.Approval != nil {
		// A resumed deferred call: once its approval is approved, decide it
		// again with the grant (a lookup that fails defers again).
		if a, aerr := c.Approval(ctx, res.Approval.ID); aerr == nil && a.Status == rein.StatusApproved {
			if req, ok := in.Resumed(); ok {
				res, err = c.Check(ctx, *req)
			}
		} else if aerr == nil && a.Status != rein.StatusPending {
			return printHook(e, hook.NotResumed(a))
		}
	}
	if err != nil {
		return deny(checkFailure(ctx, err, *wait+hookSlack))
	}
	if in.HookEventName == hook.EventPermissionRequest {
		return printHook(e, hook.AnswerPermission(res.Answer(in.ToolInput), mode))
	}
	return printHook(e, hook.Answer(res.Answer(in.ToolInput), mode))
}

// maxHookWait bounds --wait of the hooks.
const maxHookWait = 5 * time.Minute

// readHookInput reads the hook's JSON from stdin (nothing from a terminal),
// at most one byte past the limit, so that hook.Parse can refuse more.
func readHookInput(e *env) ([]byte, error) {
	if f, isFile := e.stdin.(*os.File); isFile && isTerminal(f) {
		return nil, nil
	}
	return io.ReadAll(io.LimitReader(e.stdin, hook.MaxInputBytes+1))
}

// reportResult records what became of the tool call checked under
// requestID.
func reportResult(ctx context.Context, c *client.Client, requestID string, r client.Result) error {
	rec, err := c.CheckByRequestID(ctx, requestID)
	if err != nil {
		return err
	}
	return c.Report(ctx, rec.ID, r)
}

// checkFailure names why a hook's check got no answer, for its deny.
func checkFailure(ctx context.Context, err error, waited time.Duration) string {
	var ce *client.Error
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("rein refused the check: %s: %s", ce.Code, ce.Message)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return fmt.Sprintf("rein did not answer within %s", waited)
	default:
		return fmt.Sprintf("rein is unreachable, so nothing runs: %v", err)
	}
}

func printHook(e *env, out hook.Output) int {
	b, _ := json.Marshal(out)
	fmt.Fprintf(e.stdout, "%s\n", b)
	return exitOK
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			return true
		}
	}
	return false
}

// runHookCodex is `rein hook codex`: like the Claude Code hook, it always
// exits 0 with an answer Codex reads, and every failure is a deny naming its
// cause (a systemMessage for a PostToolUse, whose call already ran).
func runHookCodex(ctx context.Context, e *env, args []string) int {
	fe := *e
	if !wantsHelp(args) {
		fe.stdout = e.stderr
	}
	fs := flags(&fe, "rein hook codex", commandNamed("hook").sub[1])
	newClient := clientFlags(e, fs)
	onAsk := fs.String("on-ask", "wait", "on ask: wait (for the approval, up to --wait), prompt (PermissionRequest: let Codex ask its user; PreToolUse: deny) or deny")
	wait := fs.Duration("wait", 50*time.Second, "with --on-ask wait, how long to hold the tool call (max 5m; keep it below the hook's timeout in hooks.json)")
	_, code, ok := parse(fs, args)
	if !ok && code == exitOK { // --help
		return exitOK
	}
	data, readErr := readHookInput(e)
	event := hook.CodexEventOf(data)
	answer := func(out hook.CodexOutput) int {
		b, _ := json.Marshal(out)
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	deny := func(reason string) int { return answer(hook.CodexDenyFor(event, reason)) }
	if !ok {
		return deny("the hook is misconfigured: bad flags (see rein hook codex --help)")
	}
	mode, err := hook.ParseCodexOnAsk(*onAsk)
	if err != nil {
		return deny("the hook is misconfigured: " + err.Error())
	}
	if *wait < 0 || *wait > maxHookWait {
		return deny("the hook is misconfigured: --wait must be between 0 and 5m")
	}
	if readErr != nil {
		return deny("cannot read the hook input: " + readErr.Error())
	}
	in, err := hook.ParseCodex(data)
	if err != nil {
		return deny(err.Error())
	}
	c := newClient()
	if c.Key == "" && !insideRun() {
		return deny("no API key: set REIN_KEY to an agent key in Codex's environment, or pass --key")
	}
	ctx, cancel := context.WithTimeout(ctx, *wait+hookSlack)
	defer cancel()
	if in.HookEventName == hook.EventPostToolUse {
		res := in.Result()
		if err := reportResult(ctx, c, in.RequestID(), client.Result{Status: res.Status, Summary: res.Summary, Args: res.Args}); err != nil {
			fmt.Fprintf(e.stderr, "rein: the result of tool call %s was not recorded: %v\n", in.ToolUseID, err)
			return deny(fmt.Sprintf("the result of tool call %s was not recorded: %v", in.ToolUseID, err))
		}
		return answer(hook.CodexOutput{})
	}
	req := in.Check(mode, *wait)
	res, err := c.Check(ctx, *req)
	if err != nil {
		return deny(checkFailure(ctx, err, *wait+hookSlack))
	}
	// Compared with the checked arguments: for a PermissionRequest those are
	// the tool input without Codex's description (CodexInput.Check).
	return answer(hook.AnswerCodex(in.HookEventName, res.Answer(req.Args), mode))
}

// insideRun reports whether the hook runs inside rein run's containment,
// where it holds no key: the run's relay (--server) adds the run's own.
func insideRun() bool { return os.Getenv("REIN_CONTAINED") == "1" }
