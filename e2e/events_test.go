package e2e

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestEvents: an approver's stream carries approval.created as the agent
// asks, the vote's approval.updated, decisions and lock changes of its
// tenant only, and resumes from Last-Event-ID with what it missed.
func TestEvents(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := harness.Subscribe(t, ctx, e.S.URL, e.Keys["alice"], "")
	other := harness.Subscribe(t, ctx, e.S.URL, e.Keys["eve"], "")
	time.Sleep(100 * time.Millisecond)

	asked := time.Now()
	a := e.Check("builder", "deploy", "ev1", `{"svc":"api"}`)
	// The decision is published first, then the approval it created.
	harness.WaitEvent(t, stream, "decision", func(x harness.SSEEvent) bool { return x.Data["id"] == a.ID && x.Data["decision"] == "ask" })
	created := harness.WaitEvent(t, stream, "approval.created", func(x harness.SSEEvent) bool { return x.Data["id"] == a.Approval.ID })
	t.Logf("approval.created reached the subscriber %s after the check was sent", created.At.Sub(asked).Round(time.Millisecond))
	if code, _ := e.Vote("alice", a.Approval.ID, "approve", ""); code != 200 {
		t.Fatal("vote failed")
	}
	upd := harness.WaitEvent(t, stream, "approval.updated", func(x harness.SSEEvent) bool { return x.Data["id"] == a.Approval.ID })
	if upd.Data["status"] != "approved" {
		t.Fatalf("approval.updated after the vote: %v", upd.Data)
	}

	// The other tenant's stream saw none of it.
	select {
	case x := <-other:
		if x.Data["tenant"] == "acme" {
			t.Fatalf("another tenant's approver received %s of acme", x.Type)
		}
	case <-time.After(300 * time.Millisecond):
	}

	// Resume: events after `upd` that this subscriber missed are replayed.
	cancel()
	b := e.Check("builder", "deploy", "ev2", `{"svc":"web"}`)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	resumed := harness.Subscribe(t, ctx2, e.S.URL, e.Keys["alice"], upd.ID)
	got := harness.WaitEvent(t, resumed, "approval.created", func(x harness.SSEEvent) bool { return x.Data["id"] == b.Approval.ID })
	if g, u := atoi(got.ID), atoi(upd.ID); g <= u {
		t.Fatalf("resumed event id %s is not after %s", got.ID, upd.ID)
	}
	if code, _ := harness.HTTPDo(t, "GET", e.S.URL+"/v1/events", e.Keys["builder"], nil, ""); code != http.StatusForbidden {
		t.Errorf("an agent key subscribed: %d", code)
	}
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
