package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// The real coding agents, from npm (e2e/agents), run headless against
// harness.ModelStandIn, a local stand-in for the model's API that answers every
// turn with one scripted tool call and then a closing text, so that a
// test can see whether the agent ran the tool.

// codexRun runs `codex exec ARGS...` in dir against the model stand-in,
// with CODEX_HOME home (its config.toml names the stand-in) and env added.
func runCodex(t *testing.T, m *harness.ModelStandIn, dir, home string, env []string, args ...string) claudeRun {
	t.Helper()
	config := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "standin"
check_for_update_on_startup = false

[model_providers.standin]
name = "stand-in"
base_url = "%s/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"

[projects.%q]
trust_level = "trusted"
`, m.URL, dir)
	cfg := filepath.Join(home, "config.toml")
	if b, err := os.ReadFile(cfg); err == nil {
		config = string(b) + "\n" + config
	}
	harness.WriteFile(t, cfg, config)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.AgentBinary(t, "codex"), append([]string{"exec"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(harness.CleanEnv("HOME="+home, "CODEX_HOME="+home, "STANDIN_API_KEY=sk-e2e-stand-in"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return claudeRun{stdout.String(), stderr.String(), err}
}

// TestDocumentedCodexHooksFailClosed: every Codex hook configuration in
// README.md and docs/ is taken as written into Codex's hooks.json and run
// by the real Codex (`codex exec`, from npm) with a model that runs a shell
// command, trusted the headless way docs/integrations.md gives
// (--dangerously-bypass-hook-trust). With rein up the command runs; with
// rein down, or `rein` not installed, it must not. Without that trust the
// same run skips the hooks silently and runs the command, as the docs warn,
// and without hooks it runs, so the check can fail.
func TestDocumentedCodexHooksFailClosed(t *testing.T) {
	t.Parallel()
	snippets := hookSnippets(t, "rein hook codex")
	if len(snippets) < 1 {
		t.Fatal("found no Codex hook configuration in the docs; docs/integrations.md has one")
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, agentPolicy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	agent := harness.AgentKey(t, s, s.AdminKey(), "codex", "acme")
	down := "http://" + harness.FreeAddr(t)

	run := func(name, hooks, server string, flags ...string) bool {
		t.Helper()
		dir, home := t.TempDir(), t.TempDir()
		marker := filepath.Join(dir, "ran")
		m := harness.NewModelStandIn(t, "touch "+marker)
		if hooks != "" {
			harness.WriteFile(t, filepath.Join(home, "hooks.json"), hooks)
		}
		args := append([]string{"--skip-git-repo-check", "--sandbox", "danger-full-access"}, flags...)
		r := runCodex(t, m, dir, home, []string{"REIN_SERVER=" + server, "REIN_KEY=" + agent}, append(args, "run the command")...)
		_, err := os.Stat(marker)
		ran := err == nil
		t.Logf("%s: ran=%v, codex: %v, model requests: %d\n%.1500s", name, ran, r.err, len(m.Requests()), r.stderr)
		return ran
	}
	if !run("no hooks", "", s.URL, "--dangerously-bypass-hook-trust") {
		t.Fatal("without hooks the scripted command must run, or this test proves nothing")
	}
	for _, sn := range snippets {
		where := fmt.Sprintf("%s:%d", sn.file, sn.line)
		raw, _ := json.Marshal(sn.json)
		for _, c := range []struct {
			state, bin, server string
			trust              bool
			want               bool
		}{
			{"rein up", harness.Bin, s.URL, true, true},
			{"rein down", harness.Bin, down, true, false},
			{"rein not installed", filepath.Join(t.TempDir(), "rein"), down, true, false},
			{"rein down, hooks not trusted", harness.Bin, down, false, true},
		} {
			var v map[string]any
			json.Unmarshal(raw, &v)
			hooks, _ := json.Marshal(localize(v, c.bin, c.server))
			var flags []string
			if c.trust {
				flags = []string{"--dangerously-bypass-hook-trust"}
			}
			if got := run(where+", "+c.state, string(hooks), c.server, flags...); got != c.want {
				t.Errorf("%s with %s: the command ran=%v, want %v\n%s", where, c.state, got, c.want, raw)
			}
		}
	}
}

// claudeRun is one headless run of the real Claude Code.
type claudeRun struct {
	stdout, stderr string
	err            error
}

// runClaude runs `claude -p PROMPT ARGS...` in dir with settings in
// dir/.claude/settings.json, against the model stand-in, with a home of
// its own and env added.
func runClaude(t *testing.T, m *harness.ModelStandIn, dir, home string, env []string, args ...string) claudeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.AgentBinary(t, "claude"), args...)
	cmd.Dir = dir
	cmd.Env = append(harness.CleanEnv(
		"HOME="+home,
		"ANTHROPIC_BASE_URL="+m.URL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-stand-in",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_ENABLE_TELEMETRY=0",
	), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return claudeRun{stdout.String(), stderr.String(), err}
}

// docSnippet is a fenced JSON block of a Markdown file that configures
// hooks.
type docSnippet struct {
	file string
	line int
	json map[string]any
}

// hookSnippets returns every JSON block of README.md and docs/*.md that
// registers hooks and mentions marker ("rein hook claude-code" or
// "claude-code" for Claude Code, "rein hook codex" for Codex).
func hookSnippets(t *testing.T, marker string) []docSnippet {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(harness.ModuleRoot, "docs", "*.md"))
	files = append([]string{filepath.Join(harness.ModuleRoot, "README.md")}, files...)
	var out []docSnippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			open := strings.TrimSpace(lines[i])
			if open != "```json" {
				continue
			}
			var block []string
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				block = append(block, lines[i])
			}
			text := strings.Join(block, "\n")
			if !strings.Contains(text, `"hooks"`) || !strings.Contains(text, marker) {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				t.Errorf("%s:%d: a hooks snippet that is not JSON (%v):\n%s", f, start, err, text)
				continue
			}
			rel, _ := filepath.Rel(harness.ModuleRoot, f)
			out = append(out, docSnippet{rel, start, v})
		}
	}
	return out
}

// localize points a documented hook configuration at this test: `rein` is
// bin, and the server address of the docs is server.
func localize(v any, bin, server string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = localize(e, bin, server)
		}
		if c, ok := x["command"].(string); ok && strings.HasPrefix(c, "rein ") {
			x["command"] = bin + c[len("rein"):]
		}
		if u, ok := x["url"].(string); ok {
			x["url"] = strings.Replace(u, "http://127.0.0.1:8750", server, 1)
		}
	case []any:
		for i, e := range x {
			x[i] = localize(e, bin, server)
		}
	}
	return v
}

// agentPolicy lets every Bash command run, so that only a hook that fails
// closed keeps the scripted command from running.
const agentPolicy = `version: 1
default: deny
rules:
  - {id: bash, when: 'tool == "Bash"', decision: allow, reason: the test's commands run}
`

// TestDocumentedClaudeCodeHooksFailClosed: every Claude Code hook
// configuration in README.md and docs/ is taken as written and given to
// the real Claude Code (`claude -p`, from npm) with a model that calls
// Bash. With rein up the command runs (the configuration works); with rein
// down, or the `rein` of a command hook not installed, it must not: a hook
// that cannot reach rein, or cannot run at all, blocks the tool. Without
// hooks the same run runs the command, so the check can fail.
func TestDocumentedClaudeCodeHooksFailClosed(t *testing.T) {
	t.Parallel()
	snippets := hookSnippets(t, "claude-code")
	if len(snippets) < 3 {
		t.Fatalf("found %d Claude Code hook configurations in the docs; README.md has two and docs/integrations.md one", len(snippets))
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, agentPolicy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	agent := harness.AgentKey(t, s, s.AdminKey(), "claude", "acme")
	down := "http://" + harness.FreeAddr(t)

	run := func(name, settings, server string) bool {
		t.Helper()
		dir, home := t.TempDir(), t.TempDir()
		marker := filepath.Join(dir, "ran")
		m := harness.NewModelStandIn(t, "touch "+marker)
		if settings != "" {
			os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
			harness.WriteFile(t, filepath.Join(dir, ".claude", "settings.json"), settings)
		}
		r := runClaude(t, m, dir, home, []string{"REIN_SERVER=" + server, "REIN_KEY=" + agent}, "-p", "run the command", "--output-format", "json", "--allowedTools", "Bash")
		_, err := os.Stat(marker)
		ran := err == nil
		t.Logf("%s: ran=%v, claude: %v, model requests: %v\n%.600s", name, ran, r.err, m.Requests(), r.stdout+r.stderr)
		return ran
	}
	if !run("no hooks", "", s.URL) {
		t.Fatal("without hooks the scripted command must run, or this test proves nothing")
	}
	for _, sn := range snippets {
		where := fmt.Sprintf("%s:%d", sn.file, sn.line)
		raw, _ := json.Marshal(sn.json)
		for _, c := range []struct {
			state, bin, server string
			want               bool
		}{
			{"rein up", harness.Bin, s.URL, true},
			{"rein down", harness.Bin, down, false},
			{"rein not installed", filepath.Join(t.TempDir(), "rein"), down, false},
		} {
			var v map[string]any
			json.Unmarshal(raw, &v)
			settings, _ := json.Marshal(localize(v, c.bin, c.server))
			if got := run(where+", "+c.state, string(settings), c.server); got != c.want {
				t.Errorf("%s with %s: the command ran=%v, want %v\n%s", where, c.state, got, c.want, raw)
			}
		}
	}
}

// deferPolicy asks for every Bash command.
const deferPolicy = `version: 1
default: deny
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - {id: bash, when: 'tool == "Bash"', decision: ask, reason: commands need an approval}
`

// TestClaudeCodeDeferResume: the documented defer flow with the real
// Claude Code and the documented hooks (PreToolUse with on_ask=defer,
// PostToolUse, and the SessionEnd hook), through the http hook and the
// command hook: `claude -p` stops on the deferred call and ends its run
// (SessionEnd, reason "other"); an approver approves with an edit; `claude
// -p --resume` runs the call as edited, never as asked, and the check
// records the result. The session ends with the run that has nothing
// pending, and an ended session still refuses new work.
func TestClaudeCodeDeferResume(t *testing.T) {
	t.Parallel()
	e := harness.NewApprovalEnvWith(t, t.TempDir(), deferPolicy)
	agent := e.Keys["builder"]
	for _, via := range []string{"http", "command"} {
		t.Run(via, func(t *testing.T) {
			dir, home := t.TempDir(), t.TempDir()
			asked, edited := filepath.Join(dir, "asked"), filepath.Join(dir, "edited")
			m := harness.NewModelStandIn(t, "touch "+asked)
			auth := map[string]any{"headers": map[string]any{"Authorization": "Bearer $REIN_KEY"}, "allowedEnvVars": []string{"REIN_KEY"}}
			hookHTTP := func(url string, extra map[string]any) map[string]any {
				h := map[string]any{"type": "http", "url": e.S.URL + url}
				for k, v := range auth {
					h[k] = v
				}
				for k, v := range extra {
					h[k] = v
				}
				return h
			}
			hookCmd := func(args string, extra map[string]any) map[string]any {
				h := map[string]any{"type": "command", "command": harness.Bin + " hook claude-code" + args}
				for k, v := range extra {
					h[k] = v
				}
				return h
			}
			var pre, post, end map[string]any
			if via == "http" {
				pre = hookHTTP("/v1/hooks/claude-code?on_ask=defer", map[string]any{"timeout": 60, "onFailure": "block"})
				post = hookHTTP("/v1/hooks/claude-code", nil)
				end = hookHTTP("/v1/hooks/claude-code", nil)
			} else {
				pre = hookCmd(" --on-ask defer", map[string]any{"timeout": 60, "onFailure": "block"})
				post = hookCmd("", nil)
				end = hookCmd("", nil)
			}
			settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{
				"PreToolUse":  []any{map[string]any{"matcher": "*", "hooks": []any{pre}}},
				"PostToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{post}}},
				"SessionEnd":  []any{map[string]any{"hooks": []any{end}}},
			}})
			os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
			harness.WriteFile(t, filepath.Join(dir, ".claude", "settings.json"), string(settings))
			env := []string{"REIN_SERVER=" + e.S.URL, "REIN_KEY=" + agent}

			r := runClaude(t, m, dir, home, env, "-p", "run the command", "--output-format", "json", "--allowedTools", "Bash")
			var out struct {
				SessionID  string `json:"session_id"`
				StopReason string `json:"stop_reason"`
			}
			json.Unmarshal([]byte(r.stdout), &out)
			t.Logf("the first run: %v %s\n%.800s", r.err, r.stdout, r.stderr)
			if out.StopReason != "tool_deferred" || out.SessionID == "" {
				t.Fatalf("claude -p must stop on the deferred call: %+v", out)
			}
			if _, err := os.Stat(asked); err == nil {
				t.Fatal("the deferred command ran")
			}
			apr := e.PendingApproval(t, out.SessionID)
			harness.MustVote(t, e, "alice", apr, "edit", `,"args":{"command":"touch `+edited+`","description":"run the scripted command"}`)

			r = runClaude(t, m, dir, home, env, "-p", "--resume", out.SessionID, "--output-format", "json", "--allowedTools", "Bash")
			t.Logf("the resumed run: %v %s\n%.800s\nmodel requests: %v", r.err, r.stdout, r.stderr, m.Requests())
			if _, err := os.Stat(edited); err != nil {
				t.Errorf("the resumed call must run as the approver edited it: %v", err)
			}
			if _, err := os.Stat(asked); err == nil {
				t.Error("the call ran as asked, not as edited")
			}
			var s struct {
				EndedAt *time.Time `json:"ended_at"`
			}
			harness.Eventually(t, 10*time.Second, "the session ended by the resumed run's SessionEnd", func() string {
				harness.GetJSON(t, e.S.URL+"/v1/sessions/"+out.SessionID, e.Keys["alice"], &s)
				if s.EndedAt == nil {
					return "not ended"
				}
				return ""
			})
			code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", agent, []byte(`{"tool":"Bash","args":{"command":"ls"},"session":"`+out.SessionID+`"}`), "application/json")
			if code != 200 || !strings.Contains(string(body), "was ended") {
				t.Errorf("a check in the ended session: %d %s", code, body)
			}
		})
	}
}
