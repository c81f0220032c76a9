package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

// Guard never runs the action when rein cannot say yes: an unreachable
// server, a bad key, a throttle.
func TestGuardFailsClosed(t *testing.T) {
	ctx := context.Background()
	ran := 0
	fn := func(context.Context, json.RawMessage) error { ran++; return nil }

	err := client.New("http://127.0.0.1:9", agentKey).Guard(ctx, "fs.read", map[string]any{"path": "a"}, fn)
	if err == nil || ran != 0 {
		t.Fatalf("unreachable rein: err %v, ran %d; want an error and no run", err, ran)
	}
	var denied *client.DeniedError
	if errors.As(err, &denied) {
		t.Fatalf("unreachable rein is an error, not a decision: %v", err)
	}

	err = client.New(serverURL, "rein_not_a_key").Guard(ctx, "fs.read", map[string]any{"path": "a"}, fn)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "unauthenticated" || apiErr.Status != 401 || ran != 0 {
		t.Fatalf("bad key: err %v, ran %d; want 401 unauthenticated and no run", err, ran)
	}

	c := client.New(serverURL, agentKey)
	if err := c.Guard(ctx, "email.send", map[string]any{"to": "a@example.com"}, fn); err != nil || ran != 1 {
		t.Fatalf("first mail: err %v, ran %d; want it sent", err, ran)
	}
	err = c.Guard(ctx, "email.send", map[string]any{"to": "b@example.com"}, fn)
	if !errors.As(err, &denied) || denied.Decision != rein.Throttle || denied.RetryAfter <= 0 || ran != 1 {
		t.Fatalf("second mail: err %v, ran %d; want throttle with a retry time and no run", err, ran)
	}
}

// An approval's grant runs the action once: a second waiter on the same
// approval is denied.
func TestGrantRunsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := client.New(serverURL, agentKey)
	res, err := c.Check(ctx, rein.CheckRequest{Tool: "payments.transfer", Session: "grant-once", Args: json.RawMessage(`{"to":"a","amount":1}`)})
	if err != nil || res.Decision != rein.Ask {
		t.Fatalf("check: %v %+v", err, res)
	}
	if _, err := client.New(serverURL, approverKey).Vote(ctx, res.Approval.ID, "approve", "", nil); err != nil {
		t.Fatal(err)
	}
	runs := 0
	for i := 0; i < 2; i++ {
		if _, err := c.Decide(ctx, res); err == nil {
			runs++
		} else if !errors.As(err, new(*client.DeniedError)) {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("the grant ran %d times; want 1", runs)
	}
}

// API errors carry rein's code: IsCode matches it.
func TestUnknownApprovalIsNotFound(t *testing.T) {
	_, err := client.New(serverURL, approverKey).Approval(context.Background(), "apr_01JD3M5Q8W2X4Y6Z8A0B2C4D6E")
	if !client.IsCode(err, "not_found") {
		t.Fatalf("unknown approval: %v; want not_found", err)
	}
}
