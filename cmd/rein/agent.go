package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/risk"
	"github.com/reinhq/rein/sandbox"
)

// Ports of rein's forwarders on the sandbox's own loopback, besides the
// egress proxy's (3128).
const (
	relayPort    = 3129 // the relay of the agent's hooks to rein
	endpointPort = 3130 // a model endpoint on this machine
)

// agentCLI is what rein run knows of an agent CLI it contains: the
// variables that carry its own model credential, those that configure it
// (passed as they are), the one that names its model endpoint, and how its
// hooks are wired.
type agentCLI struct {
	name        string   // "claude", "codex"
	credentials []string // the model credential: passes although its name is a secret's
	settings    []string // harmless configuration of the CLI
	defaults    []string // KEY=VALUE set inside unless the caller set KEY
	baseURL     string   // the variable naming the model endpoint
	// baseConfig, for a CLI that takes its endpoint from a file rather than
	// the variable, is that file inside and its content for url.
	baseConfig func(url string) (path string, content []byte)
}

// agentCLIs are the agent CLIs rein run recognises by their executable's
// name (or the npm package it belongs to). Only these variables pass, only
// to that CLI; every other variable shaped like a secret stays out.
var agentCLIs = []agentCLI{
	{name: "claude",
		credentials: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		settings: []string{"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
			"ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
			"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "CLAUDE_CODE_ENABLE_TELEMETRY"},
		// Its package is read only inside, and telemetry would be a
		// destination for approvers to decide.
		defaults: []string{"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
		baseURL:  "ANTHROPIC_BASE_URL"},
	{name: "codex",
		credentials: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		settings:    []string{"OPENAI_ORGANIZATION", "OPENAI_PROJECT"},
		baseURL:     "OPENAI_BASE_URL",
		// Codex reads its endpoint from its configuration, not from the
		// variable: rein run writes it there (read only inside).
		baseConfig: func(url string) (string, []byte) {
			return "/home/agent/.codex/config.toml", []byte("openai_base_url = " + strconv.Quote(url) + "\n")
		}},
}

// agentOf is the agent CLI that command runs, or nil.
func agentOf(command []string) *agentCLI {
	if len(command) == 0 {
		return nil
	}
	path := command[0]
	if p, err := exec.LookPath(path); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			path = r
		}
	}
	for i, a := range agentCLIs {
		switch {
		case filepath.Base(command[0]) == a.name, filepath.Base(path) == a.name,
			a.name == "claude" && strings.Contains(path, "/@anthropic-ai/claude-code"),
			a.name == "codex" && strings.Contains(path, "/@openai/codex"):
			return &agentCLIs[i]
		}
	}
	return nil
}

// agentRun is how one contained run of an agent CLI is wired.
type agentRun struct {
	cli         *agentCLI
	pass        []string // KEY=VALUE set inside
	credentials []string // the names of the credential variables passed
	// endpoint is the model endpoint on this machine (host:port) the
	// caller configured, reached from inside at 127.0.0.1:endpointPort;
	// "" when the model is reached through the egress proxy.
	endpoint string
	// baseURL is the endpoint's URL as the CLI inside uses it ("" when the
	// caller named none).
	baseURL string
}

// wireAgent decides, from the caller's environment, what passes into a
// contained run of cli: its credential and settings, and its model
// endpoint when that is on this machine or its network (an address that
// the egress proxy would refuse): then, and only then, rein run carries
// connections to exactly that endpoint, and the variable inside names the
// forwarder.
func wireAgent(cli *agentCLI, environ []string) (agentRun, error) {
	r := agentRun{cli: cli}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	for _, k := range cli.credentials {
		if v, ok := env[k]; ok && v != "" {
			r.pass = append(r.pass, k+"="+v)
			r.credentials = append(r.credentials, k)
		}
	}
	for _, k := range cli.settings {
		if v, ok := env[k]; ok {
			r.pass = append(r.pass, k+"="+v)
		}
	}
	for _, kv := range cli.defaults {
		if k, _, _ := strings.Cut(kv, "="); env[k] == "" {
			r.pass = append(r.pass, kv)
		}
	}
	base, ok := env[cli.baseURL]
	if !ok || base == "" {
		return r, nil
	}
	inside, endpoint, err := localEndpoint(base)
	if err != nil {
		return r, fmt.Errorf("%s: %v", cli.baseURL, err)
	}
	r.endpoint, r.baseURL = endpoint, inside
	r.pass = append(r.pass, cli.baseURL+"="+inside)
	return r, nil
}

// localEndpoint reads a model endpoint URL. One on this machine or a
// private network (localhost or a non-public address literal, which the
// egress proxy refuses) is reached through rein run's forwarder: it returns
// the URL to use inside (the same scheme and path at 127.0.0.1:endpointPort)
// and the endpoint outside (host:port). Any other URL is unchanged and
// reached through the proxy like every destination ("" endpoint).
func localEndpoint(raw string) (inside, endpoint string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", "", fmt.Errorf("%q is not an http(s) URL of a model endpoint", raw)
	}
	host := u.Hostname()
	if a, perr := netip.ParseAddr(host); !(host == "localhost" || (perr == nil && risk.IsPrivate(a))) {
		return raw, "", nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	in := *u
	in.Host = "127.0.0.1:" + strconv.Itoa(endpointPort)
	return in.String(), net.JoinHostPort(host, port), nil
}

// claudeHooks are Claude Code's managed settings inside a contained run:
// every tool call is checked through the relay before it runs (waiting up
// to 50s for people on an ask), and its result recorded after. Managed
// settings (/etc/claude-code/managed-settings.json) come before the user's
// and the project's, and are read only inside.
func claudeHooks() []byte {
	hook := insideSelfPath + " hook claude-code --server http://127.0.0.1:" + strconv.Itoa(relayPort)
	b, _ := json.MarshalIndent(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
			"type": "command", "command": hook + " --on-ask wait --wait 50s", "timeout": 60}}}},
		"PostToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
			"type": "command", "command": hook, "timeout": 30}}}},
	}}, "", "  ")
	return b
}

// claudeManagedSettings is where Claude Code reads managed settings on
// Linux.
const claudeManagedSettings = "/etc/claude-code/managed-settings.json"

// claudeManagedDropIns are further managed settings of the machine's,
// shown read only inside as they are.
const claudeManagedDropIns = "/etc/claude-code/managed-settings.d"

// mergeClaudeHooks adds rein's hooks (ours) to the machine's managed
// settings (base, empty when there are none), keeping every other setting
// and hook of base. Managed settings that switch hooks off cannot carry
// rein's: an error says so.
func mergeClaudeHooks(base, ours []byte) ([]byte, error) {
	if len(strings.TrimSpace(string(base))) == 0 {
		return ours, nil
	}
	var b, o map[string]any
	if err := json.Unmarshal(base, &b); err != nil || b == nil {
		return nil, fmt.Errorf("not a JSON object, so rein's hooks cannot be added to it (%v); run with --hooks=false", err)
	}
	json.Unmarshal(ours, &o)
	if v, _ := b["disableAllHooks"].(bool); v {
		return nil, fmt.Errorf("the machine's managed settings switch all hooks off (disableAllHooks), so rein's cannot run; run with --hooks=false")
	}
	hooks, ok := b["hooks"].(map[string]any)
	if b["hooks"] != nil && !ok {
		return nil, fmt.Errorf(`"hooks" is not an object, so rein's hooks cannot be added to it; run with --hooks=false`)
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	for event, groups := range o["hooks"].(map[string]any) {
		have, ok := hooks[event].([]any)
		if hooks[event] != nil && !ok {
			return nil, fmt.Errorf(`"hooks.%s" is not a list, so rein's hooks cannot be added to it; run with --hooks=false`, event)
		}
		hooks[event] = append(have, groups.([]any)...)
	}
	b["hooks"] = hooks
	return json.MarshalIndent(b, "", "  ")
}

// insideSelfPath is rein's binary inside the sandbox.
const insideSelfPath = "/.rein/rein"

// hookFiles are the files that wire cli's hooks inside, written under dir.
func hookFiles(cli *agentCLI, dir string) ([]sandbox.File, error) {
	switch cli.name {
	case "claude":
		// The machine's own managed settings (an administrator's) stay in
		// force inside, with rein's hooks added to them.
		base, err := os.ReadFile(claudeManagedSettings)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("cannot read %s to add rein's hooks to it: %v", claudeManagedSettings, err)
		}
		merged, err := mergeClaudeHooks(base, claudeHooks())
		if err != nil {
			return nil, fmt.Errorf("%s: %v", claudeManagedSettings, err)
		}
		p := filepath.Join(dir, "claude-managed-settings.json")
		if err := os.WriteFile(p, merged, 0o644); err != nil {
			return nil, err
		}
		files := []sandbox.File{{Src: p, Dst: claudeManagedSettings}}
		if st, err := os.Stat(claudeManagedDropIns); err == nil && st.IsDir() {
			files = append(files, sandbox.File{Src: claudeManagedDropIns, Dst: claudeManagedDropIns})
		}
		return files, nil
	case "codex":
		// rein does not rewrite an administrator's requirements: with
		// them, Codex runs contained without rein's hooks only if asked.
		if _, err := os.Lstat(codexRequirementsPath); err == nil {
			return nil, fmt.Errorf("this machine has Codex requirements (%s), which rein does not rewrite to add its hooks; run with --hooks=false", codexRequirementsPath)
		}
		p := filepath.Join(dir, "codex-requirements.toml")
		if err := os.WriteFile(p, codexRequirements(), 0o644); err != nil {
			return nil, err
		}
		return []sandbox.File{{Src: p, Dst: codexRequirementsPath}}, nil
	}
	return nil, nil
}

// codexRequirementsPath is where Codex reads the requirements an
// administrator sets on Linux.
const codexRequirementsPath = "/etc/codex/requirements.toml"

// codexRequirements are Codex's requirements inside a contained run: its
// managed hooks, as docs/integrations.md configures them, through the
// relay. Codex runs managed hooks without asking for them to be trusted,
// and they come before the user's and the project's.
func codexRequirements() []byte {
	hook := insideSelfPath + " hook codex --server http://127.0.0.1:" + strconv.Itoa(relayPort)
	var b strings.Builder
	b.WriteString("[hooks]\n")
	for _, h := range []struct {
		event, command string
		timeout        int
	}{{"PreToolUse", hook + " --on-ask wait --wait 50s || exit 2", 60}, {"PermissionRequest", hook + " --on-ask prompt || exit 2", 60}, {"PostToolUse", hook, 30}} {
		fmt.Fprintf(&b, "\n[[hooks.%s]]\nmatcher = \".*\"\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %q\ntimeout = %d\n", h.event, h.event, h.command, h.timeout)
	}
	return []byte(b.String())
}

// contained is what rein run adds to a contained run for the agent CLI it
// runs: the forwarders it serves outside (the hooks' relay, a model
// endpoint on this machine), the files and variables inside, and what the
// record says of them.
type contained struct {
	forward   []sandbox.Forward
	files     []sandbox.File
	pass      []string
	record    agentRecord
	listeners []net.Listener
}

// agentRecord is what sandbox.started says of the agent CLI.
type agentRecord struct {
	Agent         string
	Hooks         bool
	Credentials   []string
	ModelEndpoint string
}

// Close stops the forwarders.
func (c *contained) Close() {
	for _, l := range c.listeners {
		l.Close()
	}
}

// containAgent wires the agent CLI that command runs, if rein run knows
// it: its credential and settings pass, a model endpoint on this machine
// is forwarded, and with hooks its hooks reach rein through the relay, in
// session. Files go in dir, sockets in sockDir (the run's directory that
// the sandbox sees). Nothing is written into the workspace.
func containAgent(command, environ []string, dir, sockDir string, c *client.Client, session string, hooks bool) (*contained, error) {
	out := &contained{}
	cli := agentOf(command)
	if cli == nil {
		return out, nil
	}
	r, err := wireAgent(cli, environ)
	if err != nil {
		return nil, err
	}
	out.pass = r.pass
	out.record = agentRecord{Agent: cli.name, Credentials: r.credentials, ModelEndpoint: r.endpoint}
	if cli.baseConfig != nil && r.baseURL != "" {
		dst, content := cli.baseConfig(r.baseURL)
		src := filepath.Join(dir, cli.name+"-"+filepath.Base(dst))
		if err := os.WriteFile(src, content, 0o644); err != nil {
			return nil, err
		}
		out.files = append(out.files, sandbox.File{Src: src, Dst: dst})
	}
	listen := func(name string) (net.Listener, string, error) {
		sock := filepath.Join(sockDir, name)
		l, err := net.Listen("unix", sock)
		if err != nil {
			return nil, "", err
		}
		os.Chmod(sock, 0o600)
		out.listeners = append(out.listeners, l)
		return l, sock, nil
	}
	if r.endpoint != "" {
		l, sock, err := listen("endpoint.sock")
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("the model endpoint's forwarder cannot listen: %v", err)
		}
		go serveEndpoint(l, r.endpoint)
		out.forward = append(out.forward, sandbox.Forward{Port: endpointPort, Socket: sock})
	}
	if !hooks {
		return out, nil
	}
	files, err := hookFiles(cli, dir)
	if err != nil {
		out.Close()
		return nil, err
	}
	if files == nil {
		return out, nil // no hooks rein can wire for this CLI
	}
	l, sock, err := listen("rein.sock")
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("the hooks' relay cannot listen: %v", err)
	}
	go serveRelay(l, &hookRelay{c: c, session: session})
	out.forward = append(out.forward, sandbox.Forward{Port: relayPort, Socket: sock})
	out.files = append(out.files, files...)
	out.record.Hooks = true
	return out, nil
}
