package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
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
	req := rein.CheckRequest{Tool: pos[0], Args: json.RawMessage(*argsJSON), Session: *session, Agent: *agent,
		Intent: *intent, RequestID: *requestID, WaitMS: wait.Milliseconds()}
	if len(labels) > 0 {
		req.Labels = labels
	}
	if *cost >= 0 {
		req.Cost = cost
	}
	res, err := newClient().Check(ctx, req)
	if err != nil {
		return fail(e, "rein check", err)
	}
	if *output == "json" {
		printJSON(e, res)
	} else {
		printDecision(e, res)
	}
	return exitFor(res.Decision)
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

func printDecision(e *env, r *rein.CheckResponse) {
	fmt.Fprintln(e.stdout, decisionLine(r.Decision, r.Rule, r.Reason))
	if len(r.Risk) > 0 {
		fmt.Fprintf(e.stdout, "  risk:     %s\n", strings.Join(r.Risk, ", "))
	}
	if r.Decision == rein.Modify {
		fmt.Fprintf(e.stdout, "  args:     %s\n", r.Args)
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
