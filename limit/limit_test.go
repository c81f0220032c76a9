package limit

import (
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func TestBucket(t *testing.T) {
	l := &Limiter{}
	r := []Rate{{Key: "mail|agent=a", Rate: 3, Per: time.Minute}}
	for i := range 3 {
		if res, v := l.Reserve(r, t0); res == nil || v[0].Exceeded {
			t.Fatalf("call %d refused", i)
		}
	}
	res, v := l.Reserve(r, t0)
	if res != nil || !v[0].Exceeded || v[0].RetryAfter != 20*time.Second {
		t.Fatalf("the 4th call: %v %+v; want exceeded, retry after 20s", res, v)
	}
	if res, _ := l.Reserve(r, t0.Add(19*time.Second)); res != nil {
		t.Fatal("a token came back before its time")
	}
	if res, _ := l.Reserve(r, t0.Add(20*time.Second)); res == nil {
		t.Fatal("no token after the retry time")
	}
	// Full again after a long pause, but never more than the rate.
	for i := range 3 {
		if res, _ := l.Reserve(r, t0.Add(time.Hour)); res == nil {
			t.Fatalf("after an hour, call %d refused", i)
		}
	}
	if res, _ := l.Reserve(r, t0.Add(time.Hour)); res != nil {
		t.Fatal("the bucket held more than its rate")
	}
}

func TestAllOrNoneAndRefund(t *testing.T) {
	l := &Limiter{}
	a := Rate{Key: "a", Rate: 1, Per: time.Minute}
	b := Rate{Key: "b", Rate: 5, Per: time.Minute}
	if res, _ := l.Reserve([]Rate{a}, t0); res == nil {
		t.Fatal("first a refused")
	}
	if res, v := l.Reserve([]Rate{a, b}, t0); res != nil || !v[0].Exceeded || v[1].Exceeded {
		t.Fatalf("a exhausted: %v %+v", res, v)
	}
	// b was not charged by the refused reservation: 5 left.
	for i := range 5 {
		res, _ := l.Reserve([]Rate{b}, t0)
		if res == nil {
			t.Fatalf("b call %d refused: the refused reservation charged b", i)
		}
		if i == 4 {
			res.Refund()
		}
	}
	if res, _ := l.Reserve([]Rate{b}, t0); res == nil {
		t.Fatal("a refunded token was not given back")
	}
}

func TestConcurrentReservationsNeverOverspend(t *testing.T) {
	l := &Limiter{}
	r := []Rate{{Key: "k", Rate: 10, Per: time.Hour}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, _ := l.Reserve(r, t0); res != nil {
				mu.Lock()
				got++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got != 10 {
		t.Fatalf("%d reservations of a rate of 10", got)
	}
}
