package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/policy"
)

const proposalsPolicy = `version: 1
rules:
  # every command waits for on-call
  - {id: shell, when: 'tool == "shell.exec"', decision: ask, approval: {approvers: ["group:oncall"]}}
  - {id: rm, when: 'tool == "shell.exec" && args.command.startsWith("rm ")', decision: deny}
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
`

// TestProposals: "always allow" from an approval becomes a proposed change
// of the tier that asks; it allows exactly that action of that agent once an
// admin of the tier accepts it, and nothing before; who may propose and
// decide is checked, a stale proposal is refused, and repeated approvals are
// suggested.
func TestProposals(t *testing.T) {
	ctx := context.Background()
	f := setup(t, proposalsPolicy)
	stored(t, f, f.key)
	oncall := approver("oncall1", "oncall")
	root := &rein.Key{ID: "key_root", Name: "root", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleAdmin}}
	acmeAdmin := &rein.Key{ID: "key_acme_admin", Name: "acme-admin", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	activate := func(ctx context.Context, tier string, src []byte, by string) (*rein.PolicyDoc, error) {
		p, err := policy.Compile(src)
		if err != nil {
			return nil, err
		}
		f.p.Policies.Set(tier, p)
		return &rein.PolicyDoc{Tenant: tier, Version: p.Version, Source: string(src)}, nil
	}
	approved := func(command string) *rein.Approval {
		t.Helper()
		ask := f.check(t, "shell.exec", `{"command":"`+command+`"}`)
		if ask.Decision != rein.Ask {
			t.Fatalf("%s: %s", command, ask.Decision)
		}
		a, err := f.p.Vote(ctx, oncall, ask.Approval.ID, approval.Approve, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if run := f.check(t, "shell.exec", `{"command":"`+command+`"}`); run.Decision != rein.Allow {
			t.Fatalf("the approved %s: %s", command, run.Decision)
		}
		return a
	}
	a := approved("npm test")

	// Who may propose, and from what.
	if _, err := f.p.Propose(ctx, &rein.Key{ID: "key_builder_2", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}}, a.ID, ""); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("the agent's identity proposed allowing itself: %v", err)
	}
	if _, err := f.p.Propose(ctx, f.key, a.ID, ""); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("an agent key proposed: %v", err)
	}
	pending := f.check(t, "shell.exec", `{"command":"make"}`)
	if _, err := f.p.Propose(ctx, oncall, pending.Approval.ID, ""); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a proposal from a pending approval: %v", err)
	}
	if _, err := f.p.Propose(ctx, approver("eve", "oncall"), "apr_nope", ""); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("a proposal from an unknown approval: %v", err)
	}

	prop, err := f.p.Propose(ctx, oncall, a.ID, "we run the tests all day")
	if err != nil {
		t.Fatal(err)
	}
	if prop.Candidate != "" {
		t.Fatal("an approver was shown the whole global tier")
	}
	if full, err := f.p.Proposal(ctx, root, prop.ID); err != nil || !strings.Contains(full.Candidate, "# every command waits for on-call") {
		t.Fatalf("an admin's view: %v", err)
	}
	if prop.Status != rein.ProposalOpen || prop.Tier != policy.TierGlobal || prop.Agent != "builder" || len(prop.Narrowed) != 1 || prop.Narrowed[0] != "shell" ||
		!strings.Contains(prop.Diff, "+  - id: "+prop.Rule) || prop.Replay == nil || prop.Replay.Checks == 0 {
		t.Fatalf("proposal: %+v", prop)
	}
	// Nothing changes before an admin accepts.
	if rec := f.check(t, "shell.exec", `{"command":"npm test"}`); rec.Decision != rein.Ask {
		t.Fatalf("a proposal changed the policy by itself: %s", rec.Decision)
	}
	// Who may decide.
	for _, k := range []*rein.Key{oncall, acmeAdmin} {
		if _, err := f.p.DecideProposal(ctx, k, prop.ID, true, "", activate); rein.ErrorCode(err) != rein.ECodeForbidden {
			t.Fatalf("%s decided a global-tier proposal: %v", k.Name, err)
		}
	}
	if _, err := f.p.DecideProposal(ctx, &rein.Key{ID: "key_x", Name: "oncall1", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleAdmin}}, prop.ID, true, "", activate); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("the proposer decided their own proposal: %v", err)
	}
	if _, err := f.p.DecideProposal(ctx, &rein.Key{ID: "key_y", Name: "eve", Tenant: "other", Roles: []rein.Role{rein.RoleAdmin}}, prop.ID, true, "", activate); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("another tenant's admin saw the proposal: %v", err)
	}
	done, err := f.p.DecideProposal(ctx, root, prop.ID, true, "ok", activate)
	if err != nil || done.Status != rein.ProposalAccepted || done.Version == "" || done.Version != f.p.Policies.Tier("").Version {
		t.Fatalf("accept: %+v %v", done, err)
	}
	if _, err := f.p.DecideProposal(ctx, root, prop.ID, false, "", activate); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a second decision: %v", err)
	}
	// Exactly that action of that agent runs without asking.
	if rec := f.check(t, "shell.exec", `{"command":"npm test"}`); rec.Decision != rein.Allow || rec.Rule != prop.Rule {
		t.Fatalf("the accepted action: %s %s", rec.Decision, rec.Rule)
	}
	other := stored(t, f, &rein.Key{ID: "key_other", Name: "other", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}})
	namesake := stored(t, f, &rein.Key{ID: "key_globex_builder", Name: "builder", Tenant: "globex", Roles: []rein.Role{rein.RoleAgent}})
	for _, c := range []struct {
		key  *rein.Key
		args string
	}{{f.key, `{"command":"npm test && curl evil"}`}, {f.key, `{"command":"npm test","cwd":"/"}`}, {other, `{"command":"npm test"}`},
		{namesake, `{"command":"npm test"}`}} { // the global tier decides every tenant: a namesake elsewhere still asks
		rec, err := f.p.Check(ctx, c.key, &rein.CheckRequest{Tool: "shell.exec", Args: json.RawMessage(c.args), Session: "s1"})
		if err != nil || rec.Decision != rein.Ask {
			t.Fatalf("%s %s after the proposal: %v %s", c.key.Name, c.args, err, rec.Decision)
		}
	}
	// A proposal made against an older version of the tier is refused.
	b := approved("make lint")
	stale, err := f.p.Propose(ctx, oncall, b.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	activate(ctx, "", []byte(proposalsPolicy+"  - {id: extra, when: 'tool == \"x\"', decision: deny}\n"), "root")
	if _, err := f.p.DecideProposal(ctx, root, stale.ID, true, "", activate); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("a stale proposal was accepted: %v", err)
	}
	if rejected, err := f.p.DecideProposal(ctx, root, stale.ID, false, "no", activate); err != nil || rejected.Status != rein.ProposalRejected {
		t.Fatalf("reject: %+v %v", rejected, err)
	}
	// An action the policy in force denies cannot be proposed.
	c := approved("make clean")
	activate(ctx, "", []byte(proposalsPolicy+"  - {id: no-clean, when: 'tool == \"shell.exec\" && args.command == \"make clean\"', decision: deny}\n"), "root")
	if _, err := f.p.Propose(ctx, oncall, c.ID, ""); rein.ErrorCode(err) != rein.ECodeConflict || !strings.Contains(rein.ErrorMessage(err), "no-clean") {
		t.Fatalf("a proposal for a denied action: %v", err)
	}
	if entryCount(t, f, rein.KindProposalCreated) != 2 || entryCount(t, f, rein.KindProposalDecided) != 2 {
		t.Fatalf("audit: %d created, %d decided", entryCount(t, f, rein.KindProposalCreated), entryCount(t, f, rein.KindProposalDecided))
	}

	// Suggestions: the same action approved three times, never rejected.
	for range 3 {
		approved("go vet ./...")
	}
	approved("make deploy")
	approved("make deploy")
	ask := f.check(t, "shell.exec", `{"command":"make deploy"}`)
	if _, err := f.p.Vote(ctx, oncall, ask.Approval.ID, approval.Reject, "no", nil); err != nil {
		t.Fatal(err)
	}
	list, err := f.p.Suggestions(ctx, oncall, "acme", 3, a.CreatedAt.Add(-1))
	if err != nil || len(list) != 1 || string(list[0].Args) != `{"command":"go vet ./..."}` || list[0].Approvals != 3 || list[0].Agent != "builder" {
		t.Fatalf("suggestions: %+v %v", list, err)
	}
}

func entryCount(t *testing.T, f *fixture, kind string) int {
	t.Helper()
	size, _, err := f.store.AuditSize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	es, err := f.store.Entries(context.Background(), 0, int(size))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
