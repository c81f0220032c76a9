package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsAreContiguous(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<40 + 12345, math.MaxUint64} {
		i := bucket(v)
		if i < prev || i >= buckets {
			t.Fatalf("bucket(%d) = %d after %d (of %d)", v, i, prev, buckets)
		}
		prev = i
		low, width := bounds(i)
		if v < low || v-low >= width {
			t.Fatalf("bucket(%d) = %d covers [%d, %d+%d)", v, i, low, low, width)
		}
		if v >= sub && float64(width)/float64(low) > 1.0/64 {
			t.Fatalf("bucket %d: width %d over 1/64 of %d", i, width, low)
		}
	}
	// Every bucket starts where the previous one ended.
	for i := 1; i < buckets; i++ {
		pl, pw := bounds(i - 1)
		l, _ := bounds(i)
		if pl+pw != l {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, l, i-1, pl+pw)
		}
	}
}

// TestPercentilesMatchExact compares the histogram's percentiles with exact
// nearest-rank percentiles of the same latencies (log-normal, like real ones).
func TestPercentilesMatchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var a, b Histogram
	var all []time.Duration
	for i := range 200_000 {
		d := time.Duration(math.Exp(r.NormFloat64()*0.8+math.Log(2e6))) + 50*time.Microsecond
		all = append(all, d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	slices.Sort(all)
	if a.Count() != uint64(len(all)) || a.Max() != all[len(all)-1] {
		t.Fatalf("count %d max %s, want %d %s", a.Count(), a.Max(), len(all), all[len(all)-1])
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		rank := max(int(math.Ceil(q*float64(len(all)))), 1)
		exact := all[rank-1]
		got := a.Percentile(q)
		if diff := math.Abs(float64(got-exact)) / float64(exact); diff > 0.008 {
			t.Errorf("p%g = %s, exact %s (%.2f%% off)", q*100, got, exact, diff*100)
		}
	}
}

func TestPercentileSmall(t *testing.T) {
	var h Histogram
	if h.Percentile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram must report zero")
	}
	for _, us := range []int{1, 2, 3, 4, 100} {
		h.Record(time.Duration(us) * time.Microsecond)
	}
	within := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) <= float64(want)/128 }
	if got := h.Percentile(0.5); !within(got, 3*time.Microsecond) {
		t.Errorf("p50 = %s, want 3µs", got)
	}
	if got := h.Percentile(0.99); got != 100*time.Microsecond {
		t.Errorf("p99 = %s, want the maximum 100µs", got)
	}
	if got := h.Percentile(0); !within(got, time.Microsecond) {
		t.Errorf("p0 = %s, want 1µs", got)
	}
	if h.Mean() != 22*time.Microsecond {
		t.Errorf("mean = %s, want 22µs", h.Mean())
	}
}
