package pipeline

import (
	"context"
	"strings"

	"github.com/reinhq/rein"
)

// StartSandbox starts session id contained, for key (an agent key: the key
// rein run holds outside the sandbox, which the contained command never
// sees). Only a new session can be: its checks are then all made inside,
// and policy sees sandbox.contained. The profile is the policy's: the answer
// carries what it reads and passes (Sandbox.Read, Sandbox.Env), which rein
// run applies, so the policy's author decides, not the agent's machine. An
// unknown profile is refused, naming those the policy has. Recorded as
// sandbox.started, with the profile's name and the policy version.
func (p *Pipeline) StartSandbox(ctx context.Context, key *rein.Key, id string, st rein.SandboxStart) (*rein.Session, error) {
	if !key.Has(rein.RoleAgent) {
		return nil, rein.Errorf(rein.ECodeForbidden, "key %q has roles %v; a contained run needs an agent key", key.Name, key.Roles)
	}
	if err := rein.CheckName("session", id); err != nil {
		return nil, err
	}
	if st.Unconfined {
		return p.startUnconfined(ctx, key, id, st)
	}
	if st.Profile == "" || len(st.Command) == 0 || !strings.HasPrefix(st.Workspace, "/") {
		return nil, rein.Errorf(rein.ECodeBadRequest, `a sandbox start names its "profile", "command" and absolute "workspace"`)
	}
	switch st.Runner {
	case "":
		st.Runner = rein.RunnerRun
	case rein.RunnerRun, rein.RunnerExec:
	default:
		return nil, rein.Errorf(rein.ECodeBadRequest, `"runner" is "run" (rein run) or "exec" (rein exec)`)
	}
	set := p.Policies.For(key.Tenant)
	prof, ok := set.Profile(st.Profile)
	if !ok {
		return nil, rein.Errorf(rein.ECodeBadRequest, "the policy in force has no profile %q; its profiles: %s (--profile NAME)",
			st.Profile, strings.Join(set.ProfileNames(), ", "))
	}
	version := ""
	if set != nil {
		version = set.Version
	}
	now := p.now()
	sb := &rein.Sandbox{Profile: prof.Name, Read: prof.Read, Env: prof.Env, Limits: prof.Limits, PolicyVersion: version, FS: "workspace", Net: "proxied",
		Workspace: st.Workspace, Command: st.Command, Features: st.Features, KeyID: key.ID, Runner: st.Runner, StartedAt: now}
	data := map[string]any{"session": id, "profile": prof.Name, "policy_version": version, "read": prof.Read, "env": prof.Env,
		"workspace": st.Workspace, "command": st.Command, "features": st.Features, "fs": sb.FS, "net": sb.Net, "runner": st.Runner}
	if prof.Limits != nil {
		data["limits"] = prof.Limits
	}
	if st.Resolver != "" {
		data["resolver"] = st.Resolver
	}
	if st.Agent != "" {
		credentials := st.Credentials
		if credentials == nil {
			credentials = []string{}
		}
		data["agent"], data["hooks"], data["credentials"], data["model_endpoint"] = st.Agent, st.Hooks, credentials, st.ModelEndpoint
	}
	e := &rein.Entry{TS: now, Tenant: key.Tenant, Kind: rein.KindSandboxStarted, Actor: key.Name, Subject: id, PolicyVersion: version, Data: data}
	s, err := p.Store.ContainSession(ctx, key.Tenant, id, key.Name, sb, e)
	switch {
	case rein.ErrorCode(err) == rein.ECodeConflict:
		return nil, err
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "the contained session %s could not be recorded: %v; retry", id, err)
	}
	return s, nil
}

// startUnconfined records that session id runs a command without
// containment (rein run --unconfined): a person's explicit choice, on the
// record as sandbox.started with unconfined, never a silent fallback.
// Policy sees the session as not contained; its end and a stop are
// recorded as for a contained one.
func (p *Pipeline) startUnconfined(ctx context.Context, key *rein.Key, id string, st rein.SandboxStart) (*rein.Session, error) {
	switch {
	case len(st.Command) == 0 || !strings.HasPrefix(st.Workspace, "/"):
		return nil, rein.Errorf(rein.ECodeBadRequest, `an unconfined start names its "command" and absolute "workspace"`)
	case st.Runner != "" && st.Runner != rein.RunnerRun:
		return nil, rein.Errorf(rein.ECodeBadRequest, `only rein run runs unconfined ("runner": "run"); rein exec always contains what it runs`)
	case st.Profile != "" || st.Hooks || st.ModelEndpoint != "" || len(st.Credentials) > 0 || st.Resolver != "":
		return nil, rein.Errorf(rein.ECodeBadRequest, `an unconfined start has no "profile", "hooks", "credentials", "model_endpoint" or "resolver": nothing contains the command`)
	}
	version := ""
	if set := p.Policies.For(key.Tenant); set != nil {
		version = set.Version
	}
	now := p.now()
	sb := &rein.Sandbox{FS: "host", Net: "host", Unconfined: true, PolicyVersion: version, Workspace: st.Workspace, Command: st.Command,
		Features: "none", KeyID: key.ID, Runner: rein.RunnerRun, StartedAt: now}
	data := map[string]any{"session": id, "unconfined": true, "policy_version": version, "workspace": st.Workspace, "command": st.Command,
		"features": sb.Features, "fs": sb.FS, "net": sb.Net, "runner": sb.Runner}
	if st.Agent != "" {
		data["agent"] = st.Agent
	}
	e := &rein.Entry{TS: now, Tenant: key.Tenant, Kind: rein.KindSandboxStarted, Actor: key.Name, Subject: id, PolicyVersion: version, Data: data}
	s, err := p.Store.ContainSession(ctx, key.Tenant, id, key.Name, sb, e)
	switch {
	case rein.ErrorCode(err) == rein.ECodeConflict:
		return nil, err
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "the unconfined session %s could not be recorded: %v; retry", id, err)
	}
	return s, nil
}

// EndSandbox records that the contained command of session id ended
// (sandbox.ended): the key that started it says how. When a lock stopped
// it, the entry names the lock as rein knows it (who, why), not as the
// runner says.
func (p *Pipeline) EndSandbox(ctx context.Context, key *rein.Key, id string, end rein.SandboxEnd) error {
	s, err := p.Session(ctx, key.Tenant, id)
	if err != nil {
		return err
	}
	if s.Sandbox == nil || s.Sandbox.KeyID != key.ID {
		return rein.Errorf(rein.ECodeNotFound, "no contained session %s started by this key", id)
	}
	now := p.now()
	data := map[string]any{"session": id, "exit_status": end.ExitStatus, "duration_ms": end.DurationMS,
		"quarantined": end.Quarantined, "checks": s.Checks, "denials": s.Denials, "runner": s.Sandbox.Runner}
	if end.StoppedBy != "" {
		l, err := p.Store.Lock(ctx, end.StoppedBy)
		if err != nil || l == nil || !l.Stops(key.Tenant, s.Agent, id, l.CreatedAt) {
			return rein.Errorf(rein.ECodeBadRequest, `"stopped_by" must name the lock that stops session %s`, id)
		}
		data["stopped_by"] = map[string]any{"lock": l.ID, "by": l.CreatedBy, "reason": l.Reason, "at": l.CreatedAt}
	}
	e := &rein.Entry{TS: now, Tenant: key.Tenant, Kind: rein.KindSandboxEnded, Actor: key.Name, Subject: id, Data: data}
	if _, err := p.Store.EndSandbox(ctx, key.Tenant, id, key.ID, end, now, e); err != nil {
		if rein.ErrorCode(err) != "" {
			return err
		}
		return rein.Errorf(rein.ECodeUnavailable, "the end of contained session %s could not be recorded: %v; retry", id, err)
	}
	return nil
}

// SandboxStop is what a contained run watches: its session's containment
// and the lock that stops it, if one is in force. Only the key that started
// the run, or a person of its tenant, sees it.
func (p *Pipeline) SandboxStop(ctx context.Context, key *rein.Key, tenant, id string) (*rein.SandboxStop, error) {
	s, err := p.Session(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if s.Sandbox == nil || (!key.Has(rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor) && s.Sandbox.KeyID != key.ID) {
		return nil, rein.Errorf(rein.ECodeNotFound, "no contained session %s", id)
	}
	out := &rein.SandboxStop{Sandbox: s.Sandbox}
	list := p.activeLocks.Load()
	if list == nil {
		if err := p.LoadLocks(ctx); err != nil {
			return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read locks: %v", err)
		}
		list = p.activeLocks.Load()
	}
	now := p.now()
	for _, l := range *list {
		if l.Stops(s.Tenant, s.Agent, id, now) {
			out.Stop = l
			break
		}
	}
	return out, nil
}

// sandboxVar is a contained session's sandbox as policy sees it.
func sandboxVar(sb *rein.Sandbox) map[string]any {
	if sb.Unconfined {
		return map[string]any{"contained": false, "profile": "", "fs": "host", "net": "host"}
	}
	return map[string]any{"contained": true, "profile": sb.Profile, "fs": sb.FS, "net": sb.Net}
}
