package pipeline

import (
	"context"
	"time"

	"github.com/reinhq/rein/limit"
)

// SharedLimits keeps rate-limit buckets where every replica reserves from
// them (PostgreSQL), all or none per check, with limit's arithmetic.
type SharedLimits interface {
	// ReserveTokens takes a token from every rate's bucket if each has one
	// (ok); otherwise it takes none, and the verdicts say which are exceeded.
	ReserveTokens(ctx context.Context, rates []limit.Rate, now time.Time) (ok bool, verdicts []limit.Verdict, err error)
	// RefundTokens gives back one token to each rate's bucket.
	RefundTokens(ctx context.Context, rates []limit.Rate) error
}

// reservation is what a check took from the buckets.
type reservation struct {
	local  *limit.Reservation
	shared SharedLimits
	rates  []limit.Rate
	log    func(err error)
}

// Refund gives the tokens back (the action was not allowed). A refund the
// shared buckets refuse leaves them with fewer tokens: never more than the
// limit allows.
func (r *reservation) Refund() {
	if r == nil {
		return
	}
	r.local.Refund()
	if r.shared != nil && r.rates != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.shared.RefundTokens(ctx, r.rates); err != nil {
			r.log(err)
		}
		r.rates = nil
	}
}

// reserve takes a token from every rate's bucket, in memory or shared.
func (p *Pipeline) reserve(ctx context.Context, rates []limit.Rate, at time.Time) (*reservation, []limit.Verdict, error) {
	if p.SharedLimits == nil {
		res, verdicts := p.limiter.Reserve(rates, at)
		if res == nil {
			return nil, verdicts, nil
		}
		return &reservation{local: res}, verdicts, nil
	}
	ok, verdicts, err := p.SharedLimits.ReserveTokens(ctx, rates, at)
	if err != nil || !ok {
		return nil, verdicts, err
	}
	return &reservation{shared: p.SharedLimits, rates: rates, log: func(err error) {
		p.Log.Warn("a rate-limit token could not be given back; the bucket holds one less until it refills", "err", err)
	}}, verdicts, nil
}
