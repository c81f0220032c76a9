package http

import (
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
// Query: on_ask=wait|prompt|deny (default deny: a hold longer than the
// hook's timeout in settings.json would let the tool run), wait=50s (with
// on_ask=wait, at most 5m).
func (s *Server) claudeCodeHook(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.decideClaudeCode(r))
}

func (s *Server) decideClaudeCode(r *http.Request) hook.Output {
	r.Body = http.MaxBytesReader(nil, r.Body, hook.MaxInputBytes)
	key, err := s.authenticate(r)
	if err != nil {
		return hook.Deny("cannot authenticate the hook: " + rein.ErrorMessage(err) +
			` (set "headers": {"Authorization": "Bearer $REIN_KEY"} and "allowedEnvVars": ["REIN_KEY"] in settings.json)`)
	}
	if !key.Has(rein.RoleAgent, rein.RoleAdmin) {
		return hook.Deny("key " + key.Name + " may not make checks; the hook needs an agent key")
	}
	q := r.URL.Query()
	mode := hook.AskDeny
	if v := q.Get("on_ask"); v != "" {
		if mode, err = hook.ParseOnAsk(v); err != nil {
			return hook.Deny("the hook URL is misconfigured: " + err.Error())
		}
	}
	wait := 50 * time.Second
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 || wait > rein.MaxWaitMS*time.Millisecond {
			return hook.Deny("the hook URL is misconfigured: wait must be a duration between 0s and 5m, e.g. wait=50s")
		}
	}
	body, err := readBody(r)
	if err != nil {
		return hook.Deny("cannot read the hook input: " + rein.ErrorMessage(err))
	}
	in, err := hook.Parse(body)
	if err != nil {
		return hook.Deny(err.Error())
	}
	rec, err := s.Pipeline.Check(r.Context(), key, in.Check(mode, wait))
	if err != nil {
		if rein.ErrorCode(err) == rein.ECodeInternal {
			s.Log.Error("claude code hook failed", "key", key.Name, "err", err)
		}
		return hook.Deny("the check failed: " + rein.ErrorMessage(err))
	}
	return hook.Answer(&rec.CheckResponse, mode)
}
