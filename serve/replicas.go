package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/pipeline"
)

// relay carries changes between replicas sharing one PostgreSQL: waiters
// of approvals and questions are woken on every replica, events stream
// from every replica, and locks and policies are reloaded at once. It
// sends with NOTIFY (through the store) and receives what the store's
// listener hears. Sending never blocks the decision path: messages queue,
// and one goroutine sends them in batches.
//
// Events are sent only while another replica has an event stream open, or
// had one in the last minutes (linger): no other consumer takes events
// from other replicas (webhooks and notifications are sent by the replica
// that published the event), and a decision event for every check is most
// of the notification traffic. A replica with a stream announces it every
// few seconds, and at once when its first stream opens; a replica that
// has heard no announcement for a while stops sending events. A replica
// that starts, or whose listener reconnects, sends events until it knows
// better.
type relay struct {
	store  sharedStore
	origin string // this replica: its own messages come back and are ignored
	own    string // how this replica's own messages begin (ownPrefix)
	log    *slog.Logger
	pipe   *pipeline.Pipeline
	bus    *events.Bus
	pols   *Policies

	out chan relayMessage // to send
	in  chan string       // received payloads, handled in order

	now      func() time.Time
	wanted   atomic.Int64 // unix nanoseconds until which another replica wants events
	streamed time.Time    // when this replica last had a stream open (run's goroutine only)
}

// How streams are announced between replicas.
const (
	announceEvery = 2 * time.Second
	// announceValid is how long an announcement keeps events flowing: a
	// few announcements may be late or lost before they stop.
	announceValid = 3 * announceEvery
	// streamLinger is how long a replica keeps announcing after its last
	// stream closed, so that a stream resumed within it (Last-Event-ID)
	// finds every replica's events in this replica's ring.
	streamLinger = 5 * time.Minute
)

// relayMessage is one change, as JSON in a notification.
type relayMessage struct {
	Origin string          `json:"o"`
	Kind   string          `json:"k"` // wake, event, locks, policy, streams
	ID     string          `json:"id,omitempty"`
	Type   string          `json:"t,omitempty"`
	Tenant string          `json:"tn,omitempty"`
	At     time.Time       `json:"at,omitzero"`
	Data   json.RawMessage `json:"d,omitempty"`
}

func newRelay(store sharedStore, log *slog.Logger) *relay {
	r := newRelayAt(time.Now)
	r.store, r.log = store, log
	return r
}

// newRelayAt is newRelay on a clock, without a store.
func newRelayAt(now func() time.Time) *relay {
	origin := rein.NewID("rep")
	r := &relay{origin: origin, own: ownPrefix(origin), now: now,
		out: make(chan relayMessage, 8192), in: make(chan string, 8192)}
	r.assumeWanted()
	return r
}

// assumeWanted sends events for a while, as if a stream had been announced:
// on start, and when announcements may have been missed.
func (r *relay) assumeWanted() { r.wanted.Store(r.now().Add(announceValid).UnixNano()) }

// announce tells the other replicas that a stream here wants their events.
func (r *relay) announce() { r.send(relayMessage{Kind: "streams"}) }

// announceIfStreamed runs every announceEvery: it announces while a stream
// is open here and for streamLinger after the last one closed.
func (r *relay) announceIfStreamed() {
	now := r.now()
	if r.bus.Watched() {
		r.streamed = now
	}
	if !r.streamed.IsZero() && now.Sub(r.streamed) < streamLinger {
		r.announce()
	}
}

// ownPrefix is how every message sent from origin begins: Origin is the
// first field of relayMessage, and JSON writes fields in order. Every
// decision event comes back to the replica that sent it, so its own are
// told apart before anything is decoded.
func ownPrefix(origin string) string {
	b, _ := json.Marshal(origin)
	return `{"o":` + string(b) + ","
}

// send queues a message; when the queue is full it is dropped (the other
// replicas' waiters still poll every second) and said so.
func (r *relay) send(m relayMessage) {
	m.Origin = r.origin
	select {
	case r.out <- m:
	default:
		r.log.Warn("relay queue full; a change was not announced to the other replicas", "kind", m.Kind, "id", m.ID)
	}
}

// Changed implements pipeline.Replicas.
func (r *relay) Changed(id string) { r.send(relayMessage{Kind: "wake", ID: id}) }

// LocksChanged implements pipeline.Replicas.
func (r *relay) LocksChanged() { r.send(relayMessage{Kind: "locks"}) }

// published is the bus's OnPublish: every local event goes to the others.
func (r *relay) published(e events.Event) {
	if r.now().UnixNano() > r.wanted.Load() {
		return // no other replica has a stream open
	}
	r.send(relayMessage{Kind: "event", Type: e.Type, Tenant: e.Tenant, At: e.At, Data: e.Data})
}

// policyChanged tells the others to load the policies from the store.
func (r *relay) policyChanged() { r.send(relayMessage{Kind: "policy"}) }

// receive is the store's subscriber; it must not block.
func (r *relay) receive(payload string) {
	select {
	case r.in <- payload:
	default:
		r.log.Warn("relay: too many changes from other replicas at once; reloading")
		select {
		case r.in <- "": // a resync instead
		default:
		}
	}
}

// run sends and handles messages until ctx ends. Locks are also reloaded
// every few seconds, so that a replica whose notifications were lost
// catches up.
func (r *relay) run(ctx context.Context) {
	go r.sender(ctx)
	reload := time.NewTicker(5 * time.Second)
	defer reload.Stop()
	streams := time.NewTicker(announceEvery)
	defer streams.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-streams.C:
			r.announceIfStreamed()
		case <-reload.C:
			r.reloadLocks(ctx)
		case p := <-r.in:
			r.handle(ctx, p)
		}
	}
}

func (r *relay) sender(ctx context.Context) {
	for {
		var batch []string
		select {
		case <-ctx.Done():
			return
		case m := <-r.out:
			b, _ := json.Marshal(m)
			batch = append(batch, string(b))
		}
	more:
		for len(batch) < 256 {
			select {
			case m := <-r.out:
				b, _ := json.Marshal(m)
				batch = append(batch, string(b))
			default:
				break more
			}
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := r.store.Notify(sctx, batch...)
		cancel()
		if err != nil && ctx.Err() == nil {
			r.log.Warn("changes could not be announced to the other replicas; they catch up by polling", "count", len(batch), "err", err)
		}
	}
}

func (r *relay) handle(ctx context.Context, payload string) {
	if payload == "" { // (re)connected: anything may have been missed
		r.assumeWanted()
		r.reloadLocks(ctx)
		r.reloadPolicies(ctx)
		return
	}
	if strings.HasPrefix(payload, r.own) {
		return
	}
	var m relayMessage
	if err := json.Unmarshal([]byte(payload), &m); err != nil || m.Origin == r.origin {
		return
	}
	switch m.Kind {
	case "streams":
		r.wanted.Store(r.now().Add(announceValid).UnixNano())
	case "wake":
		r.pipe.Wake(m.ID)
	case "event":
		r.bus.Inject(events.Event{Type: m.Type, Tenant: m.Tenant, At: m.At, Data: m.Data})
	case "locks":
		r.reloadLocks(ctx)
	case "policy":
		r.reloadPolicies(ctx)
	}
}

func (r *relay) reloadLocks(ctx context.Context) {
	if err := r.pipe.LoadLocks(ctx); err != nil && ctx.Err() == nil {
		r.log.Warn("reloading locks failed", "err", err)
	}
}

func (r *relay) reloadPolicies(ctx context.Context) {
	if err := r.pols.Restore(ctx); err != nil && ctx.Err() == nil {
		r.log.Warn("reloading policies failed", "err", err)
	}
}
