package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

func init() {
	register(&command{name: "reviews", summary: "list reviews after the fact: allowed checks and sessions people should look at (approver, admin, auditor)",
		args:    "[--status open|ok|concern|all] [--agent A] [--output json]",
		example: "  rein reviews\n  rein reviews --status concern --agent builder",
		run:     runReviews})
	register(&command{name: "review", summary: "mark a review ok or concern; a concern can lock the agent or session",
		args:    "ID --ok | --concern [--message M] [--lock agent|session] [--proposal TEXT]",
		example: "  rein review rev_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --ok\n  rein review rev_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --concern --message \"deleted prod data\" --lock agent \\\n    --proposal \"ask for rm -rf under ./data\"",
		run:     runReview})
}

func runReviews(ctx context.Context, e *env, args []string) int {
	return runList(ctx, e, args, "reviews", (*client.Client).Reviews,
		"ID\tSTATUS\tKIND\tAGENT\tSESSION\tTOOL\tWHY\tCREATED",
		func(r rein.Review) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", r.ID, r.Status, r.Kind, r.Agent, r.Session, r.Tool,
				strings.Join(r.Why, "; "), r.CreatedAt.Local().Format(time.Kitchen))
		})
}

func runReview(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein review", commandNamed("review"))
	newClient := clientFlags(e, fs)
	ok := fs.Bool("ok", false, "nothing wrong")
	concern := fs.Bool("concern", false, "something is wrong")
	message := fs.String("message", "", "what you found, for the audit log")
	lock := fs.String("lock", "", "with --concern: lock the agent or the session now (admins)")
	proposal := fs.String("proposal", "", "with --concern: the tighter policy you propose, in words or YAML")
	pos, code, parsed := parse(fs, args)
	if !parsed {
		return code
	}
	if len(pos) != 1 || *ok == *concern {
		fmt.Fprintln(e.stderr, "rein review: give one review ID and --ok or --concern; see --help")
		return exitUsage
	}
	v := client.Verdict{Verdict: rein.ReviewOK, Message: *message, Lock: *lock, Proposal: *proposal}
	if *concern {
		v.Verdict = rein.ReviewConcern
	}
	r, err := newClient().DecideReview(ctx, pos[0], v)
	if err != nil {
		return fail(e, "rein review", err)
	}
	fmt.Fprintf(e.stdout, "%s: %s", r.ID, r.Status)
	if r.LockID != "" {
		fmt.Fprintf(e.stdout, "; locked (%s)", r.LockID)
	}
	fmt.Fprintln(e.stdout)
	return exitOK
}
