// Package authzen translates the OpenID AuthZEN Authorization API 1.0 (the
// Access Evaluation and Access Evaluations APIs) and its Access Request and
// Approval Profile (ARAP) into rein checks and renders rein's answer back
// (integrations.md, "AuthZEN"). It is pure: the HTTP endpoints do the I/O.
//
// An evaluation is one check: the action's name is the tool, and the
// subject, resource, action and context are its arguments, so that policy
// reads them as args.subject.id, args.resource.properties.ownerID, and so
// on. The caller's API key is the agent, as for every entry point.
package authzen

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/reinhq/rein"
)

// Capability is the ARAP capability rein announces in its metadata.
const Capability = "urn:openid:authzen:capability:access-request"

// Entity is an AuthZEN subject or resource.
type Entity struct {
	Type       string         `json:"type"`
	ID         string         `json:"id"`
	Properties map[string]any `json:"properties,omitempty"`
}

// Action is an AuthZEN action.
type Action struct {
	Name       string         `json:"name"`
	Properties map[string]any `json:"properties,omitempty"`
}

// Evaluation is one Access Evaluation request.
type Evaluation struct {
	Subject  *Entity        `json:"subject,omitempty"`
	Resource *Entity        `json:"resource,omitempty"`
	Action   *Action        `json:"action,omitempty"`
	Context  map[string]any `json:"context,omitempty"`
}

// Batch is an Access Evaluations request: top-level defaults, the
// evaluations, and options.
type Batch struct {
	Evaluation
	Evaluations []Evaluation   `json:"evaluations"`
	Options     map[string]any `json:"options,omitempty"`
}

// Decision is an AuthZEN decision.
type Decision struct {
	Decision bool           `json:"decision"`
	Context  map[string]any `json:"context,omitempty"`
}

// Approval is ARAP's approval reference, sent back in a re-evaluation's
// context.approval.
type Approval struct {
	ID            string `json:"id"`
	ApprovedAt    string `json:"approved_at,omitempty"`
	ApprovedUntil string `json:"approved_until,omitempty"`
}

// Evaluation semantics of a batch.
const (
	ExecuteAll          = "execute_all"
	DenyOnFirstDeny     = "deny_on_first_deny"
	PermitOnFirstPermit = "permit_on_first_permit"
)

// Validate reports what a request lacks, in words that say how to fix it.
func (e *Evaluation) Validate() error {
	switch {
	case e.Subject == nil || e.Subject.Type == "" || e.Subject.ID == "":
		return fmt.Errorf(`"subject" with "type" and "id" is required`)
	case e.Resource == nil || e.Resource.Type == "" || e.Resource.ID == "":
		return fmt.Errorf(`"resource" with "type" and "id" is required`)
	case e.Action == nil || e.Action.Name == "":
		return fmt.Errorf(`"action" with "name" is required`)
	}
	return nil
}

// Expand applies a batch's top-level defaults to each evaluation (an
// evaluation's own subject, resource, action or context wins) and returns
// the evaluations with the semantic to run them with. Without evaluations
// the batch is a single evaluation.
func (b *Batch) Expand() ([]Evaluation, string, error) {
	semantic := ExecuteAll
	if s, ok := b.Options["evaluations_semantic"]; ok {
		str, _ := s.(string)
		switch str {
		case ExecuteAll, DenyOnFirstDeny, PermitOnFirstPermit:
			semantic = str
		default:
			return nil, "", fmt.Errorf(`options.evaluations_semantic %v: use %s, %s or %s`, s, ExecuteAll, DenyOnFirstDeny, PermitOnFirstPermit)
		}
	}
	if len(b.Evaluations) == 0 {
		return []Evaluation{b.Evaluation}, semantic, nil
	}
	out := make([]Evaluation, len(b.Evaluations))
	for i, e := range b.Evaluations {
		if e.Subject == nil {
			e.Subject = b.Subject
		}
		if e.Resource == nil {
			e.Resource = b.Resource
		}
		if e.Action == nil {
			e.Action = b.Action
		}
		if e.Context == nil {
			e.Context = b.Context
		}
		out[i] = e
	}
	return out, semantic, nil
}

// Check is the rein check of an evaluation: the action's name as the tool,
// the subject, resource, action and context as the arguments (without
// context.approval, the ARAP reference, so that a re-evaluation is the same
// action as the denied one), context.session_id (a string) as the session.
// It returns the approval reference the caller sent, if any.
func (e *Evaluation) Check() (*rein.CheckRequest, *Approval, error) {
	if err := e.Validate(); err != nil {
		return nil, nil, err
	}
	ctx := maps.Clone(e.Context)
	var ref *Approval
	if raw, ok := ctx["approval"]; ok {
		b, _ := json.Marshal(raw)
		ref = &Approval{}
		if json.Unmarshal(b, ref) != nil || ref.ID == "" {
			return nil, nil, fmt.Errorf(`context.approval must be the approval object of a completed access request, with its "id"`)
		}
		delete(ctx, "approval")
	}
	session, _ := ctx["session_id"].(string)
	args := map[string]any{"subject": e.Subject, "resource": e.Resource, "action": e.Action}
	if len(ctx) > 0 {
		args["context"] = ctx
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, nil, err
	}
	return &rein.CheckRequest{Tool: e.Action.Name, Args: raw, Session: session}, ref, nil
}

// Answered is what the endpoint knows when it renders an answer.
type Answered struct {
	Answer   rein.Answer
	CheckID  string
	Rule     string
	At       time.Time
	Approval *rein.Approval // the approval an ask waits on, or the one a re-evaluation used
	// RequestEndpoint is where access requests are submitted.
	RequestEndpoint string
	// Reevaluated is set when the caller sent an approval reference.
	Reevaluated bool
}

// Render writes rein's answer as an AuthZEN decision. Only "run with the
// arguments asked" is true: an answer with changed arguments (a modify rule)
// cannot be carried by AuthZEN and is false, never a run of the original.
// An ask is ARAP's requestable denial, bound to the check by evaluation_id.
func Render(a Answered) Decision {
	ctx := map[string]any{"evaluation_id": a.CheckID, "evaluated_at": a.At.UTC().Format(time.RFC3339), "rein": map[string]any{"rule": a.Rule}}
	d := Decision{Context: ctx}
	switch a.Answer.Do {
	case rein.DoRun:
		if a.Answer.Changed {
			ctx["reason"] = "modified_arguments"
			ctx["reason_text"] = "rein allows this only with changed arguments, which AuthZEN cannot carry: " + a.Answer.Reason
			return d
		}
		d.Decision = true
		if a.Reevaluated && a.Approval != nil {
			ctx["approval"] = approvalRef(a.Approval)
		}
	case rein.DoWait:
		ctx["reason"], ctx["reason_text"] = "approval_required", a.Answer.Reason
		ar := map[string]any{"endpoint": a.RequestEndpoint, "template": a.Rule,
			"display": map[string]any{"title": "Approval required", "description": a.Answer.Reason}}
		if a.Approval != nil {
			ar["expires_at"] = a.Approval.ExpiresAt.UTC().Format(time.RFC3339)
			ctx["rein"].(map[string]any)["approval_id"] = a.Approval.ID
		}
		ctx["access_request"] = ar
	case rein.DoRetry:
		ctx["reason"], ctx["reason_text"] = "rate_limited", a.Answer.Reason
		ctx["next_action"], ctx["retry_after"] = "retry", int64((a.Answer.RetryAfter+time.Second-1)/time.Second)
	default:
		ctx["reason"], ctx["reason_text"] = "denied", a.Answer.Reason
		if a.Reevaluated {
			ctx["reason"], ctx["next_action"] = "policy_denied", "none"
		}
	}
	return d
}

// Unverifiable is the decision for a re-evaluation whose approval reference
// rein cannot apply: unknown, another tenant's, or for another action.
func Unverifiable(checkID string, at time.Time, why string) Decision {
	return Decision{Context: map[string]any{"evaluation_id": checkID, "evaluated_at": at.UTC().Format(time.RFC3339),
		"reason": "approval_unverifiable", "next_action": "none", "reason_text": why}}
}

func approvalRef(a *rein.Approval) map[string]any {
	ref := map[string]any{"id": a.ID}
	if a.ResolvedAt != nil {
		ref["approved_at"] = a.ResolvedAt.UTC().Format(time.RFC3339)
	}
	if a.GrantExpiresAt != nil {
		ref["approved_until"] = a.GrantExpiresAt.UTC().Format(time.RFC3339)
	}
	return ref
}

// Task is ARAP's task handle for a rein approval.
func Task(a *rein.Approval, statusEndpoint, reviewURL string) map[string]any {
	task := map[string]any{"id": a.ID, "status": TaskStatus(a.Status), "status_endpoint": statusEndpoint,
		"expires_at": a.ExpiresAt.UTC().Format(time.RFC3339)}
	if reviewURL != "" {
		task["links"] = map[string]any{"review": reviewURL, "cancel": statusEndpoint + "/cancel"}
	}
	quorum := max(a.Quorum, 1)
	task["progress"] = map[string]any{"current_step": min(len(a.Counting())+1, quorum), "total_steps": quorum}
	out := map[string]any{"task": task}
	if a.Status == rein.StatusApproved {
		out["result"] = map[string]any{"mode": "reevaluate", "approval": approvalRef(a)}
	}
	return out
}

// TaskStatus maps rein's approval statuses onto ARAP's task statuses:
// pending -> pending, approved -> approved (the grant not yet used), consumed
// -> expired (its one use is spent: ask again), rejected -> denied, expired
// -> expired, cancelled -> cancelled, invalidated (a policy change or a lock)
// -> denied.
func TaskStatus(status string) string {
	switch status {
	case rein.StatusPending:
		return "pending"
	case rein.StatusApproved:
		return "approved"
	case rein.StatusRejected, rein.StatusInvalidated:
		return "denied"
	case rein.StatusCancelled:
		return "cancelled"
	default:
		return "expired"
	}
}

// Problem is an RFC 9457 problem of the ARAP error registry.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// Problem types of the profile.
const (
	ErrNotRequestable   = "urn:openid:authzen:access-request:error:not_requestable"
	ErrExpiredDenial    = "urn:openid:authzen:access-request:error:expired_denial"
	ErrInvalidBinding   = "urn:openid:authzen:access-request:error:invalid_denial_binding"
	ErrUnknownTask      = "urn:openid:authzen:access-request:error:unknown_task"
	ErrInvalidTaskState = "urn:openid:authzen:access-request:error:invalid_task_state"
)
