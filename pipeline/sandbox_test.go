package pipeline

import (
	"context"
	"encoding/json"
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
