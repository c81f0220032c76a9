package http

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
)

func (s *Server) postCheck(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	req, err := rein.DecodeCheck(body)
	if err != nil {
		return err
	}
	rec, err := s.Pipeline.Check(r.Context(), key, req)
	if err != nil {
		return err
	}
	if rec.RetryAfterMS != nil {
		w.Header().Set("Retry-After", strconv.FormatInt((*rec.RetryAfterMS+999)/1000, 10))
	}
	writeJSON(w, http.StatusOK, rec.CheckResponse)
	return nil
}

// getCheck returns a stored check. Agents see only checks made by their own
// key; everyone sees only their tenant. Anything else is 404.
func (s *Server) getCheck(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	rec, err := s.CheckStore.CheckByID(r.Context(), r.PathValue("id"))
	if errors.Is(err, rein.ErrNotFound) || (err == nil && !canSeeCheck(key, rec)) {
		return rein.Errorf(rein.ECodeNotFound, "no check %q in your tenant", r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// getCheckByRequest: GET /v1/request-ids/{request_id}, the check
// this key made with that request_id (an entry point that reports a call's
// result by the call's own id).
func (s *Server) getCheckByRequest(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	rec, err := s.Pipeline.CheckByRequest(r.Context(), key, r.PathValue("request_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

func canSeeCheck(key *rein.Key, rec *rein.CheckRecord) bool {
	if !key.Sees(rec.Tenant) {
		return false
	}
	if key.Has(rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor) {
		return true
	}
	return rec.KeyID == key.ID
}

// simulateRequest is the body of POST /v1/policy/simulate.
type simulateRequest struct {
	Check   json.RawMessage `json:"check"`
	Policy  *string         `json:"policy"`
	Session map[string]any  `json:"session"`
	Tenant  string          `json:"tenant"`
}

func (s *Server) simulate(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var sr simulateRequest
	if err := rein.DecodeStrict(body, &sr, "check, policy, session, tenant"); err != nil {
		return err
	}
	if len(sr.Check) == 0 {
		return rein.Errorf(rein.ECodeBadRequest, `"check" is required: the check to simulate, shaped like a POST /v1/check body`)
	}
	req, err := rein.DecodeCheck(sr.Check)
	if err != nil {
		return err
	}
	tenant, err := s.tenantParam(key, sr.Tenant)
	if err != nil {
		return err
	}
	if req.Agent == "" {
		req.Agent = key.Name
	}
	set := s.Policies.For(tenant)
	if sr.Policy != nil {
		// The given policy stands in for the tier the caller administers.
		p, err := policy.Compile([]byte(*sr.Policy))
		if err != nil {
			return err
		}
		if key.Tenant == rein.AllTenants && sr.Tenant == "" {
			set = policy.NewSet(p, s.Policies.Tier(tenant))
		} else {
			set = policy.NewSet(s.Policies.Tier(""), p)
		}
	}
	sim, err := pipeline.Simulate(set, tenant, req, sr.Session, s.Now())
	if err != nil {
		return err
	}
	if err := s.Pipeline.SimulateLocks(r.Context(), sim, tenant, req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sim)
	return nil
}

// tenantParam resolves the tenant a request acts on: the key's own, or for
// keys of tenant "*" the one named. Naming another tenant is forbidden.
func (s *Server) tenantParam(key *rein.Key, asked string) (string, error) {
	switch {
	case asked == "" || asked == key.Tenant:
		return key.Tenant, nil
	case key.Tenant != rein.AllTenants:
		return "", rein.Errorf(rein.ECodeForbidden, "key %q belongs to tenant %q and cannot act on tenant %q", key.Name, key.Tenant, asked)
	case !rein.ValidTenant(asked):
		return "", rein.Errorf(rein.ECodeBadRequest, "tenant %q: use 1-64 lower-case letters, digits, '.', '_' or '-'", asked)
	}
	return asked, nil
}

// listChecks: GET /v1/checks?decision=&agent=&tool=&session=&since=&until=&limit=&cursor=,
// the tenant's recent checks, newest first. since and until are RFC 3339
// times (since inclusive, until exclusive); agent also matches sub-agents.
func (s *Server) listChecks(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	f := rein.CheckFilter{Decision: rein.Decision(q.Get("decision")), Agent: q.Get("agent"), Tool: q.Get("tool"),
		Session: q.Get("session"), Before: q.Get("cursor")}
	switch f.Decision {
	case "", rein.Allow, rein.Deny, rein.Ask, rein.Throttle, rein.Modify:
	default:
		return rein.Errorf(rein.ECodeBadRequest, "decision %q is not one of allow, deny, ask, throttle, modify", f.Decision)
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return rein.Errorf(rein.ECodeBadRequest, "%s %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", p.name, v)
			}
			*p.to = t
		}
	}
	var err error
	if f.Limit, err = listLimit(q.Get("limit")); err != nil {
		return err
	}
	tenant, err := s.tenantParam(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	list, err := s.CheckStore.Checks(r.Context(), tenant, f)
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot list checks: %v", err)
	}
	writePage(w, r, list, f.Limit, func(x *rein.CheckRecord) string { return x.ID })
	return nil
}
