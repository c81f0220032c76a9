package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

// A decision event is written as it was when it was a map: the same keys,
// in order, the same values (webhook receivers verify signatures over
// these bytes, and consumers read these names).
func TestDecisionEventShape(t *testing.T) {
	rec := &rein.CheckRecord{CheckResponse: rein.CheckResponse{ID: "chk_1", Decision: rein.Ask, Reason: "why", Rule: "r",
		Risk: []string{"money"}, ActionHash: "sha256:00", Approval: &rein.ApprovalRef{ID: "apr_1", Status: rein.StatusPending}},
		Tenant: "acme", CreatedAt: time.Date(2026, 11, 26, 1, 2, 3, 4, time.UTC),
		Check: rein.CheckInput{Tool: "payments.transfer", Agent: "a", Session: "s"}}
	rec.AuditIndex = 7
	asMap := map[string]any{"id": rec.ID, "tenant": rec.Tenant, "agent": rec.Check.Agent, "session": rec.Check.Session,
		"tool": rec.Check.Tool, "decision": rec.Decision, "reason": rec.Reason, "rule": rec.Rule, "risk": rec.Risk,
		"action_hash": rec.ActionHash, "approval": rec.Approval, "audit_index": rec.AuditIndex, "created_at": rec.CreatedAt}
	want, _ := json.Marshal(asMap)
	got, err := json.Marshal(decisionEventOf(rec))
	if err != nil || string(got) != string(want) {
		t.Fatalf("decision event\n got %s\nwant %s (%v)", got, want, err)
	}
	rec.Approval, rec.Risk = nil, nil
	asMap["approval"], asMap["risk"] = rec.Approval, rec.Risk
	want, _ = json.Marshal(asMap)
	if got, _ = json.Marshal(decisionEventOf(rec)); string(got) != string(want) {
		t.Fatalf("decision event without approval\n got %s\nwant %s", got, want)
	}
}
