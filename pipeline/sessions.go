package pipeline

import (
	"context"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
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

// Result records what happened after an allowed action, with the evidence
// an auditor needs to tell whether what ran is what rein allowed: the hash of
// the executed arguments next to the allowed ones' (args_match). Whatever
// looks wrong is recorded, never dropped, as an anomaly in the audit entry:
// a result for a check that was not allowed (then refused, 409), executed
// arguments that differ from the allowed ones, a result reported after a lock
// stopped the agent, and a second result for the same check (refused, 409).
func (p *Pipeline) Result(ctx context.Context, key *rein.Key, id string, res *rein.CheckResult) error {
	if res.Status != "succeeded" && res.Status != "failed" {
		return rein.Errorf(rein.ECodeBadRequest, `"status" must be "succeeded" or "failed"`)
	}
	if res.Cost != nil && *res.Cost < 0 {
		return rein.Errorf(rein.ECodeBadRequest, `"cost" must be 0 or more`)
	}
	if res.Address != "" {
		a, err := netip.ParseAddr(res.Address)
		if err != nil {
			return rein.Errorf(rein.ECodeBadRequest, `"address" %q is not an IP address; give the address a name resolved to, e.g. 93.184.215.14`, res.Address)
		}
		res.Address = a.String()
	}
	res.Summary = strings.TrimSpace(res.Summary)
	res.ArgsMatch = nil // rein's finding, never the caller's claim
	executed, err := executedHash(res)
	if err != nil {
		return err
	}
	if err := checkExecution(res); err != nil {
		return err
	}
	rec, err := p.checkFor(ctx, key, id)
	if err != nil {
		return err
	}
	if rec.KeyID != key.ID && !key.Has(rein.RoleAdmin) {
		return rein.Errorf(rein.ECodeForbidden, "only the key that made check %s, or an admin, reports its result", id)
	}
	now := p.now()
	allowed := rec.RunArgsHash // the record keeps its arguments' secrets redacted
	if allowed == "" {
		allowed = rein.ArgsHash(rec.Args) // recorded before the hash was kept
	}
	data := map[string]any{"status": res.Status, "summary": res.Summary, "decision": rec.Decision, "session": rec.Check.Session,
		"allowed_args_hash": allowed}
	if res.Cost != nil {
		data["cost"] = rein.Decimal(*res.Cost)
	}
	if res.Address != "" {
		data["address"] = res.Address
	}
	data["executed_by"] = res.ExecutedBy
	if res.ExitStatus != nil {
		data["exit_status"] = *res.ExitStatus
	}
	for k, v := range map[string]string{"stdout_sha256": res.StdoutSHA256, "stderr_sha256": res.StderrSHA256} {
		if v != "" {
			data[k] = v
		}
	}
	for k, v := range map[string]*int64{"stdout_bytes": res.StdoutBytes, "stderr_bytes": res.StderrBytes} {
		if v != nil {
			data[k] = *v
		}
	}
	var anomalies []string
	if executed != "" {
		match := executed == allowed
		data["executed_args_hash"], data["args_match"], res.ArgsMatch = executed, match, &match
		if !match {
			anomalies = append(anomalies, "args_mismatch: the executed arguments differ from those rein allowed")
		}
	}
	if l, err := p.lockFor(ctx, rec.Tenant, rec.Check.Agent, rec.Check.Session, rec.Check.Tool, now); err == nil && l != nil && l.CreatedAt.After(rec.CreatedAt) {
		anomalies = append(anomalies, "result_after_lock: lock "+l.ID+" stopped this agent after the check was allowed")
	}
	e := &rein.Entry{TS: now, Tenant: rec.Tenant, Kind: rein.KindCheckResult, Actor: key.Name, Subject: rec.ID,
		PolicyVersion: rec.PolicyVersion, Data: data}
	anomaly := func(what string) error {
		data["anomalies"] = append(anomalies, what)
		data["anomaly"] = what
		if err := p.Store.Append(ctx, e); err != nil {
			return rein.Errorf(rein.ECodeUnavailable, "the anomaly could not be recorded: %v", err)
		}
		p.Log.Warn("anomalous result", "check", rec.ID, "anomaly", what, "key", key.Name)
		return nil
	}
	if res.ExecutedBy == rein.ExecutedByRein {
		var sess *rein.Session
		if rec.Check.Session != "" {
			if sess, _, err = p.Store.SessionState(ctx, rec.Tenant, rec.Check.Session, ""); err != nil {
				return rein.Errorf(rein.ECodeUnavailable, "cannot read session %s: %v; retry", rec.Check.Session, err)
			}
		}
		if why := rein.RefuseExecutedByRein(rec, sess, key.ID); why != "" {
			if err := anomaly("executed_by_refused: " + why); err != nil {
				return err
			}
			return rein.Errorf(rein.ECodeForbidden, `a result "executed_by": "rein" is refused for check %s: %s (recorded as an anomaly); report it without executed_by`, id, why)
		}
	}
	if !rec.Decision.Allows() {
		what := "not_allowed: a result was reported for a check that was not allowed"
		if err := anomaly(what); err != nil {
			return err
		}
		p.queueResultReview(ctx, rec, res, append(anomalies, what))
		return rein.Errorf(rein.ECodeConflict, "check %s was %s, not allowed: there is no result to report (recorded as an anomaly)", id, rec.Decision)
	}
	if len(anomalies) > 0 {
		data["anomalies"] = anomalies
		p.Log.Warn("anomalous result", "check", rec.ID, "anomalies", anomalies, "key", key.Name)
	}
	stored := *res
	stored.Args = nil // the hash is the evidence; the arguments stay out of the result
	if executed != "" {
		stored.ArgsHash = executed
	}
	if err := p.Store.RecordResult(ctx, rec, &stored, e); err != nil {
		if rein.ErrorCode(err) == rein.ECodeConflict {
			what := "second_result: check " + id + " already had a result"
			if aerr := anomaly(what); aerr != nil {
				return aerr
			}
			p.queueResultReview(ctx, rec, res, append(anomalies, what))
			return rein.Errorf(rein.ECodeConflict, "check %s already has a result (this one is recorded as an anomaly)", id)
		}
		var re *rein.Error
		if errors.As(err, &re) {
			return err
		}
		return rein.Errorf(rein.ECodeUnavailable, "the result could not be recorded: %v; retry", err)
	}
	p.queueResultReview(ctx, rec, &stored, anomalies)
	return nil
}

// checkExecution checks what a result says of the execution: who ran it
// ("agent" when unsaid), the exit status, and the output's hashes. rein
// exec must say all of it; an agent may say what it knows.
func checkExecution(res *rein.CheckResult) error {
	switch res.ExecutedBy {
	case "":
		res.ExecutedBy = rein.ExecutedByAgent
	case rein.ExecutedByAgent, rein.ExecutedByRein:
	default:
		return rein.Errorf(rein.ECodeBadRequest, `"executed_by" is "agent" (the default) or "rein"`)
	}
	if res.ExitStatus != nil && (*res.ExitStatus < 0 || *res.ExitStatus > 255) {
		return rein.Errorf(rein.ECodeBadRequest, `"exit_status" is 0..255`)
	}
	for name, h := range map[string]string{"stdout_sha256": res.StdoutSHA256, "stderr_sha256": res.StderrSHA256} {
		hex, ok := strings.CutPrefix(h, "sha256:")
		if h != "" && (!ok || !isLowerHex(hex, 64)) {
			return rein.Errorf(rein.ECodeBadRequest, `%q must be "sha256:" and 64 lowercase hex digits`, name)
		}
	}
	for name, n := range map[string]*int64{"stdout_bytes": res.StdoutBytes, "stderr_bytes": res.StderrBytes} {
		if n != nil && *n < 0 {
			return rein.Errorf(rein.ECodeBadRequest, `%q must be 0 or more`, name)
		}
	}
	if res.ExecutedBy != rein.ExecutedByRein {
		return nil
	}
	switch {
	case res.ExitStatus == nil || res.StdoutSHA256 == "" || res.StderrSHA256 == "" || res.StdoutBytes == nil || res.StderrBytes == nil:
		return rein.Errorf(rein.ECodeBadRequest, `a result executed by rein says "exit_status", "stdout_sha256", "stdout_bytes", "stderr_sha256" and "stderr_bytes"`)
	case len(res.Args) == 0 && res.ArgsHash == "":
		return rein.Errorf(rein.ECodeBadRequest, `a result executed by rein says what ran: "args" or "args_hash"`)
	case (*res.ExitStatus == 0) != (res.Status == "succeeded"):
		return rein.Errorf(rein.ECodeBadRequest, `"status" is "succeeded" exactly when "exit_status" is 0`)
	}
	return nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// executedHash is the hash of the arguments a result says ran: computed from
// args, or given as args_hash; "" when the result says neither.
func executedHash(res *rein.CheckResult) (string, error) {
	switch {
	case len(res.Args) > 0 && res.ArgsHash != "":
		return "", rein.Errorf(rein.ECodeBadRequest, `send "args" (the executed arguments) or "args_hash", not both`)
	case len(res.Args) > 0:
		canon, err := rein.Canonical(res.Args)
		if err != nil || canon[0] != '{' {
			return "", rein.Errorf(rein.ECodeBadRequest, `"args" must be the executed arguments as a JSON object`)
		}
		return rein.ArgsHash(canon), nil
	case res.ArgsHash != "":
		h, ok := strings.CutPrefix(res.ArgsHash, "sha256:")
		if _, err := hex.DecodeString(h); !ok || len(h) != 64 || err != nil || strings.ToLower(h) != h {
			return "", rein.Errorf(rein.ECodeBadRequest, `"args_hash" must be "sha256:" and 64 lowercase hex digits of the canonical JSON arguments`)
		}
		return res.ArgsHash, nil
	}
	return "", nil
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

// EndSession ends a session of tenant: the agent that ran it (its key's
// identity) or an admin. The end is audited; checks in an ended session are
// denied, so an agent's run has a recorded end an auditor can rely on.
func (p *Pipeline) EndSession(ctx context.Context, key *rein.Key, tenant, id string) (*rein.Session, error) {
	cur, err := p.Session(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if !key.Has(rein.RoleAdmin) && (key.Tenant != cur.Tenant || approval.AgentIdentity(cur.Agent) != key.Name) {
		return nil, rein.Errorf(rein.ECodeNotFound, "session %s not found", id)
	}
	now := p.now()
	e := &rein.Entry{TS: now, Tenant: cur.Tenant, Kind: rein.KindSessionEnded, Actor: key.Name, Subject: id,
		Data: map[string]any{"session": id, "agent": cur.Agent, "checks": cur.Checks, "calls": cur.Calls,
			"denials": cur.Denials, "tainted": cur.Tainted, "cost": rein.Decimal(cur.Cost)}}
	s, err := p.Store.EndSession(ctx, cur.Tenant, id, key.Name, now, e)
	switch {
	case errors.Is(err, rein.ErrNotFound):
		return nil, rein.Errorf(rein.ECodeNotFound, "session %s not found", id)
	case rein.ErrorCode(err) == rein.ECodeConflict:
		return nil, err
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "the end of session %s could not be recorded: %v; retry", id, err)
	}
	p.queueSessionReview(ctx, s)
	return s, nil
}
