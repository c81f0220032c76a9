package events

import "testing"

func all(*Event) bool { return true }

func TestRingKeepsTheLatest(t *testing.T) {
	b := &Bus{}
	for i := range Keep + 500 {
		b.Publish(Decision, "acme", map[string]int{"n": i})
	}
	got, last := b.Since(0, all)
	if len(got) != Keep || got[0].ID != 501 || got[len(got)-1].ID != Keep+500 || last != Keep+500 {
		t.Fatalf("held %d events from %d to %d (last %d)", len(got), got[0].ID, got[len(got)-1].ID, last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID != got[i-1].ID+1 {
			t.Fatalf("events out of order at %d", i)
		}
	}
	resumed, _ := b.Since(Keep+490, all)
	if len(resumed) != 10 || resumed[0].ID != Keep+491 {
		t.Fatalf("resume after %d: %d events from %d", Keep+490, len(resumed), resumed[0].ID)
	}
}

func TestSubscribersAreSignalledNotBlocked(t *testing.T) {
	b := &Bus{}
	ch := b.Subscribe()
	for range 100 { // nobody reads: Publish must not block
		b.Publish(LockUpdated, "acme", nil)
	}
	select {
	case <-ch:
	default:
		t.Fatal("the subscriber was not signalled")
	}
	b.Unsubscribe(ch)
	b.Publish(LockUpdated, "acme", nil)
	select {
	case <-ch:
		t.Fatal("signalled after unsubscribing")
	default:
	}
	got, _ := b.Since(0, func(e *Event) bool { return e.ID%2 == 0 })
	if len(got) != 50 {
		t.Fatalf("filter kept %d", len(got))
	}
}

func TestEventForTenant(t *testing.T) {
	cases := []struct {
		typ, tenant, viewer string
		want                bool
	}{
		{Decision, "acme", "acme", true},
		{Decision, "acme", "globex", false},
		{Decision, "acme", AllTenants, true},
		// A check made with a key of tenant "*" is a record of tenant "*".
		{Decision, AllTenants, "globex", false},
		{ApprovalCreated, AllTenants, "globex", false},
		{ApprovalUpdated, AllTenants, "globex", false},
		{QuestionCreated, AllTenants, "globex", false},
		{QuestionUpdated, AllTenants, "globex", false},
		{Decision, AllTenants, AllTenants, true},
		// Deployment-wide changes reach every tenant.
		{PolicyUpdated, AllTenants, "globex", true},
		{LockUpdated, AllTenants, "globex", true},
		{PolicyUpdated, "acme", "globex", false},
		{LockUpdated, "acme", "globex", false},
	}
	for _, c := range cases {
		e := &Event{Type: c.typ, Tenant: c.tenant}
		if got := e.For(c.viewer); got != c.want {
			t.Errorf("%s of tenant %q for %q: %v, want %v", c.typ, c.tenant, c.viewer, got, c.want)
		}
	}
}

// Since starts at the first event after the one asked for: it looks at no
// older event (keep is never called for them), whether the ring has wrapped
// or not, and an id beyond the last returns nothing.
func TestSinceLooksOnlyAtNewerEvents(t *testing.T) {
	for _, published := range []int{7, Keep, Keep + 1234} {
		b := &Bus{}
		for i := range published {
			b.Publish(Decision, "acme", map[string]int{"n": i})
		}
		oldest := int64(max(1, published-Keep+1))
		for _, after := range []int64{-5, 0, oldest - 1, oldest, oldest + 3, int64(published) - 1, int64(published), int64(published) + 9} {
			looked := 0
			got, _ := b.Since(after, func(*Event) bool { looked++; return true })
			want := int64(published) - max(after, oldest-1)
			if want < 0 {
				want = 0
			}
			if int64(len(got)) != want || int64(looked) != want {
				t.Fatalf("%d published, after %d: %d events, %d looked at; want %d", published, after, len(got), looked, want)
			}
			for i, e := range got {
				if e.ID != max(after, oldest-1)+1+int64(i) {
					t.Fatalf("%d published, after %d: event %d has id %d", published, after, i, e.ID)
				}
			}
		}
	}
}

func BenchmarkSinceOneNew(b *testing.B) {
	bus := &Bus{}
	for i := range Keep {
		bus.Publish(Decision, "acme", map[string]int{"n": i})
	}
	last := bus.Last() - 1
	for b.Loop() {
		bus.Since(last, all)
	}
}
