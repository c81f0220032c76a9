package http

import (
	"net/http"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
)

// postDelegation: POST /v1/delegations {"to", "until", "starts_at", "from", "reason"}.
func (s *Server) postDelegation(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req pipeline.DelegationRequest
	if err := rein.DecodeStrict(body, &req, "from, to, starts_at, until, reason"); err != nil {
		return err
	}
	d, err := s.Pipeline.Delegate(r.Context(), key, &req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

// listDelegations: GET /v1/delegations (?tenant= for keys of tenant *).
func (s *Server) listDelegations(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tenant, err := s.tenantParam(key, r.URL.Query().Get("tenant"))
	if err != nil {
		return err
	}
	list, err := s.Pipeline.Delegations(r.Context(), key, tenant)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*rein.Delegation{}
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// deleteDelegation: DELETE /v1/delegations/{id}.
func (s *Server) deleteDelegation(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	d, err := s.Pipeline.RevokeDelegation(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}
