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
	EndSession(ctx context.Context, id string) (*rein.Session, error)
}

// Gateway holds what every relayed session shares.
type Gateway struct {
	Rein Rein
	// Name prefixes tool names: rein sees "<Name>.<tool>".
	Name string
	// Wait is how long an asked call waits for its approval before the
	// client gets an error result naming the pending approval.
	Wait time.Duration
	// ProgressEvery is how often a held call reports progress to a client
	// that asked for it; zero means DefaultProgressEvery.
	ProgressEvery time.Duration
	// RequestTimeout bounds each request to rein (a wait: beyond the time
	// it asks for); zero means DefaultRequestTimeout. A rein that does not
	// answer in time gets the call refused, naming that.
	RequestTimeout time.Duration
	// SEP2848 shapes approvals offered as tasks after the draft SEP-2848
	// (io.modelcontextprotocol/tool-approval): an identical pending call
	// gets the same task, and a finished task's result says in _meta
	// whether the tool ran. Off until the draft is final.
	SEP2848 bool
	Log     *slog.Logger

	keyOnce sync.Once
	key     []byte // seals the requestState of input_required answers
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
	s := &relay{ctx: ctx, g: g, idPrefix: rand.Text()[:12], rein: bounded{g.Rein, g.requestTimeout()}, down: down, up: up, session: session, held: map[any]context.CancelFunc{}, asked: map[any]chan *jsonrpc.Response{}, askedUp: map[any]chan *jsonrpc.Response{}, discovers: map[any]bool{}}
	errs := make(chan error, 2)
	go func() { errs <- s.fromClient(ctx) }()
	go func() { errs <- s.fromServer(ctx) }()
	err := <-errs
	cancel()
	down.Close()
	up.Close()
	<-errs
	s.calls.Wait()
	s.end()
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// end records the end of the session in rein, so that the audit log shows
// where an agent's run through the gateway stopped. A session without checks
// has nothing to end.
func (s *relay) end() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	_, err := s.rein.EndSession(ctx, s.session)
	var ce *client.Error
	if err != nil && !(errors.As(err, &ce) && (ce.Code == rein.ECodeNotFound || ce.Code == rein.ECodeConflict)) {
		s.g.Log.Warn("mcp: the end of the session could not be recorded", "session", s.session, "err", err)
	}
}

// relay is one session: the client (down) and the server (up).
type relay struct {
	// ctx is the session's: writes use it, never a call's own context,
	// because an HTTP transport reads the answer under the context it was
	// sent with, and a call's context ends when rein's part is done.
	ctx      context.Context
	g        *Gateway
	rein     bounded
	down, up mcp.Connection
	session  string
	idPrefix string // of rein's own request ids: random, so neither side can guess the other's

	mu          sync.Mutex
	elicitation bool                           // the client accepts form elicitation requests
	held        map[any]context.CancelFunc     // tools/call requests waiting on rein, by id
	asked       map[any]chan *jsonrpc.Response // rein's own requests to the client, by id
	askedUp     map[any]chan *jsonrpc.Response // rein's own requests to the upstream, by id
	discovers   map[any]bool                   // the client's server/discover requests, by id
	tasks       map[string]*task               // pending approvals offered as tasks, by task id
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
			case "server/discover":
				if m.IsCall() {
					s.mu.Lock()
					s.discovers[m.ID.Raw()] = true
					s.mu.Unlock()
				}
			case "tasks/get", "tasks/cancel", "tasks/update":
				if answer := s.taskRequest(m); answer != nil {
					s.toClient(ctx, answer)
					continue
				}
			}
		case *jsonrpc.Response:
			if s.answered(s.asked, m) {
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
		if r, ok := msg.(*jsonrpc.Response); ok {
			if s.answered(s.askedUp, r) {
				continue
			}
			s.mu.Lock()
			discover := s.discovers[r.ID.Raw()]
			delete(s.discovers, r.ID.Raw())
			s.mu.Unlock()
			if discover {
				r.Result = s.g.advertise(r.Result)
			}
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
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Capabilities) == 0 {
		return
	}
	c := readCaps(p.Capabilities)
	s.mu.Lock()
	s.elicitation = c.Elicitation
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
		// A call without arguments is checked, approved, bound to its
		// approval and forwarded with {} alike.
		args = json.RawMessage("{}")
		params["arguments"] = args
	}
	if state, ok := reinState(params); ok {
		return s.resume(ctx, m, params, tool, args, state, readMeta(params))
	}
	res, err := s.rein.Check(ctx, rein.CheckRequest{Tool: tool, Args: args, Session: s.session})
	if err != nil {
		return s.refuse(ctx, m, s.unreachable(tool, err))
	}
	ans := res.Answer(args)
	switch ans.Do {
	case rein.DoRun:
		return s.forward(ctx, m, params, ans.Args)
	case rein.DoRetry:
		retry := ""
		if ans.RetryAfter > 0 {
			retry = fmt.Sprintf("; retry after %s", ans.RetryAfter.Round(time.Millisecond))
		}
		return s.refuse(ctx, m, fmt.Sprintf("rein rate-limited %s: %s%s", tool, ans.Reason, retry))
	case rein.DoWait:
		return s.ask(ctx, m, params, tool, res, readMeta(params))
	}
	return s.refuse(ctx, m, fmt.Sprintf("rein denied %s: %s", tool, ans.Reason))
}

// ask gets a person's decision. The client's user is asked when the rule
// names "client" among its approvers and the client can show a form: by
// an input_required result on protocol 2026-07-28, by an elicitation
// request before it. Otherwise a client that declared the Tasks extension
// gets the pending approval as a task, and any other waits for rein's
// approvers for up to Wait.
func (s *relay) ask(ctx context.Context, m *jsonrpc.Request, params map[string]json.RawMessage, tool string, res *rein.CheckResponse, meta callMeta) jsonrpc.Message {
	if res.Approval == nil {
		return s.refuse(ctx, m, fmt.Sprintf("rein asks for an approval of %s but named none; the call was not forwarded", tool))
	}
	id := res.Approval.ID
	if meta.stateless() {
		caps := clientCaps{}
		if meta.Caps != nil {
			caps = *meta.Caps
		}
		a, err := s.rein.Approval(ctx, id)
		if err != nil {
			return s.refuse(ctx, m, s.unreachable(tool, err))
		}
		if approval.AsksClient(a) && caps.Elicitation {
			return s.inputRequired(m, tool, a, params["arguments"])
		}
		if caps.Tasks {
			return s.startTask(m, params, tool, a, res.Reason)
		}
		return s.await(ctx, m, params, tool, id, res.Reason, res.Approval.URL, meta)
	}
	s.mu.Lock()
	canElicit := s.elicitation
	s.mu.Unlock()
	if canElicit {
		a, err := s.rein.Approval(ctx, id)
		if err != nil {
			return s.refuse(ctx, m, s.unreachable(tool, err))
		}
		if approval.AsksClient(a) {
			stop := s.progress(meta.ProgressToken, fmt.Sprintf("rein asks the client's user to approve %s (approval %s)", tool, id))
			answer := s.askClient(ctx, m, tool, a)
			stop()
			if answer != nil {
				return answer
			}
		}
	}
	return s.await(ctx, m, params, tool, id, res.Reason, res.Approval.URL, meta)
}

// await waits up to Wait for rein's decision on approval id, reporting
// progress meanwhile, and forwards the call once it may run.
func (s *relay) await(ctx context.Context, m *jsonrpc.Request, params map[string]json.RawMessage, tool, id, reason, url string, meta callMeta) jsonrpc.Message {
	// The client's request time-out runs meanwhile: progress resets it in
	// clients that allow that (the TypeScript SDK's resetTimeoutOnProgress).
	stop := s.progress(meta.ProgressToken, fmt.Sprintf("rein waits for approval %s of %s: %s", id, tool, reason))
	defer stop()
	deadline := time.Now().Add(s.g.Wait)
	for {
		left := time.Until(deadline)
		wr, err := s.rein.Wait(ctx, id, max(0, min(left, rein.MaxWaitMS*time.Millisecond)).Milliseconds())
		if err != nil {
			return s.refuse(ctx, m, s.unreachable(tool, err))
		}
		ans := wr.Answer(params["arguments"])
		switch ans.Do {
		case rein.DoRun:
			stop()
			return s.forward(ctx, m, params, ans.Args)
		case rein.DoWait:
			if time.Until(deadline) > 0 {
				continue
			}
			where := ""
			if url != "" {
				where = " (" + url + ")"
			}
			return s.refuse(ctx, m, fmt.Sprintf("%s needs approval %s%s: %s. Nobody decided within %s; once it is approved, call the tool again.",
				tool, id, where, reason, s.g.Wait))
		default:
			return s.refuse(ctx, m, fmt.Sprintf("rein did not approve %s (approval %s, %s): %s", tool, id, wr.Status, wr.Reason))
		}
	}
}

// askClient asks the client's user with a form elicitation request (the
// pattern before protocol 2026-07-28). It returns nil when the vote is in
// and rein's decision is to be waited for.
func (s *relay) askClient(ctx context.Context, m *jsonrpc.Request, tool string, a *rein.Approval) jsonrpc.Message {
	form := approvalForm(tool, a)
	delete(form, "mode") // form was the only mode before 2025-11-25
	params, _ := json.Marshal(form)
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
	return s.vote(ctx, m, tool, a, r.Action, r.Content.Note)
}

// vote records the client user's answer: accept approves, decline rejects,
// anything else (cancel: the user dismissed the form) withdraws the
// approval. It returns nil when the vote is in.
func (s *relay) vote(ctx context.Context, m *jsonrpc.Request, tool string, a *rein.Approval, action, note string) jsonrpc.Message {
	var err error
	switch action {
	case "accept":
		_, err = s.rein.ClientVote(ctx, a.ID, approval.Approve, note)
	case "decline":
		if note == "" {
			note = "declined in the MCP client"
		}
		_, err = s.rein.ClientVote(ctx, a.ID, approval.Reject, note)
	default:
		if _, err := s.rein.Cancel(ctx, a.ID); err != nil {
			return s.refuse(ctx, m, s.unreachable(tool, err))
		}
		return s.refuse(ctx, m, fmt.Sprintf("the approval request for %s was dismissed; approval %s is cancelled and the call was not forwarded", tool, a.ID))
	}
	if err != nil {
		return s.refuse(ctx, m, fmt.Sprintf("the client's vote on approval %s was not recorded (%v); the call was not forwarded", a.ID, err))
	}
	return nil
}

// request sends rein's own request to the client and waits for its answer.
// Its ids ("rein-<random>-N") do not collide with the server's, which it
// relays with theirs.
func (s *relay) request(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	return s.send(ctx, s.down, s.asked, method, params)
}

// requestUp sends a call of rein's own to the upstream (an approved task's
// tools/call) and waits for its answer, which the client never sees. Only
// the upstream can answer it, and only the client the requests to the
// client: neither side can answer for the other (an upstream answering
// rein's form would vote for the client's user).
func (s *relay) requestUp(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	return s.send(ctx, s.up, s.askedUp, method, params)
}

func (s *relay) send(ctx context.Context, to mcp.Connection, waiting map[any]chan *jsonrpc.Response, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	id, _ := jsonrpc.MakeID(fmt.Sprintf("rein-%s-%d", s.idPrefix, s.next.Add(1)))
	ch := make(chan *jsonrpc.Response, 1)
	s.mu.Lock()
	waiting[id.Raw()] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(waiting, id.Raw())
		s.mu.Unlock()
	}()
	if err := to.Write(s.ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

// answered hands r to the waiter of one of rein's own requests in waiting
// and reports whether it was one. A second answer to the same request is
// dropped.
func (s *relay) answered(waiting map[any]chan *jsonrpc.Response, r *jsonrpc.Response) bool {
	s.mu.Lock()
	ch := waiting[r.ID.Raw()]
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- r:
	default:
	}
	return true
}

// forward sends the call upstream with exactly args, the arguments rein
// allowed, in place of the client's (re-encoded only when they differ); the
// upstream's answer is relayed as it comes.
func (s *relay) forward(ctx context.Context, m *jsonrpc.Request, params map[string]json.RawMessage, args json.RawMessage) jsonrpc.Message {
	out := m
	if len(args) == 0 {
		return s.refuse(ctx, m, "rein's answer carries no arguments to run; the call was not forwarded")
	}
	if !jsonEqual(args, params["arguments"]) {
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
	result := map[string]any{
		"content": []map[string]string{{"type": "text", "text": reason}},
		"isError": true,
	}
	if requestMeta(m).stateless() {
		// 2026-07-28 requires resultType on every result; a client on it
		// rejects a result without one instead of showing the reason.
		result["resultType"] = "complete"
	}
	b, _ := json.Marshal(result)
	return &jsonrpc.Response{ID: m.ID, Result: b}
}

// requestMeta reads the _meta of a request's params.
func requestMeta(m *jsonrpc.Request) callMeta {
	var params map[string]json.RawMessage
	if json.Unmarshal(m.Params, &params) != nil {
		return callMeta{}
	}
	return readMeta(params)
}

// unreachable says why rein gave no usable answer, for the call's refusal.
func (s *relay) unreachable(tool string, err error) string {
	var ce *client.Error
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ce):
		msg := ce.Message
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return fmt.Sprintf("rein refused the check of %s (%s: %s); the call was not forwarded", tool, ce.Code, msg)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("rein did not answer within %s; %s was not forwarded", s.rein.timeout, tool)
	case errors.Is(err, context.Canceled):
		return "the call was cancelled"
	case errors.As(err, &syntax), errors.As(err, &typ):
		return fmt.Sprintf("rein's answer could not be read (%v); %s was not forwarded", strings.TrimPrefix(err.Error(), "rein at "), tool)
	}
	return fmt.Sprintf("rein is unreachable (%v); %s was not forwarded", strings.TrimPrefix(err.Error(), "rein at "), tool)
}

func jsonEqual(a, b json.RawMessage) bool {
	ca, err1 := rein.Canonical(a)
	cb, err2 := rein.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}
