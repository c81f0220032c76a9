package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/events"
	"github.com/reinhq/rein/question"
)

// Questions: an agent asks people for input and waits for the answer. Each
// change runs the pure state machine (package question) inside one store
// transaction, is recorded in the audit log, and wakes whoever waits.

// Ask creates a question for an agent key (or an admin).
func (p *Pipeline) Ask(ctx context.Context, key *rein.Key, req *rein.QuestionRequest) (*rein.Question, error) {
	if !key.Has(rein.RoleAgent, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; asking questions needs the agent role", key.Name, key.Roles)
	}
	for field, v := range map[string]string{"session": req.Session, "agent": req.Agent} {
		if err := rein.CheckName(field, v); err != nil {
			return nil, err
		}
	}
	agent, err := rein.AgentFor(key.Name, req.Agent)
	if err != nil {
		return nil, err
	}
	ttl := rein.DefaultQuestionTTL
	if req.TTLMS != nil {
		ttl = time.Duration(*req.TTLMS) * time.Millisecond
		if ttl < time.Second || ttl > rein.MaxQuestionTTL {
			return nil, rein.Errorf(rein.ECodeBadRequest, `"ttl_ms" must be from 1000 (one second) to %d (seven days)`, rein.MaxQuestionTTL.Milliseconds())
		}
	}
	if string(req.Schema) == "null" {
		req.Schema = nil
	}
	now := p.now()
	q := &rein.Question{ID: rein.NewID("qst"), Tenant: key.Tenant, Status: rein.StatusPending, Agent: agent,
		AgentKeyID: key.ID, Session: req.Session, Text: req.Text, Choices: req.Choices, Schema: req.Schema,
		Ask: req.Ask, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := question.Prepare(q); err != nil {
		return nil, rein.Errorf(rein.ECodeBadRequest, "%v", err)
	}
	e := &rein.Entry{TS: now, Tenant: q.Tenant, Kind: rein.KindQuestionCreated, Actor: key.Name, Subject: q.ID,
		Data: map[string]any{"agent": q.Agent, "session": q.Session, "text": q.Text, "choices": q.Choices,
			"schema": q.Schema, "ask": q.Ask, "expires_at": q.ExpiresAt.UTC().Format(time.RFC3339Nano)}}
	if err := p.Store.CreateQuestion(ctx, q, []*rein.Entry{e}); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the question could not be recorded: %v; retry", err)
	}
	p.publish(events.QuestionCreated, q.Tenant, q)
	return q, nil
}

// questionFor loads a question the key may see (its tenant's, or any for a
// key of tenant "*"; anything else is not found), expiring it on the way if
// its time ran out.
func (p *Pipeline) questionFor(ctx context.Context, key *rein.Key, id string) (*rein.Question, error) {
	q, err := p.Store.Question(ctx, id)
	if errors.Is(err, rein.ErrNotFound) || (err == nil && !key.Sees(q.Tenant)) {
		return nil, rein.Errorf(rein.ECodeNotFound, "question %s not found", id)
	}
	if err == nil && question.Expire(q, p.now()).Changed() {
		if err = p.expireQuestion(ctx, id); err == nil {
			q, err = p.Store.Question(ctx, id)
		}
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read question %s: %v", id, err)
	}
	return q, nil
}

// Question returns a question to an approver, admin or auditor of its
// tenant, or to the agent key that asked it.
func (p *Pipeline) Question(ctx context.Context, key *rein.Key, id string) (*rein.Question, error) {
	q, err := p.questionFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if !key.Has(rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor) && key.ID != q.AgentKeyID {
		return nil, rein.Errorf(rein.ECodeNotFound, "question %s not found", id)
	}
	return q, nil
}

// Answer records key's answer, checked against the question's choices or
// form (400 when it does not fit).
func (p *Pipeline) Answer(ctx context.Context, key *rein.Key, id string, answer json.RawMessage) (*rein.Question, error) {
	if !key.Has(rein.RoleApprover, rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; answering needs the approver or admin role", key.Name, key.Roles)
	}
	if _, err := p.questionFor(ctx, key, id); err != nil {
		return nil, err
	}
	now := p.now()
	q, err := p.changeQuestion(ctx, id, func(q *rein.Question) ([]*rein.Entry, error) {
		t, err := question.Answer(q, approval.VoterOf(key), answer, now)
		if err != nil {
			return nil, err
		}
		return []*rein.Entry{{TS: now, Tenant: q.Tenant, Kind: rein.KindQuestionAnswered, Actor: key.Name, Subject: q.ID,
			Data: map[string]any{"from": t.From, "status": t.To, "answer": q.Answer, "by_key": key.ID}}}, nil
	})
	switch {
	case errors.Is(err, question.ErrNotPending):
		return nil, rein.Errorf(rein.ECodeConflict, "question %s is no longer pending", id)
	case errors.Is(err, question.ErrSelfAnswer), errors.Is(err, question.ErrNotAsked):
		return nil, rein.Errorf(rein.ECodeForbidden, "%v", err)
	case errors.Is(err, question.ErrBadAnswer), errors.Is(err, question.ErrBadQuestion):
		return nil, rein.Errorf(rein.ECodeBadRequest, "%v", err)
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "the answer could not be recorded: %v; retry", err)
	}
	return q, nil
}

// CancelQuestion withdraws a pending question: the agent key that asked, or
// an admin.
func (p *Pipeline) CancelQuestion(ctx context.Context, key *rein.Key, id string) (*rein.Question, error) {
	cur, err := p.askerOrAdminQuestion(ctx, key, id, "cancel")
	if err != nil {
		return nil, err
	}
	now := p.now()
	q, err := p.changeQuestion(ctx, id, func(q *rein.Question) ([]*rein.Entry, error) {
		t := question.Cancel(q, now)
		if !t.Changed() {
			return nil, question.ErrNotPending
		}
		return []*rein.Entry{questionResolved(q, t, key.Name, now)}, nil
	})
	if errors.Is(err, question.ErrNotPending) {
		return nil, rein.Errorf(rein.ECodeConflict, "question %s is %s, not pending", id, cur.Status)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the cancellation could not be recorded: %v; retry", err)
	}
	return q, nil
}

func (p *Pipeline) askerOrAdminQuestion(ctx context.Context, key *rein.Key, id, what string) (*rein.Question, error) {
	q, err := p.questionFor(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if key.ID != q.AgentKeyID && !key.Has(rein.RoleAdmin) {
		return nil, rein.Errorf(rein.ECodeForbidden, "only the agent key that asked, or an admin, can %s question %s", what, id)
	}
	return q, nil
}

// questionResolved records a question leaving pending without an answer.
func questionResolved(q *rein.Question, t question.Transition, actor string, at time.Time) *rein.Entry {
	return &rein.Entry{TS: at, Tenant: q.Tenant, Kind: rein.KindQuestionResolved, Actor: actor, Subject: q.ID,
		Data: map[string]any{"from": t.From, "status": t.To, "cause": t.Cause}}
}

// WaitQuestion long-polls a question for the agent key that asked (or an
// admin) until it leaves pending or timeout passes, and returns it as it is.
func (p *Pipeline) WaitQuestion(ctx context.Context, key *rein.Key, id string, timeout time.Duration) (*rein.Question, error) {
	if _, err := p.askerOrAdminQuestion(ctx, key, id, "wait on"); err != nil {
		return nil, err
	}
	return awaitPending(ctx, p, "question", id, time.Now().Add(timeout), p.Store.Question,
		func(q *rein.Question) (string, time.Time) { return q.Status, q.ExpiresAt }, p.expireQuestion)
}

// expireQuestion moves one question whose time ran out to expired.
func (p *Pipeline) expireQuestion(ctx context.Context, id string) error {
	now := p.now()
	_, err := p.changeQuestion(ctx, id, func(q *rein.Question) ([]*rein.Entry, error) {
		t := question.Expire(q, now)
		if !t.Changed() {
			return nil, nil
		}
		return []*rein.Entry{questionResolved(q, t, "rein", now)}, nil
	})
	return err
}
