package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/limit"
)

// Rate-limit buckets shared by every replica: one row per bucket, locked
// while a check reserves from it, with limit's arithmetic. Reservations are
// exact: across all replicas a bucket never gives more tokens than its rate
// allows (replica clocks are trusted to agree; a bucket is never refilled
// backwards).

// ReserveTokens takes a token from every rate's bucket if each has one.
func (db *DB) ReserveTokens(ctx context.Context, rates []limit.Rate, now time.Time) (bool, []limit.Verdict, error) {
	rateKeys := make([]string, len(rates)) // each rate's bucket, by index
	byKey := map[string]limit.Rate{}
	for i, r := range rates {
		rateKeys[i] = bucketKey(r)
		byKey[rateKeys[i]] = r
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys) // rows are locked in one order: no deadlocks
	verdicts := make([]limit.Verdict, len(rates))
	// An empty bucket is seen without a lock: the answer is the same, since
	// until it refills only a refund can add a token (and a refund that
	// commits after this read is one that came after this check). An agent
	// that keeps calling once it is throttled then costs one read per
	// call, not a transaction that locks rows and waits for a commit. The
	// read is made only for a bucket this replica saw empty and not yet
	// refilled since, so a check whose buckets have tokens costs nothing
	// more.
	if db.empty.seen(keys, now) {
		exceeded, err := db.emptyBuckets(ctx, keys, byKey, rates, rateKeys, now, verdicts)
		if err != nil {
			return false, nil, err
		}
		if exceeded {
			db.empty.saw(rateKeys, verdicts, now)
			return false, verdicts, nil
		}
		db.empty.forget(keys) // refunded, or refilled sooner than seen
	}
	ok := true
	var left map[string]float64 // tokens before this reservation took one
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		ok = true
		// The buckets, locked; created full the first time (a second
		// statement only then).
		var tokens map[string]float64
		var ats map[string]string
		load := func() error {
			rows, err := tx.Query(ctx, "SELECT key, tokens, at FROM limit_buckets WHERE key = ANY($1) ORDER BY key FOR UPDATE", keys)
			if err != nil {
				return err
			}
			tokens, ats = map[string]float64{}, map[string]string{}
			var key, at string
			var t float64
			_, err = pgx.ForEachRow(rows, []any{&key, &t, &at}, func() error {
				r := byKey[key]
				filled, when := limit.Refill(t, parseTS(at), r, now)
				tokens[key], ats[key] = filled, ts(when)
				return nil
			})
			return err
		}
		if err := load(); err != nil {
			return err
		}
		if len(tokens) < len(keys) {
			full := make([]float64, len(keys))
			for i, k := range keys {
				full[i] = float64(byKey[k].Rate)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO limit_buckets (key, tokens, at) SELECT k, t, $3 FROM unnest($1::text[], $2::float8[]) AS x(k, t)
				ORDER BY k ON CONFLICT (key) DO NOTHING`, keys, full, ts(now)); err != nil {
				return err
			}
			if err := load(); err != nil {
				return err
			}
		}
		for i, r := range rates {
			if k := rateKeys[i]; tokens[k] < 1 {
				ok = false
				verdicts[i] = limit.Exceeded(tokens[k], r)
			}
		}
		if !ok {
			return nil
		}
		took := make([]float64, len(keys))
		when := make([]string, len(keys))
		for i, k := range keys {
			took[i], when[i] = tokens[k]-1, ats[k]
		}
		left = tokens
		_, err := tx.Exec(ctx, `UPDATE limit_buckets b SET tokens = x.t, at = x.a FROM unnest($1::text[], $2::float8[], $3::text[]) AS x(k, t, a)
			WHERE b.key = x.k`, keys, took, when)
		return err
	})
	if err != nil {
		return false, nil, err
	}
	if !ok {
		db.empty.saw(rateKeys, verdicts, now)
		return false, verdicts, nil
	}
	// A bucket this reservation emptied is seen empty from now on.
	emptied := make([]limit.Verdict, len(rates))
	for i, r := range rates {
		if t := left[rateKeys[i]] - 1; t < 1 {
			emptied[i] = limit.Exceeded(t, r)
		}
	}
	db.empty.saw(rateKeys, emptied, now)
	return true, verdicts, nil
}

// emptySeen remembers the buckets this replica found without a token, and
// when each will have one again (as far as it could tell then).
type emptySeen struct {
	mu    sync.Mutex
	until map[string]time.Time // by bucket key
}

// maxEmptySeen bounds the buckets remembered; past it, all are forgotten
// (which only costs a transaction where a read would have done).
const maxEmptySeen = 10000

// saw remembers the buckets whose verdicts say exceeded; rateKeys[i] is
// the bucket of verdicts[i].
func (e *emptySeen) saw(rateKeys []string, verdicts []limit.Verdict, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.until == nil || len(e.until) >= maxEmptySeen {
		e.until = map[string]time.Time{}
	}
	for i, k := range rateKeys {
		if verdicts[i].Exceeded {
			e.until[k] = now.Add(verdicts[i].RetryAfter)
		}
	}
}

func (e *emptySeen) seen(keys []string, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range keys {
		if t, ok := e.until[k]; ok && now.Before(t) {
			return true
		}
	}
	return false
}

func (e *emptySeen) forget(keys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range keys {
		delete(e.until, k)
	}
}

// emptyBuckets reads the buckets without locking them and reports
// whether one of them has no token now, with the verdicts; false when
// every bucket has a token or one does not exist yet. rateKeys[i] is the
// bucket of rates[i].
func (db *DB) emptyBuckets(ctx context.Context, keys []string, byKey map[string]limit.Rate, rates []limit.Rate, rateKeys []string, now time.Time, verdicts []limit.Verdict) (bool, error) {
	rows, err := db.pool.Query(ctx, "SELECT key, tokens, at FROM limit_buckets WHERE key = ANY($1)", keys)
	if err != nil {
		return false, err
	}
	tokens := map[string]float64{}
	var key, at string
	var t float64
	if _, err := pgx.ForEachRow(rows, []any{&key, &t, &at}, func() error {
		tokens[key], _ = limit.Refill(t, parseTS(at), byKey[key], now)
		return nil
	}); err != nil {
		return false, err
	}
	exceeded := false
	for i, r := range rates {
		if left, ok := tokens[rateKeys[i]]; ok && left < 1 {
			exceeded = true
			verdicts[i] = limit.Exceeded(left, r)
		}
	}
	return exceeded, nil
}

// RefundTokens gives one token back to each rate's bucket.
func (db *DB) RefundTokens(ctx context.Context, rates []limit.Rate) error {
	keys := make([]string, len(rates))
	full := make([]float64, len(rates))
	for i, r := range rates {
		keys[i], full[i] = bucketKey(r), float64(r.Rate)
	}
	_, err := db.pool.Exec(ctx, `UPDATE limit_buckets b SET tokens = LEAST(x.t, b.tokens + 1) FROM unnest($1::text[], $2::float8[]) AS x(k, t)
		WHERE b.key = x.k`, keys, full)
	return err
}

// bucketKey is a bucket's key as stored: its SHA-256 (keys join their parts
// with NUL bytes, which PostgreSQL text cannot hold).
func bucketKey(r limit.Rate) string {
	sum := sha256.Sum256([]byte(r.Key))
	return hex.EncodeToString(sum[:])
}
