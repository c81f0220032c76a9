package rein

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

var (
	idMu   sync.Mutex
	idLast struct {
		ms uint64
		hi uint16
		lo uint64
	}
)

// crockford is the ULID alphabet: sortable, no I, L, O, U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix + "_" + a ULID: 48 bits of milliseconds then 80 random
// bits, so ids sort by creation time and never collide in practice. Within
// one process ids are monotonic: an id made in the same millisecond as the
// last one (or while the clock stepped back) continues from it, so lists
// ordered by id keep the order in which things happened.
func NewID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic("rein: crypto/rand failed: " + err.Error())
	}
	ms := uint64(time.Now().UnixMilli())
	idMu.Lock()
	if ms <= idLast.ms {
		ms = idLast.ms
		// the 80 bits after the time: last + 1 (carry from the low 64 bits)
		lo := idLast.lo + 1
		hi := idLast.hi
		if lo == 0 {
			hi++
		}
		binary.BigEndian.PutUint16(b[6:8], hi)
		binary.BigEndian.PutUint64(b[8:], lo)
	}
	idLast.ms, idLast.hi, idLast.lo = ms, binary.BigEndian.Uint16(b[6:8]), binary.BigEndian.Uint64(b[8:])
	idMu.Unlock()
	binary.BigEndian.PutUint64(b[:8], ms<<16|uint64(binary.BigEndian.Uint16(b[6:8])))
	out := make([]byte, 0, len(prefix)+1+26)
	out = append(out, prefix...)
	out = append(out, '_')
	// 128 bits as 26 base32 digits, most significant first (the first digit holds 3 bits).
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var digits [26]byte
	for i := 25; i >= 0; i-- {
		digits[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(append(out, digits[:]...))
}
