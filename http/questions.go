package http

import (
	"encoding/json"
	"net/http"

	"github.com/reinhq/rein"
)

// postQuestion: POST /v1/questions (agent, admin) -> 201 question.
func (s *Server) postQuestion(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req rein.QuestionRequest
	if err := rein.DecodeStrict(body, &req, rein.QuestionFields); err != nil {
		return err
	}
	q, err := s.Pipeline.Ask(r.Context(), key, &req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/questions/"+q.ID)
	writeJSON(w, http.StatusCreated, q)
	return nil
}

// listQuestions: GET /v1/questions?status=&session=&agent=&limit=&cursor=.
func (s *Server) listQuestions(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	f := rein.QuestionFilter{Status: q.Get("status"), Session: q.Get("session"), Agent: q.Get("agent"), Before: q.Get("cursor")}
	switch f.Status {
	case "", rein.StatusPending, rein.StatusAnswered, rein.StatusExpired, rein.StatusCancelled:
	default:
		return rein.Errorf(rein.ECodeBadRequest, "status %q is not one of pending, answered, expired, cancelled", f.Status)
	}
	var err error
	if f.Limit, err = listLimit(q.Get("limit")); err != nil {
		return err
	}
	tenant, err := s.tenantParam(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	list, err := s.QuestionStore.Questions(r.Context(), tenant, f)
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot list questions: %v", err)
	}
	writePage(w, r, list, f.Limit, func(x *rein.Question) string { return x.ID })
	return nil
}

func (s *Server) getQuestion(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q, err := s.Pipeline.Question(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

// answerRequest is the body of POST /v1/questions/{id}/answer.
type answerRequest struct {
	Answer json.RawMessage `json:"answer"`
}

func (s *Server) postAnswer(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var a answerRequest
	if err := rein.DecodeStrict(body, &a, "answer"); err != nil {
		return err
	}
	if len(a.Answer) == 0 || string(a.Answer) == "null" {
		return rein.Errorf(rein.ECodeBadRequest, `"answer" is required: text, one of the choices, or an object of the form's fields`)
	}
	q, err := s.Pipeline.Answer(r.Context(), key, r.PathValue("id"), a.Answer)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) cancelQuestion(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q, err := s.Pipeline.CancelQuestion(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

// waitQuestion: GET /v1/questions/{id}/wait?timeout_ms=30000 (at most 300000).
func (s *Server) waitQuestion(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	timeout, err := waitTimeout(r)
	if err != nil {
		return err
	}
	q, err := s.Pipeline.WaitQuestion(r.Context(), key, r.PathValue("id"), timeout)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}
