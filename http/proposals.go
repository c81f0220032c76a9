package http

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/reinhq/rein"
)

// propose: POST /v1/approvals/{id}/propose {"message"}: "always allow" for
// the approved action, as a policy change an admin accepts or rejects.
func (s *Server) propose(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v struct {
		Message string `json:"message"`
	}
	if len(body) > 0 {
		if err := rein.DecodeStrict(body, &v, "message"); err != nil {
			return err
		}
	}
	prop, err := s.Pipeline.Propose(r.Context(), key, r.PathValue("id"), v.Message)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, prop)
	return nil
}

// listProposals: GET /v1/proposals?status=open|accepted|rejected|all&agent=
// &limit=&cursor= (?tenant= for keys of tenant *), newest first.
func (s *Server) listProposals(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	tenant, err := s.listTenant(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	f := rein.ListFilter{Status: q.Get("status"), Agent: q.Get("agent"), Before: q.Get("cursor")}
	switch f.Status {
	case "", "all":
		f.Status = ""
	case rein.ProposalOpen, rein.ProposalAccepted, rein.ProposalRejected:
	default:
		return rein.Errorf(rein.ECodeBadRequest, "status %q: use open, accepted, rejected or all", f.Status)
	}
	if f.Limit, err = listLimit(q.Get("limit")); err != nil {
		return err
	}
	list, err := s.Pipeline.Proposals(r.Context(), key, tenant, f)
	if err != nil {
		return err
	}
	writePage(w, r, list, f.Limit, func(x *rein.Proposal) string { return x.ID })
	return nil
}

func (s *Server) getProposal(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	prop, err := s.Pipeline.Proposal(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, prop)
	return nil
}

// decideProposal: POST /v1/proposals/{id}/decision {"decision":
// "accept"|"reject", "message"}. Accepting pushes the proposed policy.
func (s *Server) decideProposal(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v struct {
		Decision string `json:"decision"`
		Message  string `json:"message"`
	}
	if err := rein.DecodeStrict(body, &v, "decision, message"); err != nil {
		return err
	}
	if v.Decision != "accept" && v.Decision != "reject" {
		return rein.Errorf(rein.ECodeBadRequest, `"decision" is "accept" or "reject"`)
	}
	id := r.PathValue("id")
	activate := func(ctx context.Context, tier string, src []byte, by string) (*rein.PolicyDoc, error) {
		return s.Admin.Activate(ctx, tier, src, by, "proposal:"+id)
	}
	prop, err := s.Pipeline.DecideProposal(r.Context(), key, id, v.Decision == "accept", v.Message, activate)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, prop)
	return nil
}

// proposalSuggestions: GET /v1/proposals/suggestions?min=3&since=30d
// (?tenant= for keys of tenant *): actions approved at least min times
// since then and never rejected.
func (s *Server) proposalSuggestions(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	tenant, err := s.listTenant(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	min := 3
	if v := q.Get("min"); v != "" {
		if min, err = strconv.Atoi(v); err != nil || min < 2 || min > 10000 {
			return rein.Errorf(rein.ECodeBadRequest, "min %q: use a number of approvals from 2 to 10000", v)
		}
	}
	since, err := replaySince(q.Get("since"), s.Now())
	if q.Get("since") == "" {
		since = s.Now().Add(-30 * 24 * time.Hour)
	}
	if err != nil {
		return err
	}
	list, err := s.Pipeline.Suggestions(r.Context(), key, tenant, min, since)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}
