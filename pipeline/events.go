package pipeline

import (
	"context"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
)

// Every change of an approval or question goes through these, so that
// waiters are woken and subscribers told, whoever made the change.

func (p *Pipeline) publish(typ, tenant string, data any) {
	if p.Events != nil {
		p.Events.Publish(typ, tenant, data)
	}
}

// changeApproval is Store.ChangeApproval, then wakes the approval's waiters
// and, when it changed, publishes approval.updated.
func (p *Pipeline) changeApproval(ctx context.Context, id string, change rein.ApprovalChange) (*rein.Approval, error) {
	changed := false
	a, err := p.Store.ChangeApproval(ctx, id, func(x *rein.Approval) ([]*rein.Entry, error) {
		entries, err := change(x)
		changed = err == nil && len(entries) > 0 // the last run is the one that counts
		return entries, err
	})
	p.wake(id)
	if err == nil && changed {
		p.publish(events.ApprovalUpdated, a.Tenant, a)
	}
	return a, err
}

// changeQuestion is Store.ChangeQuestion, then wakes the question's waiters
// and, when it changed, publishes question.updated.
func (p *Pipeline) changeQuestion(ctx context.Context, id string, change rein.QuestionChange) (*rein.Question, error) {
	changed := false
	q, err := p.Store.ChangeQuestion(ctx, id, func(x *rein.Question) ([]*rein.Entry, error) {
		entries, err := change(x)
		changed = err == nil && len(entries) > 0
		return entries, err
	})
	p.wake(id)
	if err == nil && changed {
		p.publish(events.QuestionUpdated, q.Tenant, q)
	}
	return q, err
}

// decisionEvent is the data of a decision event: the answer and what it
// was about (the arguments stay in the audit log and GET /v1/checks/{id}).
func decisionEvent(rec *rein.CheckRecord) map[string]any {
	return map[string]any{"id": rec.ID, "tenant": rec.Tenant, "agent": rec.Check.Agent, "session": rec.Check.Session,
		"tool": rec.Check.Tool, "decision": rec.Decision, "reason": rec.Reason, "rule": rec.Rule, "risk": rec.Risk,
		"action_hash": rec.ActionHash, "approval": rec.Approval, "audit_index": rec.AuditIndex, "created_at": rec.CreatedAt}
}

// Replicas carries changes to the other servers sharing the store. Its
// methods must not block.
type Replicas interface {
	// Changed: an approval or question changed; wake its waiters.
	Changed(id string)
	// LocksChanged: a lock was created or removed; reload them.
	LocksChanged()
}

// wake wakes the waiters of an approval or question, here and on every
// other replica.
func (p *Pipeline) wake(id string) {
	p.changes.notify(id)
	if p.Replicas != nil {
		p.Replicas.Changed(id)
	}
}

// Wake wakes this server's waiters of an approval or question that another
// replica changed.
func (p *Pipeline) Wake(id string) { p.changes.notify(id) }
