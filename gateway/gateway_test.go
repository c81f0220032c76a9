package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestRequestStateSeal(t *testing.T) {
	g, other := &Gateway{}, &Gateway{}
	now := time.Unix(1_800_000_000, 0)
	st := approvalState{Approval: "apr_1", Tool: "fs.write_file", Args: argsDigest(json.RawMessage(`{"b":1,"a":2}`)), Expires: now.Add(time.Minute).Unix()}
	sealed := g.seal(st)
	p, sig, _ := strings.Cut(strings.TrimPrefix(sealed, statePrefix), ".")
	changed := approvalState{Approval: "apr_2", Tool: st.Tool, Args: st.Args, Expires: st.Expires}
	forgedPayload := other.seal(changed)
	fp, _, _ := strings.Cut(strings.TrimPrefix(forgedPayload, statePrefix), ".")
	for _, c := range []struct {
		name  string
		state string
		at    time.Time
		want  error
	}{
		{"as sealed", sealed, now, nil},
		{"at its expiry", sealed, now.Add(time.Minute), nil},
		{"after its expiry", sealed, now.Add(time.Minute + time.Second), errStateExpired},
		{"sealed by another gateway", other.seal(st), now, errStateForged},
		{"another approval with this signature", statePrefix + fp + "." + sig, now, errStateForged},
		{"no signature", statePrefix + p, now, errStateForged},
		{"signature not base64", statePrefix + p + ".!!", now, errStateForged},
		{"empty", "", now, errStateForged},
	} {
		got, err := g.unseal(c.state, c.at)
		if err != c.want || (err == nil && got != st) {
			t.Errorf("%s: %+v %v, want %v", c.name, got, err, c.want)
		}
	}
	if argsDigest(json.RawMessage(`{"a":2,"b":1}`)) != st.Args || argsDigest(json.RawMessage(`{"a":3,"b":1}`)) == st.Args {
		t.Error("the argument digest must be of the canonical form, and differ with the arguments")
	}
}

func TestReadMeta(t *testing.T) {
	for _, c := range []struct {
		params    string
		stateless bool
		caps      *clientCaps
		token     any
	}{
		{`{"name":"x"}`, false, nil, nil},
		{`{"_meta":{"progressToken":"t1"}}`, false, nil, "t1"},
		{`{"_meta":{"progressToken":7}}`, false, nil, float64(7)},
		{`{"_meta":{"progressToken":{"no":1}}}`, false, nil, nil},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, false, nil, nil},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`, true, &clientCaps{}, nil},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`, true, &clientCaps{Elicitation: true}, nil},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}}`, true, &clientCaps{}, nil},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`, true, &clientCaps{Elicitation: true, Tasks: true}, nil},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}`, true, nil, nil},
	} {
		var params map[string]json.RawMessage
		json.Unmarshal([]byte(c.params), &params)
		m := readMeta(params)
		if m.stateless() != c.stateless || m.ProgressToken != c.token || (m.Caps == nil) != (c.caps == nil) || (m.Caps != nil && *m.Caps != *c.caps) {
			t.Errorf("%s: %+v (caps %+v)", c.params, m, m.Caps)
		}
	}
}

func TestAdvertise(t *testing.T) {
	in := json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"x.example/y":{"a":1}}}}`)
	for _, sep := range []bool{false, true} {
		var out struct {
			SupportedVersions []string
			Capabilities      struct {
				Tools      map[string]any
				Extensions map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal((&Gateway{SEP2848: sep}).advertise(in), &out); err != nil {
			t.Fatal(err)
		}
		_, tasks := out.Capabilities.Extensions[tasksExtension]
		_, approval := out.Capabilities.Extensions[toolApprovalExtension]
		if !tasks || approval != sep || string(out.Capabilities.Extensions["x.example/y"]) != `{"a":1}` || out.Capabilities.Tools == nil || out.SupportedVersions[0] != "2026-07-28" {
			t.Errorf("sep-2848=%v: %+v", sep, out)
		}
	}
	if got := (&Gateway{}).advertise(json.RawMessage(`"odd"`)); string(got) != `"odd"` {
		t.Errorf("a result that is no object passes unchanged: %s", got)
	}
}

// TestRefuseResultType: rein's own refusal carries resultType exactly when
// the call speaks 2026-07-28 or later, which requires it on every result;
// earlier versions get the result they define.
func TestRefuseResultType(t *testing.T) {
	s := &relay{g: &Gateway{Log: slog.New(slog.DiscardHandler)}}
	for _, c := range []struct {
		params string
		want   any
	}{
		{`{"name":"x"}`, nil},
		{`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, nil},
		{`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, "complete"},
		{`not json`, nil},
	} {
		id, _ := jsonrpc.MakeID(float64(1))
		r := s.refuse(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(c.params)}, "no").(*jsonrpc.Response)
		var got map[string]any
		if err := json.Unmarshal(r.Result, &got); err != nil || got["isError"] != true || got["resultType"] != c.want {
			t.Errorf("%s: %s", c.params, r.Result)
		}
	}
}
