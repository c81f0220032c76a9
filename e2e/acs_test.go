package e2e

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// acsReply is a JSON-RPC response from POST /acs.
type acsReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		Type          string         `json:"type"`
		ACSVersion    string         `json:"acs_version"`
		RequestID     string         `json:"request_id"`
		Decision      string         `json:"decision"`
		Reasoning     string         `json:"reasoning"`
		ReasonCodes   []string       `json:"reason_codes"`
		Payload       map[string]any `json:"payload"`
		PolicyData    map[string]any `json:"policy_data"`
		Modifications *struct {
			ParameterOverrides map[string]any `json:"parameter_overrides"`
		} `json:"modifications"`
		AskDetails *struct {
			Approver           string `json:"approver"`
			Question           string `json:"question"`
			TimeoutSeconds     int64  `json:"timeout_seconds"`
			TimeoutDisposition string `json:"timeout_disposition"`
		} `json:"ask_details"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// acsEnvelope builds a request as an ACS Observed Agent sends it.
func acsEnvelope(method, requestID string, at time.Time, session string, payload any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestID[:8], "method": method, "params": map[string]any{
		"acs_version": "0.1.0", "request_id": requestID, "timestamp": at.UTC().Format(time.RFC3339Nano),
		"metadata": map[string]any{"agent_id": "builder", "session_id": session, "platform": "test"},
		"payload":  payload,
	}})
	return string(b)
}

func toolCall(name string, args map[string]any) map[string]any {
	wrapped := map[string]any{}
	for k, v := range args {
		wrapped[k] = map[string]any{"value": v, "provenance": map[string]any{"source": "model", "trust": "untrusted"}}
	}
	return map[string]any{"tool": map[string]any{"name": name}, "arguments": wrapped}
}

func postACS(t *testing.T, url, key, body string) (int, acsReply) {
	t.Helper()
	code, out := httpDo(t, "POST", url+"/acs", key, []byte(body), "application/json")
	var r acsReply
	if err := json.Unmarshal(out, &r); err != nil || r.JSONRPC != "2.0" {
		t.Fatalf("POST /acs answered %d %s: not a JSON-RPC response", code, out)
	}
	if (r.Result == nil) == (r.Error == nil) {
		t.Fatalf("POST /acs: exactly one of result and error must be set: %s", out)
	}
	return code, r
}

// TestACSGuardian speaks the OWASP Agent Control Standard v0.1 to POST /acs.
func TestACSGuardian(t *testing.T) {
	e := newHookEnv(t)
	url, agent := e.s.URL, e.keys["builder"]
	session := uuid()
	now := time.Now()
	send := func(method string, payload any) acsReply {
		t.Helper()
		code, r := postACS(t, url, agent, acsEnvelope(method, uuid(), now, session, payload))
		if code != 200 {
			t.Fatalf("%s: HTTP %d", method, code)
		}
		return r
	}

	// Handshake.
	_, r := postACS(t, url, agent, acsEnvelope("handshake/hello", uuid(), now, session, map[string]any{
		"acs_versions_supported": []string{"0.1.0"}, "methods_implemented": []string{"steps/toolCallRequest", "steps/sessionStart", "steps/memoryStore"}}))
	if r.Result == nil || r.Result.Payload["negotiated_version"] != "0.1.0" || r.Result.Payload["on_decision_failure"] != "deny" {
		t.Fatalf("hello: %+v", r)
	}
	if m := fmt.Sprint(r.Result.Payload["methods_evaluated"]); m != "[steps/toolCallRequest steps/sessionStart]" {
		t.Errorf("methods_evaluated %s: rein evaluates what the agent implements and rein knows", m)
	}
	_, r = postACS(t, url, agent, acsEnvelope("handshake/hello", uuid(), now, session, map[string]any{"acs_versions_supported": []string{"9.0.0"}}))
	if r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("hello with an unsupported version: %+v", r)
	}

	if r := send("steps/sessionStart", map[string]any{"source": "startup"}); r.Result == nil || r.Result.Decision != "allow" {
		t.Fatalf("sessionStart: %+v", r)
	}
	// Allowed.
	allowID := uuid()
	_, r = postACS(t, url, agent, acsEnvelope("steps/toolCallRequest", allowID, now, session, toolCall("Bash", map[string]any{"command": "ls -la"})))
	if r.Result == nil || r.Result.Decision != "allow" || r.Result.RequestID != allowID || r.Result.ACSVersion != "0.1.0" || r.Result.Type != "final" {
		t.Fatalf("allowed call: %+v", r)
	}
	allowCheck, _ := r.Result.PolicyData["rein"].(map[string]any)["check_id"].(string)
	// Denied.
	r = send("steps/toolCallRequest", toolCall("Write", map[string]any{"file_path": "/etc/passwd", "content": "x"}))
	if r.Result == nil || r.Result.Decision != "deny" || !strings.Contains(r.Result.Reasoning, "outside the workspace") {
		t.Fatalf("denied call: %+v", r)
	}
	// Throttled is a deny with rate_limited.
	send("steps/toolCallRequest", toolCall("WebFetch", map[string]any{"url": "https://example.com", "prompt": "x"}))
	r = send("steps/toolCallRequest", toolCall("WebFetch", map[string]any{"url": "https://example.com/2", "prompt": "x"}))
	if r.Result == nil || r.Result.Decision != "deny" || !contains(r.Result.ReasonCodes, "rate_limited") {
		t.Fatalf("throttled call: %+v", r)
	}
	// Modified.
	r = send("steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "ls", "run_in_background": true}))
	if r.Result == nil || r.Result.Decision != "modify" || r.Result.Modifications == nil ||
		fmt.Sprint(r.Result.Modifications.ParameterOverrides) != "map[run_in_background:false]" {
		t.Fatalf("modified call: %+v", r)
	}
	// Asked.
	r = send("steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "rm -rf build"}))
	if r.Result == nil || r.Result.Decision != "ask" || r.Result.AskDetails == nil ||
		r.Result.AskDetails.TimeoutDisposition != "deny" || r.Result.AskDetails.TimeoutSeconds < 800 ||
		!strings.Contains(r.Result.AskDetails.Question, "apr_") {
		t.Fatalf("asked call: %+v", r.Result)
	}
	// Result of the allowed call, linked by request_id_ref.
	if r := send("steps/toolCallResult", map[string]any{"tool": map[string]any{"name": "Bash"}, "request_id_ref": allowID,
		"exit_status": "success", "outputs": []any{}}); r.Result == nil || r.Result.Decision != "allow" {
		t.Fatalf("toolCallResult: %+v", r)
	}
	var checks []struct{ Decision string }
	getJSON(t, url+"/v1/sessions/"+session+"/checks", e.keys["alice"], &checks)
	if len(checks) != 6 {
		t.Errorf("the session holds %d checks, want the 6 tool calls: %+v", len(checks), checks)
	}
	// The result was recorded for the allowed check: a second one is a conflict.
	if code, body := httpDo(t, "POST", url+"/v1/checks/"+allowCheck+"/result", agent, []byte(`{"status":"succeeded"}`), "application/json"); code != 409 {
		t.Errorf("a second result for %s: %d %s; the ACS toolCallResult should have recorded the first", allowCheck, code, body)
	}

	// Replays: the same request_id again, also after a restart.
	replay := acsEnvelope("steps/toolCallRequest", allowID, now, session, toolCall("Bash", map[string]any{"command": "ls -la"}))
	if _, r := postACS(t, url, agent, replay); r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("replayed request_id: %+v", r)
	}
	stepID := uuid()
	userMsg := acsEnvelope("steps/userMessage", stepID, now, session, map[string]any{"content": "hello"})
	postACS(t, url, agent, userMsg)
	if _, r := postACS(t, url, agent, userMsg); r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("replayed userMessage: %+v", r)
	}
	e.s.stop()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, pol, hooksPolicy)
	e.s = startServer(t, e.s.Data, nil, "--policy", pol)
	url = e.s.URL
	if _, r := postACS(t, url, agent, replay); r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("replayed toolCallRequest after a restart: %+v", r)
	}

	// Timestamps out of the window, either way, and unreadable.
	for _, at := range []time.Time{now.Add(-10 * time.Minute), now.Add(10 * time.Minute)} {
		if _, r := postACS(t, url, agent, acsEnvelope("steps/toolCallRequest", uuid(), at, session, toolCall("Bash", map[string]any{"command": "ls"}))); r.Error == nil || r.Error.Code != -32006 {
			t.Fatalf("timestamp %s: %+v", at, r)
		}
	}
	bad := strings.Replace(acsEnvelope("steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"})), now.UTC().Format(time.RFC3339Nano), "yesterday", 1)
	if _, r := postACS(t, url, agent, bad); r.Error == nil || r.Error.Code != -32006 {
		t.Fatalf("unreadable timestamp: %+v", r)
	}

	// Transport and envelope errors.
	if code, r := postACS(t, url, "", acsEnvelope("steps/toolCallRequest", uuid(), now, session, toolCall("Bash", nil))); code != 401 || r.Error.Code != -32000 {
		t.Errorf("no key: %d %+v", code, r)
	}
	if code, r := postACS(t, url, e.keys["alice"], acsEnvelope("system/ping", uuid(), now, session, nil)); code != 403 || r.Error == nil {
		t.Errorf("an approver key: %d %+v", code, r)
	}
	if code, r := postACS(t, url, agent, `{"jsonrpc":`); code != 400 || r.Error.Code != -32700 {
		t.Errorf("parse error: %d %+v", code, r)
	}
	if _, r := postACS(t, url, agent, `[`+acsEnvelope("system/ping", uuid(), now, session, nil)+`]`); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("batch: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope("agbom/inventory", uuid(), now, session, nil)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown method: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope("steps/memoryStore", uuid(), now, session, map[string]any{})); r.Result == nil || r.Result.Decision != "deny" {
		t.Errorf("a step rein does not evaluate is denied: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope("steps/toolCallRequest", uuid(), now, session, map[string]any{"tool": map[string]any{"name": "Bash"}, "arguments": map[string]any{"command": "ls"}})); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("an argument without value/provenance: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope("system/ping", uuid(), now, session, map[string]any{"echo": "hi"})); r.Result == nil || r.Result.Payload["echo"] != "hi" {
		t.Errorf("ping: %+v", r)
	}

	// The lifecycle steps are in the audit log, under the session.
	code, ndjson := httpDo(t, "GET", url+"/v1/audit/entries?start=0&limit=1000", e.s.adminKey(), nil, "")
	if code != 200 {
		t.Fatalf("audit entries: %d %s", code, ndjson)
	}
	steps := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(ndjson)), "\n") {
		var en struct {
			Kind    string
			Subject string
			Data    map[string]any
		}
		json.Unmarshal([]byte(line), &en)
		if en.Kind == "agent.step" && en.Subject == session {
			steps[fmt.Sprint(en.Data["step"])] = true
			if _, ok := en.Data["payload_sha256"]; !ok {
				t.Errorf("agent.step without the payload's hash: %+v", en)
			}
		}
	}
	for _, want := range []string{"steps/sessionStart", "steps/toolCallResult", "steps/userMessage"} {
		if !steps[want] {
			t.Errorf("no agent.step entry for %s in the audit log (have %v)", want, steps)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
