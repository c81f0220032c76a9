package http

import (
	"net/http"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
)

// replayRequest is the body of POST /v1/policy/replay.
type replayRequest struct {
	Policy string `json:"policy"` // the candidate policy, YAML
	Since  string `json:"since"`  // RFC 3339 time or a duration back from now ("7d", "24h"); default 7d
	Tenant string `json:"tenant"` // for keys of tenant *: the tenant whose checks are replayed
	Tier   string `json:"tier"`   // "global" (default for keys of tenant *) or "tenant"
	Input  string `json:"input"`  // "all" recorded checks (default), or "concerns": those reviewers marked a concern
}

// replayPolicy: POST /v1/policy/replay. The tenant's recorded checks since a
// time, decided by the policy in force and by a candidate; the answer is the
// difference per decision and per rule. Nothing is recorded.
func (s *Server) replayPolicy(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req replayRequest
	if err := rein.DecodeStrict(body, &req, "policy, since, tenant, tier, input"); err != nil {
		return err
	}
	tenant, err := s.tenantParam(key, req.Tenant)
	if err != nil {
		return err
	}
	candidate, err := policy.Compile([]byte(req.Policy))
	if err != nil {
		return rein.Errorf(rein.ECodeBadRequest, "the candidate policy does not compile: %v", err)
	}
	since, err := replaySince(req.Since, s.Now())
	if err != nil {
		return err
	}
	tier := req.Tier
	switch {
	case tier == "" && key.Tenant == rein.AllTenants, tier == "global":
		tier = ""
		if key.Tenant != rein.AllTenants {
			return rein.Errorf(rein.ECodeForbidden, "key %q of tenant %q can replay only its tenant tier; send \"tier\": \"tenant\"", key.Name, key.Tenant)
		}
	case tier == "" || tier == "tenant":
		tier = tenant
	default:
		return rein.Errorf(rein.ECodeBadRequest, `"tier" is "global" or "tenant"`)
	}
	replay := s.Pipeline.Replay
	switch req.Input {
	case "", rein.ReplayAll:
	case rein.ReplayConcerns:
		replay = s.Pipeline.ReplayConcerns
	default:
		return rein.Errorf(rein.ECodeBadRequest, `"input" is "all" (every recorded check) or "concerns" (the checks reviewers marked a concern)`)
	}
	out, err := replay(r.Context(), tenant, tier, candidate, since, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// replaySince reads a replay's start: an RFC 3339 time, or a duration back
// from now such as 24h or 7d (default 7d).
func replaySince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		s = "7d"
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := policy.ParseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, rein.Errorf(rein.ECodeBadRequest, `"since" %q: use an RFC 3339 time or a duration such as 24h or 7d`, s)
	}
	return now.Add(-d), nil
}
