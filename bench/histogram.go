package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram counts latencies in buckets whose width is at most 1/64 of their
// lower bound, so that any percentile it reports is within 0.8% of the exact
// one, in constant memory (about 30 KB) however long the run. Histograms of
// several workers merge by adding their counts.
type Histogram struct {
	counts [buckets]uint64
	total  uint64
	min    uint64
	max    uint64
	sum    float64
}

const (
	subBits = 7
	sub     = 1 << subBits // values below are counted exactly
	half    = sub / 2
	buckets = (64-subBits)*half + sub
)

// bucket returns the index of v's bucket. Below 128 each value has its own
// bucket; above, a value with n significant bits falls in one of 64 buckets
// of width 2^(n-7) that cover [2^(n-1), 2^n).
func bucket(v uint64) int {
	if v < sub {
		return int(v)
	}
	shift := bits.Len64(v) - subBits
	return shift*half + int(v>>shift)
}

// bounds returns the smallest value of bucket i and the bucket's width.
func bounds(i int) (low, width uint64) {
	if i < sub {
		return uint64(i), 1
	}
	shift := i/half - 1
	m := uint64(i - shift*half)
	return m << shift, 1 << shift
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucket(v)]++
	if h.total == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.total++
	h.sum += float64(v)
}

// Merge adds the counts of o.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.total += o.total
	h.sum += o.sum
}

// Count is the number of latencies recorded.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the largest latency recorded (exact).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean is the average latency.
func (h *Histogram) Mean() time.Duration {
	if h.total == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.total))
}

// Percentile returns the latency below or at which a fraction q (0..1) of
// the recorded ones lie: the nearest-rank percentile, taken as the middle
// of its bucket and kept within the exact minimum and maximum (the last
// rank is the exact maximum).
func (h *Histogram) Percentile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = min(max(rank, 1), h.total)
	if rank == h.total {
		return time.Duration(h.max)
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, width := bounds(i)
			v := low + (width-1)/2
			return time.Duration(min(max(v, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}
