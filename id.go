package rein

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// crockford is the ULID alphabet: sortable, no I, L, O, U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix + "_" + a ULID: 48 bits of milliseconds then 80 random
// bits, so ids sort by creation time and never collide in practice.
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("rein: crypto/rand failed: " + err.Error())
	}
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
