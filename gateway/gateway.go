// Package gateway is rein's MCP gateway (integrations.md): a proxy between
// an MCP client and an MCP server that puts every tools/call through rein
// and passes everything else through unchanged.
//
// It relays JSON-RPC messages between two connections of the official Go
// SDK (stdio or streamable HTTP on either side) rather than re-serving the
// upstream's features, so that resources, prompts, notifications, progress,
// cancellation and anything a later protocol version adds reach the other
// side byte for byte. Only three things are read on the way: the client's
// initialize (does it support form elicitation?), tools/call (held until
// rein decides) and cancellations of held calls.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/client"
)

// Rein is what the gateway asks of rein; *client.Client is one.
type Rein interface {
	Check(ctx context.Context, req rein.CheckRequest) (*rein.CheckResponse, error)
	Approval(ctx context.Context, id string) (*rein.Approval, error)
	ClientVote(ctx context.Context, id, vote, message string) (*rein.Approval, error)
	Wait(ctx context.Context, id string, timeoutMS int64) (*client.WaitResult, error)
	Cancel(ctx context.Context, id string) (*rein.Approval, error)
}

// Gateway holds what every relayed session shares.
type Gateway struct {
	Rein Rein
	// Name prefixes tool names: rein sees "<Name>.<tool>".
	Name string
	// Wait is how long an asked call waits for its approval before the
	// client gets an error result naming the pending approval.
	Wait time.Duration
	Log  *slog.Logger
}

// Tool is the name rein sees for an upstream tool.
func (g *Gateway) Tool(name string) string { return g.Name + "." + name }

// NewSessionID returns a session id for a relay that has none from its
// transport (stdio): rein's session groups the checks of one connection.
func NewSessionID() string {
	b := make([]byte, 9)
	rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}

// Serve relays one MCP session until either side ends or ctx is done, and
// closes both connections.
func (g *Gateway) Serve(ctx context.Context, down, up mcp.Connection, session string) error {
	ctx, cancel := context.WithCancel(ctx)
	s := &relay{ctx: ctx, g: g, down: down, up: up, session: session, held: map[any]context.CancelFunc{}, asked: map[any]chan *jsonrpc.Response{}}
	errs := make(chan error, 2)
	go func() { errs <- s.fromClient(ctx) }()
	go func() { errs <- s.fromServer(ctx) }()
	err := <-errs
	cancel()
	down.Close()
	up.Close()
	<-errs
	s.calls.Wait()
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// relay is one session: the client (down) and the server (up).
type relay struct {
	// ctx is the session's: writes use it, never a call's own context,
	// because an HTTP transport reads the answer under the context it was
	// sent with, and a call's context ends when rein's part is done.
	ctx      context.Context
	g        *Gateway
	down, up mcp.Connection
	session  string

	mu          sync.Mutex
	elicitation bool                           // the client accepts form elicitation requests
	held        map[any]context.CancelFunc     // tools/call requests waiting on rein, by id
	asked       map[any]chan *jsonrpc.Response // rein's own requests to the client, by id
	next        atomic.Int64
	calls       sync.WaitGroup
}

func (s *relay) fromClient(ctx context.Context) error {
	for {
		msg, err := s.down.Read(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			switch m.Method {
			case "initialize":
				s.noteClient(m.Params)
			case "tools/call":
				if m.IsCall() {
					s.hold(ctx, m)
					continue
				}
			case "notifications/cancelled":
				s.cancelHeld(m.Params)
			}
		case *jsonrpc.Response:
			if ch := s.answered(m.ID); ch != nil {
				ch <- m
				continue
			}
		}
		if err := s.up.Write(ctx, msg); err != nil {
			return fmt.Errorf("upstream: %w", err)
		}
	}
}

func (s *relay) fromServer(ctx context.Context) error {
	for {
		msg, err := s.up.Read(ctx)
		if err != nil {
			return err
		}
		s.toClient(ctx, msg)
	}
}

// toClient writes to the client. A message the transport could not route
// (an HTTP stream that has ended) is logged; the session goes on.
func (s *relay) toClient(ctx context.Context, msg jsonrpc.Message) {
	if err := s.down.Write(ctx, msg); err != nil && ctx.Err() == nil {
		s.g.Log.Warn("mcp: cannot write to the client", "session", s.session, "err", err)
	}
}

// noteClient reads the client's capabilities from initialize.
func (s *relay) noteClient(params json.RawMessage) {
	var p struct {
		Capabilities struct {
			Elicitation *struct {
				Form *json.RawMessage `json:"form"`
				URL  *json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	e := p.Capabilities.Elicitation
	s.mu.Lock()
	// {} (before modes existed) means form; with modes, form must be named.
	s.elicitation = e != nil && (e.Form != nil || e.URL == nil)
	s.mu.Unlock()
}

// hold decides a tools/call on its own goroutine: the relay goes on
// meanwhile, since rein may wait minutes for a person.
func (s *relay) hold(ctx context.Context, m *jsonrpc.Request) {
	cctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.held[m.ID.Raw()] = cancel
	s.mu.Unlock()
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer func() {
			s.mu.Lock()
			delete(s.held, m.ID.Raw())
			s.mu.Unlock()
			cancel()
		}()
		if answer := s.decide(cctx, m); answer != nil && cctx.Err() == nil {
			s.toClient(ctx, answer)
		}
	}()
}

// cancelHeld stops waiting on rein for a call the client cancelled; the
// cancellation is passed on as well, and no answer is sent (as MCP asks).
func (s *relay) cancelHeld(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	s.mu.Lock()
	if cancel := s.held[id.Raw()]; cancel != nil {
		cancel()
	}
	s.mu.Unlock()
}

// decide puts one call through rein. It forwards the call upstream (whose
// answer the relay passes back) and returns nil, or returns the answer.
func (s *relay) decide(ctx context.Context, m *jsonrpc.Request) jsonrpc.Message {
	var params map[string]json.RawMessage
	var name string
	if err := json.Unmarshal(m.Params, &params); err != nil || json.Unmarshal(params["name"], &name) != nil || name == "" {
		return &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params with a tool name"}}
	}
	tool := s.g.Tool(name)
	args := params["arguments"]
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	res, err := s.g.Rein.Check(ctx, rein.CheckRequest{Tool: tool, Args: args, Session: s.session})
	if err != nil {
		return s.refuse(ctx, m, unreachable(tool, err))
	}
	switch res.Decision {
	case rein.Allow:
		return s.forward(ctx, m, params, nil)
	case rein.Modify:
		return s.forward(ctx, m, params, res.Args)
	case rein.Deny:
		return s.refuse(ctx, m, fmt.Sprintf("rein denied %s: %s", tool, res.Reason))
	case rein.Throttle:
		retry := ""
		if res.RetryAfterMS != nil {
			retry = fmt.Sprintf("; retry after %s", (time.Duration(*res.RetryAfterMS) * time.Millisecond).Round(time.Millisecond))
		}
		return s.refuse(ctx, m, fmt.Sprintf("rein rate-limited %s: %s%s", tool, res.Reason, retry))
	case rein.Ask:
		return s.ask(ctx, m, params, tool, res)
	}
	return s.refuse(ctx, m, fmt.Sprintf("rein answered %q for %s, which the gateway does not know; the call was not forwarded", res.Decision, tool))
}

// ask gets a person's decision: the client's user by a form elicitation
// when the client supports it and the rule names "client" among its
// approvers, else rein's approvers, waited on for up to Wait.
func (s *relay) ask(ctx context.Context, m *jsonrpc.Request, params map[string]json.RawMessage, tool string, res *rein.CheckResponse) jsonrpc.Message {
	if res.Approval == nil {
		return s.refuse(ctx, m, fmt.Sprintf("rein asks for an approval of %s but named none; the call was not forwarded", tool))
	}
	id := res.Approval.ID
	s.mu.Lock()
	canElicit := s.elicitation
	s.mu.Unlock()
	if canElicit {
		a, err := s.g.Rein.Approval(ctx, id)
		if err != nil {
			return s.refuse(ctx, m, unreachable(tool, err))
		}
		if approval.AsksClient(a) {
			if answer := s.askClient(ctx, m, tool, a); answer != nil {
				return answer
			}
		}
	}
	deadline := time.Now().Add(s.g.Wait)
	for {
		left := time.Until(deadline)
		wr, err := s.g.Rein.Wait(ctx, id, max(0, min(left, rein.MaxWaitMS*time.Millisecond)).Milliseconds())
		if err != nil {
			return s.refuse(ctx, m, unreachable(tool, err))
		}
		switch wr.Decision {
		case rein.Allow:
			return s.forward(ctx, m, params, wr.RunArgs)
		case rein.Ask:
			if time.Until(deadline) > 0 {
				continue
			}
			where := ""
			if res.Approval.URL != "" {
				where = " (" + res.Approval.URL + ")"
			}
			return s.refuse(ctx, m, fmt.Sprintf("%s needs approval %s%s: %s. Nobody decided within %s; once it is approved, call the tool again.",
				tool, id, where, res.Reason, s.g.Wait))
		default:
			return s.refuse(ctx, m, fmt.Sprintf("rein did not approve %s (approval %s, %s): %s", tool, id, wr.Status, wr.Reason))
		}
	}
}

// askClient asks the client's user with a form elicitation and relays the
// answer as the client's vote: accept approves, decline rejects, cancel
// withdraws the approval. It returns nil when the vote is in and rein's
// decision is to be waited for.
func (s *relay) askClient(ctx context.Context, m *jsonrpc.Request, tool string, a *rein.Approval) jsonrpc.Message {
	args, _ := json.MarshalIndent(json.RawMessage(a.Args), "", "  ")
	msg := fmt.Sprintf("rein: %s needs your approval.\nReason: %s\nArguments:\n%s\nAccept to approve this exact call, decline to reject it.", tool, a.Reason, args)
	params, _ := json.Marshal(map[string]any{
		"message": msg,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"note": map[string]any{"type": "string", "title": "Note", "description": "Why (optional; kept in rein's audit log)"},
		}},
	})
	reply, err := s.request(ctx, "elicitation/create", params)
	if err != nil {
		return s.refuse(ctx, m, fmt.Sprintf("%s needs approval %s and the client could not be asked: %v", tool, a.ID, err))
	}
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Note string `json:"note"`
		} `json:"content"`
	}
	if reply.Error != nil || json.Unmarshal(reply.Result, &r) != nil {
		return s.refuse(ctx, m, fmt.Sprintf("%s needs approval %s and the client's answer was not usable (%v)", tool, a.ID, reply.Error))
	}
	switch r.Action {
	case "accept":
		_, err = s.g.Rein.ClientVote(ctx, a.ID, approval.Approve, r.Content.Note)
	case "decline":
		note := r.Content.Note
		if note == "" {
			note = "declined in the MCP client"
		}
		_, err = s.g.Rein.ClientVote(ctx, a.ID, approval.Reject, note)
	default: // cancel: the user dismissed the request
		if _, err := s.g.Rein.Cancel(ctx, a.ID); err != nil {
			return s.refuse(ctx, m, unreachable(tool, err))
		}
		return s.refuse(ctx, m, fmt.Sprintf("the approval request for %s was dismissed; approval %s is cancelled and the call was not forwarded", tool, a.ID))
	}
	if err != nil {
		return s.refuse(ctx, m, fmt.Sprintf("the client's vote on approval %s was not recorded (%v); the call was not forwarded", a.ID, err))
	}
	return nil
}

// request sends rein's own request to the client and waits for its answer.
// Its ids ("rein-<session>-N") do not collide with the server's, which it
// relays with theirs.
func (s *relay) request(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	id, _ := jsonrpc.MakeID(fmt.Sprintf("rein-%s-%d", s.session, s.next.Add(1)))
	ch := make(chan *jsonrpc.Response, 1)
	s.mu.Lock()
	s.asked[id.Raw()] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asked, id.Raw())
		s.mu.Unlock()
	}()
	if err := s.down.Write(s.ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answered returns the waiter of one of rein's own requests, if id is one.
func (s *relay) answered(id jsonrpc.ID) chan *jsonrpc.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[id.Raw()]
}

// forward sends the call upstream, with args in place of its arguments
// when rein changed them; the upstream's answer is relayed as it comes.
func (s *relay) forward(ctx context.Context, m *jsonrpc.Request, params map[string]json.RawMessage, args json.RawMessage) jsonrpc.Message {
	out := m
	if args != nil && !jsonEqual(args, params["arguments"]) {
		params["arguments"] = args
		p, err := json.Marshal(params)
		if err != nil {
			return s.refuse(ctx, m, "the changed arguments could not be encoded; the call was not forwarded")
		}
		out = &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: p}
	}
	if err := s.up.Write(s.ctx, out); err != nil {
		return &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the upstream MCP server is unavailable: " + err.Error()}}
	}
	return nil
}

// refuse answers a call with a tool error result: the model sees the
// reason, and the upstream never sees the call.
func (s *relay) refuse(ctx context.Context, m *jsonrpc.Request, reason string) jsonrpc.Message {
	s.g.Log.Info("mcp: call not forwarded", "session", s.session, "reason", reason)
	result, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": reason}},
		"isError": true,
	})
	return &jsonrpc.Response{ID: m.ID, Result: result}
}

func unreachable(tool string, err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("rein refused the check of %s (%s: %s); the call was not forwarded", tool, ce.Code, ce.Message)
	}
	if errors.Is(err, context.Canceled) {
		return "the call was cancelled"
	}
	return fmt.Sprintf("rein is unreachable (%v); %s was not forwarded", strings.TrimPrefix(err.Error(), "rein at "), tool)
}

func jsonEqual(a, b json.RawMessage) bool {
	ca, err1 := rein.Canonical(a)
	cb, err2 := rein.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}
