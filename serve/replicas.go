package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
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
}

// relayMessage is one change, as JSON in a notification.
type relayMessage struct {
	Origin string          `json:"o"`
	Kind   string          `json:"k"` // wake, event, locks, policy
	ID     string          `json:"id,omitempty"`
	Type   string          `json:"t,omitempty"`
	Tenant string          `json:"tn,omitempty"`
	At     time.Time       `json:"at,omitzero"`
	Data   json.RawMessage `json:"d,omitempty"`
}

func newRelay(store sharedStore, log *slog.Logger) *relay {
	origin := rein.NewID("rep")
	return &relay{store: store, origin: origin, own: ownPrefix(origin), log: log,
		out: make(chan relayMessage, 8192), in: make(chan string, 8192)}
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
	for {
		select {
		case <-ctx.Done():
			return
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
