package http

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/hook"
)

// claudeCodeHook serves Claude Code's "http" hook type for PreToolUse
// (integrations.md). Claude Code lets the tool run when an http hook fails
// or answers non-2xx, so this endpoint answers 200 with a decision to
// everything, errors included: a bad key, bad input or a failing store are
// denies whose reason names the cause.
//
// Query: on_ask=wait|prompt|deny|defer (default deny: a hold longer than the
// hook's timeout in settings.json would let the tool run), wait=50s (with
// on_ask=wait, at most 5m).
func (s *Server) claudeCodeHook(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.decideClaudeCode(r))
}

func (s *Server) decideClaudeCode(r *http.Request) hook.Output {
	// The input is read first so that every refusal, a bad key included,
	// is answered in the shape of the hook's event.
	r.Body = http.MaxBytesReader(nil, r.Body, hook.MaxInputBytes)
	var got bytes.Buffer
	r.Body = readCloser{io.TeeReader(r.Body, &got), r.Body}
	body, readErr := readBody(r)
	event := hook.EventOf(got.Bytes()) // what was read, even of a body over the limit
	deny := func(reason string) hook.Output { return hook.DenyFor(event, reason) }
	key, err := s.authenticate(r)
	if err != nil {
		return deny("cannot authenticate the hook: " + rein.ErrorMessage(err) +
			` (set "headers": {"Authorization": "Bearer $REIN_KEY"} and "allowedEnvVars": ["REIN_KEY"] in settings.json)`)
	}
	if !key.Has(rein.RoleAgent, rein.RoleAdmin) {
		return deny("key " + key.Name + " may not make checks; the hook needs an agent key")
	}
	q := r.URL.Query()
	mode := hook.AskDeny
	if v := q.Get("on_ask"); v != "" {
		if mode, err = hook.ParseOnAsk(v); err != nil {
			return deny("the hook URL is misconfigured: " + err.Error())
		}
	}
	wait := 50 * time.Second
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 || wait > rein.MaxWaitMS*time.Millisecond {
			return deny("the hook URL is misconfigured: wait must be a duration between 0s and 5m, e.g. wait=50s")
		}
	}
	if readErr != nil {
		return deny("cannot read the hook input: " + rein.ErrorMessage(readErr))
	}
	if err := jsonContent(r); err != nil {
		// Claude Code sends its hook input as JSON; anything else is not
		// a hook of Claude Code, and is not decided.
		return deny("the hook input is not JSON: " + err.Error())
	}
	in, err := hook.Parse(body)
	if err != nil {
		return deny(err.Error())
	}
	if in.HookEventName == hook.EventPostToolUse {
		// What ran, as the result of the check that allowed it (an anomaly
		// when nothing allowed it, or the input differs).
		rec, err := s.Pipeline.CheckByRequest(r.Context(), key, in.RequestID())
		if err == nil {
			err = s.Pipeline.Result(r.Context(), key, rec.ID, in.Result())
		}
		if err != nil {
			s.Log.Warn("claude code tool result not recorded", "tool_use_id", in.ToolUseID, "err", err)
		}
		return hook.Ended()
	}
	if in.HookEventName == hook.EventPermissionDenied {
		// Claude Code denied a call rein allowed: the call did not run.
		rec, err := s.Pipeline.CheckByRequest(r.Context(), key, in.RequestID())
		if err == nil {
			err = s.Pipeline.Result(r.Context(), key, rec.ID, in.Denied())
		}
		if err != nil {
			s.Log.Warn("claude code denial not recorded", "tool_use_id", in.ToolUseID, "err", err)
		}
		return hook.Ended()
	}
	if in.HookEventName == hook.EventSessionEnd {
		s.endClaudeCodeSession(r.Context(), key, in)
		return hook.Ended()
	}
	rec, err := s.Pipeline.Check(r.Context(), key, in.Check(mode, wait))
	if err == nil && mode == hook.AskDefer && in.HookEventName == hook.EventPreToolUse && rec.Decision == rein.Ask && rec.Approval != nil {
		// A resumed deferred call: once its approval is approved, decide it
		// again with the grant (hook.Input.Resumed).
		if a, aerr := s.Pipeline.Approval(r.Context(), key, rec.Approval.ID); aerr == nil && a.Status == rein.StatusApproved {
			if req, ok := in.Resumed(); ok {
				rec, err = s.Pipeline.Check(r.Context(), key, req)
			}
		} else if aerr == nil && a.Status != rein.StatusPending {
			return hook.NotResumed(a)
		}
	}
	if err != nil {
		if rein.ErrorCode(err) == rein.ECodeInternal {
			s.Log.Error("claude code hook failed", "key", key.Name, "err", err)
		}
		return deny("the check failed: " + rein.ErrorMessage(err))
	}
	if in.HookEventName == hook.EventPermissionRequest {
		return hook.AnswerPermission(rec.Answer(in.ToolInput), mode)
	}
	return hook.Answer(rec.Answer(in.ToolInput), mode)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// endClaudeCodeSession ends rein's session of a Claude Code session whose
// run ended, unless an approval in it is pending. A `claude -p` run that
// stopped on a deferred call ends like any other (SessionEnd, reason
// "other"), yet the session goes on with `claude -p --resume` once the
// approval is decided: ending it then would refuse the very call the
// approval is for. The SessionEnd of the run that leaves nothing pending
// ends the session, and an ended session refuses every check after it.
// (The SessionEnd of the deferring run comes as the run stops, before a
// person can have decided.)
func (s *Server) endClaudeCodeSession(ctx context.Context, key *rein.Key, in *hook.Input) {
	pending, err := s.ApprovalStore.Approvals(ctx, key.Tenant, rein.ApprovalFilter{Status: rein.StatusPending, Session: in.SessionID, Limit: 1})
	if err == nil && len(pending) > 0 {
		s.Log.Info("claude code session not ended: an approval in it is pending, for the run that resumes it",
			"session", in.SessionID, "approval", pending[0].ID, "reason", in.Reason)
		return
	}
	// A store that cannot list approvals does not keep the session open.
	_, err = s.Pipeline.EndSession(ctx, key, key.Tenant, in.SessionID)
	if err != nil && rein.ErrorCode(err) != rein.ECodeNotFound && rein.ErrorCode(err) != rein.ECodeConflict {
		s.Log.Warn("claude code session end not recorded", "session", in.SessionID, "err", err)
	}
}
