// Package events is rein's event stream: a bus that keeps the latest
// events in a ring (for Last-Event-ID resume) and wakes subscribers without
// ever blocking the publisher, which is the decision path.
package events

import (
	"encoding/json"
	"sync"
	"time"
)

// Event types (api.md, Events).
const (
	ApprovalCreated = "approval.created"
	ApprovalUpdated = "approval.updated"
	QuestionCreated = "question.created"
	QuestionUpdated = "question.updated"
	Decision        = "decision"
	LockUpdated     = "lock.updated"
	PolicyUpdated   = "policy.updated"
	ReviewCreated   = "review.created"
	ReviewUpdated   = "review.decided"
)

// Types lists every event type.
var Types = []string{ApprovalCreated, ApprovalUpdated, QuestionCreated, QuestionUpdated, Decision, LockUpdated, PolicyUpdated,
	ReviewCreated, ReviewUpdated}

// Event is one published event.
type Event struct {
	ID     int64           `json:"id"`
	Type   string          `json:"type"`
	Tenant string          `json:"tenant"` // the tenant whose record it is (see For)
	At     time.Time       `json:"at"`
	Data   json.RawMessage `json:"data"`
	// Remote is true for an event another replica published (and relayed
	// here): it streams to subscribers, but its webhooks are sent by the
	// replica that published it.
	Remote bool `json:"-"`
}

// AllTenants is the tenant of events about the whole deployment and of
// records made with keys that administer every tenant.
const AllTenants = "*"

// everyTenant are the event types that, published for tenant "*", concern
// every tenant: a change of the global policy tier, and a lock of tenant "*"
// (which stops every tenant's matching checks). Every other record of
// tenant "*" (checks, approvals and questions made with a key of tenant
// "*") belongs to tenant "*" alone, like a record of any other tenant.
var everyTenant = map[string]bool{PolicyUpdated: true, LockUpdated: true}

// For reports whether the event belongs in the view of tenant: its own
// records, and the deployment-wide changes above. Tenant "*" sees every event.
func (e *Event) For(tenant string) bool {
	return tenant == AllTenants || e.Tenant == tenant || e.Tenant == AllTenants && everyTenant[e.Type]
}

// Keep is how many events the ring holds.
const Keep = 10000

// Bus is the event stream of one server.
type Bus struct {
	mu   sync.Mutex
	ring []Event // the latest events, oldest first once full (circular)
	head int     // where the next event goes once the ring is full
	next int64   // the next event's id
	subs map[chan struct{}]struct{}
	// watchers counts the subscriptions from Watch: event streams, which
	// show other replicas' events too.
	watchers int

	// OnWatch, when set, is called when the first stream starts watching
	// (Watch). It must not block.
	OnWatch func()
	// OnPublish, when set, is called with every event published here (not
	// those injected from other replicas), after subscribers are woken. It
	// must not block: it runs on the decision path.
	OnPublish func(Event)
}

// Publish adds an event and wakes every subscriber. It never blocks on a
// subscriber.
func (b *Bus) Publish(typ, tenant string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	e := b.add(Event{Type: typ, Tenant: tenant, At: time.Now().UTC(), Data: raw})
	if b.OnPublish != nil {
		b.OnPublish(e)
	}
}

// Inject adds an event that another replica published; it gets an id of
// this bus.
func (b *Bus) Inject(e Event) {
	e.Remote = true
	b.add(e)
}

func (b *Bus) add(e Event) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	e.ID = b.next
	if len(b.ring) < Keep {
		b.ring = append(b.ring, e)
	} else {
		b.ring[b.head] = e
		b.head = (b.head + 1) % Keep
	}
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default: // already signalled: it will read everything new
		}
	}
	return e
}

// Since returns the held events with ids after id that keep accepts, oldest
// first, and the id of the last event looked at.
func (b *Bus) Since(id int64, keep func(*Event) bool) ([]Event, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Event
	// The ring holds the ids next-n+1 … next, oldest first from head: start
	// at id+1 instead of looking at all of them (every subscriber calls this
	// after every event, on a busy server thousands of times a second).
	n := len(b.ring)
	skip := 0
	if oldest := b.next - int64(n) + 1; id >= oldest {
		skip = int(id - oldest + 1)
	}
	for i := skip; i < n; i++ {
		e := &b.ring[(b.head+i)%n]
		if keep(e) {
			out = append(out, *e)
		}
	}
	return out, b.next
}

// Last is the id of the latest event.
func (b *Bus) Last() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next
}

// Subscribe returns a channel signalled after new events; Unsubscribe
// releases it.
func (b *Bus) Subscribe() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	ch := make(chan struct{}, 1)
	b.subs[ch] = struct{}{}
	return ch
}

// Unsubscribe stops signalling ch.
func (b *Bus) Unsubscribe(ch chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, ch)
}

// Watch is Subscribe for an event stream (GET /v1/events), which shows the
// events of every replica: while one watches, other replicas send theirs
// here. Unwatch releases it.
func (b *Bus) Watch() chan struct{} {
	ch := b.Subscribe()
	b.mu.Lock()
	b.watchers++
	first := b.watchers == 1
	b.mu.Unlock()
	if first && b.OnWatch != nil {
		b.OnWatch()
	}
	return ch
}

// Unwatch stops signalling a channel from Watch.
func (b *Bus) Unwatch(ch chan struct{}) {
	b.Unsubscribe(ch)
	b.mu.Lock()
	b.watchers--
	b.mu.Unlock()
}

// Watched reports whether a stream watches (Watch).
func (b *Bus) Watched() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.watchers > 0
}
