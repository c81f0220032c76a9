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
