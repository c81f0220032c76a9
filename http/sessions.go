package http

import (
	"net/http"
	"time"

	"github.com/reinhq/rein"
)

// postResult: POST /v1/checks/{id}/result -> 204.
func (s *Server) postResult(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var res rein.CheckResult
	if err := rein.DecodeStrict(body, &res, "status, summary, cost, args, args_hash, executed_by, exit_status, stdout_sha256, stdout_bytes, stderr_sha256, stderr_bytes"); err != nil {
		return err
	}
	if err := s.Pipeline.Result(r.Context(), key, r.PathValue("id"), &res); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// endSession: POST /v1/sessions/{id}/end (?tenant= for keys of tenant *)
// -> 200 with the ended session. The agent that ran it, or an admin.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tenant, err := s.tenantParam(key, r.URL.Query().Get("tenant"))
	if err != nil {
		return err
	}
	sess, err := s.Pipeline.EndSession(r.Context(), key, tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess)
	return nil
}

// getSession: GET /v1/sessions/{id} (?tenant= for keys of tenant *).
func (s *Server) getSession(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tenant, err := s.tenantParam(key, r.URL.Query().Get("tenant"))
	if err != nil {
		return err
	}
	sess, err := s.Pipeline.Session(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess)
	return nil
}

// getSessionChecks: GET /v1/sessions/{id}/checks?limit=&cursor=, newest first.
func (s *Server) getSessionChecks(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	q := r.URL.Query()
	tenant, err := s.tenantParam(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	limit, err := listLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	list, err := s.SessionStore.SessionChecks(r.Context(), tenant, r.PathValue("id"), limit, q.Get("cursor"))
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read the session's checks: %v", err)
	}
	writePage(w, r, list, limit, func(x *rein.CheckRecord) string { return x.ID })
	return nil
}

// getSandbox: GET /v1/sessions/{id}/sandbox (?tenant= for keys of tenant
// *; ?timeout_ms= to wait) -> 200 {"sandbox", "stop"}: the session's
// containment and the lock that stops it (null while none does). With
// timeout_ms it answers once a lock stops the session or the run has
// ended, or when the time is up: rein run waits on it to end every process
// of the run as soon as people stop the session. It looks again on every
// event of this server and every second (a lock made on another server).
func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	tenant, err := s.tenantParam(key, r.URL.Query().Get("tenant"))
	if err != nil {
		return err
	}
	var wait time.Duration
	if r.URL.Query().Has("timeout_ms") {
		if wait, err = waitTimeout(r); err != nil {
			return err
		}
	}
	var changed chan struct{}
	if wait > 0 && s.Events != nil {
		changed = s.Events.Watch()
		defer s.Events.Unwatch(changed)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	again := time.NewTicker(time.Second)
	defer again.Stop()
	for {
		st, err := s.Pipeline.SandboxStop(r.Context(), key, tenant, r.PathValue("id"))
		if err != nil {
			return err
		}
		if wait <= 0 || st.Stop != nil || st.Sandbox == nil || st.Sandbox.ExitStatus != nil {
			writeJSON(w, http.StatusOK, st)
			return nil
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-s.stopping():
			wait = 0
		case <-deadline.C:
			wait = 0
		case <-changed:
		case <-again.C:
		}
	}
}

// sandboxEvent: POST /v1/sessions/{id}/sandbox (the agent key of rein run)
// {"event": "started", "profile", "workspace", "command", "features"} ->
// 201 with the contained session; {"event": "ended", "exit_status",
// "duration_ms", "quarantined"} -> 204.
func (s *Server) sandboxEvent(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var v struct {
		Event string `json:"event"`
		rein.SandboxStart
		rein.SandboxEnd
	}
	if err := rein.DecodeStrict(body, &v, "event, profile, workspace, command, features, agent, hooks, credentials, model_endpoint, resolver, unconfined, runner, exit_status, duration_ms, quarantined, stopped_by"); err != nil {
		return err
	}
	switch v.Event {
	case "started":
		sess, err := s.Pipeline.StartSandbox(r.Context(), key, r.PathValue("id"), v.SandboxStart)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, sess)
	case "ended":
		if err := s.Pipeline.EndSandbox(r.Context(), key, r.PathValue("id"), v.SandboxEnd); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		return rein.Errorf(rein.ECodeBadRequest, `"event" is "started" or "ended"`)
	}
	return nil
}
