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
		args:    "ID [--message M] [--args JSON]",
		example: "  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"looks fine\"\n  rein approve apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --args '{\"command\": \"rm -rf ./build/tmp\"}'",
		run:     func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "approve", args) }})
	register(&command{name: "reject", summary: "reject a pending approval",
		args:    "ID [--message M]",
		example: "  rein reject apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"not during the freeze\"",
		run:     func(ctx context.Context, e *env, args []string) int { return runVote(ctx, e, "reject", args) }})
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
	var edited *string
	if vote == "approve" {
		edited = fs.String("args", "", "approve these arguments instead (an edit; policy checks them first)")
	}
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(e.stderr, "%s: give one approval ID; see --help\n", name)
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
	a, err := newClient().Vote(ctx, pos[0], vote, *message, raw)
	if err != nil {
		return fail(e, name, err)
	}
	if *output == "json" {
		printJSON(e, a)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s (%d of %d approvals)\n", a.ID, a.Status, len(a.Counting()), a.Quorum)
	return exitOK
}
