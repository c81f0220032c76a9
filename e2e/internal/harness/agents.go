package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// The real coding agents, from npm (e2e/agents), run headless against
// ModelStandIn, a local stand-in for the model's API that answers each turn
// with the next scripted Bash command and, once they have all been run, a
// closing text, so that a test can see what the agent ran and what each
// command gave back.

// AgentBinary returns the native binary an agent's npm package ships for
// this machine ("claude" or "codex"): Claude Code's package copies it in
// place by a postinstall script, which npm may be set not to run, so it is
// taken from the platform package directly.
func AgentBinary(t testing.TB, which string) string {
	t.Helper()
	dir := testenv.NodeModules(t, filepath.Join(ModuleRoot, "e2e", "agents"))
	var pattern string
	switch which {
	case "claude":
		pattern = filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code-linux-*", "claude")
	case "codex":
		pattern = filepath.Join(dir, "node_modules", "@openai", "codex-linux-*", "vendor", "*", "bin", "codex")
	}
	found, _ := filepath.Glob(pattern)
	for _, f := range found {
		if strings.Contains(f, "musl") == (which == "codex") {
			return f
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	t.Fatalf("no %s binary for this machine under %s", which, dir)
	return ""
}

// ModelStandIn is the model: its tool calls are Bash with each command in
// turn.
type ModelStandIn struct {
	URL      string
	commands []string

	mu       sync.Mutex
	requests []string // method and path of each request, and what it answered
	results  []string // the tool results the agent sent back, in order
}

// NewModelStandIn serves the stand-in on 127.0.0.1 until the test ends.
func NewModelStandIn(t testing.TB, commands ...string) *ModelStandIn {
	m := &ModelStandIn{commands: commands}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

func (m *ModelStandIn) log(s string) {
	m.mu.Lock()
	m.requests = append(m.requests, s)
	m.mu.Unlock()
}

// Requests lists what the agent asked of the model.
func (m *ModelStandIn) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...)
}

// Results are the tool results the agent reported to the model, one per
// scripted command it ran or was refused, in order.
func (m *ModelStandIn) Results() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.results...)
}

func (m *ModelStandIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/v1/messages"):
		m.anthropic(w, body)
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/responses"):
		m.responses(w, body)
	default:
		m.log(r.Method + " " + r.URL.Path + " (404)")
		http.NotFound(w, r)
	}
}

// anthropicBlock is a content block of a Messages API message.
type anthropicBlock struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// text is a tool result's content, a string or text blocks.
func (b anthropicBlock) text() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	json.Unmarshal(b.Content, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// anthropic answers the Messages API: a turn whose request offers the Bash
// tool gets the next command not yet answered by a tool result; any other
// a closing text.
func (m *ModelStandIn) anthropic(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Tools    []struct{ Name string }
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
	}
	json.Unmarshal(body, &req)
	hasBash := false
	for _, t := range req.Tools {
		hasBash = hasBash || t.Name == "Bash"
	}
	var results []string
	for _, msg := range req.Messages {
		var blocks []anthropicBlock
		json.Unmarshal(msg.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_result" {
				r := b.text()
				if b.IsError {
					r = "(error) " + r
				}
				results = append(results, r)
			}
		}
	}
	m.mu.Lock()
	if len(results) > len(m.results) {
		m.results = results
	}
	m.mu.Unlock()
	id := fmt.Sprintf("msg_%d", time.Now().UnixNano())
	var blocks []map[string]any
	stop := "end_turn"
	if n := len(results); hasBash && n < len(m.commands) {
		blocks = []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", time.Now().UnixNano()), "name": "Bash",
			"input": map[string]any{"command": m.commands[n], "description": "run the scripted command"}}}
		stop = "tool_use"
	} else {
		blocks = []map[string]any{{"type": "text", "text": "done."}}
	}
	m.log(fmt.Sprintf("POST /v1/messages model=%s tools=%d bash=%v results=%d stop=%s", req.Model, len(req.Tools), hasBash, len(results), stop))
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, b := range blocks {
		if b["type"] == "tool_use" {
			input, _ := json.Marshal(b["input"])
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// responses answers OpenAI's Responses API as Codex streams it: a turn
// gets the next command not yet answered by a function call output (in
// the shape of whichever shell tool the request offers), any other a
// closing message.
func (m *ModelStandIn) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Model string `json:"model"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Type+":"+t.Name)
	}
	var results []string
	for _, in := range req.Input {
		if in.Type == "function_call_output" || in.Type == "custom_tool_call_output" {
			var s string
			if json.Unmarshal(in.Output, &s) != nil {
				s = string(bytes.TrimSpace(in.Output))
			}
			results = append(results, s)
		}
	}
	m.mu.Lock()
	if len(results) > len(m.results) {
		m.results = results
	}
	m.mu.Unlock()
	id := fmt.Sprintf("resp_%d", time.Now().UnixNano())
	var item map[string]any
	if n := len(results); n < len(m.commands) {
		for _, t := range req.Tools {
			var args any
			switch t.Name {
			case "exec_command":
				// As long as a command may take on a busy machine (Codex
				// caps it at its own maximum).
				args = map[string]any{"cmd": m.commands[n], "yield_time_ms": 300000}
			case "shell_command":
				args = map[string]any{"command": m.commands[n]}
			case "shell":
				args = map[string]any{"command": []string{"bash", "-lc", m.commands[n]}}
			default:
				continue
			}
			a, _ := json.Marshal(args)
			item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": t.Name, "arguments": string(a)}
			break
		}
	}
	if item == nil {
		item = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": "done.", "annotations": []any{}}}}
	}
	m.log(fmt.Sprintf("POST /responses model=%s tools=%v results=%d answer=%v", req.Model, names, len(results), item["type"]))
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("response.created", map[string]any{"response": map[string]any{"id": id}})
	event("response.output_item.done", map[string]any{"item": item, "output_index": 0})
	event("response.completed", map[string]any{"response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}
