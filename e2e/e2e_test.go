package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// keyPattern matches an API key secret as rein shows it.
var keyPattern = regexp.MustCompile(`rein_[A-Za-z0-9]{16,}`)

// A first start creates an admin key, prints it once and saves it with mode
// 0600; later starts reuse it. REIN_ADMIN_KEY replaces the generated key.
func TestAdminKeyBootstrap(t *testing.T) {
	t.Parallel()
	data := t.TempDir()

	s := harness.StartServer(t, data, nil, "--policy", harness.SamplePolicy)
	info, err := os.Stat(filepath.Join(data, "admin.key"))
	if err != nil {
		t.Fatalf("first start wrote no admin key file: %v", err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("admin.key has mode %o, want 0600", mode)
	}
	key := s.AdminKey()
	if !keyPattern.MatchString(key) {
		t.Errorf("admin.key holds %q, which does not look like a rein key", key)
	}
	if n := strings.Count(s.Stdout.String(), key); n != 1 {
		t.Errorf("first start printed the key from admin.key %d times, want exactly once\nstdout:\n%s", n, s.Stdout)
	}
	if printed := keyPattern.FindAllString(s.Stdout.String(), -1); len(printed) != 1 || printed[0] != key {
		t.Errorf("first start printed keys %q, want only the one in admin.key (%q)", printed, key)
	}
	if r := harness.Rein(t, s.ClientEnv(key), "keys", "list"); r.Code != 0 {
		t.Errorf("rein keys list with the printed admin key: %s", r)
	}
	if r := harness.Rein(t, s.ClientEnv("rein_notakeynotakeynotakey"), "keys", "list"); r.Code == 0 {
		t.Errorf("rein keys list with a made-up key succeeded; want a refusal: %s", r)
	}
	s.Stop()

	again := harness.StartServer(t, data, nil, "--policy", harness.SamplePolicy)
	if r := harness.Rein(t, again.ClientEnv(key), "keys", "list"); r.Code != 0 {
		t.Errorf("after a restart the first admin key no longer works: %s", r)
	}
	if got := again.AdminKey(); got != key {
		t.Errorf("after a restart admin.key changed from %q to %q", key, got)
	}
	again.Stop()
	if printed := keyPattern.FindAllString(again.Stdout.String(), -1); len(printed) > 0 {
		t.Errorf("a second start on the same data directory printed a key %q; the key is shown once\nstdout:\n%s", printed, again.Stdout)
	}

	t.Run("REIN_ADMIN_KEY", func(t *testing.T) {
		data := t.TempDir()
		chosen := "rein_e2echosenadminkey0123456789"
		s := harness.StartServer(t, data, []string{"REIN_ADMIN_KEY=" + chosen}, "--policy", harness.SamplePolicy)
		if _, err := os.Stat(filepath.Join(data, "admin.key")); err == nil || !os.IsNotExist(err) {
			t.Errorf("with REIN_ADMIN_KEY set, want no admin.key file; stat says %v", err)
		}
		if strings.Contains(s.Stdout.String(), chosen) {
			t.Errorf("rein serve echoed the REIN_ADMIN_KEY secret on stdout:\n%s", s.Stdout)
		}
		if r := harness.Rein(t, s.ClientEnv(chosen), "keys", "list"); r.Code != 0 {
			t.Errorf("rein keys list with the REIN_ADMIN_KEY value: %s", r)
		}
		s.Stop()
	})
}

// The tour of the sample policy: an agent key asks about shell commands,
// HTTP calls, payments and an unknown tool.
func TestSamplePolicyTour(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	agent := s.ClientEnv(harness.AgentKey(t, s, s.AdminKey(), "builder", "demo"))

	t.Run("read-only shell command is allowed", func(t *testing.T) {
		a, r := harness.CheckJSON(t, agent, "shell.exec", `{"command":"ls -la"}`)
		if a.Decision != "allow" || r.Code != 0 {
			t.Errorf("want allow, exit 0; got %s", r)
		}
		if a.Rule != "shell-read-only" {
			t.Errorf("rule = %q, want shell-read-only", a.Rule)
		}
	})

	t.Run("rm in the build directory asks for approval", func(t *testing.T) {
		r := harness.Rein(t, agent, "check", "shell.exec", "--args", `{"command":"rm -rf ./build"}`)
		if r.Code != 1 || !strings.HasPrefix(r.Stdout, "ask") {
			t.Errorf("want ask, exit 1; got %s", r)
		}
		if !regexp.MustCompile(`\bapr_[A-Za-z0-9]+`).MatchString(r.Stdout) {
			t.Errorf("the answer does not name the approval to wait for:\n%s", r.Stdout)
		}
	})

	t.Run("wiping root is denied", func(t *testing.T) {
		a, r := harness.CheckJSON(t, agent, "shell.exec", `{"command":"rm -rf /"}`)
		if a.Decision != "deny" || r.Code != 1 {
			t.Errorf("want deny, exit 1; got %s", r)
		}
		if a.Rule != "never-wipe-root" {
			t.Errorf("rule = %q, want never-wipe-root", a.Rule)
		}
	})

	t.Run("an Authorization header is stripped", func(t *testing.T) {
		a, r := harness.CheckJSON(t, agent, "http.get",
			`{"url":"https://example.com/","headers":{"Authorization":"Bearer abc","Accept":"text/html"}}`)
		if a.Decision != "modify" || r.Code != 0 {
			t.Fatalf("want modify, exit 0; got %s", r)
		}
		headers, _ := a.Args["headers"].(map[string]any)
		if _, present := headers["Authorization"]; present || headers == nil {
			t.Errorf("args still carry the Authorization header (or lost all headers): %v", a.Args)
		}
		if headers["Accept"] != "text/html" || a.Args["url"] != "https://example.com/" {
			t.Errorf("the other arguments must stay as sent, got %v", a.Args)
		}
	})

	t.Run("payments", func(t *testing.T) {
		a, r := harness.CheckJSON(t, agent, "payments.transfer", `{"amount":40,"to":"acme"}`)
		if a.Decision != "allow" || r.Code != 0 {
			t.Errorf("transfer of 40: want allow, exit 0; got %s", r)
		}
		a, r = harness.CheckJSON(t, agent, "payments.transfer", `{"amount":5000,"to":"acme"}`)
		if a.Decision != "ask" || r.Code != 1 || a.Approval == nil || a.Approval.ID == "" {
			t.Errorf("transfer of 5000: want ask with an approval, exit 1; got %s", r)
		}
	})

	t.Run("an unknown tool is denied by default", func(t *testing.T) {
		a, r := harness.CheckJSON(t, agent, "crypto.mine", `{}`)
		if a.Decision != "deny" || r.Code != 1 {
			t.Errorf("want deny, exit 1; got %s", r)
		}
		if a.Reason != "no rule allows crypto.mine" {
			t.Errorf("reason = %q, want %q", a.Reason, "no rule allows crypto.mine")
		}
	})

	s.Stop()
}

// Exit codes: 0 ok, 1 a negative answer, 2 usage or connection error.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	nowhere := []string{"REIN_SERVER=http://" + harness.FreeAddr(t), "REIN_KEY=rein_e2eanykeyanykeyanykey"}

	cases := []struct {
		name string
		args []string
		want int
	}{
		{"version", []string{"version"}, 0},
		{"check without a tool", []string{"check"}, 2},
		{"check with arguments that are not JSON", []string{"check", "x", "--args", "{not json"}, 2},
		{"check with an unknown flag", []string{"check", "x", "--no-such-flag"}, 2},
		{"unknown command", []string{"no-such-command"}, 2},
		{"check against an address where nothing listens", []string{"check", "x"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := harness.Rein(t, nowhere, c.args...)
			if r.Code != c.want {
				t.Errorf("rein %s: exit %d, want %d\n%s", strings.Join(c.args, " "), r.Code, c.want, r)
			}
		})
	}

	t.Run("version prints the version", func(t *testing.T) {
		r := harness.Rein(t, nil, "version")
		if !regexp.MustCompile(`^rein \S+`).MatchString(r.Stdout) {
			t.Errorf("rein version printed %q, want \"rein <version>\"", r.Stdout)
		}
	})

	t.Run("deny is 1, allow is 0", func(t *testing.T) {
		s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
		agent := s.ClientEnv(harness.AgentKey(t, s, s.AdminKey(), "builder", "demo"))
		if r := harness.Rein(t, agent, "check", "crypto.mine"); r.Code != 1 {
			t.Errorf("a denied check: exit %d, want 1\n%s", r.Code, r)
		}
		if r := harness.Rein(t, agent, "check", "fs.read", "--args", `{"path":"README.md"}`); r.Code != 0 {
			t.Errorf("an allowed check: exit %d, want 0\n%s", r.Code, r)
		}
		s.Stop()
	})
}

// Policy tooling works offline on files: lint, test and explain.
func TestPolicyTooling(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	t.Run("lint accepts the sample policy", func(t *testing.T) {
		if r := harness.Rein(t, nil, "policy", "lint", harness.SamplePolicy); r.Code != 0 {
			t.Errorf("rein policy lint %s: %s", harness.SamplePolicy, r)
		}
	})

	t.Run("lint reports an unknown field with its line", func(t *testing.T) {
		path := filepath.Join(dir, "unknown-field.yaml")
		harness.WriteFile(t, path, `version: 1
default: deny
rules:
  - id: reads
    when: 'tool == "fs.read"'
    decision: allow
    colour: blue
`)
		r := harness.Rein(t, nil, "policy", "lint", path)
		out := r.Stdout + r.Stderr
		if r.Code != 1 || !strings.Contains(out, "line 7") || !strings.Contains(out, "colour") {
			t.Errorf("want exit 1 and a problem on line 7 naming \"colour\"; got %s", r)
		}
	})

	t.Run("lint reports bad CEL with its line", func(t *testing.T) {
		path := filepath.Join(dir, "bad-cel.yaml")
		harness.WriteFile(t, path, `version: 1
default: deny
rules:
  - id: reads
    when: 'tool == "fs.read"'
    decision: allow
  - id: broken
    when: 'tool == '
    decision: allow
`)
		r := harness.Rein(t, nil, "policy", "lint", path)
		out := r.Stdout + r.Stderr
		// The rule starts on line 7, its condition is on line 8.
		if r.Code != 1 || !regexp.MustCompile(`line [78]\b`).MatchString(out) || !strings.Contains(out, "broken") {
			t.Errorf("want exit 1 and a problem in rule \"broken\" on line 7 or 8; got %s", r)
		}
	})

	t.Run("the sample fixtures pass", func(t *testing.T) {
		const fixtures = "examples/policy_test.yaml"
		src, err := os.ReadFile(filepath.Join(harness.ModuleRoot, fixtures))
		if err != nil {
			t.Fatal(err)
		}
		cases := strings.Count(string(src), "- name:")
		r := harness.Rein(t, nil, "policy", "test", fixtures)
		want := fmt.Sprintf("%d passed, 0 failed", cases)
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("rein policy test %s: want exit 0 and %q; got %s", fixtures, want, r)
		}
	})

	t.Run("a wrong expectation fails the test run", func(t *testing.T) {
		path := filepath.Join(dir, "wrong_test.yaml")
		harness.WriteFile(t, path, fmt.Sprintf(`policy: %s
cases:
  - name: listing files runs
    check: {tool: shell.exec, args: {command: "ls"}}
    expect: {decision: allow}
  - name: wiping root is surely fine
    check: {tool: shell.exec, args: {command: "rm -rf /"}}
    expect: {decision: allow}
`, filepath.Join(harness.ModuleRoot, harness.SamplePolicy)))
		r := harness.Rein(t, nil, "policy", "test", path)
		if r.Code != 1 || !strings.Contains(r.Stdout, "1 passed, 1 failed") || !strings.Contains(r.Stdout, "wiping root is surely fine") {
			t.Errorf("want exit 1, \"1 passed, 1 failed\" and the failing case named; got %s", r)
		}
	})

	t.Run("explain prints a trace", func(t *testing.T) {
		r := harness.Rein(t, nil, "policy", "explain", harness.SamplePolicy, "--check", `{"tool":"shell.exec","args":{"command":"rm -rf /"}}`)
		if r.Code == 2 {
			t.Fatalf("rein policy explain: %s", r)
		}
		if !strings.Contains(r.Stdout, "deny") || !strings.Contains(r.Stdout, "trace") {
			t.Errorf("explain does not show the decision and a trace:\n%s", r.Stdout)
		}
		// One trace row per rule: the deciding rule and one that did not match.
		for _, rule := range []string{"never-wipe-root", "payments-small", "shell-destructive"} {
			if !strings.Contains(r.Stdout, rule) {
				t.Errorf("the trace has no row for rule %s:\n%s", rule, r.Stdout)
			}
		}
	})
}

const reloadV1 = `version: 1
default: deny
rules:
  - id: reads
    when: 'tool == "fs.read"'
    decision: allow
`

const reloadV2 = reloadV1 + `  - id: deploys
    when: 'tool == "deploy"'
    decision: allow
`

const reloadBroken = reloadV2 + `  - id: broken
    when: 'tool == '
    decision: allow
`

// An edited policy file is picked up while rein runs; a broken edit is
// refused, reported by /readyz (still ready) and metrics, and the last good
// version stays active.
func TestPolicyFileReload(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, path, reloadV1)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", path)
	agent := s.ClientEnv(harness.AgentKey(t, s, s.AdminKey(), "deployer", "demo"))

	if a, r := harness.CheckJSON(t, agent, "deploy", `{}`); a.Decision != "deny" {
		t.Fatalf("before the edit: want deploy denied; got %s", r)
	}

	harness.WriteFile(t, path, reloadV2)
	harness.Eventually(t, harness.ReloadTimeout, "deploy allowed after the edit", func() string {
		if a, r := harness.CheckJSON(t, agent, "deploy", `{}`); a.Decision != "allow" {
			return r.Stdout
		}
		return ""
	})

	harness.WriteFile(t, path, reloadBroken)
	// A refused file does not make rein unready (the last good version keeps
	// deciding): /readyz stays 200 and says so, and metrics count it.
	harness.Eventually(t, harness.ReloadTimeout, "/readyz reports the broken file", func() string {
		code, body := harness.HTTPDo(t, "GET", s.URL+"/readyz", "", nil, "")
		var ready struct {
			Detail struct {
				PolicyRefused string `json:"policy_refused"`
			} `json:"detail"`
		}
		json.Unmarshal(body, &ready)
		if code != http.StatusOK || ready.Detail.PolicyRefused == "" {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	if _, body := harness.HTTPDo(t, "GET", s.URL+"/metrics", "", nil, ""); !strings.Contains(string(body), "rein_policy_reload_failures_total 1") ||
		!strings.Contains(string(body), "rein_policy_refused 1") || !strings.Contains(string(body), "rein_build_info{") ||
		!strings.Contains(string(body), "rein_approvals_pending 0") {
		t.Errorf("metrics after a refused policy file:\n%s", body)
	}
	if a, r := harness.CheckJSON(t, agent, "deploy", `{}`); a.Decision != "allow" {
		t.Errorf("after a broken edit the last good version must stay active (deploy allowed); got %s", r)
	}
	if a, r := harness.CheckJSON(t, agent, "fs.read", `{"path":"x"}`); a.Decision != "allow" {
		t.Errorf("after a broken edit fs.read must still be allowed; got %s", r)
	}

	harness.WriteFile(t, path, reloadV1)
	harness.Eventually(t, harness.ReloadTimeout, "/readyz has no detail once the file is fixed", func() string {
		if code, body := harness.HTTPDo(t, "GET", s.URL+"/readyz", "", nil, ""); code != http.StatusOK || strings.Contains(string(body), "policy_refused") {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	if a, r := harness.CheckJSON(t, agent, "deploy", `{}`); a.Decision != "deny" {
		t.Errorf("after the file is fixed its version is active (deploy denied); got %s", r)
	}
	s.Stop()
}

// policyDoc is GET /v1/policy.
type policyDoc struct {
	Version string `json:"version"`
	Source  string `json:"source"`
}

func versionOf(src []byte) string {
	sum := sha256.Sum256(src)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// `rein policy push` replaces the live policy; a broken one changes nothing.
func TestPolicyPush(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	admin := s.AdminKey()
	agent := s.ClientEnv(harness.AgentKey(t, s, admin, "builder", "demo"))
	dir := t.TempDir()

	var before policyDoc
	harness.GetJSON(t, s.URL+"/v1/policy", admin, &before)
	sample, err := os.ReadFile(filepath.Join(harness.ModuleRoot, harness.SamplePolicy))
	if err != nil {
		t.Fatal(err)
	}
	if before.Version != versionOf(sample) {
		t.Errorf("GET /v1/policy version = %q, want %q (sha256 of %s)", before.Version, versionOf(sample), harness.SamplePolicy)
	}

	newPolicy := filepath.Join(dir, "new.yaml")
	harness.WriteFile(t, newPolicy, reloadV2)
	if r := harness.Rein(t, s.ClientEnv(admin), "policy", "push", newPolicy); r.Code != 0 {
		t.Fatalf("rein policy push: %s", r)
	}
	var after policyDoc
	harness.GetJSON(t, s.URL+"/v1/policy", admin, &after)
	if want := versionOf([]byte(reloadV2)); after.Version != want {
		t.Errorf("after push, GET /v1/policy version = %q, want %q", after.Version, want)
	}
	if after.Source != reloadV2 {
		t.Errorf("after push, GET /v1/policy source differs from the pushed file:\n%s", after.Source)
	}
	a, r := harness.CheckJSON(t, agent, "deploy", `{}`)
	if a.Decision != "allow" || a.PolicyVersion != after.Version {
		t.Errorf("after push, deploy is decided by the new policy (allow, version %s); got %s", after.Version, r)
	}

	broken := filepath.Join(dir, "broken.yaml")
	harness.WriteFile(t, broken, reloadBroken)
	if r := harness.Rein(t, s.ClientEnv(admin), "policy", "push", broken); r.Code != 1 {
		t.Errorf("rein policy push of a broken file: exit %d, want 1\n%s", r.Code, r)
	}
	code, body := harness.HTTPDo(t, "PUT", s.URL+"/v1/policy", admin, []byte(reloadBroken), "application/yaml")
	if code != http.StatusBadRequest || !strings.Contains(string(body), `"bad_request"`) || !strings.Contains(string(body), "broken") {
		t.Errorf("PUT /v1/policy of a broken policy: want 400 bad_request naming rule \"broken\"; got %d %s", code, body)
	}
	var unchanged policyDoc
	harness.GetJSON(t, s.URL+"/v1/policy", admin, &unchanged)
	if unchanged.Version != after.Version {
		t.Errorf("a refused push changed the live policy from %s to %s", after.Version, unchanged.Version)
	}
	if a, r := harness.CheckJSON(t, agent, "deploy", `{}`); a.Decision != "allow" {
		t.Errorf("after a refused push deploy must still be allowed; got %s", r)
	}

	t.Run("a refused push lists every problem", func(t *testing.T) {
		// Line 7: an unknown field; lines 8-10: a rule whose condition does not compile.
		src := `version: 1
default: deny
rules:
  - id: reads
    when: 'tool == "fs.read"'
    decision: allow
    colour: blue
  - id: broken
    when: 'tool == '
    decision: allow
`
		code, body := harness.HTTPDo(t, "PUT", s.URL+"/v1/policy", admin, []byte(src), "application/yaml")
		if code != http.StatusBadRequest {
			t.Fatalf("want 400; got %d %s", code, body)
		}
		if !strings.Contains(string(body), "colour") || !strings.Contains(string(body), "broken") {
			t.Errorf("api.md: a refused policy is answered with every problem; want both the unknown field "+
				"\"colour\" (line 7) and rule \"broken\" (line 8), got %s", body)
		}
	})
	s.Stop()
}

// What rein acknowledged survives a restart: checks, pending approvals and
// a policy pushed through the API.
func TestRestartDurability(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := harness.StartServer(t, data, nil, "--policy", harness.SamplePolicy)
	admin := s.AdminKey()
	agentKey := harness.AgentKey(t, s, admin, "builder", "demo")
	agent := s.ClientEnv(agentKey)

	allowed, r := harness.CheckJSON(t, agent, "shell.exec", `{"command":"ls -la"}`, "--session", "run-7")
	if allowed.Decision != "allow" || allowed.ID == "" {
		t.Fatalf("want an allowed check with an id; got %s", r)
	}
	asked, r := harness.CheckJSON(t, agent, "shell.exec", `{"command":"rm -rf ./build"}`, "--session", "run-7")
	if asked.Decision != "ask" || asked.Approval == nil || asked.Approval.ID == "" {
		t.Fatalf("want ask with an approval; got %s", r)
	}

	// The sample policy plus one rule, pushed through the API.
	sample, err := os.ReadFile(filepath.Join(harness.ModuleRoot, harness.SamplePolicy))
	if err != nil {
		t.Fatal(err)
	}
	pushed := string(sample) + `
  - id: e2e-marker
    when: 'tool == "e2e.marker"'
    decision: allow
`
	code, body := harness.HTTPDo(t, "PUT", s.URL+"/v1/policy", admin, []byte(pushed), "application/yaml")
	if code != http.StatusOK {
		t.Fatalf("PUT /v1/policy: %d %s", code, body)
	}
	if a, r := harness.CheckJSON(t, agent, "e2e.marker", `{}`); a.Decision != "allow" {
		t.Fatalf("the pushed policy is not active before the restart; got %s", r)
	}
	if code, body := harness.HTTPDo(t, "GET", s.URL+"/v1/checks/"+allowed.ID, agentKey, nil, ""); code != http.StatusOK {
		t.Errorf("GET /v1/checks/%s before the restart (the agent's own check): want 200; got %d %s", allowed.ID, code, body)
	}
	s.Stop()

	s = harness.StartServer(t, data, nil) // no --policy: the stored policy must come back
	agent = s.ClientEnv(agentKey)

	code, body = harness.HTTPDo(t, "GET", s.URL+"/v1/checks/"+allowed.ID, agentKey, nil, "")
	var stored harness.CheckAnswer
	json.Unmarshal(body, &stored)
	if code != http.StatusOK || stored.ID != allowed.ID || stored.Decision != "allow" || stored.Args["command"] != "ls -la" {
		t.Errorf("GET /v1/checks/%s after the restart: want 200 with the allowed ls -la check; got %d %s", allowed.ID, code, body)
	}

	again, r := harness.CheckJSON(t, agent, "shell.exec", `{"command":"rm -rf ./build"}`, "--session", "run-7")
	if again.Decision != "ask" || again.Approval == nil || again.Approval.ID != asked.Approval.ID {
		t.Errorf("re-submitting the pending action after a restart must return the same approval %s; got %s", asked.Approval.ID, r)
	}

	var doc policyDoc
	harness.GetJSON(t, s.URL+"/v1/policy", admin, &doc)
	if want := versionOf([]byte(pushed)); doc.Version != want {
		t.Errorf("after restart without --policy, GET /v1/policy version = %q, want the pushed %q", doc.Version, want)
	}
	if a, r := harness.CheckJSON(t, agent, "e2e.marker", `{}`); a.Decision != "allow" {
		t.Errorf("after restart without --policy, the pushed policy must be active (e2e.marker allowed); got %s", r)
	}
	s.Stop()
}

// An admin creates, lists and revokes an agent key; a revoked key stops working at once.
func TestKeysLifecycle(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	admin := s.ClientEnv(s.AdminKey())
	secret := harness.AgentKey(t, s, s.AdminKey(), "builder", "demo")
	if r := harness.Rein(t, s.ClientEnv(secret), "check", "fs.read", "--args", `{"path":"README.md"}`); r.Code != 0 {
		t.Fatalf("a fresh agent key cannot check: %s", r)
	}

	r := harness.Rein(t, admin, "keys", "list", "--output", "json")
	var keys []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &keys); r.Code != 0 || err != nil {
		t.Fatalf("rein keys list --output json: %v\n%s", err, r)
	}
	id := ""
	for _, k := range keys {
		if k.Name == "builder" {
			id = k.ID
		}
	}
	if id == "" {
		t.Fatalf("rein keys list does not show the key \"builder\":\n%s", r.Stdout)
	}

	if r := harness.Rein(t, admin, "keys", "revoke", id); r.Code != 0 {
		t.Errorf("rein keys revoke %s: want exit 0; got %s", id, r)
	}
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/check", secret, []byte(`{"tool": "fs.read", "args": {"path": "README.md"}}`), "application/json")
	if code != http.StatusUnauthorized {
		t.Errorf("a check with the revoked key: want 401; got %d %s", code, body)
	}
	s.Stop()
}

// Every subcommand explains itself with an example.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{
		{"serve"}, {"check"},
		{"keys", "create"}, {"keys", "list"}, {"keys", "revoke"},
		{"policy", "lint"}, {"policy", "test"}, {"policy", "explain"}, {"policy", "push"},
		{"version"},
	} {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			r := harness.Rein(t, nil, append(cmd, "--help")...)
			if r.Code != 0 || !strings.Contains(r.Stdout, "Example") {
				t.Errorf("rein %s --help: want exit 0 and an Example on stdout; got %s", name, r)
			}
		})
	}
}

// Malformed and oversized requests are refused cleanly and the server keeps serving.
func TestServerSurvivesGarbage(t *testing.T) {
	t.Parallel()
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", harness.SamplePolicy)
	agentKey := harness.AgentKey(t, s, s.AdminKey(), "builder", "demo")

	expectError := func(t *testing.T, what string, body []byte, status int, code string) {
		t.Helper()
		got, answer := harness.HTTPDo(t, "POST", s.URL+"/v1/check", agentKey, body, "application/json")
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(answer, &e)
		if got != status || e.Error.Code != code || e.Error.Message == "" {
			t.Errorf("%s: want %d with error code %q and a message; got %d %s", what, status, code, got, answer)
		}
	}
	expectError(t, "malformed JSON", []byte(`{"tool": "shell.exec", "args": {`), http.StatusBadRequest, "bad_request")
	expectError(t, "not JSON at all", []byte("\x00\xff garbage \x7f"), http.StatusBadRequest, "bad_request")
	expectError(t, "an unknown field", []byte(`{"tool": "fs.read", "argz": {}}`), http.StatusBadRequest, "bad_request")
	big := `{"tool": "fs.read", "args": {"path": "` + strings.Repeat("a", 2<<20) + `"}}`
	expectError(t, "a body over 1 MiB", []byte(big), http.StatusRequestEntityTooLarge, "too_large")

	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/check", agentKey, []byte(`{"tool": "fs.read", "args": {"path": "README.md"}}`), "application/json")
	var a harness.CheckAnswer
	json.Unmarshal(body, &a)
	if code != http.StatusOK || a.Decision != "allow" {
		t.Errorf("a good check after the garbage: want 200 allow; got %d %s", code, body)
	}
	if code, body := harness.HTTPDo(t, "GET", s.URL+"/healthz", "", nil, ""); code != http.StatusOK {
		t.Errorf("/healthz after the garbage: %d %s", code, body)
	}
	s.Stop()
}
