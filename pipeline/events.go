package pipeline

import (
	"context"
	"time"

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
// Its fields are in the order of their names, as a map's would be written.
type decisionEvent struct {
	ActionHash string            `json:"action_hash"`
	Agent      string            `json:"agent"`
	Approval   *rein.ApprovalRef `json:"approval"`
	AuditIndex int64             `json:"audit_index"`
	CreatedAt  time.Time         `json:"created_at"`
	Decision   rein.Decision     `json:"decision"`
	ID         string            `json:"id"`
	Reason     string            `json:"reason"`
	Risk       []string          `json:"risk"`
	Rule       string            `json:"rule"`
	Session    string            `json:"session"`
	Tenant     string            `json:"tenant"`
	Tool       string            `json:"tool"`
}

func decisionEventOf(rec *rein.CheckRecord) *decisionEvent {
	return &decisionEvent{ID: rec.ID, Tenant: rec.Tenant, Agent: rec.Check.Agent, Session: rec.Check.Session,
		Tool: rec.Check.Tool, Decision: rec.Decision, Reason: rec.Reason, Rule: rec.Rule, Risk: rec.Risk,
		ActionHash: rec.ActionHash, Approval: rec.Approval, AuditIndex: rec.AuditIndex, CreatedAt: rec.CreatedAt}
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
