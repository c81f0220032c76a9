package http

import (
	"net/http"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
)

// postLock: POST /v1/locks (admin) -> 201 lock.
func (s *Server) postLock(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req pipeline.LockRequest
	if err := rein.DecodeStrict(body, &req, "target, reason, expires_at, tenant"); err != nil {
		return err
	}
	l, err := s.Pipeline.CreateLock(r.Context(), key, &req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/locks/"+l.ID)
	writeJSON(w, http.StatusCreated, l)
	return nil
}

func (s *Server) listLocks(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	list, err := s.Pipeline.Locks(r.Context(), key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// deleteLock: DELETE /v1/locks/{id} -> 200 with the removed lock.
func (s *Server) deleteLock(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	l, err := s.Pipeline.RemoveLock(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}
