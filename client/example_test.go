package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/serve"
)

// The examples run against a real rein server started in this process with
// the policy below; agentKey, approverKey and serverURL are set by TestMain.
var serverURL, agentKey, approverKey string

const examplePolicy = `
version: 1
default: deny
approval:
  approvers: ["role:approver"]
rules:
  - id: reads
    when: 'tool == "fs.read"'
    decision: allow
  - id: no-deletes
    when: 'tool == "fs.delete"'
    decision: deny
    reason: "deleting files is not allowed"
  - id: payments
    when: 'tool == "payments.transfer"'
    decision: ask
    reason: "payments need an approval"
  - id: strip-auth
    when: 'tool == "http.post" && has(args.headers) && "Authorization" in args.headers'
    decision: modify
    modify: {remove: ["headers.Authorization"]}
  - id: posts
    when: 'tool == "http.post"'
    decision: allow
  - id: mail
    when: 'tool == "email.send"'
    decision: allow
  - id: mail-rate
    when: 'tool == "email.send"'
    limit: {rate: 1, per: 1h, by: [agent]}
`

func TestMain(m *testing.M) {
	code, err := runWithServer(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client examples:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func runWithServer(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "rein-client-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(examplePolicy), 0o600); err != nil {
		return 0, err
	}
	ctx := context.Background()
	srv, err := serve.Start(ctx, serve.Config{Data: filepath.Join(dir, "data"), Listen: "127.0.0.1:0", Policy: pol},
		slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		return 0, err
	}
	defer srv.Shutdown(ctx)
	admin, err := os.ReadFile(filepath.Join(dir, "data", "admin.key"))
	if err != nil {
		return 0, err
	}
	serverURL = "http://" + srv.Addr
	a := client.New(serverURL, strings.TrimSpace(string(admin)))
	for name, role := range map[string]rein.Role{"builder": rein.RoleAgent, "alice": rein.RoleApprover} {
		k, err := a.CreateKey(ctx, client.NewKey{Name: name, Tenant: "acme", Roles: []rein.Role{role}})
		if err != nil {
			return 0, err
		}
		if role == rein.RoleAgent {
			agentKey = k.Secret
		} else {
			approverKey = k.Secret
		}
	}
	return m.Run(), nil
}

// approveWhenAsked stands in for a person in the console: it waits for a
// pending approval and votes on it.
func approveWhenAsked(vote, message string, args json.RawMessage) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	approver := client.New(serverURL, approverKey)
	for ctx.Err() == nil {
		pending, err := approver.Approvals(ctx, client.ApprovalQuery{Status: "pending"})
		if err == nil && len(pending) > 0 {
			approver.Vote(ctx, pending[0].ID, vote, message, args)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func Example() {
	ctx := context.Background()
	c := client.New(serverURL, agentKey)

	res, err := c.Check(ctx, rein.CheckRequest{Tool: "fs.delete", Args: json.RawMessage(`{"path":"notes.txt"}`)})
	if err != nil {
		fmt.Println("rein unreachable or the request is wrong:", err)
		return
	}
	fmt.Println(res.Decision, "-", res.Reason)
	// Output: deny - deleting files is not allowed
}

func ExampleClient_Guard() {
	ctx := context.Background()
	c := client.New(serverURL, agentKey)

	readFile := func(ctx context.Context, args json.RawMessage) error {
		var a struct{ Path string }
		if err := json.Unmarshal(args, &a); err != nil {
			return err
		}
		fmt.Println("reading", a.Path)
		return nil
	}
	if err := c.Guard(ctx, "fs.read", map[string]any{"path": "README.md"}, readFile); err != nil {
		fmt.Println(err)
	}

	err := c.Guard(ctx, "fs.delete", map[string]any{"path": "README.md"}, func(context.Context, json.RawMessage) error {
		panic("never runs: rein denies it")
	})
	var denied *client.DeniedError
	if errors.As(err, &denied) {
		fmt.Printf("%s by rule %s: %s\n", denied.Decision, denied.Rule, denied.Reason)
	}
	// Output:
	// reading README.md
	// deny by rule no-deletes: deleting files is not allowed
}

// A modify decision runs the action with the arguments rein returns.
func ExampleClient_Guard_modify() {
	ctx := context.Background()
	c := client.New(serverURL, agentKey)
	args := map[string]any{"url": "https://example.com/hook", "headers": map[string]any{"Authorization": "Bearer s3cret", "Accept": "text/plain"}}
	c.Guard(ctx, "http.post", args, func(ctx context.Context, args json.RawMessage) error {
		fmt.Println(string(args))
		return nil
	})
	// Output: {"headers":{"Accept":"text/plain"},"url":"https://example.com/hook"}
}

// When rein asks, Guard waits for a person; an approver's edit is what runs.
func ExampleClient_Guard_approval() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(serverURL, agentKey)

	go approveWhenAsked("edit", "50 is enough", json.RawMessage(`{"to":"acct-7","amount":50}`))

	err := c.GuardCheck(ctx, rein.CheckRequest{Tool: "payments.transfer", Session: "run-1",
		Args: json.RawMessage(`{"to":"acct-7","amount":500}`), Intent: "pay the invoice"},
		func(ctx context.Context, args json.RawMessage) error {
			fmt.Println("transferring", string(args))
			return nil
		})
	fmt.Println("error:", err)
	// Output:
	// transferring {"amount":50,"to":"acct-7"}
	// error: <nil>
}

// A rejection reaches the agent as a *DeniedError with the approver's message.
func ExampleDeniedError() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(serverURL, agentKey)

	go approveWhenAsked("reject", "wrong account", nil)

	err := c.Guard(ctx, "payments.transfer", map[string]any{"to": "acct-9", "amount": 20},
		func(context.Context, json.RawMessage) error { panic("never runs: rejected") })
	var denied *client.DeniedError
	if errors.As(err, &denied) {
		fmt.Println(denied.Decision, "-", denied.Reason, "- approval", denied.Approval.Status)
	}
	// Output: deny - rejected by alice: wrong account - approval rejected
}

// An approval still pending when the caller gives up is a DeniedError that
// reports Pending and wraps the context's error.
func ExampleDeniedError_pending() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c := client.New(serverURL, agentKey)

	err := c.Guard(ctx, "payments.transfer", map[string]any{"to": "acct-3", "amount": 5},
		func(context.Context, json.RawMessage) error { panic("never runs: nobody approved") })
	var denied *client.DeniedError
	if errors.As(err, &denied) {
		fmt.Println(denied.Pending(), errors.Is(err, context.DeadlineExceeded))
		c.Cancel(context.Background(), denied.ApprovalID) // withdraw the request
	}
	// Output: true true
}

// Rein's errors carry the API's code and a message saying how to fix the request.
func ExampleError() {
	c := client.New(serverURL, agentKey)
	_, err := c.Check(context.Background(), rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`["not","an","object"]`)})
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, "-", e.Message)
	}
	// Output: 400 bad_request - "args" must be a JSON object, e.g. {"command": "ls"}
}

// Agents put questions to people and wait for the answer.
func ExampleClient_Ask() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(serverURL, agentKey)

	q, err := c.Ask(ctx, rein.QuestionRequest{Session: "run-2", Text: "Which region?", Choices: []string{"eu-west", "us-east"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	go client.New(serverURL, approverKey).Answer(ctx, q.ID, "eu-west") // a person answers

	answered, err := c.WaitAnswer(ctx, q.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	var region string
	json.Unmarshal(answered.Answer, &region)
	fmt.Println(region, "answered by", answered.AnsweredBy)
	// Output: eu-west answered by alice
}
