package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestLocalEndpoint: an endpoint on this machine or a private network is
// forwarded (the URL inside names the forwarder, with the same scheme and
// path); any other is left to the egress proxy; a URL that is not one is
// refused.
func TestLocalEndpoint(t *testing.T) {
	for _, c := range []struct {
		in, inside, endpoint string
	}{
		{"http://127.0.0.1:4000", "http://127.0.0.1:3130", "127.0.0.1:4000"},
		{"http://localhost:11434/v1", "http://127.0.0.1:3130/v1", "127.0.0.1:11434"},
		{"https://10.1.2.3/anthropic", "https://127.0.0.1:3130/anthropic", "10.1.2.3:443"},
		{"http://[::1]:8080", "http://127.0.0.1:3130", "[::1]:8080"},
		{"http://169.254.169.254", "http://127.0.0.1:3130", "169.254.169.254:80"},
		{"https://api.anthropic.com", "https://api.anthropic.com", ""},
		{"https://gateway.example.com:8443/v1", "https://gateway.example.com:8443/v1", ""},
		{"https://8.8.8.8", "https://8.8.8.8", ""},
		{"http://llm.internal:4000", "http://llm.internal:4000", ""}, // a name: through the proxy
	} {
		inside, endpoint, err := localEndpoint(c.in)
		if err != nil || inside != c.inside || endpoint != c.endpoint {
			t.Errorf("localEndpoint(%q) = %q, %q, %v; want %q, %q", c.in, inside, endpoint, err, c.inside, c.endpoint)
		}
	}
	for _, bad := range []string{"ftp://127.0.0.1", "127.0.0.1:4000", "http://user:pw@127.0.0.1:4000", "http://", "unix:///run/x.sock"} {
		if _, _, err := localEndpoint(bad); err == nil {
			t.Errorf("localEndpoint(%q) is accepted", bad)
		}
	}
}

// TestWireAgent: only the CLI's own credential and settings pass, never
// another secret of the caller's; the defaults yield to the caller's.
func TestWireAgent(t *testing.T) {
	environ := []string{"ANTHROPIC_API_KEY=sk-ant-1", "OPENAI_API_KEY=sk-oa-1", "AWS_SECRET_ACCESS_KEY=x", "GITHUB_TOKEN=y",
		"ANTHROPIC_BASE_URL=http://localhost:4000", "ANTHROPIC_MODEL=claude-x", "DISABLE_AUTOUPDATER=0", "REIN_KEY=rein_z"}
	r, err := wireAgent(agentOf([]string{"claude"}), environ)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(r.pass)
	want := []string{"ANTHROPIC_API_KEY=sk-ant-1", "ANTHROPIC_BASE_URL=http://127.0.0.1:3130", "ANTHROPIC_MODEL=claude-x",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=0"}
	if !slices.Equal(r.pass, want) || r.endpoint != "127.0.0.1:4000" || !slices.Equal(r.credentials, []string{"ANTHROPIC_API_KEY"}) {
		t.Errorf("claude gets %q (endpoint %q, credentials %v), want %q", r.pass, r.endpoint, r.credentials, want)
	}
	r, _ = wireAgent(agentOf([]string{"/opt/tools/codex"}), environ)
	if strings.Join(r.pass, " ") != "OPENAI_API_KEY=sk-oa-1" || r.endpoint != "" {
		t.Errorf("codex gets %q (endpoint %q)", r.pass, r.endpoint)
	}
	if _, err := wireAgent(agentOf([]string{"claude"}), []string{"ANTHROPIC_BASE_URL=file:///etc/passwd"}); err == nil {
		t.Error("a model endpoint that is not an http(s) URL is accepted")
	}
	for _, cmd := range []string{"sh", "bash", "claude-helper", "make"} {
		if a := agentOf([]string{cmd}); a != nil {
			t.Errorf("%s is taken for the agent CLI %s", cmd, a.name)
		}
	}
}

// TestMergeClaudeHooks: rein's hooks join an administrator's managed
// settings, which stay as they are; settings that switch hooks off, or
// that are not what Claude Code reads, refuse the run with how to go on.
func TestMergeClaudeHooks(t *testing.T) {
	ours := claudeHooks()
	if got, err := mergeClaudeHooks(nil, ours); err != nil || string(got) != string(ours) {
		t.Errorf("without managed settings: %s %v", got, err)
	}
	base := `{"permissions": {"deny": ["Read(./secrets/**)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/corp/audit"}]}]}}`
	got, err := mergeClaudeHooks([]byte(base), ours)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Permissions struct{ Deny []string }
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	json.Unmarshal(got, &m)
	pre := m.Hooks["PreToolUse"]
	if len(m.Permissions.Deny) != 1 || len(pre) != 2 || pre[0].Hooks[0].Command != "/opt/corp/audit" ||
		!strings.Contains(pre[1].Hooks[0].Command, "hook claude-code --server http://127.0.0.1:3129") || len(m.Hooks["PostToolUse"]) != 1 {
		t.Errorf("merged managed settings: %s", got)
	}
	for _, bad := range []string{`[]`, `not json`, `{"disableAllHooks": true}`, `{"hooks": []}`, `{"hooks": {"PreToolUse": {}}}`} {
		if _, err := mergeClaudeHooks([]byte(bad), ours); err == nil || !strings.Contains(err.Error(), "--hooks=false") {
			t.Errorf("managed settings %s: %v", bad, err)
		}
	}
}
