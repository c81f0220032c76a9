package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
)

// TestSlackStepUpGoesToTheConsole: on an approval whose rule asks for
// step-up, the message offers "Confirm in rein", a link to the approval's
// console page, instead of Approve and Edit, and keeps Reject; an Approve
// press (from an old message, or made up) is still refused (audited) and the
// presser is told privately to confirm with a passkey on the console page;
// Reject, which lets nothing run, still counts.
func TestSlackStepUpGoesToTheConsole(t *testing.T) {
	f := setup(t)
	pol, err := policy.Compile([]byte(`version: 1
rules:
  - {id: deploys, when: 'tool == "deploy"', decision: ask, approval: {approvers: ["group:oncall"], step_up: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	f.pipe.Policies.Set("", pol)
	f.pipe.BaseURL = "https://rein.example"
	rec := f.ask(t, `{"service":"api","env":"prod"}`)
	id := rec.Approval.ID
	text, buttons := blockText(t, f.api.of("chat.postMessage")[0])
	var ids []string
	for _, b := range buttons {
		ids = append(ids, b["action_id"].(string))
		if b["action_id"] == actionConfirm && b["url"] != "https://rein.example/approvals/"+id {
			t.Errorf("Confirm in rein links to %v", b["url"])
		}
	}
	if strings.Join(ids, ",") != actionConfirm+","+actionReject {
		t.Errorf("buttons %v, want Confirm in rein and Reject", ids)
	}
	if !strings.Contains(text, "passkey confirmation") {
		t.Errorf("the message does not say why Approve is not offered:\n%s", text)
	}
	if code, _ := f.press(t, "UALICE", actionConfirm, id); code != 200 {
		t.Fatalf("press of the link button: %d", code)
	}

	if code, _ := f.press(t, "UALICE", actionApprove, id); code != 200 {
		t.Fatalf("press: %d", code)
	}
	waitFor(t, "the private answer", func() bool { return len(f.api.of("chat.postEphemeral")) > 0 })
	text = f.api.of("chat.postEphemeral")[0].Form.Get("text")
	if !strings.Contains(text, "passkey") || !strings.Contains(text, "https://rein.example/approvals/"+id) {
		t.Errorf("the private answer does not send alice to the console: %q", text)
	}
	if got := strings.Join(f.refusals(t), "\n"); !strings.Contains(got, "alice: forbidden: this approval needs step-up") {
		t.Errorf("the refusal is not audited:\n%s", got)
	}
	a, _ := f.store.Approval(context.Background(), id)
	if len(a.Votes) != 0 || a.Status != rein.StatusPending {
		t.Fatalf("after the refused approve: %s %+v", a.Status, a.Votes)
	}
	f.press(t, "UCAROL", actionReject, id)
	waitFor(t, "the rejection", func() bool {
		a, _ := f.store.Approval(context.Background(), id)
		return a.Status == rein.StatusRejected
	})
}
