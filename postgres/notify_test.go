package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// TestChangesReachEveryReplicaInOrder: a change notified by one replica
// right after another opened reaches that other one (Open returns once its
// reader has read the changes table), and a replica's changes arrive in
// the order they were sent; a change arrives once.
func TestChangesReachEveryReplicaInOrder(t *testing.T) {
	ctx := context.Background()
	url := testenv.Postgres(t)
	a, err := Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for round := range 3 {
		b, err := Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 100)
		b.Subscribe(func(p string) {
			if p != Resync {
				got <- p
			}
		})
		var want []string
		for i := range 5 {
			p := fmt.Sprintf("round %d change %d", round, i)
			want = append(want, p)
			if err := a.Notify(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range want {
			select {
			case p := <-got:
				if p != w {
					t.Fatalf("received %q, want %q", p, w)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%q did not reach the replica opened just before it", w)
			}
		}
		select {
		case p := <-got:
			t.Fatalf("received %q once more", p)
		case <-time.After(300 * time.Millisecond):
		}
		b.Close()
	}
}
