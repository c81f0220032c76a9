package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/internal/httpbody"
)

// Handler serves the gateway to MCP clients over streamable HTTP. Each
// client session gets the SDK's streamable server transport and its own
// upstream connection (for a command upstream: its own server process).
//
// Messages that the upstream sends within a call (progress, and rein's own
// elicitation requests) travel on the session's standalone GET stream, not
// on the call's POST stream: the relay sees messages, not the SDK's
// request contexts that route them.
type Handler struct {
	Gateway *Gateway
	// Upstream opens a connection to the upstream server for a new session.
	Upstream func(ctx context.Context) (mcp.Connection, error)
	// Ctx bounds every session; cancel it to end them all.
	Ctx context.Context
	// LoopbackOnly refuses requests whose Host or Origin is not a loopback
	// name: a web page the user visits cannot reach a gateway on
	// 127.0.0.1 by DNS rebinding, nor from a browser's cross-origin fetch.
	LoopbackOnly bool
	// BodyTimeout bounds how long a request body may take to arrive once
	// its headers have (httpbody.DefaultTimeout if zero); held calls,
	// whose answers come long after their bodies, are not cut.
	BodyTimeout time.Duration

	mu       sync.Mutex
	sessions map[string]*httpSession
}

type httpSession struct {
	transport *mcp.StreamableServerTransport
	cancel    context.CancelFunc
}

const sessionHeader = "Mcp-Session-Id"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	httpbody.Deadline(w, r, h.BodyTimeout)
	if h.LoopbackOnly && (!loopbackHost(r.Host) || !loopbackOrigin(r.Header.Get("Origin"))) {
		http.Error(w, "Forbidden: this gateway listens on a loopback address and serves only requests addressed to it (Host and Origin must be localhost, 127.0.0.1 or [::1])", http.StatusForbidden)
		return
	}
	id := r.Header.Get(sessionHeader)
	if id == "" {
		start, err := startsSession(r)
		if err != nil {
			w.Header().Set("Connection", "close") // the rest of the body may still come
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !start {
			// Protocol 2026-07-28's session-less requests (server/discover
			// first) land here too: the 400 makes their clients fall back to
			// initialize, and no upstream is started for a session that no
			// client would ever end.
			http.Error(w, "Bad Request: no Mcp-Session-Id; start a session with a POST of initialize (this gateway serves MCP over HTTP in sessions; protocol 2026-07-28 is served over stdio)", http.StatusBadRequest)
			return
		}
		s, err := h.open(r)
		if err != nil {
			http.Error(w, "the upstream MCP server is unavailable: "+err.Error(), http.StatusBadGateway)
			return
		}
		s.transport.ServeHTTP(w, r)
		return
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil {
		http.Error(w, "Not Found: no session "+id+"; start a new one", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodDelete {
		h.close(id)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.transport.ServeHTTP(w, r)
}

// maxInitialize bounds the body read to see whether a request starts a
// session; an initialize request is a few kilobytes.
const maxInitialize = 1 << 20

// startsSession reports whether a request is a POST of initialize, and puts
// the body back for the transport. A body that cannot be read (it stalled
// past the body deadline) is an error.
func startsSession(r *http.Request) (bool, error) {
	if r.Method != http.MethodPost {
		return false, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInitialize+1))
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("the request body could not be read: %w", err)
	}
	if len(body) > maxInitialize {
		return false, nil
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize", nil
}

// open starts a session: the transport, the upstream, and the relay.
func (h *Handler) open(r *http.Request) (*httpSession, error) {
	base := h.Ctx
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithCancel(base)
	up, err := h.Upstream(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	id := rand.Text()
	t := &mcp.StreamableServerTransport{SessionID: id}
	down, err := t.Connect(ctx)
	if err != nil {
		cancel()
		up.Close()
		return nil, err
	}
	s := &httpSession{transport: t, cancel: cancel}
	h.mu.Lock()
	if h.sessions == nil {
		h.sessions = map[string]*httpSession{}
	}
	h.sessions[id] = s
	h.mu.Unlock()
	go func() {
		if err := h.Gateway.Serve(ctx, down, up, id); err != nil {
			h.Gateway.Log.Warn("mcp: session ended", "session", id, "err", err)
		}
		h.close(id)
	}()
	return s, nil
}

func (h *Handler) close(id string) {
	h.mu.Lock()
	s := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if s != nil {
		s.cancel()
	}
}

// CloseAll ends every session.
func (h *Handler) CloseAll() {
	h.mu.Lock()
	ids := make([]string, 0, len(h.sessions))
	for id := range h.sessions {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.close(id)
	}
}

// loopbackHost reports whether a Host header names the loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOrigin accepts no Origin (not a browser) or a loopback one.
func loopbackOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && loopbackHost(u.Host)
}

// IsLoopback reports whether a listen address is on the loopback interface.
func IsLoopback(addr string) bool { return loopbackHost(addr) }
