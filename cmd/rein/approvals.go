package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/notify"
)

func init() {
	register(&command{name: "approvals", summary: "list approvals, each with the version of its action votes are taken on (approver, admin, auditor)",
		args: "[--status pending|approved|rejected|expired|cancelled|invalidated|consumed|all] [--session S] [--agent A] [--output json]",
		example: "  rein approvals\n  rein approvals --status all --session run-1\n\n" +
			"Each approval shows its revision (1 is the agent's request, each edit makes the next) and\n" +
			"its arguments as they will run; an edited one also what changed from the agent's request.",
		run: runApprovals})
	register(&command{name: "approve", summary: "approve a pending approval, or edit its arguments with --args",
		args: "ID [--revision N] [--yes] [--message M] [--args JSON] [--grant once|session|DURATION] | --batch B [--approvals IDS]",
		example: "  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"looks fine\"\n" +
			"  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --revision 2 --yes   # only if revision 2 is still the current one; no question asked\n" +
			"  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --args '{\"command\": \"rm -rf ./build/tmp\"}'\n" +
			"  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --grant session   # this exact action for the rest of the session (if the rule permits)\n" +
			"  rein approve --batch turn-42 --approvals apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E,apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6F@2   # the whole agent turn, if it still holds exactly these (@2: the revision seen of an edited one)\n\n" +
			voteHelp,
		run: func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "approve", args) }})
	register(&command{name: "edit", summary: "approve a pending approval with edited arguments (policy checks them first)",
		args: "ID --args JSON [--revision N] [--yes] [--message M]",
		example: "  rein edit apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --args '{\"amount\": 50, \"to\": \"acct-b\"}' --message \"wrong account\"\n\n" +
			"The edit makes a new revision: approvals of the one before no longer count, and every\n" +
			"eligible approver is told again. " + voteHelp,
		run: func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "edit", args) }})
	register(&command{name: "reject", summary: "reject a pending approval",
		args: "ID [--yes] [--message M] | --batch B [--approvals IDS] [--message M]",
		example: "  rein reject apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"not during the freeze\"\n" +
			"  rein reject --batch turn-42 --message \"not this turn\"   # every pending approval of the agent turn\n\n" +
			"A reject counts whatever revision was shown: refusing is always safe.",
		run: func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "reject", args) }})
	register(&command{name: "revoke", summary: "revoke an approved grant before its window closes (approver of the approval, admin)",
		args:    "ID [--message M]",
		example: "  rein approvals --status approved      # the grants in force\n  rein revoke apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"incident over\"",
		run:     runRevoke})
}

// voteHelp says how a vote is bound to what its voter saw.
const voteHelp = "The command first prints the version of the action it votes on (tool, arguments as they\n" +
	"will run, what an edit changed) and, on a terminal, asks you to confirm (--yes does not ask).\n" +
	"The vote names that revision: if the action was edited meanwhile, nothing is voted, the\n" +
	"current version is printed and the command exits 1; look at it and vote again."

func runRevoke(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein revoke", commandNamed("revoke"))
	newClient := clientFlags(e, fs)
	message := fs.String("message", "", "why, for the audit log")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "rein revoke: give one approval ID; see --help")
		return exitUsage
	}
	a, err := newClient().Revoke(ctx, pos[0], *message)
	if err != nil {
		return fail(e, "rein revoke", err)
	}
	fmt.Fprintf(e.stdout, "%s: %s (the grant was used %d times)\n", a.ID, a.Status, a.Uses)
	return exitOK
}

func runApprovals(ctx context.Context, e *env, args []string) int {
	return listWith(ctx, e, args, "approvals", (*client.Client).Approvals, func(list []rein.Approval) {
		for i := range list {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			printVersion(e.stdout, &list[i])
		}
	})
}

// printVersion writes an approval as a voter must see it before voting: the
// revision of its action, the tool, what an edit changed from the agent's
// request, then the arguments as they will run. Values the agent chose have
// their hidden characters written out.
func printVersion(w io.Writer, a *rein.Approval) {
	fmt.Fprintf(w, "%s  %s  %s  revision %d  %d of %d approvals  expires %s\n", a.ID, a.Status, notify.Visible(a.Tool),
		max(a.Revision, 1), len(a.Counting()), max(a.Quorum, 1), a.ExpiresAt.Local().Format(time.Kitchen))
	fmt.Fprintf(w, "  agent:    %s (session %s)\n", notify.Visible(a.Agent), notify.Visible(a.Session))
	fmt.Fprintf(w, "  rule:     %s: %s\n", notify.Visible(a.Rule), notify.Visible(a.Reason))
	if a.Revision > 1 {
		by := notify.Editor(a)
		if by == "" {
			by = "an approver"
		}
		fmt.Fprintf(w, "  edited:   by %s; changed from the agent's request:\n", notify.Visible(by))
		lines := notify.ChangeLines(a)
		if len(lines) == 0 {
			lines = []string{"nothing: the edit is the agent's request again"}
		}
		for _, l := range lines {
			fmt.Fprintf(w, "              %s\n", l)
		}
	}
	fmt.Fprintf(w, "  args:     %s\n", compactArgs(notify.Args(a)))
}

// compactArgs is the arguments on one line, their hidden characters written out.
func compactArgs(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return notify.Visible(string(raw))
	}
	return notify.Visible(b.String())
}

// runList is a list command of questions, reviews or proposals: the
// filters, then JSON or a table with one row per item.
func runList[T any](ctx context.Context, e *env, args []string, name string,
	get func(*client.Client, context.Context, client.ListQuery) ([]T, error), header string, row func(T) string) int {
	return listWith(ctx, e, args, name, get, func(list []T) {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for _, x := range list {
			fmt.Fprintln(tw, row(x))
		}
		tw.Flush()
	})
}

// listWith is a list command: the filters (--status, --session, --agent,
// --output), then JSON, a line saying there is nothing, or render's text.
func listWith[T any](ctx context.Context, e *env, args []string, name string,
	get func(*client.Client, context.Context, client.ListQuery) ([]T, error), render func([]T)) int {
	fs := flags(e, "rein "+name, commandNamed(name))
	newClient := clientFlags(e, fs)
	status := fs.String("status", "pending", "status to list, or all")
	session := fs.String("session", "", "only this session")
	agent := fs.String("agent", "", "only this agent")
	output := fs.String("output", "text", "text or json")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	q := client.ListQuery{Status: *status, Session: *session, Agent: *agent}
	if q.Status == "all" {
		q.Status = ""
	}
	list, err := get(newClient(), ctx, q)
	if err != nil {
		return fail(e, "rein "+name, err)
	}
	if *output == "json" {
		printJSON(e, list)
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "no %s%s\n", strings.TrimSuffix(*status+" ", "all "), name)
		return exitOK
	}
	render(list)
	return exitOK
}

// interactive reports whether the vote should be confirmed: stdin is a
// terminal (a variable, so that tests can say it is).
var interactive = func(e *env) bool {
	f, ok := e.stdin.(*os.File)
	return ok && isTerminal(f)
}

func runVote(ctx context.Context, e *env, vote string, args []string) int {
	name := "rein " + vote
	fs := flags(e, name, commandNamed(vote))
	newClient := clientFlags(e, fs)
	message := fs.String("message", "", "a note for the agent and the audit log")
	var edited, grant *string
	if vote == "approve" || vote == "edit" {
		edited = fs.String("args", "", "approve these arguments instead (an edit; policy checks them first)")
	}
	if vote == "approve" {
		grant = fs.String("grant", "", "what the approval grants: once (default), session (this exact action for the rest of the session) or a window such as 1h, within what the rule permits")
	}
	revision := fs.Int("revision", 0, "vote only if this is still the current revision of the action (default: the one printed)")
	yes := fs.Bool("yes", false, "do not ask for confirmation on a terminal")
	output := fs.String("output", "text", "text or json")
	var batch, seen *string
	if vote != "edit" {
		batch = fs.String("batch", "", "vote on every pending approval of this agent turn (the checks' batch), all or nothing")
		seen = fs.String("approvals", "", "with --batch: the comma-separated approval IDs you looked at (ID@N for revision N of an edited one); nothing is voted unless the batch holds exactly these")
	}
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	g := ""
	if grant != nil {
		g = *grant
	}
	if batch != nil && *batch != "" && len(pos) == 0 {
		var ids []string
		for _, id := range strings.Split(*seen, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
		list, err := newClient().VoteBatch(ctx, *batch, vote, *message, g, ids)
		if err != nil {
			return fail(e, name, err)
		}
		if *output == "json" {
			printJSON(e, list)
			return exitOK
		}
		for _, a := range list {
			fmt.Fprintf(e.stdout, "%s: %s (%d of %d approvals) revision %d %s %s\n", a.ID, a.Status, len(a.Counting()), a.Quorum, a.Revision,
				notify.Visible(a.Tool), compactArgs(notify.Args(a)))
		}
		return exitOK
	}
	if len(pos) != 1 {
		or := " (or --batch B)"
		if batch == nil {
			or = ""
		}
		fmt.Fprintf(e.stderr, "%s: give one approval ID%s; see --help\n", name, or)
		return exitUsage
	}
	var raw json.RawMessage
	if edited != nil && *edited != "" {
		if !json.Valid([]byte(*edited)) || !strings.HasPrefix(strings.TrimSpace(*edited), "{") {
			fmt.Fprintf(e.stderr, "%s: --args must be a JSON object, e.g. '{\"command\": \"ls\"}'\n", name)
			return exitUsage
		}
		vote, raw = "edit", json.RawMessage(*edited)
	} else if vote == "edit" {
		fmt.Fprintf(e.stderr, "%s: give the edited arguments with --args JSON; see --help\n", name)
		return exitUsage
	}
	if *revision < 0 {
		fmt.Fprintf(e.stderr, "%s: --revision is a revision of the action, 1 or more\n", name)
		return exitUsage
	}
	c := newClient()
	// The vote is about what the voter sees: the version printed here, or
	// the one --revision names.
	a, err := c.Approval(ctx, pos[0])
	if err != nil {
		return fail(e, name, err)
	}
	show := e.stdout
	if *output == "json" {
		show = e.stderr
	}
	printVersion(show, a)
	rev := *revision
	if rev == 0 {
		rev = max(a.Revision, 1)
	} else if rev != max(a.Revision, 1) {
		fmt.Fprintf(show, "  You named revision %d; the current one is %d, printed above.\n", rev, a.Revision)
	}
	if vote == "edit" {
		fmt.Fprintf(show, "  edit to: %s\n", compactArgs(raw))
	}
	if !*yes && interactive(e) && !confirm(e, fmt.Sprintf("%s revision %d of %s as shown above? [y/N] ", voteVerb(vote), rev, a.ID)) {
		fmt.Fprintf(e.stderr, "%s: nothing was voted\n", name)
		return exitNegative
	}
	got, err := c.Cast(ctx, a.ID, client.Ballot{Vote: vote, Message: *message, Args: raw, Grant: g, Revision: rev})
	var stale *client.StaleRevisionError
	if errors.As(err, &stale) {
		fmt.Fprintf(e.stderr, "%s: the action was edited: revision %d is no longer the current one, and nothing was voted. The current version:\n", name, rev)
		if stale.Current != nil {
			printVersion(e.stderr, stale.Current)
			fmt.Fprintf(e.stderr, "Look at it and vote again: rein %s %s --revision %d\n", vote, a.ID, stale.Current.Revision)
		} else {
			fmt.Fprintf(e.stderr, "%s\nLook at it with 'rein approvals' and vote again.\n", stale.Err.Message)
		}
		return exitNegative
	}
	if err != nil {
		return fail(e, name, err)
	}
	if *output == "json" {
		printJSON(e, got)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s (%d of %d approvals), revision %d\n", got.ID, got.Status, len(got.Counting()), got.Quorum, got.Revision)
	if vote == "edit" {
		// What the agent will run, as policy settled it (a modify rule may
		// have changed the edit), and who else must approve it.
		fmt.Fprintf(e.stdout, "  args:     %s\n", compactArgs(got.ApprovedArgs))
		if got.Status == rein.StatusPending {
			fmt.Fprintf(e.stdout, "  needs:    %s (quorum %d)\n", strings.Join(got.Approvers, ", "), got.Quorum)
		}
	}
	return exitOK
}

func voteVerb(vote string) string {
	switch vote {
	case "edit":
		return "Approve your edit of"
	case "reject":
		return "Reject"
	}
	return "Approve"
}

// confirm asks a yes/no question on the terminal; only y or yes is yes.
func confirm(e *env, question string) bool {
	fmt.Fprint(e.stderr, question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
