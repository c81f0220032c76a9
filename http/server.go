// Package http serves rein's HTTP API v1 (api.md): authentication by API key,
// roles and tenant scoping on every endpoint, strict JSON, and errors that
// say how to fix the request. Handlers translate; the decisions themselves
// are made by the pipeline.
package http

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/internal/httpbody"
	"github.com/reinhq/rein/passkey"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/webpush"
)

// MaxBodyBytes is the default request body limit (api.md: larger is 413).
const MaxBodyBytes = 1 << 20

// PolicyAdmin activates policy tiers: compile, store, audit, then make live.
type PolicyAdmin interface {
	// Activate makes src the policy of a tier (tenant "" is global). It
	// returns policy.Problems when src does not compile; the old policy stays.
	Activate(ctx context.Context, tenant string, src []byte, by, origin string) (*rein.PolicyDoc, error)
	// Doc returns the live document of a tier, or nil.
	Doc(tenant string) *rein.PolicyDoc
}

// Server is the HTTP API.
type Server struct {
	// The stores of the concepts the API reads itself, one per concept
	// (what changes state goes through the pipeline). A nil PasskeyStore or
	// PushSubscriptionStore turns that part of the API off.
	KeyStore              rein.KeyStore
	CheckStore            rein.CheckStore
	ApprovalStore         rein.ApprovalStore
	QuestionStore         rein.QuestionStore
	SessionStore          rein.SessionStore
	AuditStore            rein.AuditStore
	CheckpointStore       rein.CheckpointStore
	DeliveryStore         rein.DeliveryStore
	PasskeyStore          rein.PasskeyStore
	PushSubscriptionStore rein.PushSubscriptionStore

	Pipeline *pipeline.Pipeline
	Policies *policy.Active
	Admin    PolicyAdmin
	Log      *slog.Logger
	// Ready reports why the server is not ready, or nil.
	Ready func(ctx context.Context) error
	// ReadyDetail, when set, adds what an operator should know to a ready
	// answer (a refused policy file while the last good one serves).
	ReadyDetail func() map[string]any
	Registry    *prometheus.Registry
	Now         func() time.Time
	// Events is the event stream served at /v1/events.
	Events *events.Bus
	// RotateKey replaces the checkpoint signing key (nil: not offered).
	RotateKey func(ctx context.Context, by string) (*rein.AuditKey, error)
	// Console serves every path outside /v1/ and the operations endpoints
	// (nil: those paths are 404).
	Console http.Handler
	// Heartbeat is how often event streams send a keep-alive comment and
	// check their key again (a revoked key or an ended console session ends
	// the stream); default 15 s.
	Heartbeat time.Duration
	// Sessions authenticates API requests that carry the console's session
	// cookie instead of an Authorization header (nil: only bearer keys).
	Sessions Sessions
	// BodyTimeout bounds how long a request body may take to arrive once
	// its headers have (default DefaultBodyTimeout): a client that stalls
	// half-way gets a 400 and its connection closed. It applies only while
	// a body is read, so event streams and long-polls (which have no body)
	// are not cut.
	BodyTimeout time.Duration
	// Slack is the Slack app's interactivity endpoint and ApprovalLinks the
	// pages of e-mailed approval links (nil: not served). Both authenticate
	// their requests themselves (Slack's signature, the link's MAC).
	Slack         http.Handler
	ApprovalLinks http.Handler
	// Passkeys registers passkeys and verifies the confirmations of votes
	// that need step-up (nil: one on Store, with a secret of this process).
	Passkeys *passkey.Service
	// Push sends Web Push notifications; with it the API offers
	// subscriptions (nil: /v1/push answers that it is off).
	Push *webpush.Sender

	initPasskeys sync.Once

	mux      *http.ServeMux
	routes   []Route   // every pattern registered on mux, in order (Routes)
	acsSeen  replaySet // ACS request ids seen by this process
	requests *prometheus.CounterVec
	stop     chan struct{} // closed by Stop: long-lived streams end
	stopOnce sync.Once
	initStop sync.Once
}

// Stop ends the long-lived streams (events), so that a shutdown does not
// wait on them.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stopping()) }) }

func (s *Server) stopping() chan struct{} {
	s.initStop.Do(func() { s.stop = make(chan struct{}) })
	return s.stop
}

// Handler builds the routes. Call it once.
func (s *Server) Handler() http.Handler {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rein_http_requests_total", Help: "HTTP requests by route pattern and status code.",
	}, []string{"route", "code"})
	s.Registry.MustRegister(s.requests)

	s.mux = http.NewServeMux()
	s.handle("GET /healthz", http.HandlerFunc(s.healthz))
	s.handle("GET /readyz", http.HandlerFunc(s.readyz))
	s.handle("GET /metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	s.handle("GET /v1/openapi.json", http.HandlerFunc(s.getOpenAPI))

	s.route("POST /v1/check", s.postCheck, rein.RoleAgent, rein.RoleAdmin)
	s.handle("POST /v1/hooks/claude-code", http.HandlerFunc(s.claudeCodeHook)) // answers 200 with a decision, even to errors
	s.handle("POST /acs", http.HandlerFunc(s.postACS))                         // OWASP ACS Guardian: JSON-RPC errors, not API errors
	s.authzenRoutes()                                                          // OpenID AuthZEN 1.0 and its access request profile: their own error shapes
	s.route("GET /v1/checks", s.listChecks, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/checks/{id}", s.getCheck, rein.RoleAgent, rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor)
	s.route("GET /v1/request-ids/{request_id}", s.getCheckByRequest, rein.RoleAgent, rein.RoleAdmin)
	s.route("POST /v1/checks/{id}/result", s.postResult, rein.RoleAgent, rein.RoleAdmin)
	s.route("GET /v1/checks/{id}/receipt", s.getCheckReceipt, rein.RoleAgent, rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor)
	s.route("GET /v1/sessions/{id}", s.getSession, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/sessions/{id}/checks", s.getSessionChecks, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("POST /v1/sessions/{id}/end", s.endSession, rein.RoleAgent, rein.RoleAdmin)
	s.route("POST /v1/sessions/{id}/sandbox", s.sandboxEvent, rein.RoleAgent)
	s.route("GET /v1/sessions/{id}/sandbox", s.getSandbox, rein.RoleAgent, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)

	s.route("GET /v1/approvals", s.listApprovals, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/approvals/{id}", s.getApproval, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor, rein.RoleAgent)
	s.route("POST /v1/approvals/{id}/votes", s.postVote, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/approvals/{id}/step-up", s.beginStepUp, rein.RoleApprover, rein.RoleAdmin)
	s.route("GET /v1/passkeys", s.listPasskeys, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/passkeys", s.addPasskey, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/passkeys/registration", s.beginPasskeyRegistration, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/passkeys/confirmation", s.beginPasskeyConfirmation, rein.RoleApprover, rein.RoleAdmin)
	s.route("DELETE /v1/passkeys/{id}", s.removePasskey, rein.RoleApprover, rein.RoleAdmin)
	s.route("GET /v1/push", s.getPush, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/push/subscriptions", s.addPushSubscription, rein.RoleApprover, rein.RoleAdmin)
	s.route("DELETE /v1/push/subscriptions/{id}", s.removePushSubscription, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/push/test", s.testPush, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/approvals/{id}/client-vote", s.postClientVote, rein.RoleAgent)
	s.route("GET /v1/approvals/{id}/wait", s.waitApproval, rein.RoleAgent, rein.RoleAdmin)
	s.route("POST /v1/approvals/{id}/cancel", s.cancelApproval, rein.RoleAgent, rein.RoleAdmin)
	s.route("POST /v1/approvals/{id}/revoke", s.revokeApproval, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/batches/{batch}/votes", s.postBatchVote, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/delegations", s.postDelegation, rein.RoleApprover, rein.RoleAdmin)
	s.route("GET /v1/delegations", s.listDelegations, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("DELETE /v1/delegations/{id}", s.deleteDelegation, rein.RoleApprover, rein.RoleAdmin)
	s.route("POST /v1/approvals/{id}/propose", s.propose, rein.RoleApprover, rein.RoleAdmin)
	s.route("GET /v1/proposals", s.listProposals, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/proposals/suggestions", s.proposalSuggestions, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/proposals/{id}", s.getProposal, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("POST /v1/proposals/{id}/decision", s.decideProposal, rein.RoleAdmin)
	s.route("GET /v1/reviews", s.listReviews, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/reviews/stats", s.reviewStats, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/reviews/{id}", s.getReview, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("POST /v1/reviews/{id}/verdict", s.decideReview, rein.RoleApprover, rein.RoleAdmin)

	s.route("POST /v1/questions", s.postQuestion, rein.RoleAgent, rein.RoleAdmin)
	s.route("GET /v1/questions", s.listQuestions, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/questions/{id}", s.getQuestion, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor, rein.RoleAgent)
	s.route("POST /v1/questions/{id}/answer", s.postAnswer, rein.RoleApprover, rein.RoleAdmin)
	s.route("GET /v1/questions/{id}/wait", s.waitQuestion, rein.RoleAgent, rein.RoleAdmin)
	s.route("POST /v1/questions/{id}/cancel", s.cancelQuestion, rein.RoleAgent, rein.RoleAdmin)

	s.route("GET /v1/events", s.getEvents, rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor)
	s.route("GET /v1/webhooks/deliveries", s.getDeliveries, rein.RoleAdmin)

	s.route("POST /v1/locks", s.postLock, rein.RoleAdmin)
	s.route("GET /v1/locks", s.listLocks, rein.RoleAdmin, rein.RoleAuditor, rein.RoleApprover)
	s.route("DELETE /v1/locks/{id}", s.deleteLock, rein.RoleAdmin)

	s.route("GET /v1/audit/checkpoint", s.getCheckpoint, rein.RoleAuditor, rein.RoleAdmin)
	s.route("GET /v1/audit/checkpoints", s.listCheckpoints, rein.RoleAuditor, rein.RoleAdmin)
	s.route("GET /v1/audit/entries", s.getEntries, rein.RoleAuditor, rein.RoleAdmin)
	s.route("GET /v1/audit/proof/inclusion", s.getInclusion, rein.RoleAuditor, rein.RoleAdmin)
	s.route("GET /v1/audit/proof/consistency", s.getConsistency, rein.RoleAuditor, rein.RoleAdmin)
	s.route("GET /v1/audit/keys", s.getAuditKeys, rein.RoleAuditor, rein.RoleAdmin)
	s.route("GET /v1/audit/receipts/{index}", s.getReceipt, rein.RoleAuditor, rein.RoleAdmin)
	s.route("POST /v1/audit/rotate-key", s.rotateKey, rein.RoleAdmin)

	s.route("GET /v1/policy", s.getPolicy, rein.RoleAdmin, rein.RoleAuditor)
	s.route("PUT /v1/policy", s.putPolicy, rein.RoleAdmin)
	s.route("POST /v1/policy/simulate", s.simulate, rein.RoleAdmin, rein.RoleAuditor)
	s.route("POST /v1/policy/replay", s.replayPolicy, rein.RoleAdmin, rein.RoleAuditor)

	if s.Slack != nil {
		s.handle("POST /v1/slack/interactivity", s.Slack)
	}
	if s.ApprovalLinks != nil {
		s.handle("GET /approve/{token}", s.ApprovalLinks)
		s.handle("POST /approve/{token}", s.ApprovalLinks)
	}

	s.route("POST /v1/keys", s.createKey, rein.RoleAdmin)
	s.route("GET /v1/keys", s.listKeys, rein.RoleAdmin)
	s.route("DELETE /v1/keys/{id}", s.revokeKey, rein.RoleAdmin)

	return http.HandlerFunc(s.serve)
}

// serve answers unknown paths and wrong methods with JSON errors, and counts requests.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.bodyDeadline(w, r)
	rw := &statusWriter{ResponseWriter: w, code: 200}
	_, pattern := s.mux.Handler(r)
	if pattern == "" && s.Console != nil && consolePath(r) {
		pattern = "console"
		s.Console.ServeHTTP(rw, r)
	} else if pattern == "" {
		pattern = "unmatched"
		if allow := s.allowed(r); len(allow) > 0 {
			rw.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(rw, rein.Errorf(rein.ECodeMethodNotAllowed, "%s is not supported on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
		} else {
			writeError(rw, rein.Errorf(rein.ECodeNotFound, "no such endpoint: %s %s (the API is under /v1/, see the API reference)", r.Method, r.URL.Path))
		}
	} else {
		s.mux.ServeHTTP(rw, r) // sets the path values that Handler leaves empty
	}
	s.requests.WithLabelValues(pattern, strconv.Itoa(rw.code)).Inc()
}

// consolePath reports whether the console answers r: GET and HEAD outside
// /v1/, and its sign-in and sign-out forms. Everything else stays with the
// API, whose errors are JSON.
func consolePath(r *http.Request) bool {
	p := r.URL.Path
	if p == "/v1" || strings.HasPrefix(p, "/v1/") {
		return false
	}
	return r.Method == http.MethodGet || r.Method == http.MethodHead || p == "/sign-in" || p == "/sign-out"
}

func (s *Server) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, p := s.mux.Handler(r2); p != "" {
			out = append(out, m)
		}
	}
	return out
}

// Sessions authenticates API requests made by the web console. ok is false
// when the request carries no session cookie; err is set when it carries
// one that is not valid, or lacks the CSRF token a state-changing request
// needs.
type Sessions interface {
	Authenticate(w http.ResponseWriter, r *http.Request) (key *rein.Key, ok bool, err error)
}

type handler func(w http.ResponseWriter, r *http.Request, key *rein.Key) error

// route registers an authenticated endpoint open to the given roles.
func (s *Server) route(pattern string, h handler, roles ...rein.Role) {
	s.handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		key, err := s.identify(w, r)
		if err == nil && !key.Has(roles...) {
			err = rein.Errorf(rein.ECodeForbidden, "key %q (roles %s) may not call %s; it needs one of: %s",
				key.Name, joinRoles(key.Roles), pattern, joinRoles(roles))
		}
		if err == nil {
			err = h(w, r, key)
		}
		if err != nil {
			if errorCode(err) == rein.ECodeInternal { // a client's mistake is its answer, not the server's error
				s.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, err)
		}
	}), roles...)
}

// identify finds the key of an API request: a bearer key in the
// Authorization header or, without one, the console's session cookie.
func (s *Server) identify(w http.ResponseWriter, r *http.Request) (*rein.Key, error) {
	if r.Header.Get("Authorization") == "" && s.Sessions != nil {
		if key, ok, err := s.Sessions.Authenticate(w, r); ok {
			return key, err
		}
	}
	return s.authenticate(r)
}

// authenticate finds the bearer key of a request. The agent entry points
// (hooks, ACS) take only bearer keys.
func (s *Server) authenticate(r *http.Request) (*rein.Key, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, rein.Errorf(rein.ECodeUnauthenticated, "missing Authorization header; send `Authorization: Bearer <key>`")
	}
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return nil, rein.Errorf(rein.ECodeUnauthenticated, "the Authorization header must be `Bearer <key>`")
	}
	hash := rein.HashSecret(strings.TrimSpace(secret))
	key, err := s.KeyStore.KeyBySecretHash(r.Context(), hash)
	if errors.Is(err, rein.ErrNotFound) {
		return nil, rein.Errorf(rein.ECodeUnauthenticated, "the key is not recognised or has been revoked")
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot check the key: the store is unavailable; retry later")
	}
	if subtle.ConstantTimeCompare([]byte(key.SecretHash), []byte(hash)) != 1 {
		return nil, rein.Errorf(rein.ECodeUnauthenticated, "the key is not recognised or has been revoked")
	}
	return key, nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if s.Ready != nil {
		if err := s.Ready(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "reason": err.Error()})
			return
		}
	}
	out := map[string]any{"status": "ready"}
	if s.ReadyDetail != nil {
		if d := s.ReadyDetail(); len(d) > 0 {
			out["detail"] = d // ready, with something an operator should know (a refused policy file)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// statusCode maps error codes to HTTP statuses.
func statusCode(code string) int {
	switch code {
	case rein.ECodeBadRequest:
		return http.StatusBadRequest
	case rein.ECodeUnauthenticated:
		return http.StatusUnauthorized
	case rein.ECodeForbidden:
		return http.StatusForbidden
	case rein.ECodeNotFound:
		return http.StatusNotFound
	case rein.ECodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case rein.ECodeConflict, rein.ECodeStaleRevision:
		return http.StatusConflict
	case rein.ECodeGone:
		return http.StatusGone
	case rein.ECodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case rein.ECodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errorBody is the error shape of api.md, with optional details.
type errorBody struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Problems any    `json:"problems,omitempty"`
	Details  any    `json:"details,omitempty"`
}

// errorCode is the code of err's answer: rein.ErrorCode, except that a
// policy's problems are the client's (bad_request).
func errorCode(err error) string {
	var ps policy.Problems
	if errors.As(err, &ps) {
		return rein.ECodeBadRequest
	}
	return rein.ErrorCode(err)
}

func writeError(w http.ResponseWriter, err error) {
	body := errorBody{Code: rein.ErrorCode(err), Message: rein.ErrorMessage(err)}
	var re *rein.Error
	if errors.As(err, &re) {
		body.Details = re.Details
	}
	var ps policy.Problems
	if errors.As(err, &ps) {
		body.Code, body.Message, body.Problems = rein.ECodeBadRequest, "the policy does not compile: "+ps.Error(), ps
	}
	switch body.Code {
	case rein.ECodeUnavailable:
		w.Header().Set("Retry-After", "1")
	case rein.ECodeUnauthenticated:
		w.Header().Set("WWW-Authenticate", `Bearer realm="rein"`)
	}
	writeJSON(w, statusCode(body.Code), map[string]any{"error": body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// DefaultBodyTimeout is how long a request body may take to arrive after
// its headers when Server.BodyTimeout is not set. The header read has its
// own limit (http.Server.ReadHeaderTimeout, set by rein serve).
const DefaultBodyTimeout = httpbody.DefaultTimeout

// bodyDeadline bounds the read of the request's body (httpbody.Deadline):
// long answers after it, and requests without a body (event streams,
// long-polls), are not cut.
func (s *Server) bodyDeadline(w http.ResponseWriter, r *http.Request) {
	httpbody.Deadline(w, r, s.BodyTimeout)
}

// readBody reads the (size-limited) body; too large is 413, a body that
// stalls past the body deadline is 400.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, rein.Errorf(rein.ECodeTooLarge, "the request body is over %d bytes; send a smaller one", tooBig.Limit)
	}
	var stalled httpbody.TimeoutError
	if errors.As(err, &stalled) {
		return nil, rein.Errorf(rein.ECodeBadRequest, "%s", stalled.Error())
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeBadRequest, "cannot read the request body: %v", err)
	}
	return body, nil
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func joinRoles(rs []rein.Role) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return strings.Join(out, ", ")
}
