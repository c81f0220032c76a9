package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// SSEEvent is one event of GET /v1/events.
type SSEEvent struct {
	ID, Type string
	Data     map[string]any
	At       time.Time // when it was read
}

// Subscribe reads /v1/events into a channel until ctx ends.
func Subscribe(t *testing.T, ctx context.Context, url, key, lastID string) <-chan SSEEvent {
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
	out := make(chan SSEEvent, 1000)
	go func() {
		defer res.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		var e SSEEvent
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
				e = SSEEvent{}
			}
		}
	}()
	return out
}

// WaitEvent reads ch until an event of type typ that match accepts
// arrives, for up to 10 seconds.
func WaitEvent(t *testing.T, ch <-chan SSEEvent, typ string, match func(SSEEvent) bool) SSEEvent {
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
