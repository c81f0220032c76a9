package acs

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func TestParse(t *testing.T) {
	for body, code := range map[string]int{
		`{"jsonrpc":`:         CodeParseError,
		`[{"jsonrpc":"2.0"}]`: CodeInvalidRequest,
		`{"jsonrpc":"1.0","id":1,"method":"system/ping"}`:    CodeInvalidRequest,
		`{"jsonrpc":"2.0","method":"system/ping"}`:           CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":null,"method":"system/ping"}`: CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":1}`:                           CodeInvalidRequest,
	} {
		if _, err := Parse([]byte(body)); err == nil || err.Code != code {
			t.Errorf("Parse(%s) = %v, want code %d", body, err, code)
		}
	}
	if r, err := Parse([]byte(`{"jsonrpc":"2.0","id":"a","method":"system/ping","params":{}}`)); err != nil || r.Method != "system/ping" {
		t.Fatalf("a good envelope: %v", err)
	}
}

func TestValidate(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ok := Params{RequestID: "r", Timestamp: now.Add(-4 * time.Minute).Format(time.RFC3339), Metadata: Metadata{AgentID: "a", SessionID: "s"}}
	if err := ok.Validate(now); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		mut  func(p *Params)
		code int
	}{
		"stale":      {func(p *Params) { p.Timestamp = now.Add(-6 * time.Minute).Format(time.RFC3339) }, CodeSkew},
		"future":     {func(p *Params) { p.Timestamp = now.Add(6 * time.Minute).Format(time.RFC3339) }, CodeSkew},
		"unreadable": {func(p *Params) { p.Timestamp = "noon" }, CodeSkew},
		"no id":      {func(p *Params) { p.RequestID = "" }, CodeInvalidParams},
		"no session": {func(p *Params) { p.Metadata.SessionID = "" }, CodeInvalidParams},
		"no time":    {func(p *Params) { p.Timestamp = "" }, CodeInvalidParams},
	} {
		p := ok
		c.mut(&p)
		if err := p.Validate(now); err == nil || err.Code != c.code {
			t.Errorf("%s: %v, want %d", name, err, c.code)
		}
	}
}

func TestCheckAndAgent(t *testing.T) {
	p := &Params{RequestID: "r1", Metadata: Metadata{AgentID: "planner", SessionID: "s"},
		Payload: json.RawMessage(`{"tool":{"name":"Bash"},"arguments":{"command":{"value":"ls","provenance":{}}},"intent":{"description":"look"}}`)}
	req, err := Check(p, "builder")
	if err != nil {
		t.Fatal(err)
	}
	if req.Tool != "Bash" || string(req.Args) != `{"command":"ls"}` || req.Agent != "builder/planner" || req.RequestID != "acs:r1" || req.Intent != "look" {
		t.Fatalf("%+v", req)
	}
	for id, want := range map[string]string{"": "", "builder": "builder", "builder/x": "builder/x", "admin": "builder/admin"} {
		if got := Agent("builder", id); got != want {
			t.Errorf("Agent(builder, %q) = %q, want %q: a key never acts as another", id, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	now := time.Now()
	ms := int64(2000)
	p := &Params{RequestID: "r"}
	args := json.RawMessage(`{"a":1,"b":2,"c":3}`)
	rec := &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: rein.Modify, Reason: "m", Args: json.RawMessage(`{"a":1,"b":5,"d":4}`)}}
	r := Decide(p, rec, args, now, 0)
	if r.Decision != "modify" || fmt.Sprint(r.Modifications.ParameterOverrides) != "map[b:5 c:<nil> d:4]" {
		t.Fatalf("modify: %+v", r.Modifications)
	}
	// An allow whose arguments an approver edited is a modify on the ACS wire:
	// the step's original arguments must not run.
	rec = &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: rein.Allow, Reason: "approved with edited arguments: apr_1", Args: json.RawMessage(`{"a":1,"b":2,"c":9}`)}}
	if r := Decide(p, rec, args, now, 0); r.Decision != "modify" || fmt.Sprint(r.Modifications.ParameterOverrides) != "map[c:9]" {
		t.Fatalf("edited allow: %s %+v", r.Decision, r.Modifications)
	}
	rec = &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: rein.Allow, Reason: "fine", Args: json.RawMessage(`{"c":3,"b":2,"a":1}`)}}
	if r := Decide(p, rec, args, now, 0); r.Decision != "allow" || r.Modifications != nil {
		t.Fatalf("plain allow: %s %+v", r.Decision, r.Modifications)
	}
	rec = &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: rein.Allow, Reason: "fine"}}
	if r := Decide(p, rec, args, now, 0); r.Decision != "deny" {
		t.Fatalf("an allow without arguments to run: %s", r.Decision)
	}
	// Overrides keep numbers exactly as written.
	if o := Overrides(json.RawMessage(`{"n":1}`), json.RawMessage(`{"n":12345678901234567890}`)); fmt.Sprint(o["n"]) != "12345678901234567890" {
		t.Fatalf("override rounded a number: %v", o["n"])
	}
	rec = &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: rein.Throttle, Reason: "slow", RetryAfterMS: &ms}}
	if r := Decide(p, rec, args, now, 0); r.Decision != "deny" || r.ReasonCodes[len(r.ReasonCodes)-1] != "rate_limited" {
		t.Fatalf("throttle: %+v", r)
	}
	rec = &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: rein.Ask, Reason: "who?", Approval: &rein.ApprovalRef{ID: "apr_1", ExpiresAt: now.Add(15 * time.Minute)}}}
	if r := Decide(p, rec, args, now, 0); r.Decision != "ask" || r.AskDetails.TimeoutDisposition != "deny" || r.AskDetails.TimeoutSeconds != 900 {
		t.Fatalf("ask: %+v", r.AskDetails)
	}
	rec = &rein.CheckRecord{CheckResponse: rein.CheckResponse{Decision: "later"}}
	if r := Decide(p, rec, args, now, 0); r.Decision != "deny" {
		t.Fatalf("an unknown decision: %+v", r)
	}
}

func TestHello(t *testing.T) {
	for _, offer := range [][]string{{"1.0.0"}, {"9.9.9"}, {"0.1"}, {}, {"x.y.z"}} {
		b, _ := json.Marshal(map[string]any{"acs_versions_supported": offer})
		if _, _, err := Hello(&Params{Payload: b}); err == nil || err.Code != CodeUnsupportedVersion {
			t.Errorf("offer %v: %v, want UNSUPPORTED_VERSION", offer, err)
		}
	}
	// Same major: accepted, and the version named is one the client offered.
	for offer, want := range map[string]string{`["0.1.1"]`: "0.1.1", `["0.2.0","1.0.0"]`: "0.2.0", `["0.1.1","0.1.0"]`: "0.1.0"} {
		r, n, err := Hello(&Params{Payload: json.RawMessage(`{"acs_versions_supported":` + offer + `}`)})
		if err != nil || n.Version != want || r.Payload.(map[string]any)["negotiated_version"] != want {
			t.Errorf("offer %s: %v %+v, want %s", offer, err, n, want)
		}
	}
	r, n, err := Hello(&Params{Payload: json.RawMessage(`{"acs_versions_supported":["0.1.0"]}`)})
	pl := r.Payload.(map[string]any)
	if err != nil || pl["on_decision_failure"] != "deny" || fmt.Sprint(pl["signature_algorithms_supported"]) != "[HMAC-SHA256]" {
		t.Fatalf("hello: %v %+v", err, r)
	}
	if fmt.Sprint(pl["profiles_accepted"]) != "[]" || len(n.Profiles) != 0 {
		t.Errorf("a client declaring no profile got profiles_accepted %v", pl["profiles_accepted"])
	}
	r, n, _ = Hello(&Params{Payload: json.RawMessage(`{"acs_versions_supported":["0.1.0"],"profiles_supported":["acs-core","acs-crypto","acs-core"],"methods_implemented":["steps/toolCallRequest","steps/memoryStore"]}`)})
	if pl := r.Payload.(map[string]any); fmt.Sprint(pl["profiles_accepted"]) != "[acs-core]" || fmt.Sprint(n.Methods) != "[steps/toolCallRequest]" {
		t.Errorf("profiles %v methods %v: rein accepts only what it implements and the client declares", pl["profiles_accepted"], n.Methods)
	}
}

func TestStepVersion(t *testing.T) {
	n := &Negotiated{Version: "0.1.0"}
	for v, code := range map[string]int{"0.1.0": 0, "0.1.7": 0, "0.3.0": 0, "1.0.0": CodeUnsupportedVersion, "1.0": CodeUnsupportedVersion, "": CodeInvalidParams, "0.1.0-rc1": CodeUnsupportedVersion} {
		err := StepVersion(&Params{ACSVersion: v}, n)
		if (code == 0) != (err == nil) || (err != nil && err.Code != code) {
			t.Errorf("step version %q: %v, want code %d", v, err, code)
		}
	}
}
