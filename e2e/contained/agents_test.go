package contained

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// agentPolicy lets the contained agent's Bash calls run, except one that
// policy denies; the allowing rule needs sandbox.contained, so an allowed
// hook check proves that policy saw the containment. No destination is
// allowed: the model is on this machine, reached through rein run's
// forwarder, never through the egress proxy.
const agentPolicy = `version: 1
default: deny
rules:
  - {id: contained-bash, when: 'tool == "Bash" && sandbox.contained && sandbox.net == "proxied"', decision: allow}
  - {id: no-secrets-dir, when: 'tool == "Bash" && args.command.contains("denied-by-policy")', decision: deny, reason: "the test's policy denies this command"}
  - {id: no-hosts, when: 'tool == "net.connect"', decision: deny, reason: "no destination in this test"}
`

// privateListener is a server on this machine's loopback that a contained
// run must never reach; it counts the connections it gets.
func privateListener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\nPRIVATE-REACHED"))
			c.Close()
		}
	}()
	return l.Addr().String(), &n
}

// claudeEnv is the environment of the person who starts `rein run --
// claude`: rein's server and agent key, a home with a credential canary,
// and the model: the stand-in on this machine, with its API key.
func claudeEnv(e *env, home string, m *harness.ModelStandIn) []string {
	return append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=sk-ant-e2e-stand-in",
		"AWS_SECRET_ACCESS_KEY=CANARY-env-aws-7f3a", "GITHUB_TOKEN=CANARY-env-gh-7f3a")
}

// sandboxStarted is the data of the run's sandbox.started entry.
func sandboxStarted(t *testing.T, e *env, session string) map[string]any {
	t.Helper()
	for _, b := range e.entries(t) {
		var en struct {
			Kind    string
			Subject string
			Data    map[string]any
		}
		json.Unmarshal(b, &en)
		if en.Kind == "sandbox.started" && en.Subject == session {
			return en.Data
		}
	}
	t.Fatalf("no sandbox.started entry for session %s", session)
	return nil
}

// TestClaudeCodeContained runs the real Claude Code CLI (npm, headless)
// inside `rein run`, its own permission checks bypassed and no hooks: the
// walls alone hold. The model stand-in scripts its Bash calls: reading a
// credential in the caller's home and a masked .env of the workspace fails
// at the OS level, a server on this machine's loopback (a private address)
// is not reached, directly or through the proxy, and a Go build in the
// workspace succeeds. The model is reached through the forwarder to
// exactly the endpoint configured outside, with the one credential that
// passes, and the record says so.
func TestClaudeCodeContained(t *testing.T) {
	t.Parallel()
	e := startRein(t, agentPolicy)
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "CANARY-home-aws-7f3a\n")
	writeFile(t, filepath.Join(home, ".claude", ".credentials.json"), `{"token":"CANARY-home-claude-7f3a"}`)
	writeFile(t, filepath.Join(ws, ".env"), "CANARY-ws-env-7f3a\n")
	writeFile(t, filepath.Join(ws, "go.mod"), "module example.com/app\n\ngo 1.22\n")
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() { println(\"built and ran\") }\n")
	private, reached := privateListener(t)
	m := harness.NewModelStandIn(t,
		"cat "+filepath.Join(home, ".aws", "credentials")+"; cat "+filepath.Join(home, ".claude", ".credentials.json")+"; echo read-home-exit=$?",
		"cat .env; echo read-env-exit=$?",
		"curl -sS -m 10 http://"+private+"/; echo direct-exit=$?; curl -sSf -m 10 --noproxy '' -x http://127.0.0.1:3128 http://"+private+"/; echo proxied-exit=$?",
		"env | grep -c CANARY; env | grep -E '^(ANTHROPIC_[A-Z_]+|REIN_[A-Z_]+)=' | sed 's/=.*//' | sort | tr '\\n' ' '; echo",
		"go build -buildvcs=false -o app . && ./app; echo build-exit=$?",
	)
	r := reinRun(t, claudeEnv(e, home, m), "", "run", "--hooks=false", "--workspace", ws, "--session", "claude-walls", "--",
		harness.AgentBinary(t, "claude"), "-p", "do the scripted task", "--dangerously-skip-permissions", "--output-format", "json")
	results := m.Results()
	t.Logf("rein run: %s\nmodel requests: %v\ntool results:\n%s", r, m.Requests(), strings.Join(results, "\n---\n"))
	if r.Code != 0 {
		t.Fatalf("rein run -- claude: exit %d", r.Code)
	}
	if len(results) != 5 {
		t.Fatalf("Claude Code sent back %d tool results, want one for each of the 5 scripted calls", len(results))
	}
	all := strings.Join(results, "\n") + r.Stdout + r.Stderr
	if strings.Contains(all, "CANARY") {
		t.Errorf("a canary reached the agent or its output")
	}
	for _, w := range []struct {
		k    int
		want string
	}{{0, "No such file or directory"}, {1, "read-env-exit=1"}, {2, "direct-exit=7"}, {2, "proxied-exit=22"}, {4, "built and ran"}} {
		if !strings.Contains(results[w.k], w.want) {
			t.Errorf("tool result %d lacks %q:\n%s", w.k+1, w.want, results[w.k])
		}
	}
	if !strings.Contains(results[1], "Permission denied") {
		t.Errorf("reading the masked .env must fail with Permission denied:\n%s", results[1])
	}
	if !strings.Contains(r.Stderr, "connection to "+private+" refused: 127.0.0.1 is not a public address") {
		t.Errorf("rein run does not say it refused %s", private)
	}
	if strings.Contains(results[2], "PRIVATE-REACHED") || reached.Load() != 0 {
		t.Errorf("the private address was reached (%d connections):\n%s", reached.Load(), results[2])
	}
	// Inside: the model's credential and endpoint, nothing of rein's.
	if got := strings.TrimSpace(results[3]); !strings.HasPrefix(got, "0\n") || !strings.Contains(got, "ANTHROPIC_API_KEY ANTHROPIC_BASE_URL") || strings.Contains(got, "REIN_KEY") || strings.Contains(got, "REIN_SERVER") {
		t.Errorf("the environment inside: %q", got)
	}
	if !strings.Contains(results[4], "build-exit=0") {
		t.Errorf("the build in the workspace failed:\n%s", results[4])
	}
	if _, err := os.Stat(filepath.Join(ws, "app")); err != nil {
		t.Errorf("the build wrote no binary into the workspace: %v", err)
	}
	data := sandboxStarted(t, e, "claude-walls")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(m.URL, "http://"))
	if data["agent"] != "claude" || data["hooks"] != false || fmt.Sprint(data["credentials"]) != "[ANTHROPIC_API_KEY]" ||
		data["model_endpoint"] != "127.0.0.1:"+port {
		t.Errorf("sandbox.started says %v", data)
	}
	// No hook was wired: no check but the proxy's in the session.
	var checks []struct {
		Check struct{ Tool string } `json:"check"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/claude-walls/checks", e.keys["alice"], &checks)
	for _, c := range checks {
		if c.Check.Tool != "net.connect" {
			t.Errorf("a %s check in a run without hooks", c.Check.Tool)
		}
	}
}

// TestClaudeCodeContainedWithHooks: `rein run -- claude` wires Claude
// Code's hooks to rein by itself (managed settings inside, nothing written
// into the workspace): each tool call is a check in the run's session,
// where policy sees sandbox.contained, a call policy denies does not run,
// and an allowed one's result is recorded. The agent can call the relay
// its hooks use directly, and gains nothing by it: no votes, no other
// endpoint, no net.connect check, no other session.
func TestClaudeCodeContainedWithHooks(t *testing.T) {
	t.Parallel()
	e := startRein(t, agentPolicy)
	home, ws := t.TempDir(), t.TempDir()
	// The workspace's own settings try to switch hooks off; managed
	// settings come first.
	projectSettings := `{"disableAllHooks": true}`
	writeFile(t, filepath.Join(ws, ".claude", "settings.json"), projectSettings)
	relay := func(method, path, body string) string {
		return fmt.Sprintf(`curl -s -X %s http://127.0.0.1:3129%s -H 'content-type: application/json' -d '%s'; echo`, method, path, body)
	}
	// A check of the same key outside the run, which the relay must not
	// let the run report on or look up.
	code, body := harness.HTTPDo(t, "POST", e.s.URL+"/v1/check", e.keys["builder"],
		[]byte(`{"tool":"Bash","args":{"command":"outside"},"session":"outside-1","request_id":"outside-rid"}`), "application/json")
	var outside struct{ ID string }
	if json.Unmarshal(body, &outside); code != 200 || outside.ID == "" {
		t.Fatalf("a check outside the run: %d %s", code, body)
	}
	m := harness.NewModelStandIn(t,
		"touch allowed-ran && echo allowed-ok",
		"touch denied-by-policy-ran",
		strings.Join([]string{
			relay("POST", "/v1/approvals/apr_x/votes", `{"vote":"approve"}`),
			relay("POST", "/v1/check", `{"tool":"net.connect","args":{"host":"evil.example","port":443}}`),
			relay("POST", "/v1/check", `{"tool":"Bash","args":{"command":"direct-through-relay"},"session":"someone-else"}`),
			relay("POST", "/v1/check", `{"tool":"Bash","args":{"command":"x"},"labels":{"trusted":"yes"}}`),
			relay("GET", "/v1/sessions/claude-hooks/checks", ``),
			relay("POST", "/v1/checks/"+outside.ID+"/result", `{"status":"succeeded","summary":"forged"}`),
			relay("GET", "/v1/request-ids/outside-rid", ``),
		}, "; "),
	)
	r := reinRun(t, claudeEnv(e, home, m), "", "run", "--workspace", ws, "--session", "claude-hooks", "--",
		harness.AgentBinary(t, "claude"), "-p", "do the scripted task", "--dangerously-skip-permissions", "--output-format", "json")
	results := m.Results()
	t.Logf("rein run: %s\nmodel requests: %v\ntool results:\n%s", r, m.Requests(), strings.Join(results, "\n---\n"))
	if r.Code != 0 {
		t.Fatalf("rein run -- claude: exit %d", r.Code)
	}
	if len(results) != 3 {
		t.Fatalf("Claude Code sent back %d tool results, want 3", len(results))
	}
	if _, err := os.Stat(filepath.Join(ws, "allowed-ran")); err != nil || !strings.Contains(results[0], "allowed-ok") {
		t.Errorf("the allowed call did not run: %v\n%s", err, results[0])
	}
	if _, err := os.Stat(filepath.Join(ws, "denied-by-policy-ran")); err == nil {
		t.Error("the call policy denies ran")
	}
	if !strings.Contains(results[1], "the test's policy denies this command") {
		t.Errorf("the agent was not told policy's reason:\n%s", results[1])
	}
	// The relay, called directly.
	lines := strings.FieldsFunc(results[2], func(r rune) bool { return r == '\n' })
	if len(lines) != 7 {
		t.Fatalf("the calls to the relay answered %d lines, want 7:\n%s", len(lines), results[2])
	}
	for i, want := range []string{`"code":"forbidden"`, `net.connect checks are made by rein run's egress proxy`, `"decision":"allow"`,
		`"code":"bad_request"`, `"code":"forbidden"`, `made through this run's relay`, `"code":"not_found"`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("relay call %d answered %s, want %s", i+1, lines[i], want)
		}
	}
	// One session, one policy, one record: every hook check is in the
	// run's session, decided with sandbox.contained.
	var checks []struct {
		Decision string `json:"decision"`
		Rule     string `json:"rule"`
		Check    struct {
			Tool    string `json:"tool"`
			Session string `json:"session"`
			Args    struct {
				Command string `json:"command"`
			} `json:"args"`
		} `json:"check"`
		Result *struct {
			Status string `json:"status"`
		} `json:"result"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/claude-hooks/checks", e.keys["alice"], &checks)
	got := map[string]string{}
	for _, c := range checks {
		if c.Check.Tool != "Bash" {
			continue
		}
		got[c.Check.Args.Command] = c.Decision + " " + c.Rule
		if c.Check.Args.Command == "touch allowed-ran && echo allowed-ok" && (c.Result == nil || c.Result.Status != "succeeded") {
			t.Errorf("the allowed call's result was not recorded through the relay: %+v", c.Result)
		}
	}
	for cmd, want := range map[string]string{
		"touch allowed-ran && echo allowed-ok": "allow contained-bash",
		"touch denied-by-policy-ran":           "deny no-secrets-dir",
		"direct-through-relay":                 "allow contained-bash",
	} {
		if got[cmd] != want {
			t.Errorf("the check of %q in the run's session: %q, want %q (all: %v)", cmd, got[cmd], want, got)
		}
	}
	if code, body := harness.HTTPDo(t, "GET", e.s.URL+"/v1/sessions/someone-else/checks", e.keys["alice"], nil, ""); code == 200 && !strings.HasPrefix(strings.TrimSpace(string(body)), "[]") {
		t.Errorf("a check through the relay landed in another session: %s", body)
	}
	var rec struct {
		Result *struct{ Summary string } `json:"result"`
	}
	if harness.GetJSON(t, e.s.URL+"/v1/checks/"+outside.ID, e.keys["alice"], &rec); rec.Result != nil {
		t.Errorf("the run reported on a check outside it: %+v", rec.Result)
	}
	if data := sandboxStarted(t, e, "claude-hooks"); data["hooks"] != true || data["agent"] != "claude" {
		t.Errorf("sandbox.started says %v", data)
	}
	// Wired without touching the workspace.
	if b, err := os.ReadFile(filepath.Join(ws, ".claude", "settings.json")); err != nil || string(b) != projectSettings {
		t.Errorf("the workspace's .claude/settings.json changed: %q %v", b, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, ".claude")); len(entries) != 1 {
		t.Errorf("rein run wrote into the workspace's .claude: %v", entries)
	}
}

// TestCodexContained is TestClaudeCodeContained for the real Codex CLI
// (`codex exec`, its own sandbox off, no hooks): its credential
// (OPENAI_API_KEY) passes and its model endpoint on this machine
// (OPENAI_BASE_URL) is forwarded; a credential read fails at the OS level,
// a private address is not reached, and a C build with make in the
// workspace works.
func TestCodexContained(t *testing.T) {
	t.Parallel()
	e := startRein(t, agentPolicy)
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".codex", "auth.json"), `{"OPENAI_API_KEY":"CANARY-home-codex-7f3a"}`)
	writeFile(t, filepath.Join(ws, ".env"), "CANARY-ws-env-7f3a\n")
	writeFile(t, filepath.Join(ws, "Makefile"), "app: main.c\n\tcc -o app main.c\n")
	writeFile(t, filepath.Join(ws, "main.c"), "#include <stdio.h>\nint main(void) { puts(\"built and ran\"); return 0; }\n")
	private, reached := privateListener(t)
	m := harness.NewModelStandIn(t,
		"cat "+filepath.Join(home, ".codex", "auth.json")+"; echo read-home-exit=$?; cat .env; echo read-env-exit=$?",
		"curl -sS -m 10 http://"+private+"/; echo direct-exit=$?; curl -sSf -m 10 --noproxy '' -x http://127.0.0.1:3128 http://"+private+"/; echo proxied-exit=$?",
		// Codex waits 30s at most for a command, less than a first Go
		// build takes on a busy machine: a C build with make.
		"make 2>&1 && ./app 2>&1; echo build-exit=$?",
	)
	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"OPENAI_BASE_URL="+m.URL+"/v1", "OPENAI_API_KEY=sk-e2e-stand-in", "GITHUB_TOKEN=CANARY-env-gh-7f3a")
	r := reinRun(t, env, "", "run", "--hooks=false", "--workspace", ws, "--session", "codex-walls", "--",
		harness.AgentBinary(t, "codex"), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-m", "gpt-5-codex", "do the scripted task")
	results := m.Results()
	t.Logf("rein run: %s\nmodel requests: %v\ntool results:\n%s", r, m.Requests(), strings.Join(results, "\n---\n"))
	if r.Code != 0 {
		t.Fatalf("rein run -- codex: exit %d", r.Code)
	}
	if len(results) != 3 {
		t.Fatalf("Codex sent back %d tool results, want one for each of the 3 scripted calls", len(results))
	}
	if strings.Contains(strings.Join(results, "\n")+r.Stdout+r.Stderr, "CANARY") {
		t.Errorf("a canary reached the agent or its output")
	}
	for _, w := range []struct {
		k    int
		want string
	}{{0, "No such file or directory"}, {0, "read-home-exit=1"}, {0, "Permission denied"}, {0, "read-env-exit=1"},
		{1, "direct-exit=7"}, {1, "proxied-exit=22"}, {2, "built and ran"}, {2, "build-exit=0"}} {
		if !strings.Contains(results[w.k], w.want) {
			t.Errorf("tool result %d lacks %q:\n%s", w.k+1, w.want, results[w.k])
		}
	}
	if reached.Load() != 0 {
		t.Errorf("the private address was reached (%d connections)", reached.Load())
	}
	data := sandboxStarted(t, e, "codex-walls")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(m.URL, "http://"))
	if data["agent"] != "codex" || data["hooks"] != false || fmt.Sprint(data["credentials"]) != "[OPENAI_API_KEY]" ||
		data["model_endpoint"] != "127.0.0.1:"+port {
		t.Errorf("sandbox.started says %v", data)
	}
}

// TestCodexContainedWithHooks: `rein run -- codex` wires Codex's hooks to
// rein by itself, as requirements Codex runs without asking for trust
// (read only inside, nothing in the workspace or the home): each tool call
// is a check in the run's session, decided with sandbox.contained, a call
// policy denies does not run, and an allowed one's result is recorded.
func TestCodexContainedWithHooks(t *testing.T) {
	t.Parallel()
	e := startRein(t, agentPolicy)
	home, ws := t.TempDir(), t.TempDir()
	m := harness.NewModelStandIn(t, "touch allowed-ran && echo allowed-ok", "touch denied-by-policy-ran")
	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"OPENAI_BASE_URL="+m.URL+"/v1", "OPENAI_API_KEY=sk-e2e-stand-in")
	r := reinRun(t, env, "", "run", "--workspace", ws, "--session", "codex-hooks", "--",
		harness.AgentBinary(t, "codex"), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-m", "gpt-5-codex", "do the scripted task")
	results := m.Results()
	t.Logf("rein run: %s\ntool results:\n%s", r, strings.Join(results, "\n---\n"))
	if r.Code != 0 {
		t.Fatalf("rein run -- codex: exit %d", r.Code)
	}
	if len(results) != 2 {
		t.Fatalf("Codex sent back %d tool results, want 2", len(results))
	}
	if _, err := os.Stat(filepath.Join(ws, "allowed-ran")); err != nil || !strings.Contains(results[0], "allowed-ok") {
		t.Errorf("the allowed call did not run: %v\n%s", err, results[0])
	}
	if _, err := os.Stat(filepath.Join(ws, "denied-by-policy-ran")); err == nil {
		t.Error("the call policy denies ran")
	}
	if !strings.Contains(results[1], "the test's policy denies this command") {
		t.Errorf("the agent was not told policy's reason:\n%s", results[1])
	}
	var checks []struct {
		Decision string `json:"decision"`
		Rule     string `json:"rule"`
		Check    struct {
			Tool string `json:"tool"`
			Args struct {
				Command string `json:"command"`
			} `json:"args"`
		} `json:"check"`
		Result *struct {
			Status string `json:"status"`
		} `json:"result"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/codex-hooks/checks", e.keys["alice"], &checks)
	got := map[string]string{}
	for _, c := range checks {
		if c.Check.Tool == "net.connect" {
			continue
		}
		got[c.Check.Args.Command] = c.Check.Tool + " " + c.Decision + " " + c.Rule
		if c.Decision == "allow" && (c.Result == nil || c.Result.Status != "succeeded") {
			t.Errorf("the allowed call's result was not recorded through the relay: %+v", c.Result)
		}
	}
	want := map[string]string{"touch allowed-ran && echo allowed-ok": "Bash allow contained-bash", "touch denied-by-policy-ran": "Bash deny no-secrets-dir"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the hook checks of the run's session: %v, want %v", got, want)
	}
	if data := sandboxStarted(t, e, "codex-hooks"); data["hooks"] != true || data["agent"] != "codex" {
		t.Errorf("sandbox.started says %v", data)
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 1 {
		t.Errorf("the workspace holds more than the file the allowed call made: %v", entries)
	}
}
