package sqlite

import (
	"hash/maphash"
	"sync"

	"github.com/reinhq/rein"
)

// The check path reads the caller's key and its session's counters on every
// check. Both are kept in memory here, so that a check reads nothing from
// the database:
//
//   - Keys change only when one is created or revoked. This process does
//     that through its writer, which forgets every remembered key once the
//     change is committed. Another process writing the same file is noticed
//     through PRAGMA data_version, which the writer reads at the start of
//     every write transaction and, when idle, every externalPoll: any commit
//     by another connection makes everything remembered here forgotten. A
//     key revoked by another process therefore stops authenticating within
//     externalPoll (plus the time of one write transaction) of its commit;
//     one revoked through this process stops before the revocation is
//     acknowledged.
//   - A session's counters change only when this process's writer records a
//     check, a result or the session's end; the writer updates them here
//     after the commit and before it answers, so the next check sees what
//     the store holds. The count of earlier checks of one action (repeats)
//     is answered from a filter of the actions seen in the session: an
//     action the filter has never seen has no earlier checks, so the count
//     is 0 without a read; any other action is counted in the database.
//     Sessions this process did not see begin, or after an outside change,
//     have no filter and are counted in the database too.
//
// Entries read from the database are remembered only if nothing was
// forgotten while the read ran (gen), so a read that raced a revocation
// never puts the revoked key back.
type memo struct {
	mu       sync.RWMutex
	gen      uint64                  // bumped whenever keys are forgotten
	keys     map[string]*rein.Key    // active keys by secret hash
	sessions map[sessionID]*sessMemo // sessions by tenant and id
	seed     maphash.Seed
}

type sessionID struct{ tenant, id string }

// sessMemo is a session as committed. seen is nil when the session's earlier
// checks are not all known here (repeats are then counted in the database).
type sessMemo struct {
	s    rein.Session
	seen *actionFilter
}

const (
	maxKeys     = 10_000 // remembered keys; more and the map is emptied
	maxSessions = 4_096  // remembered sessions; more and the map is emptied
)

func newMemo() *memo {
	return &memo{keys: map[string]*rein.Key{}, sessions: map[sessionID]*sessMemo{}, seed: maphash.MakeSeed()}
}

// key returns a remembered active key, and the generation to pass to
// putKey after reading it from the database when it is not remembered.
func (m *memo) key(hash string) (*rein.Key, uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.keys[hash], m.gen
}

// putKey remembers an active key read at generation gen, unless keys were
// forgotten since.
func (m *memo) putKey(k *rein.Key, gen uint64) {
	if k.RevokedAt != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen {
		return
	}
	if len(m.keys) >= maxKeys {
		clear(m.keys)
	}
	m.keys[k.SecretHash] = k
}

// forgetKeys drops every remembered key (a key was created or revoked).
func (m *memo) forgetKeys() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.keys)
}

// forgetAll drops everything remembered: another process changed the file.
func (m *memo) forgetAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.keys)
	clear(m.sessions)
}

// session returns a copy of a remembered session, whether it is remembered,
// and the count of earlier checks of actionHash when that is known here.
func (m *memo) session(tenant, id, actionHash string) (s rein.Session, ok bool, repeats int64, known bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.sessions[sessionID{tenant, id}]
	if e == nil {
		return rein.Session{}, false, 0, false
	}
	s = e.s
	if s.EndedAt != nil {
		t := *s.EndedAt
		s.EndedAt = &t
	}
	if e.seen != nil && !e.seen.mayHave(m.hash(actionHash)) {
		return s, true, 0, true
	}
	return s, true, 0, false
}

// recorded updates a session after a committed check of actionHash; isNew
// says the check created the session (so all its checks are known here).
func (m *memo) recorded(s *rein.Session, actionHash string, isNew bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := sessionID{s.Tenant, s.ID}
	e := m.sessions[k]
	if e == nil {
		if len(m.sessions) >= maxSessions {
			clear(m.sessions)
		}
		e = &sessMemo{}
		if isNew {
			e.seen = &actionFilter{}
		}
		m.sessions[k] = e
	}
	e.s = *s
	if e.seen != nil {
		e.seen.add(m.hash(actionHash))
	}
}

// changed updates a remembered session after a committed change of its
// counters or its end (not a new check).
func (m *memo) changed(s *rein.Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.sessions[sessionID{s.Tenant, s.ID}]; e != nil {
		e.s = *s
	}
}

func (m *memo) hash(actionHash string) uint64 { return maphash.String(m.seed, actionHash) }

// actionFilter is a Bloom filter of the action hashes checked in a session:
// never a false "not seen", rarely a false "seen" (then the database counts).
// 32,768 bits, 4 probes: under 1% false "seen" up to about 2,500 actions,
// a quarter at 20,000.
type actionFilter [filterBits / 64]uint64

const filterBits = 32_768

func (f *actionFilter) add(h uint64) {
	a, b := uint32(h), uint32(h>>32)|1
	for i := uint32(0); i < 4; i++ {
		bit := (a + i*b) & (filterBits - 1)
		f[bit/64] |= 1 << (bit % 64)
	}
}

func (f *actionFilter) mayHave(h uint64) bool {
	a, b := uint32(h), uint32(h>>32)|1
	for i := uint32(0); i < 4; i++ {
		bit := (a + i*b) & (filterBits - 1)
		if f[bit/64]&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}
