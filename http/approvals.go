package http

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/passkey"
)

// listApprovals: GET /v1/approvals?status=&session=&agent=&limit=&cursor=.
// The next page's cursor is in the Link header (rel="next") and in
// X-Next-Cursor.
func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	f := rein.ApprovalFilter{Status: q.Get("status"), Session: q.Get("session"), Agent: q.Get("agent"), Before: q.Get("cursor")}
	var err error
	switch f.Status {
	case "", rein.StatusPending, rein.StatusApproved, rein.StatusRejected, rein.StatusExpired, rein.StatusCancelled,
		rein.StatusInvalidated, rein.StatusConsumed:
	default:
		return rein.Errorf(rein.ECodeBadRequest, "status %q is not one of pending, approved, rejected, expired, cancelled, invalidated, consumed", f.Status)
	}
	if f.Limit, err = listLimit(q.Get("limit")); err != nil {
		return err
	}
	tenant, err := s.tenantParam(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	list, err := s.ApprovalStore.Approvals(r.Context(), tenant, f)
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot list approvals: %v", err)
	}
	writePage(w, r, list, f.Limit, func(x *rein.Approval) string { return x.ID })
	return nil
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	a, err := s.Pipeline.Approval(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeApproval(w, a)
	return nil
}

// writeApproval answers with one approval and its revision as the ETag, the
// value a vote's If-Match names.
func writeApproval(w http.ResponseWriter, a *rein.Approval) {
	w.Header().Set("ETag", strconv.Quote(strconv.Itoa(a.Revision)))
	writeJSON(w, http.StatusOK, a)
}

// votedRevision is the revision a vote names: "revision" in its body and/or
// If-Match: "<N>" (the ETag of the approval the voter was shown). Naming two
// different revisions is a bad request; naming none is 0.
func votedRevision(r *http.Request, body int) (int, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" || h == "*" {
		return body, nil
	}
	h = strings.TrimPrefix(h, "W/")
	n, err := strconv.Atoi(strings.Trim(h, `"`))
	if err != nil || n < 1 || strings.Contains(h, ",") {
		return 0, rein.Errorf(rein.ECodeBadRequest, `If-Match must name one revision of the approval, as its ETag does: If-Match: "2"`)
	}
	if body != 0 && body != n {
		return 0, rein.Errorf(rein.ECodeBadRequest, `"revision" (%d) and If-Match (%d) name different revisions; send one`, body, n)
	}
	return n, nil
}

// voteRequest is the body of POST /v1/approvals/{id}/votes.
type voteRequest struct {
	Vote    string          `json:"vote"`
	Message string          `json:"message"`
	Args    json.RawMessage `json:"args"`
	Grant   string          `json:"grant"`
	// Revision is the revision of the action the voter was shown (also
	// If-Match); an approve or edit of another revision is refused.
	Revision int `json:"revision"`
	// StepUp is the voter's passkey confirmation of this vote (approvals
	// that need step-up).
	StepUp *passkey.Confirmation `json:"step_up"`
}

func (v *voteRequest) ballot() approval.Ballot {
	return approval.Ballot{Kind: v.Vote, Message: v.Message, Args: v.Args, Grant: v.Grant, Revision: v.Revision}
}

func (s *Server) postVote(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v voteRequest
	if err := rein.DecodeStrict(body, &v, "vote, message, args, grant, revision, step_up"); err != nil {
		return err
	}
	if v.Revision < 0 {
		return rein.Errorf(rein.ECodeBadRequest, `"revision" is the approval's revision the voter was shown: 1 or more`)
	}
	if v.Revision, err = votedRevision(r, v.Revision); err != nil {
		return err
	}
	if v.Vote == "" {
		return rein.Errorf(rein.ECodeBadRequest, `"vote" is required: "approve", "reject" or "edit" (with "args")`)
	}
	if string(v.Args) == "null" {
		v.Args = nil
	}
	var a *rein.Approval
	if v.StepUp != nil {
		a, err = s.steppedUpVote(r, key, &v)
	} else {
		a, err = s.Pipeline.Cast(r.Context(), key, r.PathValue("id"), v.ballot())
	}
	if err != nil {
		return err
	}
	writeApproval(w, a)
	return nil
}

// revokeApproval: POST /v1/approvals/{id}/revoke {"message": "..."} ends an
// approved grant before its window closes.
func (s *Server) revokeApproval(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v struct {
		Message string `json:"message"`
	}
	if len(body) > 0 {
		if err := rein.DecodeStrict(body, &v, "message"); err != nil {
			return err
		}
	}
	a, err := s.Pipeline.Revoke(r.Context(), key, r.PathValue("id"), v.Message)
	if err != nil {
		return err
	}
	writeApproval(w, a)
	return nil
}

// postClientVote relays the vote of an MCP client's user from the gateway
// key that asked: {"vote": "approve"|"reject", "message": "..."}.
func (s *Server) postClientVote(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v struct {
		Vote    string `json:"vote"`
		Message string `json:"message"`
	}
	if err := rein.DecodeStrict(body, &v, "vote, message"); err != nil {
		return err
	}
	a, err := s.Pipeline.ClientVote(r.Context(), key, r.PathValue("id"), v.Vote, v.Message)
	if err != nil {
		return err
	}
	writeApproval(w, a)
	return nil
}

func (s *Server) cancelApproval(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	a, err := s.Pipeline.Cancel(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeApproval(w, a)
	return nil
}

// waitApproval: GET /v1/approvals/{id}/wait?timeout_ms=30000 (at most 300000).
func (s *Server) waitApproval(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	timeout, err := waitTimeout(r)
	if err != nil {
		return err
	}
	// A GET authenticated by the console's session cookie changes nothing:
	// only a key in the Authorization header (the agent's own) uses a grant.
	bearer := r.Header.Get("Authorization") != ""
	res, err := s.Pipeline.Wait(r.Context(), key, r.PathValue("id"), timeout, bearer)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// waitTimeout reads a long-poll's timeout_ms (default 30 s, at most 5 min).
func waitTimeout(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("timeout_ms")
	if v == "" {
		return 30 * time.Second, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > rein.MaxWaitMS {
		return 0, rein.Errorf(rein.ECodeBadRequest, "timeout_ms must be a number from 0 to %d", rein.MaxWaitMS)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// postBatchVote: POST /v1/batches/{batch}/votes {"vote": "approve"|"reject",
// "message", "grant", "tenant", "approvals"}: one vote on every pending
// approval of an agent turn, all or nothing; with "approvals" (the ids the
// voter saw) only if the batch holds exactly those.
func (s *Server) postBatchVote(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v struct {
		Vote    string `json:"vote"`
		Message string `json:"message"`
		Grant   string `json:"grant"`
		Tenant  string `json:"tenant"`
		// Approvals is a pointer so that an empty list is refused rather
		// than read as "not given".
		Approvals *[]string `json:"approvals"`
	}
	if err := rein.DecodeStrict(body, &v, "vote, message, grant, tenant, approvals"); err != nil {
		return err
	}
	var seen []string
	if v.Approvals != nil {
		if len(*v.Approvals) == 0 {
			return rein.Errorf(rein.ECodeBadRequest, `"approvals" lists the approval ids the voter saw in the batch; leave it out rather than send an empty list`)
		}
		seen = *v.Approvals
	}
	tenant, err := s.tenantParam(key, v.Tenant)
	if err != nil {
		return err
	}
	list, err := s.Pipeline.VoteBatch(r.Context(), key, tenant, r.PathValue("batch"), v.Vote, v.Message, v.Grant, seen)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}
