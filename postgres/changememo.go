package postgres

import (
	"context"
	"sync"
)

// changeMemo remembers what is read on every check but changes rarely, and
// only through a transaction that adds a change to the schema's changes
// table (notify.go):
// keys ({"kind":"keys"}: created or revoked) and sessions that are open
// ({"kind":"sessions"}: one was ended). It remembers only while this
// process reads that table; every replica forgets everything when it reads
// the change (this one also as soon as its own change commits). While the
// reader fails nothing is remembered, and when it works again everything
// is forgotten (changes may have been missed). A change made on another
// replica therefore reaches this one within the integrating replica's
// reading interval and its wake-up (milliseconds), or this replica's own
// reading interval (100 ms) when no wake-up comes. A read that raced a change is never remembered (gen).
type changeMemo[V any] struct {
	mu        sync.RWMutex
	listening bool   // the listener is connected: notifications arrive
	gen       uint64 // bumped whenever everything is forgotten
	m         map[string]V
}

// The change notifications the memos follow.
const (
	keysChanged     = `{"kind":"keys"}`
	sessionsChanged = `{"kind":"sessions"}`
)

// maxRemembered bounds each memo; past it, the memo is emptied and refilled.
const maxRemembered = 10_000

// get returns what is remembered under k, and the generation to put a
// fresh read back with.
func (c *changeMemo[V]) get(k string) (V, bool, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok, c.gen
}

// put remembers v under k, unless something was forgotten since gen was
// read (the read may predate the change) or nobody listens.
func (c *changeMemo[V]) put(k string, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listening || c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= maxRemembered {
		c.m = map[string]V{}
	}
	c.m[k] = v
}

func (c *changeMemo[V]) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

// listen records whether notifications arrive; either way what is
// remembered is forgotten.
func (c *changeMemo[V]) listen(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listening = on
	c.gen++
	clear(c.m)
}

// notifyChange is added to a transaction that makes one of the changes
// above (keysChanged, sessionsChanged): the change reaches every replica's
// reader (notify.go) once the transaction commits. channel is unused since
// changes are kept in a table; it stays for the callers.
func (tx *wtx) notifyChange(ctx context.Context, channel, change string) error {
	_, err := tx.Exec(ctx, "INSERT INTO changes (payload) VALUES ($1)", change)
	return err
}
