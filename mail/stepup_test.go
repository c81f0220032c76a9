package mail

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
)

// TestLinkStepUpGoesToTheConsole: on an approval whose rule asks for
// step-up, the e-mail's link can only reject and the e-mail sends the
// approver to the console; the link page offers no Approve but "Confirm in
// rein" on the console page; an Approve posted anyway (an older link) is
// refused (audited) and nothing is recorded; Reject from the link counts.
func TestLinkStepUpGoesToTheConsole(t *testing.T) {
	f := setup(t)
	pol, err := policy.Compile([]byte(`version: 1
rules:
  - {id: pays, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"], step_up: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	f.pipe.Policies.Set("", pol)
	f.pipe.BaseURL = f.srv.URL
	a := f.ask(t)
	console := f.srv.URL + "/approvals/" + a.ID
	body, l := letterOf(t, f, a)
	if l.Only != "reject" || !strings.Contains(body, "Confirm in rein:\n"+console) {
		t.Errorf("the e-mail's link can %q; the e-mail:\n%s", l.Only, body)
	}
	link := f.linkFor(a, "fiona")
	c := browser(t)
	code, page, token := open_(t, c, link)
	if code != 200 || strings.Contains(page, `value="approve"`) || !strings.Contains(page, `<a href="`+console+`"><strong>Confirm in rein</strong></a>`) ||
		!strings.Contains(page, `value="reject"`) {
		t.Errorf("the link page of a step-up approval: %d\n%s", code, page)
	}
	code, body = confirm(t, c, link, token, "approve")
	if code != 403 || !strings.Contains(body, "passkey") || !strings.Contains(body, f.srv.URL+"/approvals/"+a.ID) {
		t.Errorf("approve on a step-up approval: %d\n%s", code, body)
	}
	if got := f.refusals(t); !strings.Contains(got, "needs step-up") {
		t.Errorf("the refusal is not audited:\n%s", got)
	}
	if got, _ := f.store.Approval(context.Background(), a.ID); len(got.Votes) != 0 || got.Status != rein.StatusPending {
		t.Errorf("after the refused approve: %s %+v", got.Status, got.Votes)
	}
	_, _, token = open_(t, c, link)
	if code, body := confirm(t, c, link, token, "reject"); code != 200 || !strings.Contains(body, "You voted reject") {
		t.Errorf("reject from the link: %d\n%s", code, body)
	}
	if got, _ := f.store.Approval(context.Background(), a.ID); got.Status != rein.StatusRejected {
		t.Errorf("after the rejection: %s", got.Status)
	}
}
