package storetest

import (
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// signOuts: a signed-out console session stays refused until its time,
// signing out twice is no error, and rows past their time are dropped by
// the next sign-out.
func signOuts(t *testing.T, s rein.Store) {
	if out, err := s.SignedOut(ctx, "n1"); err != nil || out {
		t.Fatalf("before sign-out: %v %v", out, err)
	}
	if err := s.SignOut(ctx, "n1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx, "n1", time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("signing out twice: %v", err)
	}
	if out, err := s.SignedOut(ctx, "n1"); err != nil || !out {
		t.Fatalf("after sign-out: %v %v", out, err)
	}
	if err := s.SignOut(ctx, "old", time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx, "n2", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if out, _ := s.SignedOut(ctx, "old"); out {
		t.Fatal("a sign-out past its time was kept")
	}
}
