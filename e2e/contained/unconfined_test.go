package contained

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUnconfined: rein run --unconfined runs the command without
// containment, but never silently: it says so, the session's
// sandbox.started records unconfined, and policy sees the session as not
// contained (a rule for contained work does not allow its checks). rein's
// own key still does not pass; a containment flag beside it is refused.
func TestRunUnconfined(t *testing.T) {
	e := startRein(t, `version: 1
rules:
  - {id: contained, when: 'tool == "shell.exec" && sandbox.contained', decision: allow}
  - {id: outside, when: 'tool == "shell.exec" && !sandbox.contained', decision: deny, reason: "not contained"}
`)
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "CANARY-unconfined-7f3a\n")
	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home)
	script := `cat "$HOME/.aws/credentials"; echo "key=${REIN_KEY:-none}"; exit 7`
	r := reinRun(t, env, "", "run", "--unconfined", "--workspace", ws, "--session", "loose-1", "--", "sh", "-c", script)
	if r.Code != 7 {
		t.Fatalf("exit %d, want the command's 7\n%s", r.Code, r)
	}
	if !strings.Contains(r.Stdout, "CANARY-unconfined-7f3a") {
		t.Errorf("an unconfined command reads what containment would hide; it did not:\n%s", r)
	}
	if !strings.Contains(r.Stdout, "key=none") || strings.Contains(r.Stdout, e.keys["builder"]) {
		t.Errorf("rein's key passed into the command:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "WITHOUT containment") {
		t.Errorf("rein run did not say the command runs unconfined:\n%s", r.Stderr)
	}
	data := sandboxStarted(t, e, "loose-1")
	if data["unconfined"] != true || data["fs"] != "host" || data["net"] != "host" {
		t.Errorf("sandbox.started of an unconfined run says %v", data)
	}
	// Policy sees the session as not contained.
	out := reinRun(t, env, "", "check", "shell.exec", "--session", "loose-1", "--args", `{"command":"make"}`)
	if !strings.Contains(out.Stdout+out.Stderr, "deny") || !strings.Contains(out.Stdout+out.Stderr, "not contained") {
		t.Errorf("a check of the unconfined session: %s", out)
	}
	for _, flag := range []string{"--profile=coding", "--hooks=false", "--resolver=127.0.0.1:53"} {
		r := reinRun(t, env, "", "run", "--unconfined", flag, "--workspace", ws, "--", "true")
		if r.Code != 2 || !strings.Contains(r.Stderr, "no meaning with --unconfined") {
			t.Errorf("rein run --unconfined %s: %s", flag, r)
		}
	}
}
