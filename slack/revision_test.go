package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// pressValue presses a button as Slack sends it: value is what the button
// carries ("apr_…@N").
func (f *fixture) pressValue(t *testing.T, user, action, value string) int {
	body := payload(t, "block_actions.json", map[string]string{"USER": user, "ACTION": action, "APPROVAL": value,
		"CHANNEL": "C0123APPROVE", "TS": "1700000000.000001"})
	now := time.Now().Unix()
	code, _ := f.post(t, body, now, sign(secret, now, body))
	return code
}

// TestSlackButtonsBindRevision: the buttons name the revision the message
// shows; after an edit the message is rewritten to the edited version, its
// change first, with buttons naming the new revision; a press of the old
// buttons is not counted and is answered privately with the current
// version; a press of the new ones is.
func TestSlackButtonsBindRevision(t *testing.T) {
	f := setup(t)
	rec := f.ask(t, `{"service":"api","env":"prod"}`)
	id := rec.Approval.ID
	first := f.api.of("chat.postMessage")[0].Form.Get("blocks")
	if !strings.Contains(first, `"value":"`+id+`@1"`) || strings.Contains(first, "Edited by") || !strings.Contains(first, "Will run* (revision 1)") {
		t.Fatalf("the request's message: %s", first)
	}
	// alice edits env (her edit is her approval): revision 2.
	if _, err := f.pipe.Cast(context.Background(), f.keys[1], id, approval.Ballot{Kind: approval.Edit,
		Args: json.RawMessage(`{"service":"api","env":"staging"}`), Revision: 1}); err != nil {
		t.Fatal(err)
	}
	var edited string
	waitFor(t, "the message rewritten to revision 2", func() bool {
		u := f.api.of("chat.update")
		if len(u) == 0 {
			return false
		}
		edited = u[len(u)-1].Form.Get("blocks")
		return strings.Contains(edited, `"value":"`+id+`@2"`)
	})
	change := strings.Index(edited, "env: \\\"prod\\\" → \\\"staging\\\"")
	runs := strings.Index(edited, "Will run* (revision 2, as edited)")
	arg := strings.Index(edited, "staging```")
	if !strings.Contains(edited, "Edited by alice") || change < 0 || runs < change || arg < runs || strings.Contains(edited, `"value":"`+id+`@1"`) {
		t.Fatalf("the edited message (change %d, will run %d, argument %d): %s", change, runs, arg, edited)
	}
	if strings.Contains(edited[runs:], "prod```") {
		t.Errorf("the edited message shows the agent's env among what will run: %s", edited)
	}

	// carol presses Approve on what she saw: revision 1.
	if code := f.pressValue(t, "UCAROL", actionApprove, id+"@1"); code != 200 {
		t.Fatalf("carol's stale press: %d", code)
	}
	a, _ := f.store.Approval(context.Background(), id)
	if a.Status != rein.StatusPending || len(a.Counting()) != 1 {
		t.Fatalf("carol's stale approve counted: %s %+v", a.Status, a.Votes)
	}
	eph := f.api.of("chat.postEphemeral")
	if len(eph) != 1 || eph[0].Form.Get("user") != "UCAROL" || !strings.Contains(eph[0].Form.Get("text"), "your vote was not counted") ||
		!strings.Contains(eph[0].Form.Get("text"), "staging") || !strings.Contains(eph[0].Form.Get("text"), "revision 2") {
		t.Fatalf("carol's private answer: %v", eph)
	}
	// Edit from the old message opens nothing.
	if code := f.pressValue(t, "UCAROL", actionEdit, id+"@1"); code != 200 || len(f.api.of("views.open")) != 0 {
		t.Fatalf("a stale edit press opened the modal (%d)", code)
	}
	// Edit from the new message opens the edited version.
	if code := f.pressValue(t, "UCAROL", actionEdit, id+"@2"); code != 200 || len(f.api.of("views.open")) != 1 {
		t.Fatalf("the edit press on the current revision: %d", code)
	}
	modal, _ := json.Marshal(f.api.of("views.open")[0].JSON["view"])
	if !strings.Contains(string(modal), `\"env\": \"staging\"`) || !strings.Contains(string(modal), `\"revision\":2`) {
		t.Errorf("the modal does not show revision 2: %s", modal)
	}
	// The new buttons count.
	if code := f.pressValue(t, "UCAROL", actionApprove, id+"@2"); code != 200 {
		t.Fatalf("carol's press: %d", code)
	}
	a, _ = f.store.Approval(context.Background(), id)
	if a.Status != rein.StatusApproved || !strings.Contains(string(a.CurrentArgs()), "staging") {
		t.Fatalf("approval %s with %s", a.Status, a.CurrentArgs())
	}
}

// TestSlackEditModalBindsRevision: the modal edits the revision it shows;
// submitted after another edit, it is not counted.
func TestSlackEditModalBindsRevision(t *testing.T) {
	f := setup(t)
	rec := f.ask(t, `{"service":"api","env":"prod"}`)
	id := rec.Approval.ID
	if code := f.pressValue(t, "UCAROL", actionEdit, id+"@1"); code != 200 {
		t.Fatalf("edit press: %d", code)
	}
	opens := f.api.of("views.open")
	if len(opens) != 1 {
		t.Fatalf("views.open calls: %d", len(opens))
	}
	meta := opens[0].JSON["view"].(map[string]any)["private_metadata"].(string)
	if !strings.Contains(meta, `"revision":1`) {
		t.Fatalf("the modal's metadata names no revision: %s", meta)
	}
	// alice edits first.
	if _, err := f.pipe.Cast(context.Background(), f.keys[1], id, approval.Ballot{Kind: approval.Edit,
		Args: json.RawMessage(`{"service":"api","env":"staging"}`), Revision: 1}); err != nil {
		t.Fatal(err)
	}
	mj, _ := json.Marshal(meta)
	vj, _ := json.Marshal(`{"service":"api","env":"dev"}`)
	body := payload(t, "view_submission.json", map[string]string{"USER": "UCAROL", "META": string(mj), "VALUE": string(vj)})
	now := time.Now().Unix()
	code, out := f.post(t, body, now, sign(secret, now, body))
	if code != 200 || !strings.Contains(out, "not counted") {
		t.Fatalf("carol's stale edit: %d %s", code, out)
	}
	a, _ := f.store.Approval(context.Background(), id)
	if a.Revision != 2 || a.Status != rein.StatusPending || len(a.Votes) != 1 {
		t.Fatalf("carol's stale edit counted: revision %d, %+v", a.Revision, a.Votes)
	}
}

func TestPressed(t *testing.T) {
	for _, c := range []struct {
		value string
		id    string
		rev   int
	}{
		{"apr_1@2", "apr_1", 2},
		{"apr_1", "apr_1", 0},
		{"apr_1@x", "apr_1", 0},
		{"apr_1@0", "apr_1", 0},
	} {
		if id, rev := pressed(c.value); id != c.id || rev != c.rev {
			t.Errorf("pressed(%q) = %q, %d; want %q, %d", c.value, id, rev, c.id, c.rev)
		}
	}
}
