package http

import (
	"net/http"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
)

// policyTier resolves which tier a policy request is about: a tenant admin's
// own tier, or for admins of tenant "*" the global tier unless ?tenant= names one.
// On GET, ?tier=global names the global tier for any admin or auditor: it
// decides every tenant's checks (with the tenant's own tier), and its
// changes are in every tenant's view of the audit log already.
func (s *Server) policyTier(r *http.Request, key *rein.Key) (tier string, err error) {
	switch t := r.URL.Query().Get("tier"); {
	case t == "global" && r.Method == http.MethodGet:
		return "", nil
	case t == "global":
		if key.Tenant != rein.AllTenants {
			return "", rein.Errorf(rein.ECodeForbidden, "key %q is an admin of tenant %q; the global policy tier needs an admin of tenant *", key.Name, key.Tenant)
		}
		return "", nil
	case t != "" && t != "tenant":
		return "", rein.Errorf(rein.ECodeBadRequest, "tier %q: use global, or leave it out for your own tier", t)
	}
	asked := r.URL.Query().Get("tenant")
	if key.Tenant == rein.AllTenants && asked == "" {
		return "", nil
	}
	return s.tenantParam(key, asked)
}

// policyView is the answer of GET /v1/policy.
type policyView struct {
	Version  string `json:"version"`
	Source   string `json:"source"`
	LoadedAt string `json:"loaded_at"`
	// Tier is "global" or "tenant"; Tenant names the tenant of a tenant tier.
	Tier   string `json:"tier"`
	Tenant string `json:"tenant,omitempty"`
	// TierVersion is the version of Source alone; Version covers every tier
	// that decides this tenant's checks, as check answers report it.
	TierVersion string `json:"tier_version"`
	Origin      string `json:"origin"`
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tier, err := s.policyTier(r, key)
	if err != nil {
		return err
	}
	doc := s.Admin.Doc(tier)
	if doc == nil {
		if tier == "" {
			return rein.Errorf(rein.ECodeNotFound, "no policy loaded; push one with `rein policy push FILE` or start rein with --policy FILE")
		}
		return rein.Errorf(rein.ECodeNotFound, "tenant %q has no policy of its own; its checks follow the global policy", tier)
	}
	writeJSON(w, http.StatusOK, s.view(tier, doc))
	return nil
}

func (s *Server) view(tier string, doc *rein.PolicyDoc) policyView {
	v := policyView{Source: doc.Source, LoadedAt: doc.LoadedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Tier: policy.TierGlobal, TierVersion: doc.Version, Origin: doc.Origin, Version: doc.Version}
	if tier != "" {
		v.Tier, v.Tenant = policy.TierTenant, tier
		if set := s.Policies.For(tier); set != nil {
			v.Version = set.Version
		}
	}
	return v
}

func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tier, err := s.policyTier(r, key)
	if err != nil {
		return err
	}
	src, err := readBody(r)
	if err != nil {
		return err
	}
	doc, err := s.Admin.Activate(r.Context(), tier, src, key.Name, "api")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.view(tier, doc))
	return nil
}
