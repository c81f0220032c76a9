package http

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/acs"
)

// postACS serves the OWASP Agent Control Standard v0.1 Guardian endpoint:
// one JSON-RPC request per POST, authenticated by an agent key. Only
// transport failures change the HTTP status (401, 413, 400 for a body that
// is not JSON); every JSON-RPC answer is 200. Past authentication, every
// request but system/ping must carry an HMAC-SHA256 signature under the
// session key derived from the agent key (acs.SessionKey), and every
// answer rein can key is signed the same way.
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
	_, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	c := &acsCall{key: key, secret: strings.TrimSpace(secret), body: body, req: req, keyID: key.Name}
	res, aerr := s.acsAnswer(r.Context(), c)
	resp := acs.Response{JSONRPC: "2.0", ID: req.ID, Result: res}
	if aerr != nil {
		resp = acsError(req.ID, aerr.Code, aerr.Message)
		resp.Error.Data = aerr.Data
	}
	if c.signKey != nil {
		if err := acs.SignResponse(&resp, c.signKey, c.keyID); err != nil {
			resp = acsError(req.ID, acs.CodeInternal, "rein could not sign its answer: "+err.Error())
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func acsError(id json.RawMessage, code int, msg string) acs.Response {
	if id == nil {
		id = json.RawMessage("null")
	}
	return acs.Response{JSONRPC: "2.0", ID: id, Error: &acs.Error{Code: code, Message: msg}}
}

// acsCall is one request on its way through the Guardian.
type acsCall struct {
	key     *rein.Key
	secret  string // the agent key: the pre-shared secret the session key derives from
	body    []byte
	req     *acs.Request
	signKey []byte // the session key, once the session is known
	keyID   string
}

// acsAnswer answers one hook. Past validation, every failure is a deny
// result naming the cause (on_decision_failure is deny, and rein says so).
func (s *Server) acsAnswer(ctx context.Context, c *acsCall) (*acs.Result, *acs.Error) {
	key, req := c.key, c.req
	p := &req.Params
	now := s.Now()
	if req.Method == acs.MethodPing {
		// Liveness needs no signature and no session (§13).
		return acs.Ping(p, now), nil
	}
	if p.Metadata.SessionID != "" {
		c.signKey = acs.SessionKey(c.secret, p.Metadata.SessionID)
	}
	if req.Method != acs.MethodHello && !strings.HasPrefix(req.Method, "steps/") {
		return nil, &acs.Error{Code: acs.CodeMethodNotFound, Message: "method not found: " + req.Method + "; rein answers handshake/hello, system/ping and steps/*"}
	}
	if p.Metadata.SessionID == "" {
		return nil, &acs.Error{Code: acs.CodeInvalidParams, Message: `"params.metadata.session_id" is required: the session key derives from it`}
	}
	keyID, verr := acs.VerifyRequest(c.body, c.signKey, key.Name, key.ID)
	if verr != nil {
		return nil, verr
	}
	c.keyID = keyID
	if err := p.Validate(now); err != nil {
		return nil, err
	}
	sessionID := key.ID + "\x00" + p.Metadata.SessionID
	var sess *acsSession
	if req.Method != acs.MethodHello {
		// Refusals for the session's terms come before the request id is
		// remembered, so the agent can handshake and send the step again.
		if sess = s.acsSeen.session(sessionID, now); sess == nil {
			return nil, &acs.Error{Code: acs.CodeNotNegotiated, Message: "CAPABILITY_NOT_NEGOTIATED: session " + p.Metadata.SessionID + " has no handshake with this key; send handshake/hello first",
				Data: map[string]any{"method": acs.MethodHello}}
		}
		if err := acs.StepVersion(p, sess.n); err != nil {
			return nil, err
		}
		if !slices.Contains(sess.n.Methods, req.Method) {
			return nil, &acs.Error{Code: acs.CodeNotNegotiated, Message: "CAPABILITY_NOT_NEGOTIATED: " + req.Method + " was not negotiated for this session; rein evaluates " + strings.Join(sess.n.Methods, ", "),
				Data: map[string]any{"method": req.Method}}
		}
	}
	if !s.acsSeen.add(key.ID+"\x00"+p.RequestID, now) {
		return nil, &acs.Error{Code: acs.CodeReplay, Message: "REPLAY_DETECTED: request_id " + p.RequestID + " was already seen"}
	}
	if p.Nonce != "" && !s.acsSeen.add("nonce\x00"+key.ID+"\x00"+p.Nonce, now) {
		return nil, &acs.Error{Code: acs.CodeReplay, Message: "REPLAY_DETECTED: nonce " + p.Nonce + " was already used"}
	}
	if req.Method == acs.MethodHello {
		res, n, err := acs.Hello(p)
		if err == nil {
			s.acsSeen.negotiate(sessionID, n, now)
		}
		return res, err
	}
	res, err := s.acsStep(ctx, key, req, now)
	if err != nil {
		return nil, err
	}
	// Every step rein answers is a ContextEntry; the new head is published,
	// signed, in the answer (§8.6).
	reqHash, herr := acs.RequestHash(c.body)
	if herr != nil {
		return nil, &acs.Error{Code: acs.CodeInvalidParams, Message: "the request cannot be hashed: " + herr.Error()}
	}
	head, cerr := sess.append(acs.Entry{StepID: p.RequestID, StepType: req.Method, RequestHash: reqHash, Timestamp: p.Timestamp})
	if cerr != nil {
		return nil, &acs.Error{Code: acs.CodeInternal, Message: "the session chain cannot be extended: " + cerr.Error()}
	}
	res.ChainHash = head
	return res, nil
}

// acsStep answers a negotiated steps/* hook.
func (s *Server) acsStep(ctx context.Context, key *rein.Key, req *acs.Request, now time.Time) (*acs.Result, *acs.Error) {
	p := &req.Params
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
		if req.Method == "steps/sessionEnd" && p.Metadata.SessionID != "" {
			// The rein session ends with the ACS session (a session without
			// checks has nothing to end).
			if _, err := s.Pipeline.EndSession(ctx, key, key.Tenant, p.Metadata.SessionID); err != nil && rein.ErrorCode(err) != rein.ECodeNotFound && rein.ErrorCode(err) != rein.ECodeConflict {
				return acs.Failed(p, rein.ErrorMessage(err)), nil
			}
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
	_, err := s.CheckStore.CheckByRequestID(ctx, key.ID, check.RequestID)
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
	rec, err := s.CheckStore.CheckByRequestID(ctx, key.ID, acs.RequestIDPrefix+tr.RequestIDRef)
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

// replaySet is the Guardian's per-process ACS memory: request ids and
// nonces seen, for twice the skew window (older ones are refused by their
// timestamp before they get here), and the sessions a handshake opened,
// with their negotiated terms and audit chain head, until a day without
// traffic. A restart forgets the sessions: their next step is refused with
// CAPABILITY_NOT_NEGOTIATED and the agent handshakes again.
type replaySet struct {
	mu       sync.Mutex
	seen     map[string]time.Time
	sessions map[string]*acsSession
}

// acsSessionIdle is how long a session without traffic is remembered.
const acsSessionIdle = 24 * time.Hour

// acsSession is one handshaken session of one key.
type acsSession struct {
	n       *acs.Negotiated
	used    time.Time
	mu      sync.Mutex
	entries int
	head    string
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

// negotiate records a handshake; a repeated one renews the terms and keeps
// the chain.
func (r *replaySet) negotiate(id string, n *acs.Negotiated, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions == nil {
		r.sessions = map[string]*acsSession{}
	}
	if len(r.sessions)%1024 == 1023 {
		for k, x := range r.sessions {
			if now.Sub(x.used) > acsSessionIdle {
				delete(r.sessions, k)
			}
		}
	}
	if x := r.sessions[id]; x != nil {
		x.n, x.used = n, now
		return
	}
	r.sessions[id] = &acsSession{n: n, used: now}
}

// session is the handshaken session, nil when there is none.
func (r *replaySet) session(id string, now time.Time) *acsSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.sessions[id]
	if x == nil || now.Sub(x.used) > acsSessionIdle {
		return nil
	}
	x.used = now
	return x
}

// append writes the next ContextEntry and returns the new head.
func (x *acsSession) append(e acs.Entry) (string, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e.EntryID = strconv.Itoa(x.entries + 1)
	h, err := acs.EntryHash(e, x.head)
	if err != nil {
		return "", err
	}
	x.entries, x.head = x.entries+1, h
	return h, nil
}
