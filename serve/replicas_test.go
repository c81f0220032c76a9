package serve

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/events"
)

// A replica's own messages, which every notification brings back to it,
// are recognised by how they begin; another replica's never are, even one
// whose id extends this one's.
func TestOwnRelayMessagesAreRecognisedBeforeDecoding(t *testing.T) {
	msg := func(origin string) string {
		b, err := json.Marshal(relayMessage{Origin: origin, Kind: "event", ID: "apr_1", Type: "decision", Tenant: "acme",
			At: time.Now(), Data: json.RawMessage(`{"o":"rep_1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	own := ownPrefix("rep_1")
	if !strings.HasPrefix(msg("rep_1"), own) {
		t.Errorf("%s does not begin with %s", msg("rep_1"), own)
	}
	for _, other := range []string{"rep_12", "rep_", "rep_2", `rep_1"`} {
		if strings.HasPrefix(msg(other), own) {
			t.Errorf("a message from %q is taken for rep_1's: %s", other, msg(other))
		}
	}
}

// Events go to the other replicas only while one of them announces an open
// stream (and at first, until it is known whether any does); a replica
// announces while it has a stream open and for a while after.
func TestEventsRelayedOnlyWhileAnotherReplicaStreams(t *testing.T) {
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	r := newRelayAt(func() time.Time { return clock })
	r.bus = &events.Bus{}
	sent := func() (kinds []string) {
		for {
			select {
			case m := <-r.out:
				kinds = append(kinds, m.Kind)
			default:
				return kinds
			}
		}
	}
	publish := func() {
		r.published(events.Event{Type: events.Decision, Tenant: "acme", At: clock, Data: json.RawMessage(`{}`)})
	}

	publish() // just started: sent, in case another replica streams
	if got := sent(); !slices.Equal(got, []string{"event"}) {
		t.Fatalf("at start: sent %v", got)
	}
	clock = clock.Add(announceValid + time.Second)
	publish()
	if got := sent(); len(got) != 0 {
		t.Fatalf("no stream announced: sent %v", got)
	}
	other, _ := json.Marshal(relayMessage{Origin: "rep_other", Kind: "streams"})
	r.handle(t.Context(), string(other))
	publish()
	if got := sent(); !slices.Equal(got, []string{"event"}) {
		t.Fatalf("after another replica announced a stream: sent %v", got)
	}
	own, _ := json.Marshal(relayMessage{Origin: r.origin, Kind: "streams"})
	clock = clock.Add(announceValid + time.Second)
	r.handle(t.Context(), string(own)) // its own announcement, come back
	publish()
	if got := sent(); len(got) != 0 {
		t.Fatalf("after its own announcement only: sent %v", got)
	}
	r.assumeWanted() // as handle does when the listener reconnects: announcements may be lost
	publish()
	if got := sent(); !slices.Equal(got, []string{"event"}) {
		t.Fatalf("after reconnecting: sent %v", got)
	}

	// Announcing: nothing without a stream; at once when the first opens;
	// on every tick while open and for streamLinger after.
	r.announceIfStreamed()
	if got := sent(); len(got) != 0 {
		t.Fatalf("no stream: announced %v", got)
	}
	r.bus.OnWatch = r.announce
	ch := r.bus.Watch()
	if got := sent(); !slices.Equal(got, []string{"streams"}) {
		t.Fatalf("first stream: sent %v", got)
	}
	r.bus.Watch() // a second stream: no new announcement
	r.announceIfStreamed()
	if got := sent(); !slices.Equal(got, []string{"streams"}) {
		t.Fatalf("tick with streams open: sent %v", got)
	}
	r.bus.Unwatch(ch)
	r.bus.Unwatch(ch)
	clock = clock.Add(streamLinger - time.Second)
	r.announceIfStreamed()
	if got := sent(); !slices.Equal(got, []string{"streams"}) {
		t.Fatalf("within the linger: sent %v", got)
	}
	clock = clock.Add(2 * time.Second)
	r.announceIfStreamed()
	if got := sent(); len(got) != 0 {
		t.Fatalf("after the linger: sent %v", got)
	}
}
