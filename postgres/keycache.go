package postgres

import (
	"context"
	"sync"

	"github.com/reinhq/rein"
)

// Keys are read on every request, and change only when one is created or
// revoked. They are kept in memory while this process listens to the
// schema's change channel: a key's creation or revocation commits a
// notification in its own transaction ({"kind":"keys"}), and every replica
// forgets what it remembers when it arrives (this one also as soon as its
// own change commits). While the listener is disconnected nothing is
// remembered, and on reconnecting everything is forgotten (notifications
// may have been missed). A key revoked on another replica therefore stops
// authenticating here once the notification arrives: the time PostgreSQL
// takes to deliver it (milliseconds), never longer than the listener stays
// connected after missing it.
type keyCache struct {
	mu        sync.RWMutex
	listening bool   // the listener is connected: notifications arrive
	gen       uint64 // bumped whenever keys are forgotten
	keys      map[string]*rein.Key
}

// keysChanged is the change notification of a key's creation or revocation.
const keysChanged = `{"kind":"keys"}`

const maxCachedKeys = 10_000

func (c *keyCache) get(hash string) (*rein.Key, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys[hash], c.gen
}

func (c *keyCache) put(k *rein.Key, gen uint64) {
	if k.RevokedAt != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listening || c.gen != gen {
		return
	}
	if c.keys == nil || len(c.keys) >= maxCachedKeys {
		c.keys = map[string]*rein.Key{}
	}
	c.keys[k.SecretHash] = k
}

func (c *keyCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
}

// listen records whether notifications arrive; either way what is
// remembered is forgotten.
func (c *keyCache) listen(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listening = on
	c.gen++
	clear(c.keys)
}

// notifyKeys is added to a transaction that creates or revokes a key.
func (tx *wtx) notifyKeys(ctx context.Context, channel string) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", channel, keysChanged)
	return err
}
