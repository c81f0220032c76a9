package http

import (
	"net/http"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
)

// listReviews: GET /v1/reviews?status=open|ok|concern&agent=&limit=&cursor=
// (?tenant= for keys of tenant *), newest first.
func (s *Server) listReviews(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	tenant, err := s.listTenant(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	f := rein.ReviewFilter{Status: q.Get("status"), Agent: q.Get("agent"), Before: q.Get("cursor")}
	switch f.Status {
	case "", rein.ReviewOpen, rein.ReviewOK, rein.ReviewConcern:
	case "all":
		f.Status = ""
	default:
		return rein.Errorf(rein.ECodeBadRequest, "status %q: use open, ok, concern or all", f.Status)
	}
	if f.Limit, err = listLimit(q.Get("limit")); err != nil {
		return err
	}
	list, err := s.Pipeline.Reviews(r.Context(), key, tenant, f)
	if err != nil {
		return err
	}
	writePage(w, r, list, f.Limit, func(x *rein.Review) string { return x.ID })
	return nil
}

func (s *Server) getReview(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	rv, err := s.Pipeline.Review(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rv)
	return nil
}

// decideReview: POST /v1/reviews/{id}/verdict {"verdict": "ok"|"concern",
// "message", "lock": "agent"|"session", "proposal"}.
func (s *Server) decideReview(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v pipeline.ReviewVerdict
	if err := rein.DecodeStrict(body, &v, "verdict, message, lock, proposal"); err != nil {
		return err
	}
	rv, err := s.Pipeline.DecideReview(r.Context(), key, r.PathValue("id"), v)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rv)
	return nil
}

// reviewStats: GET /v1/reviews/stats (?tenant= for keys of tenant *): per
// rule, reviews queued, open, ok and concerns.
func (s *Server) reviewStats(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tenant, err := s.tenantParam(key, r.URL.Query().Get("tenant"))
	if err != nil {
		return err
	}
	stats, err := s.Pipeline.ReviewStatsFor(r.Context(), key, tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, stats)
	return nil
}
