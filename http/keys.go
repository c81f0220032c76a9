package http

import (
	"errors"
	"net/http"

	"github.com/reinhq/rein"
)

type createKeyRequest struct {
	Name   string      `json:"name"`
	Tenant string      `json:"tenant"`
	Roles  []rein.Role `json:"roles"`
	Groups []string    `json:"groups"`
}

// keyView is a key as the API shows it; Key (the secret) only on creation.
type keyView struct {
	*rein.Key
	Secret string `json:"key,omitempty"`
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req createKeyRequest
	if err := rein.DecodeStrict(body, &req, "name, tenant, roles, groups"); err != nil {
		return err
	}
	tenant, err := s.tenantParam(key, req.Tenant)
	if err != nil {
		return err
	}
	if req.Tenant == rein.AllTenants && key.Tenant == rein.AllTenants {
		tenant = rein.AllTenants
	}
	secret, hash := rein.NewSecret()
	k := &rein.Key{ID: rein.NewID("key"), Name: req.Name, Tenant: tenant, Roles: req.Roles, Groups: req.Groups,
		CreatedAt: s.Now().UTC(), SecretHash: hash}
	if k.Groups == nil {
		k.Groups = []string{}
	}
	if err := rein.ValidateKey(k); err != nil {
		return err
	}
	entry := &rein.Entry{TS: k.CreatedAt, Tenant: k.Tenant, Kind: rein.KindKeyCreated, Actor: key.Name, Subject: k.ID,
		Data: map[string]any{"name": k.Name, "roles": k.Roles, "groups": k.Groups}}
	if err := s.KeyStore.CreateKey(r.Context(), k, entry); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, keyView{Key: k, Secret: secret})
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tenant := key.Tenant
	if q := r.URL.Query().Get("tenant"); q != "" {
		var err error
		if tenant, err = s.tenantParam(key, q); err != nil {
			return err
		}
	}
	keys, err := s.KeyStore.Keys(r.Context(), tenant)
	if err != nil {
		return err
	}
	if keys == nil {
		keys = []*rein.Key{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	id := r.PathValue("id")
	k, err := s.KeyStore.KeyByID(r.Context(), id)
	if errors.Is(err, rein.ErrNotFound) || (err == nil && !key.Sees(k.Tenant)) {
		return rein.Errorf(rein.ECodeNotFound, "no key %q in your tenant", id)
	}
	if err != nil {
		return err
	}
	if k.RevokedAt != nil {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	entry := &rein.Entry{TS: s.Now().UTC(), Tenant: k.Tenant, Kind: rein.KindKeyRevoked, Actor: key.Name, Subject: k.ID,
		Data: map[string]any{"name": k.Name}}
	err = s.KeyStore.RevokeKey(r.Context(), id, s.Now().UTC(), entry)
	if errors.Is(err, rein.ErrNotFound) {
		w.WriteHeader(http.StatusNoContent) // revoked meanwhile
		return nil
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
