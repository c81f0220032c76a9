package acs

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// The request and response below, the input keying material and the
// expected session key, signatures and chain hashes are the published test
// data of the ACS reference Guardian (GenAI-Security-Project/
// agent-control-standard, reference-implementations/agt-go/internal/
// envelope/testdata/vectors.json and internal/chain/testdata/vectors.json),
// computed there independently with Python's json, hmac and hashlib.
const (
	refIKM         = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	refSession     = "5c3f1b8e-9a0d-4c2e-8f4b-2d6a7e9c1b30"
	refSessionKey  = "4e86230ba407bc623132e84189722dc2b4ab73f217ff67e0492c82fdf0d66309"
	refRequest     = `{"jsonrpc":"2.0","method":"steps/toolCallRequest","id":"8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10","params":{"acs_version":"0.1.0","request_id":"8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10","timestamp":"2026-09-19T10:00:00Z","metadata":{"agent_id":"agent","session_id":"5c3f1b8e-9a0d-4c2e-8f4b-2d6a7e9c1b30"},"payload":{"tool":{"name":"Bash"},"arguments":{"command":{"value":"echo rm -rf /"}},"raw_command":"echo rm -rf /"},"signature":{"algorithm":"HMAC-SHA256","value":"yJ3BXf/Hfc3jSnSMgOoNVGQ+5LKBKakvctDwE52lrM0=","key_id":"k1"}}}`
	refResponseSig = "Shh4i+RWlfCNfAoFlE7gp5QUoyCI8jz3HMKHzH/2gG0="
)

func TestSessionKeyAndRequestSignature(t *testing.T) {
	ikm, _ := hex.DecodeString(refIKM)
	key := SessionKey(string(ikm), refSession)
	if hex.EncodeToString(key) != refSessionKey {
		t.Fatalf("session key %x, want %s", key, refSessionKey)
	}
	if id, err := VerifyRequest([]byte(refRequest), key, "k1"); err != nil || id != "k1" {
		t.Fatalf("the reference request does not verify: %v", err)
	}
	// The same envelope with its members reordered and spaced verifies too.
	var m map[string]any
	json.Unmarshal([]byte(refRequest), &m)
	pretty, _ := json.MarshalIndent(m, "", "  ")
	if _, err := VerifyRequest(pretty, key, "k1"); err != nil {
		t.Fatalf("a re-encoded envelope: %v", err)
	}
	for name, c := range map[string]struct {
		raw  string
		ids  []string
		want string
	}{
		"no signature":    {strings.Replace(refRequest, `,"signature":{"algorithm":"HMAC-SHA256","value":"yJ3BXf/Hfc3jSnSMgOoNVGQ+5LKBKakvctDwE52lrM0=","key_id":"k1"}`, "", 1), []string{"k1"}, "carries no"},
		"wrong value":     {strings.Replace(refRequest, "yJ3B", "yJ3C", 1), []string{"k1"}, "does not verify"},
		"other session":   {strings.Replace(refRequest, `"session_id":"5c3f`, `"session_id":"6c3f`, 1), []string{"k1"}, "does not verify"},
		"other method":    {strings.Replace(refRequest, `steps/toolCallRequest`, `steps/userMessage`, 1), []string{"k1"}, "does not verify"},
		"other key id":    {refRequest, []string{"k2"}, "key_id"},
		"other algorithm": {strings.Replace(refRequest, `"algorithm":"HMAC-SHA256"`, `"algorithm":"ML-DSA-65"`, 1), []string{"k1"}, "not negotiated"},
		"malformed":       {strings.Replace(refRequest, `"key_id":"k1"`, `"key_id":1`, 1), []string{"k1"}, "malformed"},
		"repeated member": {strings.Replace(refRequest, `"params":{`, `"params":{"acs_version":"0.1.0",`, 1), []string{"k1"}, "twice"},
	} {
		_, err := VerifyRequest([]byte(c.raw), key, c.ids...)
		if err == nil || err.Code != CodeSignature || !strings.Contains(err.Message, c.want) {
			t.Errorf("%s: %v, want SIGNATURE_INVALID mentioning %q", name, err, c.want)
		}
	}
}

func TestSignResponse(t *testing.T) {
	key, _ := hex.DecodeString(refSessionKey)
	resp := &Response{JSONRPC: "2.0", ID: json.RawMessage(`"8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10"`), Result: &Result{
		Type: "final", ACSVersion: "0.1.0", RequestID: "8d0b6b0e-4d6b-4f7a-9d1c-1f1c7f0e2a10", Decision: "deny",
		Reasoning: "blocked", ReasonCodes: []string{"destructive_shell_command_blocked"},
		ChainHash: "14e6d50a913e8295606bc0d86ee9cde870040e0e0a319b13ae15836128d0d111"}}
	if err := SignResponse(resp, key, "k1"); err != nil {
		t.Fatal(err)
	}
	if s := resp.Result.Signature; s == nil || s.Value != refResponseSig || s.KeyID != "k1" || s.Algorithm != AlgHMAC {
		t.Fatalf("response signature %+v, want %s", resp.Result.Signature, refResponseSig)
	}
	// The chain head is covered: another head gives another signature.
	resp.Result.ChainHash = strings.Repeat("0", 64)
	SignResponse(resp, key, "k1")
	if resp.Result.Signature.Value == refResponseSig {
		t.Fatal("the signature does not cover chain_hash")
	}
	// Errors are signed in error.signature.
	e := &Response{JSONRPC: "2.0", ID: json.RawMessage(`1`), Error: &Error{Code: CodeReplay, Message: "m"}}
	SignResponse(e, key, "k1")
	input, sig, _ := SigningInput(mustJSON(e), "error")
	if sig == nil || sig.Value != Mac(key, input) || string(input) != `{"error":{"code":-32005,"message":"m"},"id":1,"jsonrpc":"2.0"}` {
		t.Fatalf("error signature %+v over %s", sig, input)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestChain(t *testing.T) {
	h1, err := EntryHash(Entry{EntryID: "1", StepID: "0b2f6f7e-0c1d-4e5f-8a9b-1c2d3e4f5a60", StepType: "steps/sessionStart", Timestamp: "2026-09-19T10:00:00Z"}, "")
	if err != nil || h1 != "1552a42d04ec72f9c18945400488e3f50fba5b3256537db01b705eea66e30373" {
		t.Fatalf("first entry: %s %v", h1, err)
	}
	h3, err := EntryHash(Entry{EntryID: "é-3", StepID: "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f", StepType: "steps/toolCallResult", Timestamp: "2026-09-19T10:00:02Z"},
		"14e6d50a913e8295606bc0d86ee9cde870040e0e0a319b13ae15836128d0d111")
	if err != nil || h3 != "86e28e694a7e762f205dc0739e4764d9cb32ff2c2c03a56ca88ecbbe0f505229" {
		t.Fatalf("chained entry: %s %v", h3, err)
	}
	if _, err := EntryHash(Entry{EntryID: "2"}, "abc"); err == nil {
		t.Fatal("a previous hash that is not 32 bytes was accepted")
	}
	rh, err := RequestHash([]byte(refRequest))
	if err != nil || rh != "1f73e15e340da6bc294e18e38557aef0241921fd3985c94266e1b7416c743058" {
		t.Fatalf("request hash %s %v", rh, err)
	}
}
