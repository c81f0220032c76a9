package profiles

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/e2e/internal/harness"
)

// base is what a shell needs to start.
const base = "/usr, /bin, /lib, /lib64, /etc/ld.so.cache"

// extraReadable is a path outside the workspace that a profile may name,
// holding marker: a directory this test makes where a profile may read
// (not under /tmp or a home directory), or else /etc/passwd, which every
// Linux system has.
func extraReadable(t *testing.T) (path, file, marker string) {
	for _, parent := range []string{harness.ModuleRoot, "/srv", "/opt", "/var/opt"} {
		dir, err := os.MkdirTemp(parent, ".rein-e2e-profile-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if rein.CheckProfileRead(dir) != nil {
			continue
		}
		marker = "CANARY-profile-read-5e1b"
		harness.WriteFile(t, filepath.Join(dir, "canary"), marker+"\n")
		os.Chmod(dir, 0o755)
		return dir, filepath.Join(dir, "canary"), marker
	}
	return "/etc/passwd", "/etc/passwd", "root:"
}

// TestProfilesArePolicy: `rein run --profile NAME` applies the profile the
// policy in force defines: a path and a variable one profile adds are
// readable and set inside, and not with a profile without them; policy
// sees the name applied (sandbox.profile); sandbox.started records it with
// the policy version; an unknown profile is exit 2 naming the policy's; a
// policy with a bad profile is refused (400) and the old one stays; a new
// policy changes what the next run reads, whatever the agent's machine says.
func TestProfilesArePolicy(t *testing.T) {
	t.Parallel()
	extra, file, marker := extraReadable(t)
	policy := func(withExtra string) string {
		return fmt.Sprintf(`version: 1
profiles:
  with-extra:
    description: a shell, and one more path
    read: [%s, %s]
    env: [E2E_PROFILE_VAR]
  without-extra:
    read: [%s]
rules:
  - id: named
    when: 'tool == "net.connect" && sandbox.contained && sandbox.profile == "with-extra" && args.host == "profile.invalid"'
    decision: allow
`, base, withExtra, base)
	}
	e := start(t, policy(extra))
	script := fmt.Sprintf(`cat %q 2>/dev/null || echo "cannot read it"
echo "var=[$E2E_PROFILE_VAR]"
exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT profile.invalid:443 HTTP/1.1\r\nHost: profile.invalid\r\n\r\n' >&3; head -1 <&3
`, file)
	run := func(profile, session string) harness.Result {
		t.Helper()
		env := append(e.s.ClientEnv(e.agent), "E2E_PROFILE_VAR=passed")
		return harness.ReinWithInput(t, env, script, "run", "--workspace", t.TempDir(), "--profile", profile, "--session", session, "--", "bash", "-s")
	}

	with := run("with-extra", "with-1")
	if with.Code != 0 || !strings.Contains(with.Stdout, marker) || !strings.Contains(with.Stdout, "var=[passed]") {
		t.Errorf("with the profile that names %s and E2E_PROFILE_VAR: %s", extra, with)
	}
	without := run("without-extra", "without-1")
	if strings.Contains(without.Stdout, marker) || !strings.Contains(without.Stdout, "cannot read it") || !strings.Contains(without.Stdout, "var=[]") {
		t.Errorf("with the profile that names neither: %s", without)
	}
	// Policy saw the name applied: the rule that needs with-extra allowed
	// its connection check, and nothing allowed the other's.
	if c := e.checks(t, "with-1")["profile.invalid:443"]; c.Decision != "allow" {
		t.Errorf("net.connect of the with-extra run: %+v", c)
	}
	if c := e.checks(t, "without-1")["profile.invalid:443"]; c.Decision != "deny" {
		t.Errorf("net.connect of the without-extra run: %+v", c)
	}
	var doc struct{ Version string }
	harness.GetJSON(t, e.s.URL+"/v1/policy", e.admin, &doc)
	started := map[string]map[string]any{}
	for _, en := range e.entries(t, "sandbox.started") {
		data, _ := en["data"].(map[string]any)
		started[fmt.Sprint(data["session"])] = data
		if en["policy_version"] != doc.Version {
			t.Errorf("sandbox.started of %v names policy %v, want %s", data["session"], en["policy_version"], doc.Version)
		}
	}
	if d := started["with-1"]; d["profile"] != "with-extra" || d["policy_version"] != doc.Version || !strings.Contains(fmt.Sprint(d["read"]), extra) {
		t.Errorf("sandbox.started of with-1: %v", d)
	}
	if d := started["without-1"]; d["profile"] != "without-extra" || strings.Contains(fmt.Sprint(d["read"]), extra) {
		t.Errorf("sandbox.started of without-1: %v", d)
	}
	var sess struct {
		Sandbox struct {
			Profile       string   `json:"profile"`
			Read          []string `json:"read"`
			PolicyVersion string   `json:"policy_version"`
		} `json:"sandbox"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/with-1?tenant=acme", e.admin, &sess)
	if sess.Sandbox.Profile != "with-extra" || sess.Sandbox.PolicyVersion != doc.Version || sess.Sandbox.Read[len(sess.Sandbox.Read)-1] != extra {
		t.Errorf("the session's sandbox: %+v", sess.Sandbox)
	}

	// An unknown profile: nothing runs, exit 2, the policy's profiles named.
	if r := run("coding", "unknown-1"); r.Code != 2 || !strings.Contains(r.Stderr, `no profile "coding"`) ||
		!strings.Contains(r.Stderr, "with-extra, without-extra") || strings.Contains(r.Stdout, "var=") {
		t.Errorf("an unknown profile: %s", r)
	}

	// A bad profile never becomes policy.
	for _, bad := range []struct{ read, want string }{
		{"/home", "home directories"}, {"/etc", "contains /etc/"}, {"/", "the whole file system"},
		{"/proc/1/root", "/proc reaches other processes"}, {"/var/lib/rein", "rein's own state"}, {"lib", "is relative"},
	} {
		code, body := harness.HTTPDo(t, "PUT", e.s.URL+"/v1/policy", e.admin, []byte(policy(bad.read)), "application/yaml")
		if code != http.StatusBadRequest || !strings.Contains(string(body), bad.want) || !strings.Contains(string(body), `"line":5`) {
			t.Errorf("PUT /v1/policy with a profile that reads %s: %d %s", bad.read, code, body)
		}
	}
	var now struct{ Version string }
	harness.GetJSON(t, e.s.URL+"/v1/policy", e.admin, &now)
	if now.Version != doc.Version {
		t.Fatalf("a refused policy changed the policy in force from %s to %s", doc.Version, now.Version)
	}
	if r := run("with-extra", "with-2"); !strings.Contains(r.Stdout, marker) {
		t.Errorf("after the refused policies, the old profile: %s", r)
	}

	// The policy's author changes the profile: the next run follows it.
	code, body := harness.HTTPDo(t, "PUT", e.s.URL+"/v1/policy", e.admin, []byte(policy("/etc/os-release")), "application/yaml")
	if code != http.StatusOK {
		t.Fatalf("PUT /v1/policy: %d %s", code, body)
	}
	var next struct{ Version string }
	json.Unmarshal(body, &next)
	if r := run("with-extra", "with-3"); strings.Contains(r.Stdout, marker) || !strings.Contains(r.Stdout, "cannot read it") {
		t.Errorf("after the profile dropped %s: %s", extra, r)
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/with-3?tenant=acme", e.admin, &sess)
	if sess.Sandbox.PolicyVersion != next.Version || next.Version == doc.Version {
		t.Errorf("with-3 ran under policy %s, want the new %s", sess.Sandbox.PolicyVersion, next.Version)
	}
}

// TestNoProfilesMeansCoding: a policy that names no profiles has the
// built-in coding profile, and only that.
func TestNoProfilesMeansCoding(t *testing.T) {
	t.Parallel()
	e := start(t, "version: 1\n")
	if r := e.run(t, "echo ran\n", "--workspace", t.TempDir(), "--session", "c1", "--", "bash", "-s"); r.Code != 0 || !strings.Contains(r.Stdout, "ran") {
		t.Fatalf("rein run with the built-in coding profile: %s", r)
	}
	var sess struct {
		Sandbox struct {
			Profile string   `json:"profile"`
			Read    []string `json:"read"`
		} `json:"sandbox"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/c1?tenant=acme", e.admin, &sess)
	if sess.Sandbox.Profile != "coding" || strings.Join(sess.Sandbox.Read, ",") != strings.Join(rein.CodingProfile.Read, ",") {
		t.Errorf("the session's sandbox: %+v", sess.Sandbox)
	}
	if r := e.run(t, "echo ran\n", "--workspace", t.TempDir(), "--profile", "docs", "--", "bash", "-s"); r.Code != 2 || !strings.Contains(r.Stderr, "its profiles: coding") {
		t.Errorf("a profile the policy does not name: %s", r)
	}
}
