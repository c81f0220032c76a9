// Package limit is rein's rate limiter: token buckets, one per limit rule
// and counted-by key, refilled continuously (rate tokens per period, at
// most rate held). A check reserves a token in every bucket that applies,
// all or none; the reservation is kept when the final decision allows the
// action and refunded otherwise, so only allowed actions spend tokens and
// concurrent checks never overspend. The Limiter keeps its buckets in
// memory, for one process; replicas sharing PostgreSQL keep them there,
// with the same arithmetic (Refill, Exceeded).
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
	b.tokens, b.at = Refill(b.tokens, b.at, r, now)
	return b
}

// Refill is a bucket of r holding tokens at time at, as it is at now:
// refilled continuously, never above the rate. A bucket is never refilled
// backwards (now before at: a clock behind another's).
func Refill(tokens float64, at time.Time, r Rate, now time.Time) (float64, time.Time) {
	if el := now.Sub(at); el > 0 {
		return min(float64(r.Rate), tokens+el.Seconds()*float64(r.Rate)/r.Per.Seconds()), now
	}
	return tokens, at
}

// Exceeded is the verdict on a bucket of r holding fewer than one token:
// when the next token will be there.
func Exceeded(tokens float64, r Rate) Verdict {
	wait := time.Duration((1 - tokens) * float64(r.Per) / float64(r.Rate))
	return Verdict{Exceeded: true, RetryAfter: max(wait, time.Millisecond)}
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
			verdicts[i] = Exceeded(b.tokens, r)
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
