package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/egress"
)

// hookRelay is how the hooks of an agent inside a contained run reach
// rein: rein run serves it outside, on a Unix socket that the sandbox sees
// as 127.0.0.1:3129. The contained processes hold no key; the relay adds
// the run's own, and forwards only what a hook does, in the run's session:
//
//   - POST /v1/check: a check in the run's session whatever session it
//     names, with its request_id put under the run's (so that it can name
//     no check of another session or run of the same key); only the fields
//     a hook sends (tool, args, request_id, wait_ms); never net.connect,
//     which is the egress proxy's alone.
//   - GET /v1/request-ids/{id}: the check the relay made with that id.
//   - POST /v1/checks/{id}/result: the result of a check the relay made.
//   - GET /v1/approvals/{id}: the approval of a check the relay made.
//
// Everything else (votes, approvals of others, keys, policy, sessions, the
// audit log) is refused. The agent can call the relay directly, bypassing
// its hooks; it then gains nothing beyond the checks its hooks make: the
// same session, key and policy, and every call is on the record.
type hookRelay struct {
	c       *client.Client
	session string
}

// relayBodyLimit bounds what the relay reads of a request.
const relayBodyLimit = 1 << 20

// requestID is the request_id the relay uses for a hook's id: under the
// run's session.
func (h *hookRelay) requestID(id string) string {
	if id == "" {
		return ""
	}
	return h.prefix() + id
}

func (h *hookRelay) prefix() string { return "rein-run:" + h.session + ":" }

func (h *hookRelay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var out any
	var err error
	status := http.StatusOK
	id, sub, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	switch {
	case r.Method == "POST" && r.URL.Path == "/v1/check":
		out, err = h.check(ctx, r.Body)
	case r.Method == "GET" && id == "request-ids" && sub != "":
		out, err = h.byRequestID(ctx, sub)
	case r.Method == "POST" && id == "checks" && strings.HasSuffix(sub, "/result"):
		err = h.report(ctx, strings.TrimSuffix(sub, "/result"), r.Body)
		status = http.StatusNoContent
	case r.Method == "GET" && id == "approvals" && sub != "" && !strings.Contains(sub, "/"):
		out, err = h.approval(ctx, sub)
	default:
		err = rein.Errorf(rein.ECodeForbidden, "the relay of rein run forwards only the checks of the agent's hooks (%s %s is not one)", r.Method, r.URL.Path)
	}
	if err != nil {
		relayError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if out != nil {
		json.NewEncoder(w).Encode(out)
	}
}

// check forwards a hook's check, in the run's session.
func (h *hookRelay) check(ctx context.Context, body io.Reader) (*rein.CheckResponse, error) {
	b, err := io.ReadAll(io.LimitReader(body, relayBodyLimit+1))
	if err != nil {
		return nil, err
	}
	if len(b) > relayBodyLimit {
		return nil, rein.Errorf(rein.ECodeTooLarge, "a check through the relay is at most %d bytes", relayBodyLimit)
	}
	req, err := rein.DecodeCheck(b)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Tool == egress.Tool:
		return nil, rein.Errorf(rein.ECodeForbidden, "%s checks are made by rein run's egress proxy, not through the relay", egress.Tool)
	case req.Agent != "" || req.Intent != "" || len(req.Labels) > 0 || req.Cost != nil || req.Batch != "":
		return nil, rein.Errorf(rein.ECodeBadRequest, "a check through the relay has only tool, args, request_id and wait_ms (what hooks send); the session is the run's")
	}
	fwd := rein.CheckRequest{Tool: req.Tool, Args: req.Args, Session: h.session, RequestID: h.requestID(req.RequestID), WaitMS: req.WaitMS}
	if err := fwd.Validate(); err != nil {
		return nil, err
	}
	return h.c.Check(ctx, fwd)
}

// byRequestID is the check the relay made with the hook's id.
func (h *hookRelay) byRequestID(ctx context.Context, id string) (*rein.CheckRecord, error) {
	rec, err := h.c.CheckByRequestID(ctx, h.requestID(id))
	if err != nil {
		return nil, err
	}
	if err := h.own(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// own refuses a check the relay did not make.
func (h *hookRelay) own(rec *rein.CheckRecord) error {
	if rec.Check.Session != h.session || !strings.HasPrefix(rec.Check.RequestID, h.prefix()) || rec.Check.Tool == egress.Tool {
		return rein.Errorf(rein.ECodeNotFound, "no check %s made through this run's relay", rec.ID)
	}
	return nil
}

// report records the result of a check the relay made; only the fields a
// hook sends pass.
func (h *hookRelay) report(ctx context.Context, id string, body io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(body, relayBodyLimit+1))
	if err != nil {
		return err
	}
	if len(b) > relayBodyLimit {
		return rein.Errorf(rein.ECodeTooLarge, "a result through the relay is at most %d bytes", relayBodyLimit)
	}
	var res struct {
		Status  string          `json:"status"`
		Summary string          `json:"summary,omitempty"`
		Args    json.RawMessage `json:"args,omitempty"`
	}
	if err := rein.DecodeStrict(b, &res, "status, summary, args"); err != nil {
		return err
	}
	rec, err := h.c.GetCheck(ctx, id)
	if err != nil {
		return err
	}
	if err := h.own(rec); err != nil {
		return err
	}
	return h.c.Report(ctx, rec.ID, client.Result{Status: res.Status, Summary: res.Summary, Args: res.Args})
}

// approval is the approval of a check the relay made.
func (h *hookRelay) approval(ctx context.Context, id string) (*rein.Approval, error) {
	a, err := h.c.Approval(ctx, id)
	if err != nil {
		return nil, err
	}
	rec, err := h.c.GetCheck(ctx, a.CheckID)
	if err != nil {
		return nil, err
	}
	if err := h.own(rec); err != nil {
		return nil, rein.Errorf(rein.ECodeNotFound, "no approval %s of a check made through this run's relay", id)
	}
	return a, nil
}

// relayError answers err as rein's API does, so the hook's client reads
// it; rein's own answers pass with their status.
func relayError(w http.ResponseWriter, err error) {
	status, code, msg := http.StatusBadGateway, rein.ECodeUnavailable, "rein could not be reached through the relay: "+err.Error()
	var ce *client.Error
	var re *rein.Error
	switch {
	case errors.As(err, &ce):
		status, code, msg = ce.Status, ce.Code, ce.Message
	case errors.As(err, &re):
		code, msg = re.Code, re.Message
		status = map[string]int{rein.ECodeBadRequest: 400, rein.ECodeForbidden: 403, rein.ECodeNotFound: 404,
			rein.ECodeTooLarge: 413}[code]
		if status == 0 {
			status = http.StatusBadRequest
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// serveRelay serves the relay on l until it is closed.
func serveRelay(l net.Listener, h *hookRelay) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	srv.Serve(l)
}

// serveEndpoint carries every connection on l to exactly endpoint (a
// model endpoint on this machine, configured by the person who started
// the run), and nowhere else.
func serveEndpoint(l net.Listener, endpoint string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.DialTimeout("tcp", endpoint, 10*time.Second)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			go func() { io.Copy(c, up); c.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}
