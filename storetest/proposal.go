package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func proposals(t *testing.T, s rein.Store) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	mk := func(id, tenant, agent string) *rein.Proposal {
		return &rein.Proposal{ID: id, Tenant: tenant, Status: rein.ProposalOpen, Tier: "tenant", Approval: "apr_" + id, Agent: agent,
			Tool: "shell.exec", Args: json.RawMessage(`{"command":"npm test"}`), Narrowed: []string{"shell"}, Rule: "always-" + id,
			BaseVersion: "sha256:base", Candidate: "version: 1\n", ProposedBy: "alice", CreatedAt: now}
	}
	for _, p := range []*rein.Proposal{mk("prp_1", "acme", "builder"), mk("prp_2", "acme", "other"), mk("prp_3", "globex", "builder")} {
		if err := s.CreateProposal(ctx, p, []*rein.Entry{entry(rein.KindProposalCreated, p.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Proposal(ctx, "prp_1"); err != nil || got.Rule != "always-prp_1" || string(got.Args) != `{"command":"npm test"}` || !got.CreatedAt.Equal(now) {
		t.Fatalf("proposal: %+v %v", got, err)
	}
	if _, err := s.Proposal(ctx, "prp_none"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("unknown proposal: %v", err)
	}
	if list, _ := s.Proposals(ctx, "acme", rein.ListFilter{}); len(list) != 2 || list[0].ID != "prp_2" {
		t.Errorf("acme's proposals, newest first: %v", list)
	}
	if list, _ := s.Proposals(ctx, rein.AllTenants, rein.ListFilter{Agent: "builder"}); len(list) != 2 {
		t.Errorf("every tenant's proposals for builder: %v", list)
	}
	accepted, err := s.ChangeProposal(ctx, "prp_1", func(p *rein.Proposal) ([]*rein.Entry, error) {
		if p.Status != rein.ProposalOpen {
			return nil, rein.Errorf(rein.ECodeConflict, "decided")
		}
		p.Status, p.DecidedBy, p.DecidedAt, p.Version = rein.ProposalAccepted, "ops", &now, "sha256:next"
		return []*rein.Entry{entry(rein.KindProposalDecided, p.ID)}, nil
	})
	if err != nil || accepted.Status != rein.ProposalAccepted || accepted.Version != "sha256:next" {
		t.Fatalf("accept: %+v %v", accepted, err)
	}
	if list, _ := s.Proposals(ctx, "acme", rein.ListFilter{Status: rein.ProposalOpen}); len(list) != 1 || list[0].ID != "prp_2" {
		t.Errorf("open proposals after a decision: %v", list)
	}
	if _, err := s.ChangeProposal(ctx, "prp_1", func(p *rein.Proposal) ([]*rein.Entry, error) {
		return nil, rein.Errorf(rein.ECodeConflict, "proposal %s was already %s", p.ID, p.Status)
	}); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Errorf("a second decision: %v", err)
	}
	if n := subjects(t, s, rein.KindProposalDecided)["prp_1"]; n != 1 {
		t.Errorf("proposal.decided entries: %d", n)
	}
}
