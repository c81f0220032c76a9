package postgres

import (
	"testing"
	"time"
)

// TestBackoff: a poll that finds nothing waits twice as long next time, up
// to idlePoll; one that finds something goes back to the shortest wait.
func TestBackoff(t *testing.T) {
	b := backoff{min: 2 * time.Millisecond}
	var got []time.Duration
	for _, any := range []bool{true, false, false, false, false, false, true, false} {
		got = append(got, b.found(any))
	}
	want := []time.Duration{2, 4, 8, 16, 16, 16, 2, 4}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want %v ms", got, want)
		}
	}
}
