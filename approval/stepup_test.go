package approval

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestStepUp: on an approval that needs step-up, approving and editing
// votes count only when confirmed with a passkey; a rejection needs none.
func TestStepUp(t *testing.T) {
	stepped := func(v Voter) Voter { v.SteppedUp = true; return v }
	cases := []struct {
		name    string
		stepUp  bool
		v       Voter
		kind    string
		args    string
		err     error
		status  string
		confirm bool
	}{
		{"approve without passkey", true, alice, Approve, "", ErrStepUp, "pending", false},
		{"edit without passkey", true, alice, Edit, `{"command":"rm -rf ./build/tmp"}`, ErrStepUp, "pending", false},
		{"reject without passkey", true, alice, Reject, "", nil, "rejected", false},
		{"approve with passkey", true, stepped(alice), Approve, "", nil, "approved", true},
		{"approve with passkey, no step-up needed", false, stepped(alice), Approve, "", nil, "approved", true},
		{"approve without step-up needed", false, alice, Approve, "", nil, "approved", false},
		{"with passkey, but not an approver", true, stepped(carol), Approve, "", ErrNotApprover, "pending", false},
		{"with passkey, but the agent itself", true, stepped(agent), Approve, "", ErrSelfVote, "pending", false},
	}
	for _, c := range cases {
		a := pending(1, 1, "group:oncall")
		a.StepUp = c.stepUp
		var args json.RawMessage
		if c.args != "" {
			args = json.RawMessage(c.args)
		}
		_, err := Vote(a, c.v, c.kind, "", args, t0.Add(time.Minute))
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
		if a.Status != c.status {
			t.Errorf("%s: status %s, want %s", c.name, a.Status, c.status)
		}
		if err == nil && a.Votes[len(a.Votes)-1].StepUp != c.confirm {
			t.Errorf("%s: vote step_up %v, want %v", c.name, a.Votes[len(a.Votes)-1].StepUp, c.confirm)
		}
	}
}
