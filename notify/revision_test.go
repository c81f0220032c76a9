package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
)

// edited is an approval of pay {amount: 50, to: acct-a} that dave edited to
// acct-mallory (revision 2).
func edited() *rein.Approval {
	a := &rein.Approval{ID: "apr_pay", Tenant: "acme", Status: rein.StatusPending, Tool: "pay",
		Args: json.RawMessage(`{"amount":50,"to":"acct-a"}`), Revision: 1, ExpiresAt: time.Now().Add(time.Hour)}
	a.ApprovedArgs = json.RawMessage(`{"amount":50,"to":"acct-mallory"}`)
	a.Revision, a.Changes = 2, rein.ArgChanges(a.Args, a.ApprovedArgs)
	a.Votes = []rein.Vote{{By: "carol", ByKey: "k_carol", Vote: "approve", Revision: 1}, {By: "dave", ByKey: "k_dave", Vote: "edit", Revision: 2}}
	return a
}

func TestEdited(t *testing.T) {
	fresh := &rein.Approval{Status: rein.StatusPending, Revision: 1, Votes: []rein.Vote{{Vote: "approve", Revision: 1}}}
	later := edited()
	later.Votes = append(later.Votes, rein.Vote{By: "erin", Vote: "reject", Revision: 2})
	done := edited()
	done.Status = rein.StatusApproved
	for _, c := range []struct {
		name string
		a    *rein.Approval
		want bool
	}{
		{"never edited", fresh, false},
		{"the edit is the latest vote", edited(), true},
		{"a vote after the edit", later, false},
		{"decided", done, false},
	} {
		if got := Edited(c.a); got != c.want {
			t.Errorf("%s: Edited = %v, want %v", c.name, got, c.want)
		}
	}
	if got := Editor(edited()); got != "dave" {
		t.Errorf("Editor = %q, want dave", got)
	}
}

func TestChangeLines(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     []string
	}{
		{`{"amount":50,"to":"acct-a"}`, `{"amount":50,"to":"acct-mallory"}`, []string{`to: "acct-a" → "acct-mallory"`}},
		{`{"a":1}`, `{"a":1,"note":"x"}`, []string{`note: added "x"`}},
		{`{"a":1,"cc":"bob"}`, `{"a":1}`, []string{`cc: removed "bob"`}},
		{`{"a":{"b":[1,2]}}`, `{"a":{"b":[1,3]}}`, []string{`a.b.1: 2 → 3`}},
		{`{"to":"acct-a"}`, `{"to":"acct\u202e-a"}`, []string{`to: "acct-a" → "acct\u{202E}-a"`}},
		{`{"to":"acct-a"}`, `{"to":"acct-a"}`, []string{}},
	} {
		a := &rein.Approval{Args: json.RawMessage(c.from), ApprovedArgs: json.RawMessage(c.to), Revision: 2}
		a.Changes = rein.ArgChanges(a.Args, a.ApprovedArgs)
		if got := ChangeLines(a); !slices.Equal(got, c.want) {
			t.Errorf("%s -> %s: %q, want %q", c.from, c.to, got, c.want)
		}
	}
	if got := ChangeLines(&rein.Approval{Revision: 1}); got != nil {
		t.Errorf("an approval never edited: %q", got)
	}
}

func TestVotedOnCurrent(t *testing.T) {
	a := edited()
	for key, want := range map[string]bool{"k_carol": false, "k_dave": true, "k_erin": false} {
		if got := VotedOnCurrent(a, &rein.Key{ID: key}); got != want {
			t.Errorf("%s: VotedOnCurrent = %v, want %v (carol voted on revision 1 only)", key, got, want)
		}
	}
}

// reviser is a recorder that is a Reviser.
type reviser struct{ recorder }

func (r *reviser) Revise(_ context.Context, a *rein.Approval, t []string) error {
	return r.add(fmt.Sprintf("revise %s %d %v", a.ID, a.Revision, t))
}

// TestDispatcherRevise: an edit is announced again once, to every channel
// that can (Revise), and updates the others; later votes are updates.
func TestDispatcherRevise(t *testing.T) {
	slack, email, push := &reviser{}, &recorder{}, &reviser{}
	bus := &events.Bus{}
	d := &Dispatcher{Bus: bus, Store: pendingList{}, Slack: slack, Email: email, Push: push, SlackDefault: []string{"CPAY"},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tick: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Run(ctx)
	a := edited()
	bus.Publish(events.ApprovalUpdated, "acme", a)
	bus.Publish(events.ApprovalUpdated, "acme", a) // the same edit seen twice
	later := edited()
	later.Votes = append(later.Votes, rein.Vote{By: "erin", ByKey: "k_erin", Vote: "approve", Revision: 2})
	later.Status = rein.StatusApproved
	bus.Publish(events.ApprovalUpdated, "acme", later)
	deadline := time.Now().Add(3 * time.Second)
	for !slack.has("update apr_pay approved") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range []struct {
		r    *recorder
		what string
		n    int
	}{
		{&slack.recorder, "revise apr_pay 2 [CPAY]", 1},
		{&push.recorder, "revise apr_pay 2 []", 1},
		// The second sighting of the edit is an update like any other.
		{email, "update apr_pay pending", 2},
		{&slack.recorder, "update apr_pay pending", 1},
		{&slack.recorder, "update apr_pay approved", 1},
		{&push.recorder, "update apr_pay approved", 1},
	} {
		if got := c.r.count(c.what); got != c.n {
			t.Errorf("%q sent %d times, want %d; slack %v, email %v, push %v", c.what, got, c.n, slack.got, email.got, push.got)
		}
	}
}

// TestArgs: the current revision's arguments, also of an approval read
// back from JSON, whose approved_args is null when it was never edited.
func TestArgs(t *testing.T) {
	var fresh rein.Approval
	if err := json.Unmarshal([]byte(`{"args":{"to":"acct-a"},"approved_args":null,"revision":1}`), &fresh); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		a    *rein.Approval
		want string
	}{
		{"read from JSON, never edited", &fresh, `{"to":"acct-a"}`},
		{"edited", edited(), `{"amount":50,"to":"acct-mallory"}`},
		{"never edited", &rein.Approval{Args: json.RawMessage(`{"to":"acct-a"}`)}, `{"to":"acct-a"}`},
	} {
		if got := string(Args(c.a)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
