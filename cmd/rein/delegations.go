package main

import (
	"context"
	"fmt"
	"time"
)

func init() {
	register(&command{name: "delegate", summary: "let another identity vote with your eligibility for a while (out of office)",
		args:    "--to NAME --for 7d | --until TIME [--from NAME (admins)] [--reason R]",
		example: "  rein delegate --to bob --for 7d --reason \"holiday\"\n  rein delegations\n  rein delegate --revoke dlg_01JD3M5Q8W2X4Y6Z8A0B2C4D6E",
		run:     runDelegate})
	register(&command{name: "delegations", summary: "list the tenant's delegations (approver, admin, auditor)",
		args: "[--output json]", example: "  rein delegations", run: runDelegations})
}

func runDelegate(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein delegate", commandNamed("delegate"))
	newClient := clientFlags(e, fs)
	to := fs.String("to", "", "the identity (key name) that may vote for you")
	from := fs.String("from", "", "admins: delegate this identity's eligibility")
	dur := fs.Duration("for", 0, "how long, from now (at most 30 days)")
	until := fs.String("until", "", "until this RFC 3339 time")
	reason := fs.String("reason", "", "why, for the audit log")
	revoke := fs.String("revoke", "", "end this delegation now")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	c := newClient()
	if *revoke != "" {
		d, err := c.RevokeDelegation(ctx, *revoke)
		if err != nil {
			return fail(e, "rein delegate", err)
		}
		fmt.Fprintf(e.stdout, "%s: revoked (%s for %s)\n", d.ID, d.To, d.From)
		return exitOK
	}
	end := time.Now().Add(*dur)
	if *until != "" {
		t, err := time.Parse(time.RFC3339, *until)
		if err != nil {
			fmt.Fprintf(e.stderr, "rein delegate: --until %q is not an RFC 3339 time\n", *until)
			return exitUsage
		}
		end = t
	}
	if *to == "" || (*dur == 0 && *until == "") {
		fmt.Fprintln(e.stderr, "rein delegate: give --to and --for or --until; see --help")
		return exitUsage
	}
	d, err := c.Delegate(ctx, *from, *to, end, *reason)
	if err != nil {
		return fail(e, "rein delegate", err)
	}
	fmt.Fprintf(e.stdout, "%s: %s votes for %s until %s\n", d.ID, d.To, d.From, d.Until.Local().Format(time.RFC1123))
	return exitOK
}

func runDelegations(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein delegations", commandNamed("delegations"))
	newClient := clientFlags(e, fs)
	output := fs.String("output", "text", "text or json")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	list, err := newClient().Delegations(ctx)
	if err != nil {
		return fail(e, "rein delegations", err)
	}
	if *output == "json" {
		printJSON(e, list)
		return exitOK
	}
	for _, d := range list {
		state := "active"
		switch {
		case d.RevokedAt != nil:
			state = "revoked"
		case !d.Active(time.Now()):
			state = "not in force"
		}
		fmt.Fprintf(e.stdout, "%s  %s votes for %s until %s  %s\n", d.ID, d.To, d.From, d.Until.Local().Format(time.RFC3339), state)
	}
	return exitOK
}
