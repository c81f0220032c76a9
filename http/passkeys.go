package http

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/passkey"
)

// passkeys returns the passkey service: the one rein serve configured, or
// one on the store with a secret of this process (a ceremony then finishes
// only on the replica that began it).
func (s *Server) passkeys() (*passkey.Service, error) {
	s.initPasskeys.Do(func() {
		if s.Passkeys != nil {
			return
		}
		store := s.PasskeyStore
		if store == nil {
			return
		}
		secret := make([]byte, 32)
		rand.Read(secret)
		s.Passkeys = &passkey.Service{Store: store, Secret: secret, BaseURL: func() string { return s.Pipeline.BaseURL }}
	})
	if s.Passkeys == nil {
		return nil, rein.Errorf(rein.ECodeConflict, "this store keeps no passkeys")
	}
	return s.Passkeys, nil
}

// passkeyError maps the passkey service's refusals to answers.
func passkeyError(err error) error {
	switch {
	case errors.Is(err, passkey.ErrConfirm):
		return rein.Errorf(rein.ECodeForbidden, "%v", err)
	case errors.Is(err, passkey.ErrUnavailable), errors.Is(err, passkey.ErrNoPasskey), errors.Is(err, passkey.ErrNeedExisting):
		return rein.Errorf(rein.ECodeConflict, "%v", err)
	}
	return err
}

// passkeyView is a passkey as the API shows it: never its credential.
type passkeyView struct {
	ID         string     `json:"id"`
	Label      string     `json:"label"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func viewPasskey(p *rein.Passkey) passkeyView {
	return passkeyView{ID: p.ID, Label: p.Label, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt}
}

// listPasskeys: GET /v1/passkeys, the caller's own passkeys.
func (s *Server) listPasskeys(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	svc, err := s.passkeys()
	if err != nil {
		return err
	}
	list, err := svc.List(r.Context(), key)
	if err != nil {
		return passkeyError(err)
	}
	out := []passkeyView{}
	for _, p := range list {
		out = append(out, viewPasskey(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"passkeys": out})
	return nil
}

// beginPasskeyRegistration: POST /v1/passkeys/registration starts adding a
// passkey; {"confirmation": {...}} carries the confirmation with an
// existing passkey that a person who has one must give.
func (s *Server) beginPasskeyRegistration(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	svc, err := s.passkeys()
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req struct {
		Confirmation *passkey.Confirmation `json:"confirmation"`
	}
	if len(body) > 0 {
		if err := rein.DecodeStrict(body, &req, "confirmation"); err != nil {
			return err
		}
	}
	c, err := svc.BeginRegistration(r.Context(), key, req.Confirmation)
	if err != nil {
		return passkeyError(err)
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// beginPasskeyConfirmation: POST /v1/passkeys/confirmation starts the
// confirmation with an existing passkey that adding another one needs.
func (s *Server) beginPasskeyConfirmation(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	svc, err := s.passkeys()
	if err != nil {
		return err
	}
	c, err := svc.BeginAdd(r.Context(), key)
	if err != nil {
		return passkeyError(err)
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// addPasskey: POST /v1/passkeys {"ceremony", "credential", "label"}
// finishes a registration.
func (s *Server) addPasskey(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	svc, err := s.passkeys()
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req struct {
		Ceremony   string          `json:"ceremony"`
		Credential json.RawMessage `json:"credential"`
		Label      string          `json:"label"`
	}
	if err := rein.DecodeStrict(body, &req, "ceremony, credential, label"); err != nil {
		return err
	}
	p, err := svc.FinishRegistration(r.Context(), key, &passkey.Confirmation{Ceremony: req.Ceremony, Credential: req.Credential}, req.Label)
	if err != nil {
		return passkeyError(err)
	}
	writeJSON(w, http.StatusCreated, viewPasskey(p))
	return nil
}

// removePasskey: DELETE /v1/passkeys/{id}, one of the caller's own.
func (s *Server) removePasskey(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	svc, err := s.passkeys()
	if err != nil {
		return err
	}
	if err := svc.Remove(r.Context(), key, r.PathValue("id")); errors.Is(err, rein.ErrNotFound) {
		return rein.Errorf(rein.ECodeNotFound, "you have no passkey %q", r.PathValue("id"))
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// beginStepUp: POST /v1/approvals/{id}/step-up starts the passkey
// confirmation of a vote on the approval as it is now.
func (s *Server) beginStepUp(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	svc, err := s.passkeys()
	if err != nil {
		return err
	}
	a, err := s.Pipeline.Approval(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	if a.Status != rein.StatusPending {
		return rein.Errorf(rein.ECodeConflict, "approval %s is %s: nothing is left to confirm", a.ID, a.Status)
	}
	c, err := svc.BeginStepUp(r.Context(), key, passkey.ApprovalPurpose(a))
	if err != nil {
		return passkeyError(err)
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// steppedUpVote verifies the passkey confirmation a vote carries, for the
// approval as it is now, and casts the vote as confirmed.
func (s *Server) steppedUpVote(r *http.Request, key *rein.Key, v *voteRequest) (*rein.Approval, error) {
	svc, err := s.passkeys()
	if err != nil {
		return nil, err
	}
	a, err := s.Pipeline.Approval(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if err := svc.Verify(r.Context(), key, passkey.ApprovalPurpose(a), v.StepUp); err != nil {
		return nil, passkeyError(err)
	}
	return s.Pipeline.VoteSteppedUp(r.Context(), key, a.ID, v.ballot())
}
