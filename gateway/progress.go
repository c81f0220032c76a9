package gateway

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultWait is how long a call held for an approval waits by default. It
// stays under the 60 s request timeout of the official SDKs' clients, so
// that a client which does not reset its timeout on progress still gets
// rein's answer naming the pending approval instead of a time-out.
const DefaultWait = 50 * time.Second

// DefaultProgressEvery is how often a held call reports progress to a
// client that asked for it (a progressToken in the request's _meta).
const DefaultProgressEvery = 5 * time.Second

// progress sends notifications/progress for token now and every interval
// until the returned stop is called; stop returns once the last one is
// written, so that no progress follows the call's answer (as MCP asks).
// Without a token it does nothing: the client did not ask for progress.
func (s *relay) progress(token any, message string) (stop func()) {
	if token == nil {
		return func() {}
	}
	every := s.g.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for n := 1; ; n++ {
			params, _ := json.Marshal(map[string]any{"progressToken": token, "progress": n, "message": message})
			s.toClient(s.ctx, &jsonrpc.Request{Method: "notifications/progress", Params: params})
			select {
			case <-done:
				return
			case <-s.ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// callMeta is what a tools/call carries in params._meta: the progress
// token, and from clients on protocol 2026-07-28 (which have no
// initialize) the protocol version and capabilities of each request.
type callMeta struct {
	ProgressToken any
	Version       string
	Caps          *clientCaps
}

// tasksExtension names the Tasks extension in capabilities (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

// statelessVersion is the first protocol version without initialize,
// whose servers ask the client with input_required results instead of
// requests of their own.
const statelessVersion = "2026-07-28"

func readMeta(params map[string]json.RawMessage) callMeta {
	// On protocol 2026-07-28 the protocol version and capabilities are
	// keys of each request's _meta (its basic/index "_meta").
	var m struct {
		ProgressToken any             `json:"progressToken"`
		Version       string          `json:"io.modelcontextprotocol/protocolVersion"`
		Caps          json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(params["_meta"], &m) != nil {
		return callMeta{}
	}
	cm := callMeta{Version: m.Version}
	// MCP allows a string or an integer token; anything else is not one.
	switch m.ProgressToken.(type) {
	case string, float64:
		cm.ProgressToken = m.ProgressToken
	}
	if len(m.Caps) > 0 {
		c := readCaps(m.Caps)
		cm.Caps = &c
	}
	return cm
}

// stateless reports whether the call speaks protocol 2026-07-28 or later
// (versions are dates, so they compare as strings).
func (m callMeta) stateless() bool { return m.Version >= statelessVersion }

// clientCaps is what the gateway needs of a client's capabilities.
type clientCaps struct {
	Elicitation bool // form elicitation
	Tasks       bool // the io.modelcontextprotocol/tasks extension
}

func readCaps(raw json.RawMessage) clientCaps {
	var p struct {
		Elicitation *struct {
			Form *json.RawMessage `json:"form"`
			URL  *json.RawMessage `json:"url"`
		} `json:"elicitation"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return clientCaps{}
	}
	e := p.Elicitation
	_, tasks := p.Extensions[tasksExtension]
	// {} (before modes existed) means form; with modes, form must be named.
	return clientCaps{Elicitation: e != nil && (e.Form != nil || e.URL == nil), Tasks: tasks}
}
