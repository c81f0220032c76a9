package postgres

import (
	"context"
	"sync"
)

// Replicas tell each other about changes through one NOTIFY channel per
// schema: Notify sends a payload to every process using the schema (this
// one included), and Subscribe receives them. Notifications are sent when
// the sending transaction commits and are not kept: a process that was
// disconnected receives Resync once it listens again, and must reload what
// it keeps in memory.

// Resync is delivered to subscribers when the listener (re)connects:
// notifications may have been missed.
const Resync = ""

type subscribers struct {
	mu  sync.Mutex
	fns []func(string)
}

func (s *subscribers) deliver(payload string) {
	s.mu.Lock()
	fns := append([]func(string){}, s.fns...)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(payload)
	}
}

// Subscribe calls fn with the payload of every notification (from any
// replica, this one included), in the listener's goroutine: fn must not
// block.
func (db *DB) Subscribe(fn func(payload string)) {
	db.subs.mu.Lock()
	db.subs.fns = append(db.subs.fns, fn)
	db.subs.mu.Unlock()
}

// Notify sends payload to every replica (at most 8000 bytes).
func (db *DB) Notify(ctx context.Context, payload string) error {
	_, err := db.pool.Exec(ctx, "SELECT pg_notify($1, $2)", db.chChange, payload)
	return err
}
