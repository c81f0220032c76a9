package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

func init() {
	register(&command{name: "check", summary: "ask rein whether an action may run; exit 0 for allow/modify, 1 otherwise",
		args: "TOOL [--args JSON] [--session S] [--agent A] [--intent TEXT] [--label K=V]... [--cost N] [--wait 30s] [--output json]",
		example: `  export REIN_KEY=rein_...   # an agent key: rein keys create builder --role agent --tenant demo
  rein check shell.exec --args '{"command": "ls -la"}' --session run-1
  rein check payments.transfer --args '{"amount": 5000, "to": "acme"}' --intent "pay invoice 42"`,
		run: runCheck})
}

type labelFlag map[string]string

func (l labelFlag) String() string { return "" }
func (l labelFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("labels are KEY=VALUE, got %q", s)
	}
	l[k] = v
	return nil
}

func runCheck(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein check", commandNamed("check"))
	newClient := clientFlags(e, fs)
	argsJSON := fs.String("args", "{}", "the tool's arguments as a JSON object")
	session := fs.String("session", "", "session (run, conversation) id")
	agent := fs.String("agent", "", "acting agent: the key's name or <keyname>/<sub-agent>")
	intent := fs.String("intent", "", "what the agent means to achieve")
	batch := fs.String("batch", "", "the agent turn this check belongs to, so approvers can decide its approvals together")
	cost := fs.Float64("cost", -1, "declared cost of the action")
	requestID := fs.String("request-id", "", "idempotency key: a retry with the same id returns the same answer")
	wait := fs.Duration("wait", 0, "on ask, wait up to this long for the approval (max 5m)")
	output := fs.String("output", "text", "text or json")
	labels := labelFlag{}
	fs.Var(labels, "label", "client label KEY=VALUE (repeatable)")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "rein check: give exactly one TOOL; see rein check --help")
		return exitUsage
	}
	if !json.Valid([]byte(*argsJSON)) {
		fmt.Fprintf(e.stderr, "rein check: --args is not valid JSON: %s\n", *argsJSON)
		return exitUsage
	}
	if *wait < 0 || *wait > rein.MaxWaitMS*time.Millisecond {
		fmt.Fprintln(e.stderr, "rein check: --wait must be between 0 and 5m")
		return exitUsage
	}
	req := rein.CheckRequest{Tool: pos[0], Args: json.RawMessage(*argsJSON), Session: *session, Agent: *agent,
		Intent: *intent, RequestID: *requestID, Batch: *batch}
	if len(labels) > 0 {
		req.Labels = labels
	}
	if *cost >= 0 {
		req.Cost = cost
	}
	c := newClient()
	res, err := c.Check(ctx, req)
	if err != nil {
		return fail(e, "rein check", err)
	}
	if res.Decision == rein.Ask && res.Approval != nil && *wait > 0 {
		return waitForApproval(ctx, e, c, res, req.Args, *wait, *output)
	}
	if *output == "json" {
		printJSON(e, res)
	} else {
		printDecision(e, res, req.Args)
	}
	return exitFor(res.Decision)
}

// waitForApproval says at once which approval the check waits for (on
// stderr, so that stdout keeps the answer alone), waits for it, and prints
// the outcome: allow with the arguments to run (an approver's edit
// included), or deny with why, or the ask again when the wait ran out.
func waitForApproval(ctx context.Context, e *env, c *client.Client, res *rein.CheckResponse, asked json.RawMessage, wait time.Duration, output string) int {
	a := res.Approval
	fmt.Fprintf(e.stderr, "waiting up to %s for approval %s (%s): %s\n  %s\n", wait, a.ID, res.Rule, res.Reason, a.URL)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := c.WaitDecision(wctx, a.ID)
	if w == nil {
		return fail(e, "rein check", err)
	}
	if w.Decision == rein.Ask { // the wait ran out: the ask stands
		if output == "json" {
			printJSON(e, res)
		} else {
			printDecision(e, res, asked)
		}
		return exitNegative
	}
	ans := w.Answer(asked)
	if output == "json" {
		// The shape of a check's answer, as without --wait: the check that
		// used the grant, the arguments to run.
		out := *res
		out.ID, out.Decision, out.Reason, out.Args = w.UseCheckID, w.Decision, w.Reason, w.RunArgs
		if out.ID == "" {
			out.ID = res.ID
		}
		ref := *res.Approval
		ref.Status = w.Status
		out.Approval = &ref
		printJSON(e, &out)
	} else {
		fmt.Fprintln(e.stdout, decisionLine(w.Decision, res.Rule, w.Reason))
		if ans.Do == rein.DoRun && ans.Changed {
			fmt.Fprintf(e.stdout, "  args:     %s   (run these, not the arguments asked)\n", ans.Args)
		}
	}
	if ans.Do != rein.DoRun {
		return exitNegative
	}
	return exitOK
}

// exitFor is the exit code of a decision: 0 when the action may run.
func exitFor(d rein.Decision) int {
	if d.Allows() {
		return exitOK
	}
	return exitNegative
}

// decisionLine is "decision [rule]: reason".
func decisionLine(d rein.Decision, rule, reason string) string {
	if rule != "" {
		return fmt.Sprintf("%s [%s]: %s", d, rule, reason)
	}
	return fmt.Sprintf("%s: %s", d, reason)
}

func printDecision(e *env, r *rein.CheckResponse, asked json.RawMessage) {
	fmt.Fprintln(e.stdout, decisionLine(r.Decision, r.Rule, r.Reason))
	if len(r.Risk) > 0 {
		fmt.Fprintf(e.stdout, "  risk:     %s\n", strings.Join(r.Risk, ", "))
	}
	if ans := r.Answer(asked); ans.Do == rein.DoRun && ans.Changed {
		fmt.Fprintf(e.stdout, "  args:     %s   (run these, not the arguments asked)\n", ans.Args)
	}
	if a := r.Approval; a != nil {
		fmt.Fprintf(e.stdout, "  approval: %s (%s, %d of %d approvals, expires %s)\n            %s\n",
			a.ID, a.Status, a.Approvals, a.Quorum, a.ExpiresAt.Local().Format(time.Kitchen), a.URL)
	}
	if r.RetryAfterMS != nil {
		fmt.Fprintf(e.stdout, "  retry in: %s\n", time.Duration(*r.RetryAfterMS)*time.Millisecond)
	}
	fmt.Fprintf(e.stdout, "  check:    %s (audit #%d, policy %s)\n", r.ID, r.AuditIndex, short(r.PolicyVersion))
}

func short(version string) string {
	if len(version) > 19 {
		return version[:19]
	}
	return version
}

func printJSON(e *env, v any) {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
