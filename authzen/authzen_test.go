package authzen

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func TestExpandAppliesDefaults(t *testing.T) {
	var b Batch
	json.Unmarshal([]byte(`{"subject": {"type": "user", "id": "alice"}, "action": {"name": "can_read"}, "context": {"time": "t"},
		"evaluations": [{"resource": {"type": "doc", "id": "1"}}, {"action": {"name": "can_edit"}, "resource": {"type": "doc", "id": "2"}}],
		"options": {"evaluations_semantic": "permit_on_first_permit"}}`), &b)
	list, semantic, err := b.Expand()
	if err != nil || semantic != PermitOnFirstPermit || len(list) != 2 {
		t.Fatalf("%v %s %d", err, semantic, len(list))
	}
	if list[0].Action.Name != "can_read" || list[1].Action.Name != "can_edit" || list[1].Subject.ID != "alice" || list[0].Context["time"] != "t" {
		t.Errorf("defaults: %+v %+v", list[0], list[1])
	}
	b.Options = map[string]any{"evaluations_semantic": "sometimes"}
	if _, _, err := b.Expand(); err == nil {
		t.Error("an unknown semantic was accepted")
	}
}

// TestCheckIsTheSameActionWithOrWithoutTheApproval: the approval reference
// is not part of the action, so a re-evaluation hashes like the denied one.
func TestCheckIsTheSameActionWithOrWithoutTheApproval(t *testing.T) {
	var a, b Evaluation
	json.Unmarshal([]byte(`{"subject": {"type": "user", "id": "alice"}, "action": {"name": "can_publish"}, "resource": {"type": "doc", "id": "1"}, "context": {"session_id": "s1"}}`), &a)
	json.Unmarshal([]byte(`{"subject": {"type": "user", "id": "alice"}, "action": {"name": "can_publish"}, "resource": {"type": "doc", "id": "1"}, "context": {"session_id": "s1", "approval": {"id": "apr_1", "approved_until": "x"}}}`), &b)
	ra, refA, err := a.Check()
	rb, refB, err2 := b.Check()
	if err != nil || err2 != nil || refA != nil || refB == nil || refB.ID != "apr_1" {
		t.Fatalf("%v %v %v %v", err, err2, refA, refB)
	}
	if ra.Tool != "can_publish" || ra.Session != "s1" || string(ra.Args) != string(rb.Args) {
		t.Errorf("checks differ: %s %s", ra.Args, rb.Args)
	}
	var bad Evaluation
	json.Unmarshal([]byte(`{"subject": {"type": "user", "id": "a"}, "action": {"name": "x"}, "resource": {"type": "d", "id": "1"}, "context": {"approval": "apr_1"}}`), &bad)
	if _, _, err := bad.Check(); err == nil {
		t.Error("an approval reference that is not an object was accepted")
	}
}

func TestRender(t *testing.T) {
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	asked := json.RawMessage(`{"a":1}`)
	ap := &rein.Approval{ID: "apr_1", ExpiresAt: at.Add(time.Hour)}
	for _, c := range []struct {
		res    rein.CheckResponse
		want   bool
		reason string
	}{
		{rein.CheckResponse{Decision: rein.Allow, Args: asked}, true, ""},
		{rein.CheckResponse{Decision: rein.Modify, Args: json.RawMessage(`{"a":2}`)}, false, "modified_arguments"},
		{rein.CheckResponse{Decision: rein.Deny, Reason: "no"}, false, "denied"},
		{rein.CheckResponse{Decision: rein.Ask, Reason: "who?", Approval: &rein.ApprovalRef{ID: "apr_1"}}, false, "approval_required"},
	} {
		d := Render(Answered{Answer: c.res.Answer(asked), CheckID: "chk_1", At: at, Approval: ap, RequestEndpoint: "https://rein/access/v1/requests"})
		if d.Decision != c.want || d.Context["evaluation_id"] != "chk_1" || (c.reason != "" && d.Context["reason"] != c.reason) {
			t.Errorf("%s: %+v", c.res.Decision, d)
		}
		if c.res.Decision == rein.Ask {
			ar := d.Context["access_request"].(map[string]any)
			if ar["endpoint"] != "https://rein/access/v1/requests" || !strings.HasPrefix(ar["expires_at"].(string), "2026-11-24T09:00") {
				t.Errorf("access request: %v", ar)
			}
		}
	}
}

func TestTaskStatus(t *testing.T) {
	for status, want := range map[string]string{rein.StatusPending: "pending", rein.StatusApproved: "approved", rein.StatusConsumed: "expired",
		rein.StatusRejected: "denied", rein.StatusInvalidated: "denied", rein.StatusCancelled: "cancelled", rein.StatusExpired: "expired"} {
		if got := TaskStatus(status); got != want {
			t.Errorf("%s: %s, want %s", status, got, want)
		}
	}
}
