package http

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/acs"
)

// postACS serves the OWASP Agent Control Standard v0.1 Guardian endpoint:
// one JSON-RPC request per POST, authenticated by an agent key. Only
// transport failures change the HTTP status (401, 413, 400 for a body that
// is not JSON); every JSON-RPC answer is 200.
func (s *Server) postACS(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	key, err := s.authenticate(r)
	if err != nil {
		writeJSON(w, http.StatusUnauthorized, acsError(nil, acs.CodeUnauthenticated, "UNAUTHENTICATED: "+rein.ErrorMessage(err)))
		return
	}
	if !key.Has(rein.RoleAgent, rein.RoleAdmin) {
		writeJSON(w, http.StatusForbidden, acsError(nil, acs.CodeUnauthenticated, "key "+key.Name+" may not make checks; the Guardian endpoint needs an agent key"))
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeJSON(w, statusCode(rein.ErrorCode(err)), acsError(nil, acs.CodeInvalidRequest, rein.ErrorMessage(err)))
		return
	}
	req, perr := acs.Parse(body)
	if perr != nil {
		status := http.StatusOK
		var id json.RawMessage
		if req == nil {
			status = http.StatusBadRequest
		} else {
			id = req.ID
		}
		writeJSON(w, status, acsError(id, perr.Code, perr.Message))
		return
	}
	res, aerr := s.acsAnswer(r.Context(), key, req)
	if aerr != nil {
		writeJSON(w, http.StatusOK, acsError(req.ID, aerr.Code, aerr.Message))
		return
	}
	writeJSON(w, http.StatusOK, acs.Response{JSONRPC: "2.0", ID: req.ID, Result: res})
}

func acsError(id json.RawMessage, code int, msg string) acs.Response {
	if id == nil {
		id = json.RawMessage("null")
	}
	return acs.Response{JSONRPC: "2.0", ID: id, Error: &acs.Error{Code: code, Message: msg}}
}

// acsAnswer answers one hook. Past validation, every failure is a deny
// result naming the cause (on_decision_failure is deny, and rein says so).
func (s *Server) acsAnswer(ctx context.Context, key *rein.Key, req *acs.Request) (*acs.Result, *acs.Error) {
	p := &req.Params
	now := s.Now()
	switch req.Method {
	case acs.MethodPing:
		return acs.Ping(p, now), nil
	case acs.MethodHello:
		return acs.Hello(p)
	}
	if !strings.HasPrefix(req.Method, "steps/") {
		return nil, &acs.Error{Code: acs.CodeMethodNotFound, Message: "method not found: " + req.Method + "; rein answers handshake/hello, system/ping and steps/*"}
	}
	if err := p.Validate(now); err != nil {
		return nil, err
	}
	if !s.acsSeen.add(key.ID+"\x00"+p.RequestID, now) {
		return nil, &acs.Error{Code: acs.CodeReplay, Message: "REPLAY_DETECTED: request_id " + p.RequestID + " was already seen"}
	}
	switch {
	case req.Method == acs.MethodToolCall:
		return s.acsToolCall(ctx, key, p, now)
	case slices.Contains(acs.Recorded, req.Method):
		agent := acs.Agent(key.Name, p.Metadata.AgentID)
		if err := s.Pipeline.RecordStep(ctx, key, p.Metadata.SessionID, agent, req.Method, p.RequestID, p.Payload); err != nil {
			return acs.Failed(p, rein.ErrorMessage(err)), nil
		}
		if req.Method == acs.MethodToolCallResult {
			s.acsToolResult(ctx, key, p)
		}
		return acs.RecordedResult(p), nil
	}
	return acs.Unknown(p, req.Method), nil
}

// acsToolCall decides a toolCallRequest through the pipeline. Its
// request_id becomes the check's, so a replay is caught across restarts
// and replicas, not only by this process's memory.
func (s *Server) acsToolCall(ctx context.Context, key *rein.Key, p *acs.Params, now time.Time) (*acs.Result, *acs.Error) {
	check, perr := acs.Check(p, key.Name)
	if perr != nil {
		return nil, perr
	}
	_, err := s.Store.CheckByRequestID(ctx, key.ID, check.RequestID)
	switch {
	case err == nil:
		return nil, &acs.Error{Code: acs.CodeReplay, Message: "REPLAY_DETECTED: request_id " + p.RequestID + " was already decided"}
	case !errors.Is(err, rein.ErrNotFound):
		return acs.Failed(p, "the store is unavailable: "+err.Error()), nil
	}
	start := time.Now()
	rec, err := s.Pipeline.Check(ctx, key, check)
	switch {
	case err != nil && rein.ErrorCode(err) == rein.ECodeBadRequest:
		return nil, &acs.Error{Code: acs.CodeInvalidParams, Message: rein.ErrorMessage(err)}
	case err != nil && rein.ErrorCode(err) == rein.ECodeConflict:
		return nil, &acs.Error{Code: acs.CodeReplay, Message: "REPLAY_DETECTED: " + rein.ErrorMessage(err)}
	case err != nil:
		return acs.Failed(p, rein.ErrorMessage(err)), nil
	}
	return acs.Decide(p, rec, check.Args, now, time.Since(start)), nil
}

// acsToolResult records a toolCallResult as the result of the check its
// request_id_ref decided, when there is one. Failures here change no
// decision; the pipeline audits a result for a check it did not allow.
func (s *Server) acsToolResult(ctx context.Context, key *rein.Key, p *acs.Params) {
	var tr acs.ToolResult
	if json.Unmarshal(p.Payload, &tr) != nil || tr.RequestIDRef == "" || tr.ExitStatus == "blocked" {
		return
	}
	rec, err := s.Store.CheckByRequestID(ctx, key.ID, acs.RequestIDPrefix+tr.RequestIDRef)
	if err != nil {
		return
	}
	status := "failed"
	if tr.ExitStatus == "success" {
		status = "succeeded"
	}
	if err := s.Pipeline.Result(ctx, key, rec.ID, &rein.CheckResult{Status: status, Summary: "ACS toolCallResult: " + tr.ExitStatus}); err != nil {
		s.Log.Info("acs: tool result not recorded", "check", rec.ID, "err", err)
	}
}

// replaySet remembers request ids for twice the skew window: older ones
// are refused by their timestamp before they get here.
type replaySet struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (r *replaySet) add(id string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]time.Time{}
	}
	if _, ok := r.seen[id]; ok {
		return false
	}
	if len(r.seen)%1024 == 1023 {
		for k, at := range r.seen {
			if now.Sub(at) > 2*acs.SkewWindow {
				delete(r.seen, k)
			}
		}
	}
	r.seen[id] = now
	return true
}
