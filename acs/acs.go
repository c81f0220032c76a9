// Package acs translates the OWASP Agent Control Standard v0.1 Guardian
// protocol (JSON-RPC 2.0 envelopes) into rein checks and rein's answers
// back into ACS results (integrations.md). It is pure: POST /acs in package
// http does the I/O, the replay bookkeeping and the calls into the
// decision pipeline.
package acs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// Version is the ACS version rein speaks.
const Version = "0.1.0"

// SkewWindow is how far a request's timestamp may be from rein's clock.
const SkewWindow = 5 * time.Minute

// JSON-RPC error codes: the standard ones and those ACS reserves.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternal           = -32603
	CodeUnauthenticated    = -32000 // rein's: the API key is missing or unknown
	CodeUnsupportedVersion = -32001
	CodeReplay             = -32005 // REPLAY_DETECTED
	CodeSkew               = -32006 // TIMESTAMP_OUT_OF_WINDOW
)

// Methods.
const (
	MethodHello          = "handshake/hello"
	MethodPing           = "system/ping"
	MethodToolCall       = "steps/toolCallRequest"
	MethodToolCallResult = "steps/toolCallResult"
)

// Recorded are the Core hooks rein records in the session's audit trail
// and answers with allow; the tool call request is the one rein decides.
var Recorded = []string{
	"steps/sessionStart", "steps/userMessage", MethodToolCallResult,
	"steps/agentResponse", "steps/sessionEnd", "steps/subagentStart",
}

// Evaluated lists every method rein answers, for the ServerHello.
var Evaluated = append([]string{MethodToolCall}, Recorded...)

// Error is a JSON-RPC error.
type Error struct {
	Code      int            `json:"code"`
	Message   string         `json:"message"`
	Data      map[string]any `json:"data,omitempty"`
	Signature *Signature     `json:"signature,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

func errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Request is a JSON-RPC request envelope.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      json.RawMessage `json:"id"`
	Params  Params          `json:"params"`
}

// Params are the ACS parameters every hook carries.
type Params struct {
	ACSVersion string          `json:"acs_version"`
	RequestID  string          `json:"request_id"`
	Timestamp  string          `json:"timestamp"`
	Nonce      string          `json:"nonce,omitempty"`
	Signature  *Signature      `json:"signature,omitempty"`
	Metadata   Metadata        `json:"metadata"`
	Payload    json.RawMessage `json:"payload"`
}

// Metadata names the agent and its session.
type Metadata struct {
	AgentID   string `json:"agent_id"`
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`
}

// Response is a JSON-RPC response envelope.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *Result         `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Result is an ACS final result.
type Result struct {
	Type             string            `json:"type"`
	ACSVersion       string            `json:"acs_version"`
	RequestID        string            `json:"request_id"`
	Decision         string            `json:"decision"`
	Reasoning        string            `json:"reasoning,omitempty"`
	ReasonCodes      []string          `json:"reason_codes,omitempty"`
	PolicyReferences []PolicyReference `json:"policy_references,omitempty"`
	PolicyData       map[string]any    `json:"policy_data,omitempty"`
	Modifications    *Modifications    `json:"modifications,omitempty"`
	AskDetails       *AskDetails       `json:"ask_details,omitempty"`
	Payload          any               `json:"payload,omitempty"`
	Metadata         *ResultMetadata   `json:"metadata,omitempty"`
	// ChainHash is the session's audit chain head after this step's
	// ContextEntry (§8.6), covered by Signature.
	ChainHash string     `json:"chain_hash,omitempty"`
	Signature *Signature `json:"signature,omitempty"`
}

// PolicyReference names the rule that decided.
type PolicyReference struct {
	PolicyID      string `json:"policy_id"`
	PolicyVersion string `json:"policy_version,omitempty"`
	RuleID        string `json:"rule_id,omitempty"`
}

// Modifications carry modify's new arguments.
type Modifications struct {
	ParameterOverrides map[string]any `json:"parameter_overrides"`
}

// AskDetails say who must approve and what happens when nobody does.
type AskDetails struct {
	Approver           string `json:"approver"`
	Question           string `json:"question"`
	TimeoutSeconds     int64  `json:"timeout_seconds"`
	TimeoutDisposition string `json:"timeout_disposition"`
}

// ResultMetadata describes the evaluator.
type ResultMetadata struct {
	Evaluator            string `json:"evaluator"`
	EvaluatorVersion     string `json:"evaluator_version"`
	EvaluationDurationMS int64  `json:"evaluation_duration_ms"`
}

// Parse reads one envelope. Batches and malformed envelopes are errors
// with the code ACS gives them.
func Parse(body []byte) (*Request, *Error) {
	t := strings.TrimSpace(string(body))
	if strings.HasPrefix(t, "[") {
		return nil, errorf(CodeInvalidRequest, "batches are not supported: send one JSON-RPC request per POST")
	}
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errorf(CodeParseError, "parse error: %v", err)
	}
	switch {
	case r.JSONRPC != "2.0":
		return &r, errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case len(r.ID) == 0 || string(r.ID) == "null":
		return &r, errorf(CodeInvalidRequest, `invalid request: "id" is required (ACS hooks are calls, not notifications)`)
	case r.Method == "":
		return &r, errorf(CodeInvalidRequest, `invalid request: "method" is required`)
	}
	return &r, nil
}

// Validate checks the parameters every hook but ping and the handshake
// must carry, and the timestamp's distance from now.
func (p *Params) Validate(now time.Time) *Error {
	switch {
	case p.RequestID == "":
		return errorf(CodeInvalidParams, `"params.request_id" is required: a fresh UUID per hook call`)
	case len(p.RequestID) > 128:
		return errorf(CodeInvalidParams, `"params.request_id" is over 128 characters`)
	case p.Metadata.SessionID == "" || p.Metadata.AgentID == "":
		return errorf(CodeInvalidParams, `"params.metadata.agent_id" and "params.metadata.session_id" are required`)
	case p.Timestamp == "":
		return errorf(CodeInvalidParams, `"params.timestamp" is required (RFC 3339)`)
	case p.Nonce != "" && (len(p.Nonce) < 16 || len(p.Nonce) > 64):
		return errorf(CodeInvalidParams, `"params.nonce" must be 16 to 64 bytes`)
	}
	ts, err := time.Parse(time.RFC3339Nano, p.Timestamp)
	if err != nil {
		return errorf(CodeSkew, "TIMESTAMP_OUT_OF_WINDOW: cannot read timestamp %q as RFC 3339", p.Timestamp)
	}
	if d := now.Sub(ts).Abs(); d > SkewWindow {
		return errorf(CodeSkew, "TIMESTAMP_OUT_OF_WINDOW: %s from rein's clock; the window is %s", d.Round(time.Millisecond), SkewWindow)
	}
	return nil
}

// Profiles are the conformance profiles rein implements: ACS-Core, and
// ACS-Audit, whose one requirement is a request_hash on every ContextEntry
// (conformance.md, "ACS-Audit"; rein also writes each entry's timestamp).
// A ServerHello accepts the ones the client also declares, and no others.
var Profiles = []string{"acs-core", "acs-audit"}

// CodeNotNegotiated is CAPABILITY_NOT_NEGOTIATED: a method or profile was
// exercised that the handshake did not negotiate for this session (§17.1).
const CodeNotNegotiated = -32003

// Major is the major number of an X.Y.Z version; ok is false when v is not
// of that form.
func Major(v string) (major int, ok bool) {
	var a, b, c int
	var rest string
	if n, _ := fmt.Sscanf(v+" end", "%d.%d.%d %s", &a, &b, &c, &rest); n != 4 || rest != "end" || a < 0 || b < 0 || c < 0 {
		return 0, false
	}
	if fmt.Sprintf("%d.%d.%d", a, b, c) != v {
		return 0, false
	}
	return a, true
}

// Negotiated is what a handshake settled for a session.
type Negotiated struct {
	Version  string
	Methods  []string
	Profiles []string
}

// Hello answers handshake/hello. Versions follow ACS's forward-compatibility
// rule: a version whose major matches rein's is accepted (0.1.1 and 0.2.0
// speak to a 0.1.0 Guardian; unknown fields are ignored), and the
// negotiated version is one the client offered, rein's own when offered.
// The ServerHello names the methods rein evaluates among those the agent
// implements, the one signature algorithm, on_decision_failure deny (rein
// fails closed, and asks the agent to), and as profiles_accepted the
// profiles both sides declare.
func Hello(p *Params) (*Result, *Negotiated, *Error) {
	var hello struct {
		Versions []string `json:"acs_versions_supported"`
		Methods  []string `json:"methods_implemented"`
		Profiles []string `json:"profiles_supported"`
	}
	if len(p.Payload) > 0 {
		if err := json.Unmarshal(p.Payload, &hello); err != nil {
			return nil, nil, errorf(CodeInvalidParams, "the ClientHello payload is not readable: %v", err)
		}
	}
	ours, _ := Major(Version)
	version := ""
	for _, v := range hello.Versions {
		if m, ok := Major(v); ok && m == ours && (version == "" || v == Version) {
			version = v
		}
	}
	if version == "" {
		e := errorf(CodeUnsupportedVersion, "UNSUPPORTED_VERSION: the agent supports %v; rein speaks %s and accepts versions of major %d", hello.Versions, Version, ours)
		e.Data = map[string]any{"supported_versions": []string{Version}}
		return nil, nil, e
	}
	methods := Evaluated
	if len(hello.Methods) > 0 {
		methods = []string{}
		for _, m := range hello.Methods {
			if slices.Contains(Evaluated, m) && !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	profiles := []string{}
	for _, pr := range hello.Profiles {
		if slices.Contains(Profiles, pr) && !slices.Contains(profiles, pr) {
			profiles = append(profiles, pr)
		}
	}
	n := &Negotiated{Version: version, Methods: methods, Profiles: profiles}
	return &Result{Type: "final", ACSVersion: Version, RequestID: p.RequestID, Decision: "allow", Payload: map[string]any{
		"negotiated_version":             version,
		"methods_evaluated":              methods,
		"selected_transport":             "http",
		"signature_algorithms_supported": Algorithms,
		"timeout_config":                 map[string]any{"default_ms": 5000},
		"skew_window_ms":                 SkewWindow.Milliseconds(),
		"on_decision_failure":            "deny",
		"policy_requires_provenance":     false,
		"profiles_accepted":              profiles,
	}}, n, nil
}

// StepVersion checks a step's acs_version against the negotiated one: it
// is required, and its major must match (the forward-compatibility rule).
func StepVersion(p *Params, n *Negotiated) *Error {
	if p.ACSVersion == "" {
		return errorf(CodeInvalidParams, `"params.acs_version" is required`)
	}
	want, _ := Major(n.Version)
	if got, ok := Major(p.ACSVersion); !ok || got != want {
		e := errorf(CodeUnsupportedVersion, "UNSUPPORTED_VERSION: the step speaks ACS %q; this session negotiated %s", p.ACSVersion, n.Version)
		e.Data = map[string]any{"supported_versions": []string{n.Version}}
		return e
	}
	return nil
}

// Ping answers system/ping.
func Ping(p *Params, now time.Time) *Result {
	var ping struct {
		Echo string `json:"echo"`
	}
	json.Unmarshal(p.Payload, &ping)
	return &Result{Type: "final", ACSVersion: Version, RequestID: p.RequestID, Decision: "allow",
		Payload: map[string]any{"status": "ok", "echo": ping.Echo, "server_timestamp": now.UTC().Format(time.RFC3339Nano)}}
}

// ToolCall is a toolCallRequest payload.
type ToolCall struct {
	Tool struct {
		Name string `json:"name"`
	} `json:"tool"`
	Arguments map[string]json.RawMessage `json:"arguments"`
	Intent    *struct {
		Description string `json:"description"`
		Goal        string `json:"goal"`
	} `json:"intent"`
}

// RequestIDPrefix namespaces ACS request ids among a key's check request
// ids, so that a replayed toolCallRequest is found in the store.
const RequestIDPrefix = "acs:"

// Check turns a toolCallRequest into a rein check. The agent is the key's
// name, or a sub-agent of it named by metadata.agent_id; each argument's
// "value" is the argument (its provenance is not rein's to judge).
func Check(p *Params, keyName string) (*rein.CheckRequest, *Error) {
	var tc ToolCall
	if err := json.Unmarshal(p.Payload, &tc); err != nil {
		return nil, errorf(CodeInvalidParams, "the toolCallRequest payload is not readable: %v", err)
	}
	if tc.Tool.Name == "" {
		return nil, errorf(CodeInvalidParams, `"payload.tool.name" is required`)
	}
	args := map[string]json.RawMessage{}
	for k, v := range tc.Arguments {
		var wrapped map[string]json.RawMessage
		if json.Unmarshal(v, &wrapped) != nil || wrapped["value"] == nil {
			return nil, errorf(CodeInvalidParams, `argument %q must be an object with a "value" (and its "provenance")`, k)
		}
		args[k] = wrapped["value"]
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "the arguments cannot be encoded: %v", err)
	}
	req := &rein.CheckRequest{Tool: tc.Tool.Name, Args: raw, Session: p.Metadata.SessionID,
		Agent: Agent(keyName, p.Metadata.AgentID), RequestID: RequestIDPrefix + p.RequestID}
	if tc.Intent != nil {
		req.Intent = strings.TrimSpace(tc.Intent.Description + "\n" + tc.Intent.Goal)
	}
	return req, nil
}

// Agent is the acting identity for an ACS agent_id: the key's name when
// they agree, else a sub-agent of the key (a key cannot act as another).
func Agent(keyName, agentID string) string {
	if agentID == "" || agentID == keyName || strings.HasPrefix(agentID, keyName+"/") {
		return agentID
	}
	return keyName + "/" + agentID
}

// Decide maps rein's answer to an ACS result: allow -> allow, deny and
// throttle -> deny, modify -> modify with parameter_overrides, ask -> ask
// with ask_details whose timeout disposition is deny.
func Decide(p *Params, rec *rein.CheckRecord, args json.RawMessage, now time.Time, took time.Duration) *Result {
	r := &Result{Type: "final", ACSVersion: Version, RequestID: p.RequestID, Reasoning: rec.Reason,
		ReasonCodes:      rec.Risk,
		PolicyReferences: []PolicyReference{{PolicyID: "rein", PolicyVersion: rec.PolicyVersion, RuleID: rec.Rule}},
		PolicyData:       map[string]any{"rein": map[string]any{"check_id": rec.ID, "audit_index": rec.AuditIndex, "action_hash": rec.ActionHash}},
		Metadata:         &ResultMetadata{Evaluator: "deterministic", EvaluatorVersion: "rein " + rein.Version, EvaluationDurationMS: took.Milliseconds()}}
	data := r.PolicyData["rein"].(map[string]any)
	ans := rec.Answer(args)
	switch ans.Do {
	case rein.DoRun:
		r.Decision = "allow"
		if ans.Changed {
			// The arguments to run differ from the step's (a modify rule or an
			// approver's edit): ACS carries them as parameter overrides, so the
			// agent runs exactly what rein allowed, never the original.
			r.Decision = "modify"
			r.Modifications = &Modifications{ParameterOverrides: Overrides(args, ans.Args)}
		}
		data["args"] = ans.Args
	case rein.DoRefuse:
		r.Decision = "deny"
		r.Reasoning = ans.Reason
	case rein.DoRetry:
		r.Decision = "deny"
		r.ReasonCodes = append(r.ReasonCodes, "rate_limited")
		if rec.RetryAfterMS != nil {
			data["retry_after_ms"] = *rec.RetryAfterMS
			r.Reasoning += fmt.Sprintf(" (retry after %s)", ans.RetryAfter.Round(time.Millisecond))
		}
	case rein.DoWait:
		r.Decision = "ask"
		d := &AskDetails{Question: rec.Reason, TimeoutDisposition: "deny", Approver: "rein"}
		if a := rec.Approval; a != nil {
			d.TimeoutSeconds = max(0, int64(a.ExpiresAt.Sub(now).Seconds()))
			data["approval_id"], data["approval_url"] = a.ID, a.URL
			d.Question = fmt.Sprintf("%s (rein approval %s)", rec.Reason, a.ID)
		}
		r.AskDetails = d
	default:
		r.Decision, r.Reasoning = "deny", fmt.Sprintf("rein answered %q, which ACS cannot carry; denied", ans.Do)
	}
	if r.Reasoning == "" {
		r.Reasoning = string(rec.Decision) + " by rein"
	}
	return r
}

// Overrides are the top-level arguments modify changed or added; one it
// removed is overridden with null.
func Overrides(before, after json.RawMessage) map[string]any {
	var b, a map[string]any
	decodeExact(before, &b)
	decodeExact(after, &a)
	out := map[string]any{}
	for k, v := range a {
		if old, ok := b[k]; !ok || !jsonEqual(old, v) {
			out[k] = v
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

// decodeExact decodes a JSON object keeping numbers as written, so that an
// override never rounds a large or precise number.
func decodeExact(raw json.RawMessage, v *map[string]any) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.Decode(v)
}

func jsonEqual(x, y any) bool {
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(bx) == string(by)
}

// RecordedResult is the allow that answers a recorded (informational) hook.
func RecordedResult(p *Params) *Result {
	return &Result{Type: "final", ACSVersion: Version, RequestID: p.RequestID, Decision: "allow",
		Reasoning: "recorded in rein's audit log"}
}

// Unknown answers a steps/* hook rein does not know: deny, as rein fails closed.
func Unknown(p *Params, method string) *Result {
	return &Result{Type: "final", ACSVersion: Version, RequestID: p.RequestID, Decision: "deny",
		Reasoning:   fmt.Sprintf("rein does not evaluate %s, so it is denied; the hooks rein evaluates are %s", method, strings.Join(Evaluated, ", ")),
		ReasonCodes: []string{"unknown_method"}}
}

// Failed answers a hook whose evaluation failed: deny naming the cause.
func Failed(p *Params, cause string) *Result {
	return &Result{Type: "final", ACSVersion: Version, RequestID: p.RequestID, Decision: "deny",
		Reasoning: "rein could not decide, so the step is denied: " + cause, ReasonCodes: []string{"evaluation_failed"}}
}

// ToolResult is what rein reads of a toolCallResult payload.
type ToolResult struct {
	RequestIDRef string `json:"request_id_ref"`
	ExitStatus   string `json:"exit_status"`
}
