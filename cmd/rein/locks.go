package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein"
)

func init() {
	register(&command{name: "stop", summary: "kill switch: deny every check of an agent, session, tool or tenant at once (admin)",
		args: "[--agent A] [--session S] [--tool GLOB] [--tenant T|*] [--for 1h] --reason R",
		example: `  rein stop --agent builder --reason "incident 42: runaway spending"
  rein stop --session run_01J8Z6 --reason "runaway build"   # a contained run (rein run, rein exec) is killed too
  rein stop --tool "payments.*" --for 30m --reason "payment provider outage"
  rein stop --reason "stop everything in this tenant"

A lock that names no tool also ends every process of a contained run of the
session, agent or tenant it names (rein run exits 137).`,
		run: runStop})
	register(&command{name: "locks", summary: "list the locks in force (admin, auditor, approver)",
		args: "[--output json]", example: "  rein locks", run: runLocks})
	register(&command{name: "unlock", summary: "lift a lock (admin)",
		args: "ID", example: "  rein unlock lck_01JD3M5Q8W2X4Y6Z8A0B2C4D6E", run: runUnlock})
}

func runStop(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein stop", commandNamed("stop"))
	newClient := clientFlags(e, fs)
	var t rein.LockTarget
	fs.StringVar(&t.Agent, "agent", "", "the agent to stop (and its sub-agents)")
	fs.StringVar(&t.Session, "session", "", "the session to stop")
	fs.StringVar(&t.Tool, "tool", "", "the tools to stop, a glob such as payments.*")
	tenant := fs.String("tenant", "", "for admins of tenant *: the tenant to stop (without it, their lock stops every tenant)")
	reason := fs.String("reason", "", "why: shown in every denied check and in the audit log (required)")
	dur := fs.Duration("for", 0, "lift the lock by itself after this long (default: until rein unlock)")
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 || *reason == "" {
		fmt.Fprintln(e.stderr, "rein stop: give --reason, and what to stop with --agent, --session or --tool (none: the whole tenant)")
		return exitUsage
	}
	var expires *time.Time
	if *dur > 0 {
		at := time.Now().Add(*dur).UTC()
		expires = &at
	}
	l, err := newClient().Lock(ctx, t, *reason, expires, *tenant)
	if err != nil {
		return fail(e, "rein stop", err)
	}
	if *output == "json" {
		printJSON(e, l)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: stopped %s (tenant %s); undo with: rein unlock %s\n", l.ID, l.Target.Describe(), l.Tenant, l.ID)
	return exitOK
}

func runLocks(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein locks", commandNamed("locks"))
	newClient := clientFlags(e, fs)
	output := fs.String("output", "text", "text or json")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	list, err := newClient().Locks(ctx)
	if err != nil {
		return fail(e, "rein locks", err)
	}
	if *output == "json" {
		printJSON(e, list)
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no locks")
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tSTOPS\tBY\tSINCE\tUNTIL\tREASON")
	for _, l := range list {
		until := "(until unlocked)"
		if l.ExpiresAt != nil {
			until = l.ExpiresAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Tenant, l.Target.Describe(), l.CreatedBy,
			l.CreatedAt.Local().Format(time.DateTime), until, l.Reason)
	}
	tw.Flush()
	return exitOK
}

func runUnlock(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein unlock", commandNamed("unlock"))
	newClient := clientFlags(e, fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "rein unlock: give one lock ID (rein locks lists them)")
		return exitUsage
	}
	l, err := newClient().Unlock(ctx, pos[0])
	if err != nil {
		return fail(e, "rein unlock", err)
	}
	fmt.Fprintf(e.stdout, "%s: lifted (%s)\n", l.ID, l.Target.Describe())
	return exitOK
}
