package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein"
)

// TestPolicySeesContainment: a session started contained is seen by policy
// as sandbox.contained, every other session as not; only a new session can
// be started contained, and only by an agent key; the start and the end are
// audited.
func TestPolicySeesContainment(t *testing.T) {
	f := setup(t, `version: 1
rules:
  - {id: contained-build, when: 'tool == "shell.exec" && sandbox.contained && sandbox.net == "proxied"', decision: allow}
  - {id: build, when: 'tool == "shell.exec" && !sandbox.contained', decision: ask, approval: {approvers: ["group:dev"]}}
`)
	stored(t, f, f.key)
	ctx := context.Background()
	st := rein.SandboxStart{Profile: "coding", Workspace: "/srv/app", Command: []string{"make"}, Features: "landlock"}
	if _, err := f.p.StartSandbox(ctx, f.key, "box", st); err != nil {
		t.Fatal(err)
	}
	check := func(session string) rein.Decision {
		rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "shell.exec", Args: json.RawMessage(`{"command":"make"}`), Session: session})
		if err != nil {
			t.Fatal(err)
		}
		return rec.Decision
	}
	if d := check("box"); d != rein.Allow {
		t.Fatalf("a check of the contained session: %s", d)
	}
	if d := check("plain"); d != rein.Ask {
		t.Fatalf("a check of a session never contained: %s", d)
	}
	if _, err := f.p.StartSandbox(ctx, f.key, "plain", st); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("containing a session that ran outside: %v", err)
	}
	if d := check("plain"); d != rein.Ask {
		t.Fatalf("after a refused claim: %s", d)
	}
	if _, err := f.p.StartSandbox(ctx, approver("ann", "dev"), "new", st); rein.ErrorCode(err) != rein.ECodeForbidden {
		t.Fatalf("an approver key starting a sandbox: %v", err)
	}
	if err := f.p.EndSandbox(ctx, f.key, "box", rein.SandboxEnd{ExitStatus: 3, DurationMS: 1500}); err != nil {
		t.Fatal(err)
	}
	other := &rein.Key{ID: "key_2", Name: "builder2", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}}
	if err := f.p.EndSandbox(ctx, other, "box", rein.SandboxEnd{}); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("another key ending the sandbox: %v", err)
	}
	kinds := map[string]map[string]any{}
	es, _ := f.store.Entries(ctx, 0, 1000)
	for _, e := range es {
		var m struct {
			Kind string
			Data map[string]any
		}
		json.Unmarshal(e.Bytes, &m)
		kinds[m.Kind] = m.Data
	}
	if kinds[rein.KindSandboxStarted]["profile"] != "coding" || kinds[rein.KindSandboxEnded]["exit_status"] != float64(3) {
		t.Fatalf("audit: %v %v", kinds[rein.KindSandboxStarted], kinds[rein.KindSandboxEnded])
	}
}

// TestSandboxProfileIsPolicy: the profile a contained session runs with is
// the policy's (its paths and variables come back in the answer), policy
// sees its name, sandbox.started records it with the policy version; an
// unknown profile is refused naming the policy's; a policy that names no
// profiles has the built-in coding one, and only that.
func TestSandboxProfileIsPolicy(t *testing.T) {
	src := `version: 1
profiles:
  docs: {read: [/usr, /etc/ssl, /srv/docs], env: [LANGUAGE]}
  coding: {read: [/usr, /lib]}
rules:
  - {id: docs-only, when: 'tool == "fs.read" && sandbox.contained && sandbox.profile == "docs"', decision: allow}
`
	f := setup(t, src)
	ctx := context.Background()
	st := rein.SandboxStart{Profile: "docs", Workspace: "/srv/app", Command: []string{"make"}, Features: "landlock"}
	s, err := f.p.StartSandbox(ctx, f.key, "box", st)
	if err != nil {
		t.Fatal(err)
	}
	sb := s.Sandbox
	if sb.Profile != "docs" || strings.Join(sb.Read, " ") != "/usr /etc/ssl /srv/docs" || strings.Join(sb.Env, " ") != "LANGUAGE" ||
		sb.PolicyVersion != f.p.Policies.For("acme").Version || !strings.HasPrefix(sb.PolicyVersion, "sha256:") {
		t.Fatalf("the sandbox in force: %+v", sb)
	}
	rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "fs.read", Args: json.RawMessage(`{"path":"/srv/app/a"}`), Session: "box"})
	if err != nil || rec.Decision != rein.Allow {
		t.Fatalf("policy sees sandbox.profile: %v %v", rec, err)
	}
	es, _ := f.store.Entries(ctx, 0, 1000)
	var started map[string]any
	for _, e := range es {
		var m struct {
			Kind          string
			PolicyVersion string `json:"policy_version"`
			Data          map[string]any
		}
		json.Unmarshal(e.Bytes, &m)
		if m.Kind == rein.KindSandboxStarted {
			started = m.Data
			if m.PolicyVersion != sb.PolicyVersion {
				t.Errorf("the entry's policy version %q, want %q", m.PolicyVersion, sb.PolicyVersion)
			}
		}
	}
	if started["profile"] != "docs" || started["policy_version"] != sb.PolicyVersion || fmt.Sprint(started["read"]) != "[/usr /etc/ssl /srv/docs]" {
		t.Fatalf("sandbox.started: %v", started)
	}

	_, err = f.p.StartSandbox(ctx, f.key, "box2", rein.SandboxStart{Profile: "everything", Workspace: "/srv/app", Command: []string{"make"}})
	if rein.ErrorCode(err) != rein.ECodeBadRequest || !strings.Contains(err.Error(), `no profile "everything"`) || !strings.Contains(err.Error(), "coding, docs") {
		t.Fatalf("an unknown profile: %v", err)
	}

	// No profiles in the policy: the built-in coding profile, nothing else.
	g := setup(t, "version: 1\n")
	s, err = g.p.StartSandbox(ctx, g.key, "box", rein.SandboxStart{Profile: "coding", Workspace: "/srv/app", Command: []string{"make"}})
	if err != nil || s.Sandbox.Profile != "coding" || strings.Join(s.Sandbox.Read, " ") != strings.Join(rein.CodingProfile.Read, " ") {
		t.Fatalf("the built-in coding profile: %+v %v", s, err)
	}
	_, err = g.p.StartSandbox(ctx, g.key, "box2", rein.SandboxStart{Profile: "docs", Workspace: "/srv/app", Command: []string{"make"}})
	if rein.ErrorCode(err) != rein.ECodeBadRequest || !strings.Contains(err.Error(), "its profiles: coding") {
		t.Fatalf("a profile of no policy: %v", err)
	}
}

// TestResultRecordsAddress: the egress proxy's result of a net.connect
// check names the address the name resolved to; rein keeps it on the check
// and in the check.result entry, and refuses one that is not an address.
func TestResultRecordsAddress(t *testing.T) {
	f := setup(t, "version: 1\nrules:\n  - {id: any, when: 'tool == \"net.connect\"', decision: allow}\n")
	ctx := context.Background()
	rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "net.connect", Args: json.RawMessage(`{"host":"api.example.com","port":443}`), Session: "s1"})
	if err != nil || rec.Decision != rein.Allow {
		t.Fatal(rec, err)
	}
	bad := &rein.CheckResult{Status: "failed", Summary: "x", Address: "api.example.com"}
	if err := f.p.Result(ctx, f.key, rec.ID, bad); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("a result naming no address: %v", err)
	}
	res := &rein.CheckResult{Status: "failed", Summary: "api.example.com resolves to 10.0.0.1; refused", Address: "::ffff:10.0.0.1"}
	if err := f.p.Result(ctx, f.key, rec.ID, res); err != nil {
		t.Fatal(err)
	}
	got, err := f.p.CheckRecord(ctx, f.key, rec.ID)
	if err != nil || got.Result == nil || got.Result.Address != "::ffff:10.0.0.1" {
		t.Fatalf("the check's result: %+v %v", got, err)
	}
	es, _ := f.store.Entries(ctx, 0, 1000)
	var m struct {
		Kind string
		Data map[string]any
	}
	json.Unmarshal(es[len(es)-1].Bytes, &m)
	if m.Kind != rein.KindCheckResult || m.Data["address"] != "::ffff:10.0.0.1" {
		t.Fatalf("the check.result entry: %+v", m)
	}
}

// TestExecutedByRein: a result that says rein ran the action is accepted
// only for the shell.exec check of a session rein exec contains, from the
// key that started it, before its command ended, and with the evidence
// (exit status, output hashes, what ran); every other claim is refused
// (403) and recorded as an anomaly. Another key naming a contained session
// is not contained.
func TestExecutedByRein(t *testing.T) {
	f := setup(t, `version: 1
rules:
  - {id: contained, when: 'sandbox.contained', decision: allow}
  - {id: outside, when: '!sandbox.contained', decision: deny, reason: "only contained work"}
`)
	stored(t, f, f.key)
	other := stored(t, f, &rein.Key{ID: "key_other", Name: "other", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}})
	ctx := context.Background()
	start := func(key *rein.Key, id, runner string) {
		t.Helper()
		st := rein.SandboxStart{Profile: "coding", Workspace: "/srv/app", Command: []string{"sh", "-c", "make"}, Runner: runner}
		if _, err := f.p.StartSandbox(ctx, key, id, st); err != nil {
			t.Fatal(err)
		}
	}
	start(f.key, "exec-1", rein.RunnerExec)
	start(f.key, "run-1", rein.RunnerRun)
	start(f.key, "exec-2", rein.RunnerExec)
	check := func(key *rein.Key, tool, session string) *rein.CheckRecord {
		t.Helper()
		rec, err := f.p.Check(ctx, key, &rein.CheckRequest{Tool: tool, Args: json.RawMessage(`{"command":"make"}`), Session: session})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if rec := check(other, "shell.exec", "exec-1"); rec.Decision != rein.Deny {
		t.Fatalf("another key naming a contained session was seen contained: %s", rec.Decision)
	}
	zero, n := 0, int64(3)
	h := "sha256:" + strings.Repeat("ab", 32)
	evidence := func() *rein.CheckResult {
		return &rein.CheckResult{Status: "succeeded", ExecutedBy: rein.ExecutedByRein, ExitStatus: &zero, StdoutSHA256: h, StdoutBytes: &n,
			StderrSHA256: h, StderrBytes: &n, Args: json.RawMessage(`{"command":"make"}`)}
	}
	ended := check(f.key, "shell.exec", "exec-2")
	if err := f.p.EndSandbox(ctx, f.key, "exec-2", rein.SandboxEnd{ExitStatus: 0}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		rec  *rein.CheckRecord
		key  *rein.Key
		res  func(*rein.CheckResult)
		code string
	}{
		{"a check in a rein run session", check(f.key, "shell.exec", "run-1"), f.key, nil, rein.ECodeForbidden},
		{"another tool", check(f.key, "net.connect", "exec-1"), f.key, nil, rein.ECodeForbidden},
		{"a session never contained", check(f.key, "shell.exec", "plain"), f.key, nil, rein.ECodeForbidden},
		{"after the command ended", ended, f.key, nil, rein.ECodeForbidden},
		{"no exit status", check(f.key, "shell.exec", "exec-1"), f.key, func(r *rein.CheckResult) { r.ExitStatus = nil }, rein.ECodeBadRequest},
		{"no stderr hash", check(f.key, "shell.exec", "exec-1"), f.key, func(r *rein.CheckResult) { r.StderrSHA256 = "" }, rein.ECodeBadRequest},
		{"a hash not hex", check(f.key, "shell.exec", "exec-1"), f.key, func(r *rein.CheckResult) { r.StdoutSHA256 = "sha256:xyz" }, rein.ECodeBadRequest},
		{"not what ran", check(f.key, "shell.exec", "exec-1"), f.key, func(r *rein.CheckResult) { r.Args = nil }, rein.ECodeBadRequest},
		{"status against exit status", check(f.key, "shell.exec", "exec-1"), f.key, func(r *rein.CheckResult) { r.Status = "failed" }, rein.ECodeBadRequest},
		{"an unknown runner", check(f.key, "shell.exec", "exec-1"), f.key, func(r *rein.CheckResult) { r.ExecutedBy = "kernel" }, rein.ECodeBadRequest},
		{"the exec's own check", check(f.key, "shell.exec", "exec-1"), f.key, nil, ""},
	} {
		res := evidence()
		if c.res != nil {
			c.res(res)
		}
		err := f.p.Result(ctx, c.key, c.rec.ID, res)
		if (err == nil) != (c.code == "") || (err != nil && rein.ErrorCode(err) != c.code) {
			t.Errorf("%s: %v, want %q (check: %s %s)", c.name, err, c.code, c.rec.Decision, c.rec.Reason)
		}
		got, _ := f.store.CheckByID(ctx, c.rec.ID)
		switch {
		case c.code == "" && (got.Result == nil || got.Result.ExecutedBy != "rein" || *got.Result.ExitStatus != 0 || got.Result.StdoutSHA256 != h || got.Result.ArgsMatch == nil || !*got.Result.ArgsMatch):
			t.Errorf("%s: the stored result %+v", c.name, got.Result)
		case c.code != "" && got.Result != nil:
			t.Errorf("%s: a refused claim was stored: %+v", c.name, got.Result)
		}
	}
	// A refused claim is on the record; an agent's own result says so.
	var refused int
	es, _ := f.store.Entries(ctx, 0, 1000)
	for _, e := range es {
		if strings.Contains(string(e.Bytes), `executed_by_refused`) {
			refused++
		}
	}
	if refused != 4 {
		t.Errorf("%d refused claims recorded as anomalies, want 4", refused)
	}
	plain := check(f.key, "shell.exec", "exec-1")
	if err := f.p.Result(ctx, f.key, plain.ID, &rein.CheckResult{Status: "failed", ExitStatus: &n2}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.store.CheckByID(ctx, plain.ID); got.Result.ExecutedBy != "agent" || *got.Result.ExitStatus != 2 {
		t.Errorf("an agent's result: %+v", got.Result)
	}
}

var n2 = 2

// TestSandboxStop: a contained run sees the lock that stops it: one on its
// session, its agent or the tenant, naming no tool; a lock on one tool or
// on another session does not stop it. Only the key that started it, or a
// person of its tenant, reads it; a lock named as the stop on the end must
// stop that session.
func TestSandboxStop(t *testing.T) {
	f := setup(t, "version: 1\nrules: []\n")
	stored(t, f, f.key)
	other := stored(t, f, &rein.Key{ID: "key_other", Name: "other", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}})
	admin := &rein.Key{ID: "key_adm", Name: "ops", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}
	ctx := context.Background()
	if _, err := f.p.StartSandbox(ctx, f.key, "box", rein.SandboxStart{Profile: "coding", Workspace: "/srv/app", Command: []string{"make"}}); err != nil {
		t.Fatal(err)
	}
	stop := func() *rein.Lock {
		t.Helper()
		st, err := f.p.SandboxStop(ctx, f.key, "acme", "box")
		if err != nil {
			t.Fatal(err)
		}
		return st.Stop
	}
	if _, err := f.p.SandboxStop(ctx, other, "acme", "box"); rein.ErrorCode(err) != rein.ECodeNotFound {
		t.Fatalf("another agent key reads the run's stop: %v", err)
	}
	if _, err := f.p.SandboxStop(ctx, approver("ann"), "acme", "box"); err != nil {
		t.Fatalf("an approver reads the run's stop: %v", err)
	}
	lock := func(target rein.LockTarget) *rein.Lock {
		t.Helper()
		l, err := f.p.CreateLock(ctx, admin, &LockRequest{Target: target, Reason: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	lock(rein.LockTarget{Session: "box", Tool: "net.connect"})
	lock(rein.LockTarget{Session: "other-box"})
	lock(rein.LockTarget{Agent: "other"})
	if s := stop(); s != nil {
		t.Fatalf("a lock that does not stop the run stops it: %+v", s)
	}
	if err := f.p.EndSandbox(ctx, f.key, "box", rein.SandboxEnd{ExitStatus: 137, StoppedBy: "lck_none"}); rein.ErrorCode(err) != rein.ECodeBadRequest {
		t.Fatalf("an end naming a lock that does not stop the session: %v", err)
	}
	l := lock(rein.LockTarget{Agent: f.key.Name})
	if s := stop(); s == nil || s.ID != l.ID {
		t.Fatalf("the agent's lock does not stop its run: %+v", s)
	}
	if err := f.p.EndSandbox(ctx, f.key, "box", rein.SandboxEnd{ExitStatus: 137, StoppedBy: l.ID}); err != nil {
		t.Fatal(err)
	}
	s, _ := f.p.Session(ctx, "acme", "box")
	if s.Sandbox.StoppedBy != l.ID || *s.Sandbox.ExitStatus != 137 || s.Sandbox.EndedAt == nil {
		t.Fatalf("the stopped session: %+v", s.Sandbox)
	}
}

// TestUnconfinedIsOnTheRecord: rein run --unconfined starts its session on
// the record (sandbox.started with unconfined), and policy sees it as not
// contained: a rule for contained work does not apply to it. An unconfined
// start cannot carry a profile or other containment fields, nor be rein
// exec's, and like a contained one it cannot take over a session that ran.
func TestUnconfinedIsOnTheRecord(t *testing.T) {
	f := setup(t, `version: 1
rules:
  - {id: contained-build, when: 'tool == "shell.exec" && sandbox.contained', decision: allow}
  - {id: build, when: 'tool == "shell.exec" && !sandbox.contained && sandbox.fs == "host"', decision: ask, approval: {approvers: ["group:dev"]}}
`)
	stored(t, f, f.key)
	ctx := context.Background()
	st := rein.SandboxStart{Unconfined: true, Workspace: "/srv/app", Command: []string{"make"}}
	s, err := f.p.StartSandbox(ctx, f.key, "loose", st)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sandbox == nil || !s.Sandbox.Unconfined || s.Sandbox.FS != "host" || s.Sandbox.Net != "host" {
		t.Fatalf("the session's record: %+v", s.Sandbox)
	}
	rec, err := f.p.Check(ctx, f.key, &rein.CheckRequest{Tool: "shell.exec", Args: json.RawMessage(`{"command":"make"}`), Session: "loose"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Decision != rein.Ask || rec.Rule != "build" {
		t.Fatalf("a check of the unconfined session: %s by %q, want ask by build", rec.Decision, rec.Rule)
	}
	for _, bad := range []rein.SandboxStart{
		{Unconfined: true, Workspace: "/srv/app", Command: []string{"make"}, Profile: "coding"},
		{Unconfined: true, Workspace: "/srv/app", Command: []string{"make"}, Runner: rein.RunnerExec},
		{Unconfined: true, Workspace: "/srv/app", Command: []string{"claude"}, Hooks: true},
		{Unconfined: true, Workspace: "app", Command: []string{"make"}},
		{Unconfined: true, Workspace: "/srv/app"},
	} {
		if _, err := f.p.StartSandbox(ctx, f.key, "loose2", bad); rein.ErrorCode(err) != rein.ECodeBadRequest {
			t.Errorf("%+v: %v, want bad_request", bad, err)
		}
	}
	if _, err := f.p.StartSandbox(ctx, f.key, "loose", st); rein.ErrorCode(err) != rein.ECodeConflict {
		t.Fatalf("starting the session again: %v", err)
	}
	if err := f.p.EndSandbox(ctx, f.key, "loose", rein.SandboxEnd{ExitStatus: 0, DurationMS: 10}); err != nil {
		t.Fatal(err)
	}
	es, _ := f.store.Entries(ctx, 0, 1000)
	started := 0
	for _, e := range es {
		var m struct {
			Kind string
			Data map[string]any
		}
		json.Unmarshal(e.Bytes, &m)
		if m.Kind == rein.KindSandboxStarted {
			started++
			if m.Data["unconfined"] != true || m.Data["fs"] != "host" || m.Data["profile"] != nil {
				t.Errorf("sandbox.started of an unconfined run: %v", m.Data)
			}
		}
	}
	if started != 1 {
		t.Fatalf("%d sandbox.started entries, want 1", started)
	}
}
