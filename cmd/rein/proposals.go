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
	register(&command{name: "propose", summary: "propose \"always allow\" for an approved action: a policy change an admin accepts or rejects",
		args:    "APPROVAL_ID [--message M] [--output json]",
		example: "  rein propose apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --message \"we run the tests all day\"",
		run:     runPropose})
	register(&command{name: "proposals", summary: "list policy proposals (approver, admin, auditor)",
		args:    "[--status open|accepted|rejected|all] [--agent A] [--output json]",
		example: "  rein proposals\n  rein proposals --status all --agent builder",
		run:     runProposals})
	register(&command{name: "proposal", summary: "show a proposal's change and replay; accept (pushes the policy) or reject it (admins)",
		args:    "ID [--accept | --reject] [--message M] [--output json]",
		example: "  rein proposal prp_01JD3M5Q8W2X4Y6Z8A0B2C4D6E\n  rein proposal prp_01JD3M5Q8W2X4Y6Z8A0B2C4D6E --accept --message \"fine for builder\"",
		run:     runProposal})
	register(&command{name: "suggest", summary: "actions people keep approving, never rejected: candidates for rein propose",
		args:    "[--min 3] [--since 30d] [--output json]",
		example: "  rein suggest\n  rein suggest --min 5 --since 7d",
		run:     runSuggest})
}

func runPropose(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein propose", commandNamed("propose"))
	newClient := clientFlags(e, fs)
	message := fs.String("message", "", "why this action should always be allowed")
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "rein propose: give one approval ID; see --help")
		return exitUsage
	}
	fmt.Fprintln(e.stderr, "checking the change and replaying the last 7 days of checks ...")
	p, err := newClient().Propose(ctx, pos[0], *message)
	if err != nil {
		return fail(e, "rein propose", err)
	}
	return printProposal(e, p, *output)
}

func runProposals(ctx context.Context, e *env, args []string) int {
	return runList(ctx, e, args, "proposals", (*client.Client).Proposals,
		"ID\tSTATUS\tTIER\tAGENT\tTOOL\tRULE\tBY\tCREATED",
		func(p rein.Proposal) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", p.ID, p.Status, p.Tier, p.Agent, p.Tool, p.Rule, p.ProposedBy,
				p.CreatedAt.Local().Format(time.DateTime))
		})
}

func runProposal(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein proposal", commandNamed("proposal"))
	newClient := clientFlags(e, fs)
	accept := fs.Bool("accept", false, "accept it: the proposed policy is pushed (admins of the tier)")
	reject := fs.Bool("reject", false, "reject it")
	message := fs.String("message", "", "why, for the audit log")
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || *accept && *reject {
		fmt.Fprintln(e.stderr, "rein proposal: give one proposal ID, and at most one of --accept and --reject; see --help")
		return exitUsage
	}
	c := newClient()
	var p *rein.Proposal
	var err error
	if *accept || *reject {
		p, err = c.DecideProposal(ctx, pos[0], *accept, *message)
	} else {
		p, err = c.Proposal(ctx, pos[0])
	}
	if err != nil {
		return fail(e, "rein proposal", err)
	}
	return printProposal(e, p, *output)
}

func printProposal(e *env, p *rein.Proposal, output string) int {
	if output == "json" {
		printJSON(e, p)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s, %s tier (from approval %s, proposed by %s)\n", p.ID, p.Status, p.Tier, p.Approval, p.ProposedBy)
	fmt.Fprintf(e.stdout, "always allow %s for %s: %s\n", p.Tool, p.Agent, p.Args)
	fmt.Fprintf(e.stdout, "narrows %s; adds rule %s\n", strings.Join(p.Narrowed, ", "), p.Rule)
	if p.Message != "" {
		fmt.Fprintf(e.stdout, "why: %s\n", p.Message)
	}
	if r := p.Replay; r != nil {
		fmt.Fprintf(e.stdout, "replayed %d checks of the last 7 days: %d change (newly allowed %d, newly blocked %d)\n",
			r.Checks, r.Changed, r.NewlyAllowed, r.NewlyBlocked)
	}
	if p.Status != rein.ProposalOpen {
		fmt.Fprintf(e.stdout, "%s by %s", p.Status, p.DecidedBy)
		if p.Version != "" {
			fmt.Fprintf(e.stdout, ", policy version %s", p.Version)
		}
		fmt.Fprintln(e.stdout)
	}
	fmt.Fprint(e.stdout, p.Diff)
	return exitOK
}

func runSuggest(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein suggest", commandNamed("suggest"))
	newClient := clientFlags(e, fs)
	min := fs.Int("min", 3, "at least this many approvals of the same action")
	since := fs.String("since", "30d", "approvals since this long ago (7d, 24h) or this RFC 3339 time")
	output := fs.String("output", "text", "text or json")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	list, err := newClient().Suggestions(ctx, *min, *since)
	if err != nil {
		return fail(e, "rein suggest", err)
	}
	if *output == "json" {
		printJSON(e, list)
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "no action was approved %d times since %s without a rejection\n", *min, *since)
		return exitOK
	}
	for _, s := range list {
		fmt.Fprintf(e.stdout, "%d approvals  %s  %s %s\n  rein propose %s\n", s.Approvals, s.Agent, s.Tool, s.Args, s.Latest)
	}
	return exitOK
}
