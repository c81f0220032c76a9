package risk

import (
	"slices"
	"strings"
	"testing"
)

// shellQuote quotes a path for a shell command line.
func shellQuote(p string) string { return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'" }

// TestSecretReadsClosedWorld: credential stores of tools the tables name,
// of tools they do not (the closed world: a home's hidden folders, the
// host's private places), files shaped like secrets, and what stays
// harmless (templates, public system files, inert home files). Each row
// is judged as a file tool's path and as a command's operand, and the two
// agree: one function decides.
func TestSecretReadsClosedWorld(t *testing.T) {
	cases := []struct {
		path   string
		secret bool
		source string
	}{
		// Container registries.
		{"~/.docker/contexts/meta/abc/meta.json", true, "docs.docker.com, docker context (TLS material)"},
		{"~/.config/containers/auth.json", true, "containers-auth.json(5)"},
		{"/run/user/1000/containers/auth.json", true, "containers-auth.json(5), XDG_RUNTIME_DIR"},
		{"~/.config/helm/registry/config.json", true, "helm.sh, helm registry login"},
		// Cluster configurations and join tokens.
		{"/etc/rancher/k3s/k3s.yaml", true, "docs.k3s.io, Cluster Access"},
		{"/var/lib/rancher/k3s/server/node-token", true, "docs.k3s.io, server token"},
		{"/var/lib/rancher/rke2/server/token", true, "docs.rke2.io, server token"},
		{"~/.minikube/profiles/minikube/client.key", true, "minikube client key"},
		{"~/.talos/config", true, "talos.dev, talosconfig"},
		{"deploy/kubeconfig", true, "kubernetes.io, kubeconfig"},
		{"clusters/prod.kubeconfig", true, "kubernetes.io, kubeconfig"},
		// VPN and IPsec keys.
		{"/etc/wireguard/wg0.conf", true, "wg-quick(8)"},
		{"/etc/ipsec.secrets", true, "ipsec.secrets(5)"},
		{"/etc/swanctl/private/gw.pem", true, "swanctl.conf(5)"},
		{"/etc/NetworkManager/system-connections/office.nmconnection", true, "nm-settings-keyfile(5)"},
		{"/var/lib/tailscale/tailscaled.state", true, "tailscale node key"},
		// Mail relays.
		{"/etc/postfix/sasl_passwd", true, "Postfix SASL_README"},
		{"~/.msmtprc", true, "msmtp(1)"},
		{"/etc/mail/authinfo", true, "sendmail authinfo"},
		// Storage keyrings.
		{"/etc/ceph/ceph.client.admin.keyring", true, "docs.ceph.com, User Management"},
		{"backup/ceph.client.admin.keyring", true, "docs.ceph.com, User Management"},
		{"~/.passwd-s3fs", true, "s3fs-fuse README"},
		// Secret managers' keys.
		{"~/.config/sops/age/keys.txt", true, "getsops/sops, age"},
		{"ops/.vault_pass.txt", true, "Ansible Vault password file"},
		{"~/.config/op/config", true, "1Password CLI"},
		// Wallets.
		{"~/.bitcoin/wallet.dat", true, "Bitcoin Core"},
		{"~/.ethereum/keystore/UTC--2020-01-01T00-00-00.0Z--abc", true, "geth keystore"},
		{"~/.config/solana/id.json", true, "Solana CLI keypair"},
		// AI command-line clients.
		{"~/.claude/.credentials.json", true, "Claude Code credentials (Linux)"},
		{"~/.codex/auth.json", true, "OpenAI Codex CLI auth.json"},
		{"~/.gemini/oauth_creds.json", true, "Gemini CLI"},
		{"~/.config/github-copilot/hosts.json", true, "GitHub Copilot"},
		{"~/.cache/huggingface/token", true, "huggingface_hub token"},
		// Data-warehouse profiles.
		{"~/.dbt/profiles.yml", true, "docs.getdbt.com, profiles.yml"},
		{"analytics/profiles.yml", true, "docs.getdbt.com, profiles.yml in the project"},
		{"~/.snowflake/connections.toml", true, "Snowflake CLI connections.toml"},
		{"~/.databrickscfg", true, "Databricks CLI"},
		// Windows credential stores and hives.
		{`C:\Windows\System32\config\SAM`, true, "Microsoft, Registry Hives"},
		{`C:\Windows\NTDS\ntds.dit`, true, "Active Directory database"},
		{`C:\Users\u\NTUSER.DAT`, true, "Microsoft, Registry Hives"},
		{`C:\Users\u\AppData\Roaming\Microsoft\Credentials\DFBE70A7`, true, "Credential Manager"},
		{`C:\Users\u\AppData\Roaming\Microsoft\Protect\S-1-5-21-1\key`, true, "DPAPI master keys"},
		{`C:\Windows\Panther\Unattend.xml`, true, "Unattended Windows Setup Reference"},
		// Browser profiles inside application sandboxes.
		{"~/.var/app/org.mozilla.firefox/.mozilla/firefox/x.default/logins.json", true, "docs.flatpak.org"},
		{"~/.var/app/com.google.Chrome/config/google-chrome/Default/Cookies", true, "docs.flatpak.org"},
		{"~/snap/chromium/common/chromium/Default/Login Data", true, "snapcraft.io, Data locations"},
		{"~/Library/Containers/com.apple.Safari/Data/Library/Cookies/Cookies.binarycookies", true, "Apple App Sandbox"},
		// Tools no table names: the closed world.
		{"~/.newtool/token", true, "closed world: a home's hidden folder"},
		{"~/.config/newtool/creds", true, "closed world: a home's hidden folder"},
		{"~/.local/share/newtool/db", true, "closed world: a home's hidden folder"},
		{"/home/dev/.newtoolrc", true, "closed world: a home's hidden file"},
		{"~/Library/Application Support/NewTool/session", true, "closed world: ~/Library is hidden"},
		{`C:\Users\u\AppData\Roaming\NewTool\token`, true, "closed world: AppData is hidden"},
		{"/etc/newtool/secret.conf", true, "closed world: /etc (FHS 3.0)"},
		{"/var/lib/newtool/state.db", true, "closed world: /var (FHS 3.0)"},
		{"/var/log/auth.log", true, "closed world: logs carry typed secrets"},
		{"/proc/1/status", true, "closed world: another process (proc(5))"},
		{"/dev/shm/session", true, "closed world: shared memory of others"},
		{"/dev/pts/1", true, "closed world: another terminal"},
		// Secret-shaped files in a project.
		{"prod.env", true, "dotenv, Docker Compose env_file"},
		{"config/app.env", true, "dotenv, Docker Compose env_file"},
		{".env.local", true, "dotenv"},
		{"infra/terraform.tfvars.json", true, "developer.hashicorp.com, variable definitions"},
		{"config/credentials.toml", true, "credentials by name"},
		// The shell's former lists: judged by the file tools too.
		{"/var/lib/kubelet/pki/kubelet.key", true, "kubelet state"},
		{"~/.viminfo", true, "vim viminfo"},
		{"~/.composer/auth.json", true, "getcomposer.org auth.json"},
		{"/etc/http.keytab", true, "Kerberos keytab"},
		// Harmless.
		{".env.example", false, "template (dotenv convention)"},
		{"app/.env.sample", false, "template"},
		{".env.template", false, "template"},
		{".env.dist", false, "template (Symfony)"},
		{"config/secrets.example.yaml", false, "template"},
		{"credentials.example.json", false, "template"},
		{"vendor/google.golang.org/grpc/credentials/credentials.go", false, "source code (grpc's credentials package)"},
		{"src/auth/credentials.ts", false, "source code"},
		{"pkg/kubeconfig.py", false, "source code"},
		{"config/credentials.json", true, "credentials by name, not code"},
		{"deploy/credentials.sh", true, "a shell script carries values"},
		{"/usr/share/doc/git/README", false, "FHS 3.0 /usr/share"},
		{"/usr/include/stdio.h", false, "FHS 3.0 /usr/include"},
		{"/etc/os-release", false, "os-release(5)"},
		{"/etc/hosts", false, "hosts(5)"},
		{"/etc/passwd", false, "passwd(5): world-readable"},
		{"/proc/cpuinfo", false, "proc(5)"},
		{"/dev/null", false, "null(4)"},
		{"~/.gitignore_global", false, "git-config(1) core.excludesFile"},
		{"~/.editorconfig", false, "editorconfig.org"},
		{"~/Documents/report.pdf", false, "no workspace: a home's own files are the user's work"},
		{"/tmp/build.log", false, "no workspace: /tmp is not a closed root"},
		{"/etc", false, "a closed root itself lists names only"},
		{"src/main.go", false, "project code"},
	}
	for _, c := range cases {
		f, _ := ClassifyPath(c.path, "")
		if f.Secret != c.secret {
			t.Errorf("%s (%s): secret %v, want %v", c.path, c.source, f.Secret, c.secret)
		}
		// The same path as a command's operand reaches the same answer: a
		// known secret is shell.secrets, a path secret by the closed world
		// alone shell.unlisted, as the file tool's fact says unlisted.
		_, tags := ClassifyShell("cat " + shellQuote(c.path))
		if got := slices.Contains(tags, "shell.secrets") || slices.Contains(tags, "shell.unlisted"); got != c.secret {
			t.Errorf("cat %s (%s): shell.secrets or shell.unlisted %v, want %v (tags %v)", c.path, c.source, got, c.secret, tags)
		}
		if got := slices.Contains(tags, "shell.unlisted"); got != f.Unlisted {
			t.Errorf("cat %s (%s): shell.unlisted %v, want %v as the path's unlisted (tags %v)", c.path, c.source, got, f.Unlisted, tags)
		}
		a := Assess("Read", map[string]any{"file_path": c.path}, Env{})
		if got := a.Facts["paths"].([]any)[0].(map[string]any)["secret"]; got != c.secret {
			t.Errorf("Read %s (%s): secret %v, want %v", c.path, c.source, got, c.secret)
		}
	}
}

// TestSecretReadsOutsideWorkspace: with a workspace, a read outside it is a
// secret unless the path is known public (or a folder on the way to public
// places, whose reading lists names only), for a file tool and a command
// alike.
func TestSecretReadsOutsideWorkspace(t *testing.T) {
	const ws = "/srv/agent"
	for _, c := range []struct {
		path   string
		secret bool
	}{
		{"/srv/other/notes.txt", true},
		{"/tmp/build.log", true},
		{"~/Documents/report.pdf", true},
		{"../sibling/config.yaml", true},
		{"/opt/app/data.db", true},
		{"/usr/share/dict/words", false},
		{"/usr/lib/os-release", false},
		{"/etc/os-release", false},
		{"/dev/null", false},
		{"/srv/agent/src/main.go", false},
		{"src/main.go", false},
		{"/srv/agent/.env.example", false},
		{"/srv/agent/.env", true},
		{"/etc", false},
		{"/usr", false},
		{"~", false},
		{"/home/dev", false},
		{"/", false},
	} {
		f, _ := ClassifyPath(c.path, ws)
		if f.Secret != c.secret {
			t.Errorf("%s in %s: secret %v, want %v", c.path, ws, f.Secret, c.secret)
		}
		// A file tool and a command reach the same answer in the same
		// workspace.
		env := Env{Workspace: ws}
		read := Assess("Read", map[string]any{"file_path": c.path}, env)
		if got := read.Facts["paths"].([]any)[0].(map[string]any)["secret"]; got != c.secret {
			t.Errorf("Read %s in %s: secret %v, want %v", c.path, ws, got, c.secret)
		}
		bash := Assess("Bash", map[string]any{"command": "cat " + shellQuote(c.path)}, env)
		if got := slices.Contains(bash.Tags, "shell.secrets") || slices.Contains(bash.Tags, "shell.unlisted"); got != c.secret {
			t.Errorf("cat %s in %s: shell.secrets or shell.unlisted %v, want %v (tags %v)", c.path, ws, got, c.secret, bash.Tags)
		}
		if got := slices.Contains(bash.Tags, "shell.unlisted"); got != f.Unlisted {
			t.Errorf("cat %s in %s: shell.unlisted %v, want %v as the path's unlisted (tags %v)", c.path, ws, got, f.Unlisted, bash.Tags)
		}
	}
}

// TestWorkspaceInClosedPlaces: a workspace under a closed root or a home's
// hidden folder (/var/www/app, a CI runner's /var/lib/jenkins/workspace,
// ~/.local/src/p) is the agent's own: only what lies around it is closed,
// and only hidden names below it arm execution.
func TestWorkspaceInClosedPlaces(t *testing.T) {
	for _, c := range []struct {
		ws, path     string
		secret, exec bool
	}{
		{"/var/www/app", "/var/www/app/index.php", false, false},
		{"/var/www/app", "src/main.php", false, false},
		{"/var/www/app", "/var/www/app/.github/workflows/ci.yml", false, true},
		{"/var/www/app", "/var/www/app/.env", true, true},
		{"/var/www/app", "/var/log/nginx/access.log", true, false},
		{"/var/lib/jenkins/workspace/job", "/var/lib/jenkins/workspace/job/Makefile", false, false},
		{"/var/lib/jenkins/workspace/job", "/var/lib/jenkins/secrets/master.key", true, false},
		{"/home/u/.local/src/p", "/home/u/.local/src/p/main.go", false, false},
		{"/home/u/.local/src/p", "main.go", false, false},
		{"/home/u/.local/src/p", "/home/u/.local/src/p/.git/hooks/pre-commit", false, true},
		{"/home/u/.local/src/p", "~/.local/share/newtool/db", true, true},
		{"/home/u/.local/src/p", "~/.newtool/config", true, true},
		{"/srv/agent", "~/.newtool/config", true, true},
	} {
		f, _ := ClassifyPath(c.path, c.ws)
		if f.Secret != c.secret || f.ExecConfig != c.exec {
			t.Errorf("%s in %s: secret %v exec_config %v, want %v %v", c.path, c.ws, f.Secret, f.ExecConfig, c.secret, c.exec)
		}
		// A command's write reaches the same answer in the same workspace.
		w := Assess("Bash", map[string]any{"command": "echo x > " + shellQuote(c.path)}, Env{Workspace: c.ws})
		if got := slices.Contains(w.Tags, "shell.exec_config"); got != c.exec {
			t.Errorf("echo x > %s in %s: shell.exec_config %v, want %v (tags %v)", c.path, c.ws, got, c.exec, w.Tags)
		}
	}
}

// TestPathsThroughLinks: ".." right after a component that is a link on
// common systems leaves for another place than lexical cleaning says, so
// the path is path.unresolved and sensitive; ".." after a real folder is
// resolved as before.
func TestPathsThroughLinks(t *testing.T) {
	for _, c := range []struct {
		path       string
		unresolved bool
		source     string
	}{
		{"/proc/net/../environ", true, "proc(5): /proc/net is self/net, so this is /proc/self/environ"},
		{"/var/run/../tmp/x", true, "FHS 3.0: /var/run links to /run"},
		{"/var/lock/../log/x", true, "FHS 3.0: /var/lock links to /run/lock"},
		{"/proc/self/root/../srv/x", true, "proc(5): /proc/PID/root"},
		{"/proc/1/cwd/../.ssh/id_rsa", true, "proc(5): /proc/PID/cwd"},
		{"/proc/self/fd/3/../../environ", true, "proc(5): /proc/PID/fd/N"},
		{"/dev/fd/../environ", true, "fd(4): /dev/fd links to /proc/self/fd"},
		{"/dev/stdin/../environ", true, "fd(4)"},
		{"/bin/../etc/x", true, "file-hierarchy(7): merged /usr"},
		{"/etc/alternatives/editor/../x", true, "update-alternatives(1)"},
		{"/sys/class/net/eth0/../../x", true, "sysfs(5)"},
		{"/proc/thread-self/../1/environ", true, "proc(5)"},
		{"/tmp/../etc/hosts", true, "macOS: /tmp links to /private/tmp"},
		{"/usr/share/../include/stdio.h", false, "a real folder"},
		{"src/../docs/x.md", false, "relative, inside"},
		{"/home/u/proj/../other/x", false, "a real folder below /home"},
		{"/srv/app/../app/x", false, "a real folder below /srv"},
	} {
		f, tags := ClassifyPath(c.path, "")
		if got := slices.Contains(tags, "path.unresolved"); got != c.unresolved {
			t.Errorf("%s (%s): path.unresolved %v, want %v (tags %v)", c.path, c.source, got, c.unresolved, tags)
		}
		if c.unresolved && !(f.Secret && f.ExecConfig) {
			t.Errorf("%s: unresolved but secret %v exec_config %v", c.path, f.Secret, f.ExecConfig)
		}
		if c.unresolved {
			if _, tags := ClassifyShell("cat " + shellQuote(c.path)); !slices.Contains(tags, "shell.secrets") {
				t.Errorf("cat %s: tags %v", c.path, tags)
			}
			if _, tags := ClassifyShell("echo x > " + shellQuote(c.path)); !slices.Contains(tags, "shell.exec_config") {
				t.Errorf("echo x > %s: tags %v", c.path, tags)
			}
		}
	}
}

// TestUNCPaths: a UNC path in any spelling names another host, which
// opening it connects to (offering the user's credentials): the path is
// path.network with that host, the file tool's check gets a URL to it, and
// a command that opens it is shell.network with the same URL (a name
// without a dot is a local network's, so private, as in URLs). The device
// namespace's other paths (raw disks, shadow copies, pipes) are secrets.
// Source: Microsoft, "File path formats on Windows systems".
func TestUNCPaths(t *testing.T) {
	for _, c := range []struct {
		path, host string
		private    bool
	}{
		{`\\fileserver\share\notes.txt`, "fileserver", true},
		{`\\?\UNC\fileserver\share\notes.txt`, "fileserver", true},
		{`\\.\UNC\fileserver\share\notes.txt`, "fileserver", true},
		{`//fileserver/share/notes.txt`, "fileserver", true},
		{`\\attacker.example@SSL@443\DavWWWRoot\x`, "attacker.example", false},
		{`\\attacker.example@8080\x\y`, "attacker.example", false},
		{`file://fileserver/share/notes.txt`, "fileserver", true},
		{`\\files.example.com\share\x`, "files.example.com", false},
		{`\\10.0.0.5\c$\x`, "10.0.0.5", true},
		{`\\?\unc\127.0.0.1\share\x`, "127.0.0.1", true},
	} {
		f, tags := ClassifyPath(c.path, "")
		if f.Host != c.host || !slices.Contains(tags, "path.network") {
			t.Errorf("%s: host %q tags %v, want %q and path.network", c.path, f.Host, tags, c.host)
		}
		a := Assess("Read", map[string]any{"file_path": c.path}, Env{})
		urls, _ := a.Facts["urls"].([]any)
		if len(urls) != 1 || urls[0].(map[string]any)["host"] != c.host {
			t.Errorf("Read %s: urls %v", c.path, a.Facts["urls"])
		}
		if slices.Contains(a.Tags, "url.private") != c.private || !slices.Contains(a.Tags, "url") {
			t.Errorf("Read %s: tags %v (private %v)", c.path, a.Tags, c.private)
		}
		if strings.HasPrefix(c.path, "file:") {
			continue // a shell opens no URL
		}
		sf, stags := ClassifyShell("cat " + shellQuote(c.path))
		if !slices.Contains(stags, "shell.network") || len(sf.URLs) != 1 || sf.URLs[0].Host != c.host {
			t.Errorf("cat %s: tags %v urls %+v", c.path, stags, sf.URLs)
		}
	}
	for _, p := range []string{`\\.\PhysicalDrive0`, `\\?\GLOBALROOT\Device\HarddiskVolumeShadowCopy1\Windows\System32\config\SAM`,
		`\\.\pipe\docker_engine`} {
		if f, _ := ClassifyPath(p, ""); !f.Secret || f.Host != "" {
			t.Errorf("%s: secret %v host %q", p, f.Secret, f.Host)
		}
	}
	for _, p := range []string{`\\?\C:\src\x.go`, `\\.\C:\src\x.go`, `/srv/app/x`, `///srv/x`} {
		if f, tags := ClassifyPath(p, ""); f.Host != "" || slices.Contains(tags, "path.network") {
			t.Errorf("%s: host %q tags %v", p, f.Host, tags)
		}
	}
}

// TestWritesThatArmExecution: version-control internals, CI of every
// forge, editors' and agents' settings, package managers' hook files,
// language start-up files, and (closed world) any hidden path or package
// folder unless known inert. Each row is judged as a file tool's path and
// as a command's redirection target, and the two agree.
func TestWritesThatArmExecution(t *testing.T) {
	cases := []struct {
		path   string
		exec   bool
		source string
	}{
		{".git/commondir", true, "gitrepository-layout(5)"},
		{".git/worktrees/wt/gitdir", true, "gitrepository-layout(5)"},
		{".git/modules/sub/config", true, "gitsubmodules(7)"},
		{"sub/.git", true, "gitrepository-layout(5): a gitdir: file"},
		{".git/info/exclude", true, "closed world: .git"},
		{".githooks/pre-commit", true, "git-config(1) core.hooksPath"},
		{"githooks/pre-push", true, "git-config(1) core.hooksPath"},
		{".husky/_/husky.sh", true, "typicode.github.io/husky"},
		{".hg/hgrc", true, "hgrc(5) [hooks]"},
		{".gitea/workflows/ci.yml", true, "docs.gitea.com, Actions"},
		{".forgejo/workflows/ci.yaml", true, "forgejo.org, Actions"},
		{".woodpecker.yml", true, "woodpecker-ci.org"},
		{".woodpecker/build.yaml", true, "woodpecker-ci.org"},
		{".drone.star", true, "docs.drone.io, Starlark"},
		{".gitlab/ci/build.yml", true, "docs.gitlab.com, include:local"},
		{"azure-pipelines.yaml", true, "learn.microsoft.com, Azure Pipelines"},
		{"appveyor.yml", true, "appveyor.com"},
		{"cloudbuild.yaml", true, "cloud.google.com/build"},
		{"buildspec.yml", true, "AWS CodeBuild"},
		{"Jenkinsfile.release", true, "jenkins.io, Pipeline"},
		{".circleci/config.yml", true, "circleci.com"},
		{".buildkite/pipeline.yml", true, "buildkite.com"},
		{".vscode/mcp.json", true, "code.visualstudio.com, MCP servers"},
		{".cursor/mcp.json", true, "Cursor, MCP"},
		{".mcp.json", true, "Claude Code, MCP"},
		{".claude/agents/reviewer.md", true, "Claude Code, subagents"},
		{".claude/commands/deploy.md", true, "Claude Code, slash commands (! lines)"},
		{".codex/config.toml", true, "Codex, mcp_servers"},
		{".zed/settings.json", true, "zed.dev, context_servers"},
		{".windsurf/workflows/x.md", true, "Windsurf"},
		{".continue/config.yaml", true, "docs.continue.dev"},
		{"opencode.json", true, "opencode.ai, config"},
		{"~/.codeium/windsurf/mcp_config.json", true, "Windsurf MCP"},
		{".npmrc", true, "docs.npmjs.com, npmrc"},
		{".yarnrc.yml", true, "yarnpkg.com, yarnrc"},
		{".pnpmfile.cjs", true, "pnpm.io, pnpmfile"},
		{"bunfig.toml", true, "bun.sh, bunfig.toml preload"},
		{"pip.conf", true, "pip.pypa.io, Configuration"},
		{"uv.toml", true, "docs.astral.sh/uv"},
		{".cargo/config.toml", true, "doc.rust-lang.org/cargo, config"},
		{".mvn/jvm.config", true, "maven.apache.org, .mvn"},
		{"gradle/wrapper/gradle-wrapper.properties", true, "docs.gradle.org, Gradle Wrapper"},
		{"mise.toml", true, "mise.jdx.dev, hooks and tasks"},
		{"sitecustomize.py", true, "docs.python.org, site"},
		{"lib/usercustomize.py", true, "docs.python.org, site"},
		{"evil.pth", true, "docs.python.org, site"},
		{".venv/lib/python3.12/site-packages/x.pth", true, "docs.python.org, site"},
		{".Rprofile", true, "R Startup"},
		{".envrc", true, "direnv.net"},
		{`GIT~1\hooks\pre-commit`, true, "Windows 8.3 short name of .git (CVE-2019-1353)"},
		{"GITHUB~1/workflows/ci.yml", true, "Windows 8.3 short name of .github"},
		{".g\u200cit/hooks/pre-commit", true, "HFS+ ignores U+200C (CVE-2014-9390)"},
		{".newtool/config", true, "closed world: a hidden folder"},
		{"src/.hidden/run.sh", true, "closed world: a hidden folder"},
		{".env", true, "closed world: a hidden file (dotenv sets NODE_OPTIONS and the like)"},
		{"node_modules/left-pad/index.js", true, "closed world: npm folders"},
		{"vendor/github.com/x/y/y.go", true, "closed world: go help mod vendor"},
		{"__pypackages__/3.12/lib/x.py", true, "closed world: PEP 582"},
		// Inert.
		{".gitignore", false, "gitignore(5)"},
		{"src/.gitignore", false, "gitignore(5)"},
		{".editorconfig", false, "editorconfig.org"},
		{".prettierrc.json", false, "prettier.io, Configuration File"},
		{".nvmrc", false, "nvm"},
		{".github/ISSUE_TEMPLATE/bug.md", false, "docs.github.com, issue templates"},
		{".github/CODEOWNERS", false, "docs.github.com, code owners"},
		{".github/pull_request_template.md", false, "docs.github.com"},
		{".vscode/extensions.json", false, "code.visualstudio.com, recommendations"},
		{".dockerignore", false, "docs.docker.com, .dockerignore"},
		{".env.example", false, "a template nothing loads"},
		{"README.md", false, "project text"},
		{"src/main.go", false, "project code"},
		{"package.json", false, "a build file: runs when a person builds (paths_data.go)"},
		{"Makefile", false, "a build file"},
	}
	for _, c := range cases {
		f, _ := ClassifyPath(c.path, "/srv/agent")
		if f.ExecConfig != c.exec {
			t.Errorf("%s (%s): exec_config %v, want %v", c.path, c.source, f.ExecConfig, c.exec)
		}
		_, tags := ClassifyShell("echo x > " + shellQuote(c.path))
		if got := slices.Contains(tags, "shell.exec_config"); got != c.exec {
			t.Errorf("echo x > %s (%s): shell.exec_config %v, want %v (tags %v)", c.path, c.source, got, c.exec, tags)
		}
	}
}
