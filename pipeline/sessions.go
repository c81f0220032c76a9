package pipeline

import (
	"context"
	"errors"
	"strings"

	"github.com/reinhq/rein"
)

// Results and sessions around the decision path.

// checkFor loads a check the key may see: its tenant's for approvers,
// admins and auditors; its own for an agent key. Anything else is not found.
func (p *Pipeline) checkFor(ctx context.Context, key *rein.Key, id string) (*rein.CheckRecord, error) {
	rec, err := p.Store.CheckByID(ctx, id)
	if errors.Is(err, rein.ErrNotFound) || (err == nil && (!key.Sees(rec.Tenant) ||
		(!key.Has(rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor) && rec.KeyID != key.ID))) {
		return nil, rein.Errorf(rein.ECodeNotFound, "check %s not found", id)
	}
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read check %s: %v", id, err)
	}
	return rec, nil
}

// Result records what happened after an allowed action. A result for a
// check that was not allowed is refused (409) and recorded as an anomaly:
// an agent that ran what rein did not allow is worth an auditor's look.
func (p *Pipeline) Result(ctx context.Context, key *rein.Key, id string, res *rein.CheckResult) error {
	if res.Status != "succeeded" && res.Status != "failed" {
		return rein.Errorf(rein.ECodeBadRequest, `"status" must be "succeeded" or "failed"`)
	}
	if res.Cost != nil && *res.Cost < 0 {
		return rein.Errorf(rein.ECodeBadRequest, `"cost" must be 0 or more`)
	}
	res.Summary = strings.TrimSpace(res.Summary)
	rec, err := p.checkFor(ctx, key, id)
	if err != nil {
		return err
	}
	if rec.KeyID != key.ID && !key.Has(rein.RoleAdmin) {
		return rein.Errorf(rein.ECodeForbidden, "only the key that made check %s, or an admin, reports its result", id)
	}
	data := map[string]any{"status": res.Status, "summary": res.Summary, "decision": rec.Decision, "session": rec.Check.Session}
	if res.Cost != nil {
		data["cost"] = rein.Decimal(*res.Cost)
	}
	e := &rein.Entry{TS: p.now(), Tenant: rec.Tenant, Kind: rein.KindCheckResult, Actor: key.Name, Subject: rec.ID,
		PolicyVersion: rec.PolicyVersion, Data: data}
	if !rec.Decision.Allows() {
		data["anomaly"] = "a result was reported for a check that was not allowed"
		if err := p.Store.Append(ctx, e); err != nil {
			return rein.Errorf(rein.ECodeUnavailable, "the anomaly could not be recorded: %v", err)
		}
		p.Log.Warn("result reported for a check that was not allowed", "check", rec.ID, "decision", rec.Decision, "key", key.Name)
		return rein.Errorf(rein.ECodeConflict, "check %s was %s, not allowed: there is no result to report (recorded as an anomaly)", id, rec.Decision)
	}
	if err := p.Store.RecordResult(ctx, rec, res, e); err != nil {
		var re *rein.Error
		if errors.As(err, &re) {
			return err
		}
		return rein.Errorf(rein.ECodeUnavailable, "the result could not be recorded: %v; retry", err)
	}
	return nil
}

// Session returns a session of the key's tenant (tenant, for keys of "*").
func (p *Pipeline) Session(ctx context.Context, tenant, id string) (*rein.Session, error) {
	s, _, err := p.Store.SessionState(ctx, tenant, id, "")
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read session %s: %v", id, err)
	}
	if s == nil {
		return nil, rein.Errorf(rein.ECodeNotFound, "session %s not found", id)
	}
	return s, nil
}
