// Package limit is rein's rate limiter: token buckets, one per limit rule
// and counted-by key, refilled continuously (rate tokens per period, at
// most rate held). A check reserves a token in every bucket that applies,
// all or none; the reservation is kept when the final decision allows the
// action and refunded otherwise, so only allowed actions spend tokens and
// concurrent checks never overspend. State is in memory, per process.
package limit

import (
	"sync"
	"time"
)

// Rate is one bucket's definition.
type Rate struct {
	Key  string // the bucket: rule, rate and counted-by values
	Rate int
	Per  time.Duration
}

type bucket struct {
	tokens float64
	at     time.Time
}

// Limiter holds the buckets.
type Limiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
}

// Reservation is what Reserve took; Refund gives it back.
type Reservation struct {
	l     *Limiter
	rates []Rate
}

// Verdict for one rate: whether it is exceeded, and when a token will be
// there again.
type Verdict struct {
	Exceeded   bool
	RetryAfter time.Duration
}

func (l *Limiter) fill(r Rate, now time.Time) *bucket {
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	b, ok := l.buckets[r.Key]
	if !ok {
		b = &bucket{tokens: float64(r.Rate), at: now}
		l.buckets[r.Key] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(r.Rate), b.tokens+el.Seconds()*float64(r.Rate)/r.Per.Seconds())
		b.at = now
	}
	return b
}

// Reserve takes one token from every rate's bucket if each has one, and
// returns the reservation; otherwise it takes nothing and says, per rate,
// which are exceeded and when to retry.
func (l *Limiter) Reserve(rates []Rate, now time.Time) (*Reservation, []Verdict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	verdicts := make([]Verdict, len(rates))
	over := false
	for i, r := range rates {
		b := l.fill(r, now)
		if b.tokens < 1 {
			over = true
			wait := time.Duration((1 - b.tokens) * float64(r.Per) / float64(r.Rate))
			verdicts[i] = Verdict{Exceeded: true, RetryAfter: max(wait, time.Millisecond)}
		}
	}
	if over {
		return nil, verdicts
	}
	for _, r := range rates {
		l.buckets[r.Key].tokens--
	}
	return &Reservation{l: l, rates: rates}, verdicts
}

// Refund returns the reserved tokens (the action was not allowed).
func (r *Reservation) Refund() {
	if r == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	for _, rate := range r.rates {
		if b, ok := r.l.buckets[rate.Key]; ok {
			b.tokens = min(float64(rate.Rate), b.tokens+1)
		}
	}
	r.rates = nil
}
