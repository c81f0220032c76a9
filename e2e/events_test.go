package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

type sseEvent struct {
	ID, Type string
	Data     map[string]any
	At       time.Time // when it was read
}

// subscribe reads /v1/events into a channel until ctx ends.
func subscribe(t *testing.T, ctx context.Context, url, key, lastID string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("subscribe: %v %v", err, res)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	out := make(chan sseEvent, 1000)
	go func() {
		defer res.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				e.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &e.Data)
			case line == "" && e.Type != "":
				e.At = time.Now()
				out <- e
				e = sseEvent{}
			}
		}
	}()
	return out
}

func waitEvent(t *testing.T, ch <-chan sseEvent, typ string, match func(sseEvent) bool) sseEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before a %s event", typ)
			}
			if e.Type == typ && match(e) {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event within 10 s", typ)
		}
	}
}

// TestEvents: an approver's stream carries approval.created as the agent
// asks, the vote's approval.updated, decisions and lock changes of its
// tenant only, and resumes from Last-Event-ID with what it missed.
func TestEvents(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := subscribe(t, ctx, e.S.URL, e.Keys["alice"], "")
	other := subscribe(t, ctx, e.S.URL, e.Keys["eve"], "")
	time.Sleep(100 * time.Millisecond)

	asked := time.Now()
	a := e.Check("builder", "deploy", "ev1", `{"svc":"api"}`)
	// The decision is published first, then the approval it created.
	waitEvent(t, stream, "decision", func(x sseEvent) bool { return x.Data["id"] == a.ID && x.Data["decision"] == "ask" })
	created := waitEvent(t, stream, "approval.created", func(x sseEvent) bool { return x.Data["id"] == a.Approval.ID })
	t.Logf("approval.created reached the subscriber %s after the check was sent", created.At.Sub(asked).Round(time.Millisecond))
	if code, _ := e.Vote("alice", a.Approval.ID, "approve", ""); code != 200 {
		t.Fatal("vote failed")
	}
	upd := waitEvent(t, stream, "approval.updated", func(x sseEvent) bool { return x.Data["id"] == a.Approval.ID })
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
	resumed := subscribe(t, ctx2, e.S.URL, e.Keys["alice"], upd.ID)
	got := waitEvent(t, resumed, "approval.created", func(x sseEvent) bool { return x.Data["id"] == b.Approval.ID })
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
