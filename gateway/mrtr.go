package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// Clients on protocol 2026-07-28 are asked with the Multi Round-Trip
// Requests pattern (basic/patterns/mrtr): the call is answered with an
// input_required result carrying a form for the user, and the client
// retries the call with the user's answer and the requestState it got.
// The state is rein's, sealed with a key of this gateway: it binds the
// answer to one approval, one tool and one set of arguments.

// approvalInput is the key of rein's form among a result's inputRequests.
const approvalInput = "rein_approval"

// statePrefix marks a requestState as rein's; any other is the upstream's
// own and passes through with the retry.
const statePrefix = "rein1."

// stateTTL bounds how long a client may take to answer the form.
const stateTTL = time.Hour

type approvalState struct {
	Approval string `json:"a"`
	Tool     string `json:"t"`
	Args     string `json:"h"` // SHA-256 of the canonical arguments
	Expires  int64  `json:"e"` // Unix seconds
}

func (g *Gateway) stateKey() []byte {
	g.keyOnce.Do(func() {
		g.key = make([]byte, 32)
		rand.Read(g.key)
	})
	return g.key
}

func (g *Gateway) seal(st approvalState) string {
	b, _ := json.Marshal(st)
	p := base64.RawURLEncoding.EncodeToString(b)
	mac := hmac.New(sha256.New, g.stateKey())
	mac.Write([]byte(p))
	return statePrefix + p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

var (
	errStateForged  = errors.New("it was not issued by this gateway or was changed")
	errStateExpired = errors.New("it has expired")
)

func (g *Gateway) unseal(s string, now time.Time) (approvalState, error) {
	var st approvalState
	p, sig, ok := strings.Cut(strings.TrimPrefix(s, statePrefix), ".")
	want := hmac.New(sha256.New, g.stateKey())
	want.Write([]byte(p))
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, want.Sum(nil)) {
		return st, errStateForged
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || json.Unmarshal(b, &st) != nil {
		return st, errStateForged
	}
	if now.Unix() > st.Expires {
		return st, errStateExpired
	}
	return st, nil
}

func argsDigest(args json.RawMessage) string {
	c, err := rein.Canonical(args)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(c)
	return hex.EncodeToString(h[:])
}

// approvalForm is the form elicitation that asks the client's user.
func approvalForm(tool string, a *rein.Approval) map[string]any {
	args, _ := json.MarshalIndent(json.RawMessage(a.Args), "", "  ")
	return map[string]any{
		"mode":    "form",
		"message": fmt.Sprintf("rein: %s needs your approval.\nReason: %s\nArguments:\n%s\nAccept to approve this exact call, decline to reject it.", tool, a.Reason, args),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"note": map[string]any{"type": "string", "title": "Note", "description": "Why (optional; kept in rein's audit log)"},
		}},
	}
}

// inputRequired answers a call with rein's form and a sealed state.
func (s *relay) inputRequired(m *jsonrpc.Request, tool string, a *rein.Approval, args json.RawMessage) jsonrpc.Message {
	st := s.g.seal(approvalState{Approval: a.ID, Tool: tool, Args: argsDigest(args), Expires: time.Now().Add(stateTTL).Unix()})
	result, _ := json.Marshal(map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{
			approvalInput: map[string]any{"method": "elicitation/create", "params": approvalForm(tool, a)},
		},
		"requestState": st,
	})
	return &jsonrpc.Response{ID: m.ID, Result: result}
}

// reinState returns the call's requestState if it is rein's.
func reinState(params map[string]json.RawMessage) (string, bool) {
	var st string
	if json.Unmarshal(params["requestState"], &st) != nil || !strings.HasPrefix(st, statePrefix) {
		return "", false
	}
	return st, true
}

// resume handles the retry of a call rein answered with input_required:
// the state must be rein's, unexpired, and name this very call; the user's
// answer becomes the client's vote, and the call then waits for rein's
// decision as any other. Nothing of rein's round trip reaches the upstream.
func (s *relay) resume(ctx context.Context, m *jsonrpc.Request, params map[string]json.RawMessage, tool string, args json.RawMessage, state string, meta callMeta) jsonrpc.Message {
	st, err := s.g.unseal(state, time.Now())
	if err != nil {
		return s.refuse(ctx, m, fmt.Sprintf("the retry of %s carries a requestState rein cannot accept (%v); the call was not forwarded", tool, err))
	}
	if st.Tool != tool || st.Args != argsDigest(args) {
		return s.refuse(ctx, m, fmt.Sprintf("the retry of %s is not the call approval %s was asked for (its tool or arguments differ); the call was not forwarded", tool, st.Approval))
	}
	a, err := s.rein.Approval(ctx, st.Approval)
	if err != nil {
		return s.refuse(ctx, m, s.unreachable(tool, err))
	}
	if a.Tool != tool || !approval.AsksClient(a) {
		return s.refuse(ctx, m, fmt.Sprintf("approval %s is not the client's to answer for %s; the call was not forwarded", a.ID, tool))
	}
	var responses map[string]json.RawMessage
	json.Unmarshal(params["inputResponses"], &responses)
	raw, ok := responses[approvalInput]
	if !ok {
		// Asked again, as MRTR asks of a retry without the answer.
		return s.inputRequired(m, tool, a, args)
	}
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Note string `json:"note"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return s.refuse(ctx, m, fmt.Sprintf("%s needs approval %s and the client's answer was not usable; the call was not forwarded", tool, a.ID))
	}
	if answer := s.vote(ctx, m, tool, a, r.Action, r.Content.Note); answer != nil {
		return answer
	}
	delete(params, "requestState")
	delete(params, "inputResponses")
	p, err := json.Marshal(params)
	if err != nil {
		return s.refuse(ctx, m, "the call could not be encoded; it was not forwarded")
	}
	retry := &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: p}
	return s.await(ctx, retry, params, tool, a.ID, a.Reason, "", meta)
}
