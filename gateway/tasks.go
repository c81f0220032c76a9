package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/reinhq/rein"
)

// A client on protocol 2026-07-28 that declares the Tasks extension
// (SEP-2663, io.modelcontextprotocol/tasks) gets a pending approval as a
// task instead of a held request: the call is answered at once with a
// working task, rein's approvers decide meanwhile, and the client polls
// tasks/get for the tool's result. The tasks live as long as the client's
// connection to the gateway.

// toolApprovalExtension is the draft SEP-2848's extension.
const toolApprovalExtension = "io.modelcontextprotocol/tool-approval"

// dispositionMeta is SEP-2848's _meta key for whether an approved call ran.
const dispositionMeta = "io.modelcontextprotocol/tool-approval-disposition"

// taskPoll is the polling interval suggested to clients.
const taskPoll = time.Second

// taskRetention is how long a finished task's result stays retrievable
// past the approval's expiry.
const taskRetention = 10 * time.Minute

type task struct {
	ID       string
	approval string
	binding  string // tool and argument digest, for SEP-2848's deduplication
	created  time.Time
	expires  time.Time
	cancel   context.CancelFunc

	// Under relay.mu:
	claimed bool   // the call was sent upstream
	status  string // working, completed, failed, cancelled
	message string
	updated time.Time
	result  json.RawMessage
	err     *jsonrpc.Error
}

// wire renders the task as MCP's Task, with its result or error when done.
func (t *task) wire(resultType string) json.RawMessage {
	m := map[string]any{
		"resultType":     resultType,
		"taskId":         t.ID,
		"status":         t.status,
		"statusMessage":  t.message,
		"createdAt":      t.created.UTC().Format(time.RFC3339),
		"lastUpdatedAt":  t.updated.UTC().Format(time.RFC3339),
		"ttlMs":          max(0, t.expires.Add(taskRetention).Sub(t.created).Milliseconds()),
		"pollIntervalMs": taskPoll.Milliseconds(),
	}
	switch t.status {
	case "completed":
		m["result"] = t.result
	case "failed":
		m["error"] = t.err
	}
	b, _ := json.Marshal(m)
	return b
}

// startTask answers a call with a working task and waits for rein's
// decision on its own goroutine, bounded by the approval's expiry.
func (s *relay) startTask(m *jsonrpc.Request, params map[string]json.RawMessage, tool string, a *rein.Approval, reason string) jsonrpc.Message {
	binding := tool + " " + argsDigest(params["arguments"])
	s.mu.Lock()
	if s.g.SEP2848 {
		// SEP-2848: a repeated identical call gets the pending task.
		for _, t := range s.tasks {
			if t.binding == binding && t.status == "working" {
				w := t.wire("task")
				s.mu.Unlock()
				return &jsonrpc.Response{ID: m.ID, Result: w}
			}
		}
	}
	now := time.Now()
	expires := a.ExpiresAt
	if expires.IsZero() || expires.Before(now) {
		expires = now.Add(s.g.Wait)
	}
	ctx, cancel := context.WithDeadline(s.ctx, expires)
	t := &task{ID: "rein-task-" + rand.Text(), approval: a.ID, binding: binding, created: now, expires: expires, cancel: cancel,
		status: "working", updated: now, message: fmt.Sprintf("rein waits for approval %s of %s: %s", a.ID, tool, reason)}
	if s.tasks == nil {
		s.tasks = map[string]*task{}
	}
	s.tasks[t.ID] = t
	w := t.wire("task")
	s.mu.Unlock()

	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer cancel()
		s.runTask(ctx, t, m, params, tool)
	}()
	return &jsonrpc.Response{ID: m.ID, Result: w}
}

// runTask waits for the decision, then runs the call upstream at most once
// and keeps its answer as the task's result.
func (s *relay) runTask(ctx context.Context, t *task, m *jsonrpc.Request, params map[string]json.RawMessage, tool string) {
	for {
		wr, err := s.rein.Wait(ctx, t.approval, min(time.Until(t.expires), rein.MaxWaitMS*time.Millisecond).Milliseconds())
		if ctx.Err() != nil {
			// Cancelled (then the task is so already), or nobody decided
			// before the approval expired.
			s.finish(t, "completed", s.toolError(fmt.Sprintf("%s did not run: nobody decided on approval %s before it expired.", tool, t.approval), "denied-not-executed"), nil, "")
			return
		}
		if err != nil {
			s.finish(t, "completed", s.toolError(fmt.Sprintf("%s did not run: %s", tool, s.unreachable(tool, err)), "denied-not-executed"), nil, "")
			return
		}
		ans := wr.Answer(params["arguments"])
		switch ans.Do {
		case rein.DoWait:
			continue
		case rein.DoRun:
			if !s.claim(t, fmt.Sprintf("approval %s was approved; %s is running", t.approval, tool)) {
				return // cancelled first: the cancel wins, the tool never runs
			}
			call := params
			if !jsonEqual(ans.Args, params["arguments"]) {
				call = map[string]json.RawMessage{}
				for k, v := range params {
					call[k] = v
				}
				call["arguments"] = ans.Args
			}
			p, _ := json.Marshal(call)
			reply, err := s.requestUp(context.WithoutCancel(ctx), m.Method, p)
			switch {
			case err != nil:
				s.finish(t, "completed", s.toolError(fmt.Sprintf("%s was approved but whether it ran is unknown: %v", tool, err), "outcome-unknown"), nil, "")
			case reply.Error != nil:
				werr, ok := reply.Error.(*jsonrpc.Error)
				if !ok {
					werr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: reply.Error.Error()}
				}
				s.finish(t, "failed", nil, werr, "")
			default:
				s.finish(t, "completed", s.withDisposition(reply.Result), nil, "")
			}
			return
		default:
			s.finish(t, "completed", s.toolError(fmt.Sprintf("%s did not run: rein did not approve it (approval %s, %s): %s", tool, t.approval, wr.Status, wr.Reason), "denied-not-executed"), nil, "")
			return
		}
	}
}

// claim marks a working task's call as sent upstream, after which a
// cancel no longer stops it (SEP-2848's execution claim); it reports false
// when the task was cancelled first.
func (s *relay) claim(t *task, message string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.status != "working" {
		return false
	}
	t.claimed, t.message, t.updated = true, message, time.Now()
	return true
}

// finish ends a working task; a task no longer working (cancelled) stays
// as it is.
func (s *relay) finish(t *task, status string, result json.RawMessage, rpcErr *jsonrpc.Error, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.status != "working" {
		return
	}
	t.status, t.result, t.err, t.updated = status, result, rpcErr, time.Now()
	if message != "" {
		t.message = message
	} else {
		t.message = "rein's approval of this call is decided"
	}
}

// toolError is a tool result with isError set, and SEP-2848's disposition
// when that shape is on.
func (s *relay) toolError(text, disposition string) json.RawMessage {
	r := map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "isError": true, "resultType": "complete"}
	if s.g.SEP2848 {
		r["_meta"] = map[string]any{dispositionMeta: disposition}
	}
	b, _ := json.Marshal(r)
	return b
}

// withDisposition marks the upstream's result of an approved call.
func (s *relay) withDisposition(result json.RawMessage) json.RawMessage {
	if !s.g.SEP2848 {
		return result
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	var meta map[string]any
	json.Unmarshal(r["_meta"], &meta)
	if meta == nil {
		meta = map[string]any{}
	}
	var isErr bool
	json.Unmarshal(r["isError"], &isErr)
	meta[dispositionMeta] = "approved-executed"
	if isErr {
		meta[dispositionMeta] = "execution-error"
	}
	r["_meta"], _ = json.Marshal(meta)
	b, _ := json.Marshal(r)
	return b
}

// taskRequest answers tasks/get, tasks/update and tasks/cancel for rein's
// own tasks; it returns nil for any other task, which is the upstream's.
func (s *relay) taskRequest(m *jsonrpc.Request) *jsonrpc.Response {
	var p struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	t := s.tasks[p.TaskID]
	if t == nil {
		s.mu.Unlock()
		return nil
	}
	switch m.Method {
	case "tasks/get":
		w := t.wire("complete")
		s.mu.Unlock()
		return &jsonrpc.Response{ID: m.ID, Result: w}
	case "tasks/cancel":
		won := t.status == "working" && !t.claimed
		if won {
			t.status, t.updated, t.message = "cancelled", time.Now(), "cancelled by the client; the call did not run"
		}
		s.mu.Unlock()
		if won {
			t.cancel()
			ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
			defer cancel()
			if _, err := s.rein.Cancel(ctx, t.approval); err != nil {
				s.g.Log.Warn("mcp: the cancelled task's approval could not be withdrawn", "approval", t.approval, "err", err)
			}
		}
		return &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{"resultType":"complete"}`)}
	default: // tasks/update: rein's tasks ask for no input
		s.mu.Unlock()
		return &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{"resultType":"complete"}`)}
	}
}

// advertise adds the extensions the gateway serves itself to the
// upstream's server/discover result: Tasks, and with SEP2848 the draft's
// tool-approval extension.
func (g *Gateway) advertise(result json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(r["capabilities"], &caps) != nil || caps == nil {
		caps = map[string]json.RawMessage{}
	}
	var ext map[string]json.RawMessage
	if json.Unmarshal(caps["extensions"], &ext) != nil || ext == nil {
		ext = map[string]json.RawMessage{}
	}
	ext[tasksExtension] = json.RawMessage("{}")
	if g.SEP2848 {
		ext[toolApprovalExtension] = json.RawMessage("{}")
	}
	caps["extensions"], _ = json.Marshal(ext)
	r["capabilities"], _ = json.Marshal(caps)
	b, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return b
}
