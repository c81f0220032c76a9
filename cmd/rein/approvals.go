package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

func init() {
	register(&command{name: "approvals", summary: "list approvals (approver, admin, auditor)",
		args:    "[--status pending|approved|rejected|expired|cancelled|invalidated|consumed|all] [--session S] [--agent A] [--output json]",
		example: "  rein approvals\n  rein approvals --status all --session run-1",
		run:     runApprovals})
	register(&command{name: "approve", summary: "approve a pending approval, or edit its arguments with --args",
		args:    "ID | --batch B [--approvals IDS] [--message M] [--args JSON] [--grant once|session|DURATION]",
		example: "  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"looks fine\"\n  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --args '{\"command\": \"rm -rf ./build/tmp\"}'\n  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --grant session   # this exact action for the rest of the session (if the rule permits)\n  rein approve --batch turn-42 --approvals apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E,apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6F   # the whole agent turn, if it still holds exactly these",
		run:     func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "approve", args) }})
	register(&command{name: "reject", summary: "reject a pending approval",
		args:    "ID | --batch B [--approvals IDS] [--message M]",
		example: "  rein reject apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"not during the freeze\"\n  rein reject --batch turn-42 --message \"not this turn\"   # every pending approval of the agent turn",
		run:     func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "reject", args) }})
	register(&command{name: "revoke", summary: "revoke an approved grant before its window closes (approver of the approval, admin)",
		args:    "ID [--message M]",
		example: "  rein approvals --status approved      # the grants in force\n  rein revoke apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"incident over\"",
		run:     runRevoke})
}

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
	return runList(ctx, e, args, "approvals", (*client.Client).Approvals,
		"ID\tSTATUS\tAGENT\tSESSION\tTOOL\tVOTES\tEXPIRES\tREASON",
		func(a rein.Approval) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s", a.ID, a.Status, a.Agent, a.Session, a.Tool,
				len(a.Counting()), a.Quorum, a.ExpiresAt.Local().Format(time.Kitchen), a.Reason)
		})
}

// runList is a list command of approvals or questions: the filters, then
// JSON or a table with one row per item.
func runList[T any](ctx context.Context, e *env, args []string, name string,
	get func(*client.Client, context.Context, client.ListQuery) ([]T, error), header string, row func(T) string) int {
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
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, x := range list {
		fmt.Fprintln(tw, row(x))
	}
	tw.Flush()
	return exitOK
}

func runVote(ctx context.Context, e *env, vote string, args []string) int {
	name := "rein " + vote
	fs := flags(e, name, commandNamed(vote))
	newClient := clientFlags(e, fs)
	message := fs.String("message", "", "a note for the agent and the audit log")
	var edited, grant *string
	if vote == "approve" {
		edited = fs.String("args", "", "approve these arguments instead (an edit; policy checks them first)")
		grant = fs.String("grant", "", "what the approval grants: once (default), session (this exact action for the rest of the session) or a window such as 1h, within what the rule permits")
	}
	output := fs.String("output", "text", "text or json")
	batch := fs.String("batch", "", "vote on every pending approval of this agent turn (the checks' batch), all or nothing")
	seen := fs.String("approvals", "", "with --batch: the comma-separated approval IDs you looked at; nothing is voted unless the batch holds exactly these")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if *batch != "" && len(pos) == 0 {
		g := ""
		if grant != nil {
			g = *grant
		}
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
			fmt.Fprintf(e.stdout, "%s: %s (%d of %d approvals) %s %s\n", a.ID, a.Status, len(a.Counting()), a.Quorum, a.Tool, a.Args)
		}
		return exitOK
	}
	if len(pos) != 1 {
		fmt.Fprintf(e.stderr, "%s: give one approval ID (or --batch B); see --help\n", name)
		return exitUsage
	}
	var raw json.RawMessage
	if edited != nil && *edited != "" {
		if !json.Valid([]byte(*edited)) || !strings.HasPrefix(strings.TrimSpace(*edited), "{") {
			fmt.Fprintf(e.stderr, "%s: --args must be a JSON object, e.g. '{\"command\": \"ls\"}'\n", name)
			return exitUsage
		}
		vote, raw = "edit", json.RawMessage(*edited)
	}
	g := ""
	if grant != nil {
		g = *grant
	}
	a, err := newClient().VoteGrant(ctx, pos[0], vote, *message, raw, g)
	if err != nil {
		return fail(e, name, err)
	}
	if *output == "json" {
		printJSON(e, a)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s (%d of %d approvals)\n", a.ID, a.Status, len(a.Counting()), a.Quorum)
	if vote == "edit" {
		// What the agent will run, as policy settled it (a modify rule may
		// have changed the edit), and who else must approve it.
		fmt.Fprintf(e.stdout, "  args:     %s\n", a.ApprovedArgs)
		if a.Status == rein.StatusPending {
			fmt.Fprintf(e.stdout, "  needs:    %s (quorum %d)\n", strings.Join(a.Approvers, ", "), a.Quorum)
		}
	}
	return exitOK
}
