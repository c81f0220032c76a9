package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/authzen"
)

// The OpenID AuthZEN Authorization API 1.0 and its Access Request and
// Approval Profile (integrations.md, "AuthZEN"). Errors follow the
// specifications: AuthZEN's are a status with an error message string,
// the profile's are RFC 9457 problems.

func (s *Server) authzenRoutes() {
	s.handle("GET /.well-known/authzen-configuration", http.HandlerFunc(s.authzenMetadata))
	s.handle("POST /access/v1/evaluation", s.authzen(s.authzenEvaluation), rein.RoleAgent, rein.RoleAdmin)
	s.handle("POST /access/v1/evaluations", s.authzen(s.authzenEvaluations), rein.RoleAgent, rein.RoleAdmin)
	s.handle("POST /access/v1/requests", s.authzen(s.accessRequest), rein.RoleAgent, rein.RoleAdmin)
	s.handle("GET /access/v1/requests/{id}", s.authzen(s.accessRequestStatus), rein.RoleAgent, rein.RoleAdmin)
	s.handle("POST /access/v1/requests/{id}/cancel", s.authzen(s.accessRequestCancel), rein.RoleAgent, rein.RoleAdmin)
	s.handle("DELETE /access/v1/requests/{id}/cancel", s.authzen(s.accessRequestCancel), rein.RoleAgent, rein.RoleAdmin)
}

// authzenMetadata: the PDP metadata at /.well-known/authzen-configuration.
func (s *Server) authzenMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.Pipeline.BaseURL
	writeJSON(w, http.StatusOK, map[string]any{
		"policy_decision_point":       base,
		"access_evaluation_endpoint":  base + "/access/v1/evaluation",
		"access_evaluations_endpoint": base + "/access/v1/evaluations",
		"access_request_endpoint":     base + "/access/v1/requests",
		"capabilities":                []string{authzen.Capability},
	})
}

// authzen authenticates a bearer agent key, bounds the body and echoes the
// X-Request-ID header, as the AuthZEN transport binding asks.
func (s *Server) authzen(h func(w http.ResponseWriter, r *http.Request, key *rein.Key)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Request-ID"); id != "" {
			w.Header().Set("X-Request-ID", id)
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		key, err := s.authenticate(r)
		if err != nil {
			authzenError(w, http.StatusUnauthorized, rein.ErrorMessage(err))
			return
		}
		if !key.Has(rein.RoleAgent, rein.RoleAdmin) {
			authzenError(w, http.StatusForbidden, "key "+key.Name+" may not ask for decisions; use an agent key")
			return
		}
		h(w, r, key)
	}
}

// readJSON reads a body that the AuthZEN transport binding requires to be
// application/json. Any other media type, or none, is refused before the
// body is read: a form post or text/plain body is not evaluated, whatever
// it holds (certification case C-2-4-3).
func readJSON(r *http.Request) ([]byte, error) {
	if err := jsonContent(r); err != nil {
		return nil, err
	}
	return readBody(r)
}

// jsonContent reports an error unless the request says its body is
// application/json; parameters such as charset are accepted.
func jsonContent(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return fmt.Errorf("the body must be sent as Content-Type: application/json (got %s)", ct)
	}
	return nil
}

// readStatus is the status of a request whose body could not be taken: 413
// for a body over the limit, 400 for anything else.
func readStatus(err error) int {
	if rein.ErrorCode(err) == rein.ECodeTooLarge {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func authzenError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, msg)
}

func problem(w http.ResponseWriter, status int, typ, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(authzen.Problem{Type: typ, Title: title, Status: status, Detail: detail})
}

func (s *Server) authzenEvaluation(w http.ResponseWriter, r *http.Request, key *rein.Key) {
	body, err := readJSON(r)
	var e authzen.Evaluation
	if err == nil {
		err = json.Unmarshal(body, &e)
	}
	if err == nil {
		err = e.Validate()
	}
	if err != nil {
		authzenError(w, readStatus(err), "not an AuthZEN evaluation request: "+err.Error())
		return
	}
	d, err := s.evaluate(r.Context(), key, e)
	if err != nil {
		authzenError(w, authzenStatus(err), rein.ErrorMessage(err))
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) authzenEvaluations(w http.ResponseWriter, r *http.Request, key *rein.Key) {
	body, err := readJSON(r)
	var b authzen.Batch
	if err == nil {
		err = json.Unmarshal(body, &b)
	}
	var list []authzen.Evaluation
	var semantic string
	if err == nil {
		list, semantic, err = b.Expand()
	}
	if err == nil && len(b.Evaluations) == 0 {
		err = b.Validate() // a batch without evaluations is one evaluation
	}
	if err != nil {
		authzenError(w, readStatus(err), "not an AuthZEN evaluations request: "+err.Error())
		return
	}
	if len(b.Evaluations) == 0 {
		d, err := s.evaluate(r.Context(), key, list[0])
		if err != nil {
			authzenError(w, authzenStatus(err), rein.ErrorMessage(err))
			return
		}
		writeJSON(w, http.StatusOK, d)
		return
	}
	out := make([]authzen.Decision, 0, len(list))
	for _, e := range list {
		d, err := s.evaluate(r.Context(), key, e)
		if err != nil { // an error of one evaluation is its decision: false, with the error
			d = authzen.Decision{Context: map[string]any{"error": map[string]any{"status": authzenStatus(err), "message": rein.ErrorMessage(err)}}}
		}
		out = append(out, d)
		if semantic == authzen.DenyOnFirstDeny && !d.Decision || semantic == authzen.PermitOnFirstPermit && d.Decision {
			break
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"evaluations": out})
}

func authzenStatus(err error) int {
	switch rein.ErrorCode(err) {
	case rein.ECodeBadRequest, rein.ECodeTooLarge:
		return http.StatusBadRequest
	case rein.ECodeForbidden:
		return http.StatusForbidden
	case rein.ECodeUnauthenticated:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// evaluate decides one evaluation through the pipeline. A re-evaluation
// that names an approval uses that approval's grant and no other (policy,
// locks and the key are checked again, as at every use); a reference rein
// cannot apply — unknown, another agent's, for another action — is ignored
// and the evaluation decided as if it carried none, as the profile asks.
// A grant already used or expired is decided anew, so the caller gets a
// fresh requestable denial.
func (s *Server) evaluate(ctx context.Context, key *rein.Key, e authzen.Evaluation) (authzen.Decision, error) {
	req, ref, err := e.Check()
	if err != nil {
		return authzen.Decision{}, rein.Errorf(rein.ECodeBadRequest, "%v", err)
	}
	var ignored string
	if ref != nil {
		if why := s.applicable(ctx, key, req, ref.ID); why != "" {
			ref, ignored = nil, why
		}
	}
	var rec *rein.CheckRecord
	reevaluated := ref != nil
	if reevaluated {
		if rec, err = s.Pipeline.CheckWithGrant(ctx, key, req, ref.ID); err != nil {
			return authzen.Decision{}, err
		}
		a, aerr := s.Pipeline.Approval(ctx, key, ref.ID)
		if aerr == nil && rec.Decision == rein.Deny && a.Status == rein.StatusPending {
			// Nobody has decided yet: the same request may be evaluated
			// again later (no new approval is asked for).
			d := s.render(ctx, key, rec, true)
			d.Context["reason"], d.Context["next_action"], d.Context["retry_after"] = "approval_pending", "retry", pendingRetry(a, s.Now())
			d.Context["reason_text"] = "approval " + a.ID + " is still pending: no approver has decided yet"
			return d, nil
		}
		if aerr == nil && rec.Decision == rein.Deny && a.Status != rein.StatusApproved {
			// the grant is gone (used, expired, invalidated): ask anew
			fresh, err := s.Pipeline.Check(ctx, key, req)
			if err != nil {
				return authzen.Decision{}, err
			}
			d := s.render(ctx, key, fresh, false)
			d.Context["reason"], d.Context["next_action"] = "approval_expired", "none"
			if a.Status == rein.StatusRejected {
				d.Context["reason"] = "approval_rejected" // registered by rein: an approver said no
			}
			if fresh.Decision == rein.Ask {
				d.Context["next_action"] = "request"
			}
			return d, nil
		}
	} else if rec, err = s.Pipeline.Check(ctx, key, req); err != nil {
		return authzen.Decision{}, err
	}
	d := s.render(ctx, key, rec, reevaluated)
	if ignored != "" {
		d.Context["approval_ignored"] = ignored
	}
	return d, nil
}

// applicable says why approval id cannot be applied to req by key ("" when
// it can): it must be an approval the key may see, for exactly this action.
func (s *Server) applicable(ctx context.Context, key *rein.Key, req *rein.CheckRequest, id string) string {
	a, err := s.Pipeline.Approval(ctx, key, id)
	if err != nil {
		return "approval " + id + " is unknown to this key"
	}
	agent, err := rein.AgentFor(key.Name, req.Agent)
	canon, cerr := rein.Canonical(req.Args)
	if err != nil || cerr != nil {
		return "the evaluation cannot be bound to an action"
	}
	if hash, err := rein.ActionHash(key.Tenant, agent, req.Session, req.Tool, canon); err != nil || hash != a.ActionHash {
		return "approval " + id + " was given for another subject, resource, action or context"
	}
	return ""
}

func (s *Server) render(ctx context.Context, key *rein.Key, rec *rein.CheckRecord, reevaluated bool) authzen.Decision {
	a := authzen.Answered{Answer: rec.Answer(rec.Check.Args), CheckID: rec.ID, Rule: rec.Rule, At: rec.CreatedAt,
		RequestEndpoint: s.Pipeline.BaseURL + "/access/v1/requests", Reevaluated: reevaluated}
	if rec.Approval != nil {
		if ap, err := s.Pipeline.Approval(ctx, key, rec.Approval.ID); err == nil {
			a.Approval = ap
		}
	}
	return authzen.Render(a)
}

// accessRequest: POST /access/v1/requests. rein created the approval when
// it asked; the submission binds to it by the denied evaluation's id and
// must describe the same action, and returns its task.
func (s *Server) accessRequest(w http.ResponseWriter, r *http.Request, key *rein.Key) {
	body, err := readJSON(r)
	if err != nil {
		problem(w, readStatus(err), "about:blank", "Not a JSON request", err.Error())
		return
	}
	var sub struct {
		authzen.Evaluation
		Denial struct {
			EvaluationID string `json:"evaluation_id"`
		} `json:"denial"`
	}
	if err := json.Unmarshal(body, &sub); err != nil {
		problem(w, http.StatusBadRequest, authzen.ErrInvalidBinding, "Not an access request", err.Error())
		return
	}
	if sub.Denial.EvaluationID == "" {
		problem(w, http.StatusBadRequest, authzen.ErrInvalidBinding, "No denial binding", `"denial.evaluation_id" is required: the evaluation_id of the denied evaluation's context`)
		return
	}
	rec, err := s.Pipeline.CheckRecord(r.Context(), key, sub.Denial.EvaluationID)
	if err != nil {
		problem(w, http.StatusBadRequest, authzen.ErrInvalidBinding, "Unknown evaluation", "denial.evaluation_id names no evaluation of this key")
		return
	}
	if rec.Decision != rein.Ask || rec.Approval == nil {
		problem(w, http.StatusBadRequest, authzen.ErrNotRequestable, "Access is not requestable", "the evaluation was "+string(rec.Decision)+", not a requestable denial")
		return
	}
	req, _, err := sub.Evaluation.Check()
	if err == nil {
		var canon json.RawMessage
		if canon, err = rein.Canonical(req.Args); err == nil {
			var hash string
			hash, err = rein.ActionHash(rec.Tenant, rec.Check.Agent, req.Session, req.Tool, canon)
			if err == nil && hash != rec.ActionHash {
				err = errors.New("the subject, resource, action or context differ from the denied evaluation's")
			}
		}
	}
	if err != nil {
		problem(w, http.StatusBadRequest, authzen.ErrInvalidBinding, "The request does not match the denial", err.Error())
		return
	}
	a, err := s.Pipeline.Approval(r.Context(), key, rec.Approval.ID)
	if err != nil {
		problem(w, http.StatusBadRequest, authzen.ErrInvalidBinding, "Unknown approval", rein.ErrorMessage(err))
		return
	}
	if a.Status == rein.StatusExpired || a.Status == rein.StatusPending && !time.Now().Before(a.ExpiresAt) {
		problem(w, http.StatusGone, authzen.ErrExpiredDenial, "The denial has expired", "approval "+a.ID+" expired at "+a.ExpiresAt.UTC().Format(time.RFC3339)+"; evaluate again")
		return
	}
	endpoint := s.Pipeline.BaseURL + "/access/v1/requests/" + a.ID
	w.Header().Set("Location", endpoint)
	writeJSON(w, http.StatusAccepted, authzen.Task(a, endpoint, s.Pipeline.BaseURL+"/approvals/"+a.ID))
}

// accessRequestStatus: GET /access/v1/requests/{id}, the task of one approval.
func (s *Server) accessRequestStatus(w http.ResponseWriter, r *http.Request, key *rein.Key) {
	a, err := s.Pipeline.Approval(r.Context(), key, r.PathValue("id"))
	if err != nil {
		problem(w, http.StatusNotFound, authzen.ErrUnknownTask, "Unknown task", rein.ErrorMessage(err))
		return
	}
	endpoint := s.Pipeline.BaseURL + "/access/v1/requests/" + a.ID
	writeJSON(w, http.StatusOK, authzen.Task(a, endpoint, s.Pipeline.BaseURL+"/approvals/"+a.ID))
}

// accessRequestCancel: POST (or DELETE) /access/v1/requests/{id}/cancel.
func (s *Server) accessRequestCancel(w http.ResponseWriter, r *http.Request, key *rein.Key) {
	a, err := s.Pipeline.Cancel(r.Context(), key, r.PathValue("id"))
	switch code := rein.ErrorCode(err); {
	case err == nil:
	case code == rein.ECodeNotFound, code == rein.ECodeForbidden:
		problem(w, http.StatusNotFound, authzen.ErrUnknownTask, "Unknown task", rein.ErrorMessage(err))
		return
	case code == rein.ECodeConflict:
		problem(w, http.StatusConflict, authzen.ErrInvalidTaskState, "The task is no longer pending", rein.ErrorMessage(err))
		return
	default:
		authzenError(w, http.StatusInternalServerError, rein.ErrorMessage(err))
		return
	}
	endpoint := s.Pipeline.BaseURL + "/access/v1/requests/" + a.ID
	writeJSON(w, http.StatusOK, authzen.Task(a, endpoint, s.Pipeline.BaseURL+"/approvals/"+a.ID))
}

// pendingRetry is how many seconds a caller waits before evaluating again
// with a pending approval: a few seconds, never past the approval's expiry.
func pendingRetry(a *rein.Approval, now time.Time) int64 {
	left := int64(a.ExpiresAt.Sub(now) / time.Second)
	return max(1, min(5, left))
}
