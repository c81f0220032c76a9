package hooks

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/acs"
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
		ChainHash  string         `json:"chain_hash"`
		Signature  *acs.Signature `json:"signature"`
		AskDetails *struct {
			Approver           string `json:"approver"`
			Question           string `json:"question"`
			TimeoutSeconds     int64  `json:"timeout_seconds"`
			TimeoutDisposition string `json:"timeout_disposition"`
		} `json:"ask_details"`
	} `json:"result"`
	Error *struct {
		Code      int            `json:"code"`
		Message   string         `json:"message"`
		Signature *acs.Signature `json:"signature"`
	} `json:"error"`
}

func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// acsEnvelope builds a request as an ACS Observed Agent sends it, signed
// with the ACS-Core baseline: HMAC-SHA256 under the session key derived from
// the agent key, over the canonical envelope. An empty key leaves it unsigned.
func acsEnvelope(key, method, requestID string, at time.Time, session string, payload any) string {
	return acsSigned(key, map[string]any{"jsonrpc": "2.0", "id": requestID[:8], "method": method, "params": map[string]any{
		"acs_version": "0.1.0", "request_id": requestID, "timestamp": at.UTC().Format(time.RFC3339Nano),
		"metadata": map[string]any{"agent_id": "builder", "session_id": session, "platform": "test"},
		"payload":  payload,
	}})
}

// acsSigned encodes an envelope, with params.signature when key is set.
func acsSigned(key string, env map[string]any) string {
	b, _ := json.Marshal(env)
	if key == "" {
		return string(b)
	}
	params := env["params"].(map[string]any)
	session := params["metadata"].(map[string]any)["session_id"].(string)
	input, _, err := acs.SigningInput(b, "params")
	if err != nil {
		panic(err)
	}
	params["signature"] = acs.Signature{Algorithm: acs.AlgHMAC, Value: acs.Mac(acs.SessionKey(key, session), input), KeyID: "builder"}
	b, _ = json.Marshal(env)
	return string(b)
}

// acsHello is a ClientHello for the methods and profiles given.
func acsHello(methods []string, profiles []string, versions ...string) map[string]any {
	if len(versions) == 0 {
		versions = []string{"0.1.0"}
	}
	return map[string]any{"acs_versions_supported": versions, "methods_implemented": methods, "profiles_supported": profiles}
}

// acsHandshaken remembers the sessions acsToolCall has opened per server.
var acsHandshaken sync.Map

// acsToolCall sends a signed steps/toolCallRequest as an ACS agent does,
// opening the session with a handshake first when it has none.
func acsToolCall(t *testing.T, url, key, session string, args map[string]any) acsReply {
	t.Helper()
	if _, done := acsHandshaken.LoadOrStore(url+" "+key+" "+session, true); !done {
		if _, r := postACS(t, url, key, acsEnvelope(key, "handshake/hello", uuid(), time.Now(), session, acsHello(acsAllMethods, []string{"acs-core"}))); r.Result == nil {
			t.Fatalf("handshake: %+v", r.Error)
		}
	}
	_, r := postACS(t, url, key, acsEnvelope(key, "steps/toolCallRequest", uuid(), time.Now(), session, toolCall("fs.write_file", args)))
	return r
}

var acsAllMethods = []string{"steps/toolCallRequest", "steps/toolCallResult", "steps/sessionStart", "steps/userMessage", "steps/agentResponse", "steps/sessionEnd"}

func toolCall(name string, args map[string]any) map[string]any {
	wrapped := map[string]any{}
	for k, v := range args {
		wrapped[k] = map[string]any{"value": v, "provenance": map[string]any{"source": "model", "trust": "untrusted"}}
	}
	return map[string]any{"tool": map[string]any{"name": name}, "arguments": wrapped}
}

// postACS posts one envelope. Every answer to a request with a session is
// signed under that session's key, over the whole canonical answer: postACS
// checks that, so every exchange in these tests checks it.
func postACS(t *testing.T, url, key, body string) (int, acsReply) {
	t.Helper()
	code, out := harness.HTTPDo(t, "POST", url+"/acs", key, []byte(body), "application/json")
	var r acsReply
	if err := json.Unmarshal(out, &r); err != nil || r.JSONRPC != "2.0" {
		t.Fatalf("POST /acs answered %d %s: not a JSON-RPC response", code, out)
	}
	if (r.Result == nil) == (r.Error == nil) {
		t.Fatalf("POST /acs: exactly one of result and error must be set: %s", out)
	}
	var req struct {
		Method string
		Params struct {
			Metadata struct {
				SessionID string `json:"session_id"`
			}
		}
	}
	json.Unmarshal([]byte(body), &req)
	if code == 200 && req.Method != "system/ping" && req.Params.Metadata.SessionID != "" {
		holder := "result"
		if r.Error != nil {
			holder = "error"
		}
		input, sig, err := acs.SigningInput(out, holder)
		if err != nil || sig == nil || sig.Algorithm != acs.AlgHMAC || sig.Value != acs.Mac(acs.SessionKey(key, req.Params.Metadata.SessionID), input) {
			t.Fatalf("POST /acs %s: the answer is not signed under the session key: %v %+v\n%s", req.Method, err, sig, out)
		}
	}
	return code, r
}

// TestACSGuardian speaks the OWASP Agent Control Standard v0.1 to POST /acs.
func TestACSGuardian(t *testing.T) {
	e := newHookEnv(t)
	url, agent := e.S.URL, e.Keys["builder"]
	session := uuid()
	now := time.Now()
	send := func(method string, payload any) acsReply {
		t.Helper()
		code, r := postACS(t, url, agent, acsEnvelope(agent, method, uuid(), now, session, payload))
		if code != 200 {
			t.Fatalf("%s: HTTP %d", method, code)
		}
		return r
	}

	// Steps before a handshake are refused.
	early := acsEnvelope(agent, "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"}))
	if _, r := postACS(t, url, agent, early); r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("a step before the handshake: %+v", r)
	}
	// Handshake: the methods rein evaluates among those the agent implements,
	// and only the profiles both declare.
	other := uuid()
	_, r := postACS(t, url, agent, acsEnvelope(agent, "handshake/hello", uuid(), now, other, acsHello([]string{"steps/toolCallRequest", "steps/sessionStart", "steps/memoryStore"}, nil)))
	if r.Result == nil || r.Result.Payload["negotiated_version"] != "0.1.0" || r.Result.Payload["on_decision_failure"] != "deny" {
		t.Fatalf("hello: %+v", r)
	}
	if m := fmt.Sprint(r.Result.Payload["methods_evaluated"]); m != "[steps/toolCallRequest steps/sessionStart]" {
		t.Errorf("methods_evaluated %s: rein evaluates what the agent implements and rein knows", m)
	}
	if p := fmt.Sprint(r.Result.Payload["profiles_accepted"]); p != "[]" {
		t.Errorf("profiles_accepted %s for a client that declares no profile", p)
	}
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "steps/userMessage", uuid(), now, other, map[string]any{"content": "hi"})); r.Error == nil || r.Error.Code != -32003 {
		t.Errorf("a method the handshake did not negotiate: %+v", r)
	}
	_, r = postACS(t, url, agent, acsEnvelope(agent, "handshake/hello", uuid(), now, session, acsHello(acsAllMethods, []string{"acs-core", "acs-crypto"}, "9.0.0")))
	if r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("hello with an unsupported version: %+v", r)
	}
	_, r = postACS(t, url, agent, acsEnvelope(agent, "handshake/hello", uuid(), now, session, acsHello(acsAllMethods, []string{"acs-core", "acs-crypto"}, "0.1.1")))
	if r.Result == nil || r.Result.Payload["negotiated_version"] != "0.1.1" || fmt.Sprint(r.Result.Payload["profiles_accepted"]) != "[acs-core]" ||
		fmt.Sprint(r.Result.Payload["signature_algorithms_supported"]) != "[HMAC-SHA256]" {
		t.Fatalf("hello offering 0.1.1 and acs-core: %+v", r)
	}
	// The step refused for want of a handshake goes through once there is one.
	if _, r := postACS(t, url, agent, early); r.Result == nil || r.Result.Decision != "allow" {
		t.Fatalf("the early step after the handshake: %+v", r)
	}

	// The chain: an agent that keeps its requests recomputes every head rein
	// publishes (entry n is {entry_id: n, step_id: request_id, step_type:
	// method, request_hash, timestamp}, chained as ACS §8.2 says).
	chained := uuid()
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "handshake/hello", uuid(), now, chained, acsHello(acsAllMethods, []string{"acs-audit"}))); r.Result == nil || fmt.Sprint(r.Result.Payload["profiles_accepted"]) != "[acs-audit]" {
		t.Fatalf("hello declaring acs-audit: %+v", r)
	}
	prev := ""
	for i, step := range []struct {
		method  string
		payload any
	}{
		{"steps/sessionStart", map[string]any{"source": "startup"}},
		{"steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "ls"})},
		{"steps/toolCallRequest", toolCall("Write", map[string]any{"file_path": "/etc/passwd", "content": "x"})},
		{"steps/userMessage", map[string]any{"content": "thanks"}},
	} {
		id := uuid()
		body := acsEnvelope(agent, step.method, id, now, chained, step.payload)
		_, r := postACS(t, url, agent, body)
		rh, _ := acs.RequestHash([]byte(body))
		want, _ := acs.EntryHash(acs.Entry{EntryID: fmt.Sprint(i + 1), StepID: id, StepType: step.method, RequestHash: rh, Timestamp: now.UTC().Format(time.RFC3339Nano)}, prev)
		if r.Result == nil || r.Result.ChainHash != want {
			t.Fatalf("step %d (%s): chain_hash %+v, want %s recomputed from the requests", i+1, step.method, r.Result, want)
		}
		prev = want
	}

	// Signatures: missing, wrong, or over another envelope.
	unsigned := acsEnvelope("", "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"}))
	if _, r := postACS(t, url, agent, unsigned); r.Error == nil || r.Error.Code != -32004 {
		t.Fatalf("an unsigned step: %+v", r)
	}
	forged := acsEnvelope(e.Keys["alice"], "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"}))
	if _, r := postACS(t, url, agent, forged); r.Error == nil || r.Error.Code != -32004 {
		t.Fatalf("a step signed under another key: %+v", r)
	}
	lifted := strings.Replace(acsEnvelope(agent, "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"})), `"ls"`, `"ls /root"`, 1)
	if _, r := postACS(t, url, agent, lifted); r.Error == nil || r.Error.Code != -32004 {
		t.Fatalf("a step changed after signing: %+v", r)
	}
	// A step speaking another major version than the one negotiated.
	v1 := strings.Replace(acsEnvelope("", "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"})), `"acs_version":"0.1.0"`, `"acs_version":"1.0.0"`, 1)
	var env map[string]any
	json.Unmarshal([]byte(v1), &env)
	if _, r := postACS(t, url, agent, acsSigned(agent, env)); r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("a 1.0.0 step after a 0.1.x handshake: %+v", r)
	}
	// A repeated nonce under a fresh request id.
	nonce := strings.ReplaceAll(uuid(), "-", "")
	for i, want := range []int{0, -32005} {
		json.Unmarshal([]byte(acsEnvelope("", "steps/userMessage", uuid(), now, session, map[string]any{"content": "hi"})), &env)
		env["params"].(map[string]any)["nonce"] = nonce
		_, r := postACS(t, url, agent, acsSigned(agent, env))
		if (want == 0 && r.Result == nil) || (want != 0 && (r.Error == nil || r.Error.Code != want)) {
			t.Fatalf("nonce use %d: %+v", i+1, r)
		}
	}

	if r := send("steps/sessionStart", map[string]any{"source": "startup"}); r.Result == nil || r.Result.Decision != "allow" {
		t.Fatalf("sessionStart: %+v", r)
	}
	// Allowed.
	allowID := uuid()
	_, r = postACS(t, url, agent, acsEnvelope(agent, "steps/toolCallRequest", allowID, now, session, toolCall("Bash", map[string]any{"command": "ls -la"})))
	if r.Result == nil || r.Result.Decision != "allow" || r.Result.RequestID != allowID || r.Result.ACSVersion != "0.1.0" || r.Result.Type != "final" {
		t.Fatalf("allowed call: %+v", r)
	}
	allowCheck, _ := r.Result.PolicyData["rein"].(map[string]any)["check_id"].(string)
	head := r.Result.ChainHash
	if len(head) != 64 {
		t.Fatalf("the tool call answer carries no chain_hash: %+v", r.Result)
	}
	// Denied.
	r = send("steps/toolCallRequest", toolCall("Write", map[string]any{"file_path": "/etc/passwd", "content": "x"}))
	if r.Result == nil || r.Result.Decision != "deny" || !strings.Contains(r.Result.Reasoning, "outside the workspace") {
		t.Fatalf("denied call: %+v", r)
	}
	if r.Result.ChainHash == head || len(r.Result.ChainHash) != 64 {
		t.Errorf("the chain head did not move with the next step: %s", r.Result.ChainHash)
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
	harness.GetJSON(t, url+"/v1/sessions/"+session+"/checks", e.Keys["alice"], &checks)
	if len(checks) != 7 {
		t.Errorf("the session holds %d checks, want the 7 tool calls: %+v", len(checks), checks)
	}
	// The result was recorded for the allowed check: a second one is a conflict.
	if code, body := harness.HTTPDo(t, "POST", url+"/v1/checks/"+allowCheck+"/result", agent, []byte(`{"status":"succeeded"}`), "application/json"); code != 409 {
		t.Errorf("a second result for %s: %d %s; the ACS toolCallResult should have recorded the first", allowCheck, code, body)
	}

	// Replays: the same request_id again, also after a restart.
	replay := acsEnvelope(agent, "steps/toolCallRequest", allowID, now, session, toolCall("Bash", map[string]any{"command": "ls -la"}))
	if _, r := postACS(t, url, agent, replay); r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("replayed request_id: %+v", r)
	}
	stepID := uuid()
	userMsg := acsEnvelope(agent, "steps/userMessage", stepID, now, session, map[string]any{"content": "hello"})
	postACS(t, url, agent, userMsg)
	if _, r := postACS(t, url, agent, userMsg); r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("replayed userMessage: %+v", r)
	}
	e.S.Stop()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, hooksPolicy)
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	url = e.S.URL
	if _, r := postACS(t, url, agent, replay); r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("a step after a restart, before a new handshake: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "handshake/hello", uuid(), now, session, acsHello(acsAllMethods, []string{"acs-core"}))); r.Result == nil {
		t.Fatalf("handshake after a restart: %+v", r)
	}
	if _, r := postACS(t, url, agent, replay); r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("replayed toolCallRequest after a restart: %+v", r)
	}

	// Timestamps out of the window, either way, and unreadable.
	for _, at := range []time.Time{now.Add(-10 * time.Minute), now.Add(10 * time.Minute)} {
		if _, r := postACS(t, url, agent, acsEnvelope(agent, "steps/toolCallRequest", uuid(), at, session, toolCall("Bash", map[string]any{"command": "ls"}))); r.Error == nil || r.Error.Code != -32006 {
			t.Fatalf("timestamp %s: %+v", at, r)
		}
	}
	json.Unmarshal([]byte(strings.Replace(acsEnvelope("", "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", map[string]any{"command": "ls"})), now.UTC().Format(time.RFC3339Nano), "yesterday", 1)), &env)
	bad := acsSigned(agent, env)
	if _, r := postACS(t, url, agent, bad); r.Error == nil || r.Error.Code != -32006 {
		t.Fatalf("unreadable timestamp: %+v", r)
	}

	// Transport and envelope errors.
	if code, r := postACS(t, url, "", acsEnvelope(agent, "steps/toolCallRequest", uuid(), now, session, toolCall("Bash", nil))); code != 401 || r.Error.Code != -32000 {
		t.Errorf("no key: %d %+v", code, r)
	}
	if code, r := postACS(t, url, e.Keys["alice"], acsEnvelope(agent, "system/ping", uuid(), now, session, nil)); code != 403 || r.Error == nil {
		t.Errorf("an approver key: %d %+v", code, r)
	}
	if code, r := postACS(t, url, agent, `{"jsonrpc":`); code != 400 || r.Error.Code != -32700 {
		t.Errorf("parse error: %d %+v", code, r)
	}
	if _, r := postACS(t, url, agent, `[`+acsEnvelope(agent, "system/ping", uuid(), now, session, nil)+`]`); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("batch: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "agbom/inventory", uuid(), now, session, nil)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown method: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "steps/memoryStore", uuid(), now, session, map[string]any{})); r.Error == nil || r.Error.Code != -32003 {
		t.Errorf("a step rein does not evaluate is not negotiated: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "steps/toolCallRequest", uuid(), now, session, map[string]any{"tool": map[string]any{"name": "Bash"}, "arguments": map[string]any{"command": "ls"}})); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("an argument without value/provenance: %+v", r)
	}
	if _, r := postACS(t, url, agent, acsEnvelope(agent, "system/ping", uuid(), now, session, map[string]any{"echo": "hi"})); r.Result == nil || r.Result.Payload["echo"] != "hi" {
		t.Errorf("ping: %+v", r)
	}

	// The lifecycle steps are in the audit log, under the session.
	code, ndjson := harness.HTTPDo(t, "GET", url+"/v1/audit/entries?start=0&limit=1000", e.S.AdminKey(), nil, "")
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

// acsVectorPolicy is the mandate the corpus's scenarios describe, written as
// rein policy: the intent allows records.read (and the lookups the other
// families make), records.delete is outside it, records.write needs an
// approval, lookups have a budget of three per session, and the agent
// "no-approver" is one whose request the policy escalates (acs-f-9).
const acsVectorPolicy = `version: 1
default: deny
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - {id: lookup, when: 'tool == "records.lookup"', decision: allow}
  - {id: lookup-budget, when: 'tool == "records.lookup"', limit: {rate: 3, per: 1h, by: [session]}}
  - {id: read, when: 'tool == "records.read"', decision: allow}
  - {id: delete, when: 'tool == "records.delete"', decision: deny, reason: records.delete is outside the mandate}
  - {id: write, when: 'tool == "records.write"', decision: ask, reason: writes need an approval}
  - {id: escalate, when: 'agent == "builder/no-approver"', decision: ask, reason: this agent's steps need an approval}
`

// acsVector is one member of the vendored vectors-acs-core corpus.
type acsVector struct {
	ID           string
	Kind         string
	Family       string
	Requirements []string
	Expected     struct {
		Verdict   string
		Code      *string
		CodeValue *int
	}
	Payload map[string]json.RawMessage
}

// acsNotGuardian are the members whose subject is another party than the
// Guardian (the corpus's requirement roles), or that carry no request for a
// Guardian to answer, with the reason; they are not run.
var acsNotGuardian = map[string]string{
	"ACS-R-004": "the Observed Agent waiting for and honouring a decision (the payload is a Guardian answer, not a request)",
	"ACS-R-005": "the Observed Agent recording a step that proceeded without a decision",
	"ACS-R-008": "the framework computing trust of a generated record; no request",
	"ACS-R-010": "the framework producing provenance; no request",
	"ACS-R-012": "an approver answering ASK; rein's approvers can only approve or reject",
	"ACS-R-014": "the framework firing a hook for every action; no request reaches a Guardian",
	"ACS-R-015": "a deployment's trace sink; rein emits no ACS trace events",
	"ACS-R-016": "a verifier of an ACS-Audit context entry (an artifact, not a request); rein writes request_hash in every entry",
	"ACS-R-021": "a verifier of signed chain heads (an artifact, not a request); rein signs every head it publishes",
	"ACS-R-022": "a verifier of a Guardian's response signature (an artifact, not a request)",
}

// acsPolicyChoices are the Guardian members where rein answers otherwise
// than the corpus expects, by a documented choice (docs/integrations.md);
// the run asserts rein's documented answer instead.
var acsPolicyChoices = map[string]struct {
	answer string
	ok     func(r acsReply) bool
}{
	"v661266c5c87cb206": {"deny result (rule delete), not -32003: the mandate is rein policy, and a call outside it is a policy deny naming the rule",
		func(r acsReply) bool { return r.Result != nil && r.Result.Decision == "deny" }},
	"v100f74962fbb8b94": {"ask, not -32003: rein does not read approvals carried in a request; approvals are rein's own, bound to one check's agent, tool and arguments, so agent-B's call gets its own approval",
		acsIsAsk},
	"vff6b4d46f470f2ad": {"ask, not allow: the same choice; agent-A's call is asked too, whatever approval the request carries",
		acsIsAsk},
	"v448a61c91554a125": {"deny with reason code rate_limited, not -32003: a budget is a rein limit, and a call past it is throttled",
		acsIsRateLimited},
	"v10351021bf6e46b1": {"deny with reason code rate_limited, not -32003: the same limit; the session-state hint is ignored, the count is rein's",
		acsIsRateLimited},
	"va200b64093301e14": {"ask with ask_details (approver rein, timeout_disposition deny), not deny: rein's approvals are resolved by rein's approvers, not by the client; a deployment whose client cannot wait writes that agent's rule as deny",
		acsIsAsk},
}

func acsIsAsk(r acsReply) bool {
	return r.Result != nil && r.Result.Decision == "ask" && r.Result.AskDetails != nil && r.Result.AskDetails.TimeoutDisposition == "deny"
}

func acsIsRateLimited(r acsReply) bool {
	return r.Result != nil && r.Result.Decision == "deny" && contains(r.Result.ReasonCodes, "rate_limited")
}

// TestACSCoreVectors runs the public ACS-Core negative conformance corpus
// (acs/testdata/vectors-acs-core) against a running rein, as signed wire
// requests, and reports pass or fail per vector with the reason.
//
// The corpus's envelopes are schematic, so each request is translated the
// same way: "acs": "0.1" becomes acs_version "0.1.0"; hooks/* methods are
// steps/*; params.tool.arguments become payload arguments with a "value";
// a ClientHello's params are its payload; session and request ids become
// fresh UUIDs (the same corpus id stays the same within a vector, so a
// replay stays a replay); agent_id defaults to "agent"; timestamps shift so
// that the vector's guardian_clock is now; the placeholder signature is
// replaced by a real one unless signature_state says ABSENT (no signature),
// INVALID (a wrong value) or COVERS_SUBSET (a signature over the envelope
// without the omitted fields). A vector that does not start with a
// handshake gets one first. acs-f-7 repeats one envelope, one request_id, in
// every step; a Guardian must refuse such repeats as replays (acs-f-2), so
// those steps get a request_id each.
func TestACSCoreVectors(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, acsVectorPolicy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	url, key := e.S.URL, e.Keys["builder"]

	files, _ := filepath.Glob(filepath.Join(harness.ModuleRoot, "acs", "testdata", "vectors-acs-core", "vectors", "*.json"))
	if len(files) != 43 {
		t.Fatalf("%d vectors vendored, want the corpus's 43", len(files))
	}
	var passed, choices, skipped, failed int
	var report []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v acsVector
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		line := func(outcome, why string) {
			report = append(report, fmt.Sprintf("%s %-9s %-8s %-22s %s: %s", v.ID, v.Family, v.Kind, strings.Join(v.Requirements, ","), outcome, why))
		}
		if v.Expected.Verdict == "unmeasurable" {
			skipped++
			line("NOT RUN", "unmeasurable in the corpus (its expectation cannot be scored)")
			continue
		}
		if why := acsVectorNotRun(&v); why != "" {
			skipped++
			line("NOT RUN", "subject is not the Guardian: "+why)
			continue
		}
		replies := acsRunVector(t, url, key, &v)
		last := replies[len(replies)-1]
		if c, ok := acsPolicyChoices[v.ID]; ok {
			if c.ok(last) && acsAllAllowed(replies[:len(replies)-1]) {
				choices++
				line("POLICY", c.answer)
			} else {
				failed++
				line("FAIL", "rein's documented answer is "+c.answer+"; got "+acsDescribe(last))
			}
			continue
		}
		if why := acsScore(&v, replies); why != "" {
			failed++
			line("FAIL", why)
			continue
		}
		passed++
		line("PASS", "expected "+v.Expected.Verdict+acsCode(&v)+", got "+acsDescribe(last))
	}
	t.Logf("ACS-Core vectors: %d pass, %d answered by a documented policy choice, %d not run (not the Guardian's, or unmeasurable), %d fail\n%s",
		passed, choices, skipped, failed, strings.Join(report, "\n"))
	if failed > 0 {
		t.Errorf("%d ACS-Core vectors failed", failed)
	}
	if passed+choices+skipped != 43 || passed < 15 {
		t.Errorf("only %d vectors passed", passed)
	}
}

// acsVectorNotRun says why a vector is not a request for the Guardian, or "".
func acsVectorNotRun(v *acsVector) string {
	for _, r := range v.Requirements {
		if why, ok := acsNotGuardian[r]; ok {
			return why
		}
	}
	if v.Payload["request"] == nil && v.Payload["steps"] == nil {
		if slices.Contains(v.Requirements, "ACS-R-006") {
			return "a recorded Guardian answer for a verifier to judge, not a request; rein's side of ACS-R-006 (chain_hash in every step answer, covered by the answer's signature) is checked on every answer of this run"
		}
		return "no request in the vector"
	}
	return ""
}

// acsRunVector sends a vector's requests and returns rein's answers.
func acsRunVector(t *testing.T, url, key string, v *acsVector) []acsReply {
	t.Helper()
	var steps []map[string]any
	if raw := v.Payload["steps"]; raw != nil {
		var list []struct{ Request map[string]any }
		json.Unmarshal(raw, &list)
		for _, s := range list {
			steps = append(steps, s.Request)
		}
	} else {
		var one map[string]any
		json.Unmarshal(v.Payload["request"], &one)
		steps = append(steps, one)
	}
	var state, clock string
	json.Unmarshal(v.Payload["signature_state"], &state)
	clock = "2026-09-09T12:00:00Z"
	json.Unmarshal(v.Payload["guardian_clock"], &clock)
	ref, _ := time.Parse(time.RFC3339, clock)
	now := time.Now()
	ids := map[string]string{}
	fresh := func(id string) string {
		if v.Family == "acs-f-7" && !strings.HasPrefix(id, "session:") {
			return uuid()
		}
		if ids[id] == "" {
			ids[id] = uuid()
		}
		return ids[id]
	}
	var replies []acsReply
	for i, s := range steps {
		method := strings.Replace(s["method"].(string), "hooks/", "steps/", 1)
		if i == 0 && method != acs.MethodHello {
			md, _ := s["metadata"].(map[string]any)
			session := fresh("session:" + fmt.Sprint(md["session_id"]))
			if _, r := postACS(t, url, key, acsEnvelope(key, acs.MethodHello, uuid(), now, session, acsHello(acsAllMethods, []string{"acs-core"}))); r.Result == nil {
				t.Fatalf("%s: handshake: %+v", v.ID, r.Error)
			}
		}
		version := fmt.Sprint(s["acs"])
		if strings.Count(version, ".") == 1 {
			version += ".0"
		}
		at, _ := time.Parse(time.RFC3339, s["timestamp"].(string))
		md := map[string]any{}
		for k, x := range s["metadata"].(map[string]any) {
			md[k] = x
		}
		md["session_id"] = fresh("session:" + fmt.Sprint(md["session_id"]))
		if md["agent_id"] == nil {
			md["agent_id"] = "agent"
			if v.ID == "va200b64093301e14" {
				md["agent_id"] = "no-approver" // the agent whose request the policy escalates
			}
		}
		params, _ := s["params"].(map[string]any)
		payload := params
		if method == acs.MethodToolCall {
			tool := params["tool"].(map[string]any)
			args := map[string]any{}
			for k, x := range tool["arguments"].(map[string]any) {
				args[k] = map[string]any{"value": x}
			}
			payload = map[string]any{"tool": map[string]any{"name": tool["name"]}, "arguments": args}
		}
		env := map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": method, "params": map[string]any{
			"acs_version": version, "request_id": fresh(s["request_id"].(string)),
			"timestamp": now.Add(at.Sub(ref)).UTC().Format(time.RFC3339Nano), "metadata": md, "payload": payload}}
		var body string
		_, signed := s["signature"]
		switch {
		case !signed || state == "ABSENT":
			body = acsSigned("", env)
		case state == "INVALID":
			env["params"].(map[string]any)["signature"] = acs.Signature{Algorithm: acs.AlgHMAC, Value: "AAAA", KeyID: "builder"}
			body = acsSigned("", env)
		case state == "COVERS_SUBSET":
			// A signature over the envelope without metadata.session_id,
			// under the session's own key, sent on the whole envelope.
			session := md["session_id"].(string)
			delete(md, "session_id")
			b, _ := json.Marshal(env)
			input, _, _ := acs.SigningInput(b, "params")
			md["session_id"] = session
			env["params"].(map[string]any)["signature"] = acs.Signature{Algorithm: acs.AlgHMAC, Value: acs.Mac(acs.SessionKey(key, session), input), KeyID: "builder"}
			body = acsSigned("", env)
		default:
			body = acsSigned(key, env)
		}
		_, r := postACS(t, url, key, body)
		if strings.HasPrefix(method, "steps/") && r.Result != nil && len(r.Result.ChainHash) != 64 {
			t.Errorf("%s: a step answer without chain_hash (ACS-R-006): %+v", v.ID, r.Result)
		}
		replies = append(replies, r)
	}
	return replies
}

// acsScore compares rein's answers with a vector's expectation: an accept
// member's steps are all allowed; a reject member's steps are allowed up to
// the last, which is refused (with the registry code, when one is named).
func acsScore(v *acsVector, replies []acsReply) string {
	last := replies[len(replies)-1]
	if !acsAllAllowed(replies[:len(replies)-1]) {
		return "a step before the last was not allowed"
	}
	switch v.Expected.Verdict {
	case "allow":
		if !acsAllAllowed([]acsReply{last}) {
			return "expected allow, got " + acsDescribe(last)
		}
	case "deny":
		denied := last.Error != nil || last.Result.Decision == "deny"
		if !denied {
			return "expected deny" + acsCode(v) + ", got " + acsDescribe(last)
		}
		if v.Expected.CodeValue != nil && (last.Error == nil || last.Error.Code != *v.Expected.CodeValue) {
			return "expected deny" + acsCode(v) + ", got " + acsDescribe(last)
		}
	default:
		return "unknown verdict " + v.Expected.Verdict
	}
	return ""
}

func acsAllAllowed(rs []acsReply) bool {
	for _, r := range rs {
		if r.Result == nil || r.Result.Decision != "allow" {
			return false
		}
	}
	return true
}

func acsCode(v *acsVector) string {
	if v.Expected.Code == nil {
		return ""
	}
	return fmt.Sprintf(" %s (%d)", *v.Expected.Code, *v.Expected.CodeValue)
}

func acsDescribe(r acsReply) string {
	if r.Error != nil {
		return fmt.Sprintf("error %d %q", r.Error.Code, r.Error.Message)
	}
	return fmt.Sprintf("%s %v %q", r.Result.Decision, r.Result.ReasonCodes, r.Result.Reasoning)
}
