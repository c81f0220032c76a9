package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/hook"
)

func init() {
	register(&command{name: "hook", summary: "agent hooks that put an agent's tool calls through rein",
		sub: []*command{{name: "claude-code", summary: "Claude Code PreToolUse hook: reads the hook JSON on stdin, prints rein's decision",
			args: "[--on-ask wait|prompt|deny] [--wait 50s] [--server URL] [--key KEY]",
			example: `  # .claude/settings.json (REIN_KEY is an agent key in Claude Code's environment):
  #   {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
  #     {"type": "command", "command": "rein hook claude-code --on-ask wait --wait 50s", "timeout": 60}]}]}}
  echo '{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' \
    | rein hook claude-code --on-ask deny`,
			run: runHookClaudeCode}}})
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
	onAsk := fs.String("on-ask", "wait", "on ask: wait (for the approval, up to --wait), prompt (let the user at the terminal decide) or deny")
	wait := fs.Duration("wait", 50*time.Second, "with --on-ask wait, how long to hold the tool call (max 5m; keep it below the hook's timeout in settings.json)")
	_, code, ok := parse(fs, args)
	if !ok {
		if code == exitOK { // --help
			return exitOK
		}
		return printHook(e, hook.Deny("the hook is misconfigured: bad flags (see rein hook claude-code --help)"))
	}
	mode, err := hook.ParseOnAsk(*onAsk)
	if err != nil {
		return printHook(e, hook.Deny("the hook is misconfigured: "+err.Error()))
	}
	if *wait < 0 || *wait > 5*time.Minute {
		return printHook(e, hook.Deny("the hook is misconfigured: --wait must be between 0 and 5m"))
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, hook.MaxInputBytes+1))
	if err != nil {
		return printHook(e, hook.Deny("cannot read the hook input: "+err.Error()))
	}
	in, err := hook.Parse(data)
	if err != nil {
		return printHook(e, hook.Deny(err.Error()))
	}
	c := newClient()
	if c.Key == "" {
		return printHook(e, hook.Deny("no API key: set REIN_KEY to an agent key in Claude Code's environment, or pass --key"))
	}
	ctx, cancel := context.WithTimeout(ctx, *wait+hookSlack)
	defer cancel()
	res, err := c.Check(ctx, *in.Check(mode, *wait))
	if err != nil {
		var ce *client.Error
		switch {
		case errors.As(err, &ce):
			return printHook(e, hook.Deny(fmt.Sprintf("rein refused the check: %s: %s", ce.Code, ce.Message)))
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			return printHook(e, hook.Deny(fmt.Sprintf("rein did not answer within %s", *wait+hookSlack)))
		default:
			return printHook(e, hook.Deny(fmt.Sprintf("rein is unreachable, so nothing runs: %v", err)))
		}
	}
	return printHook(e, hook.Answer(res, mode))
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
