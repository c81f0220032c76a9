package risk

// sensitivePathRules say which paths hold secrets (reading reveals a key,
// token, password or another user's data) and which are execution
// configuration (writing them arms code that runs later: start-up files,
// schedulers, service units, hooks, CI, package-manager settings).
//
// Patterns are matched against the cleaned path, compared without regard
// to case (macOS and Windows file systems ignore it). "~" is any user's
// home: ~/x, $HOME/x, /home/u/x, /Users/u/x, /root/x, /var/root/x and
// C:\Users\u\x are all ~/x. "**" is any number of path segments (also
// none), "*" and "?" work within one segment. A pattern that starts with
// "**/" matches a name wherever it is.
//
// Not listed on purpose: Makefile, package.json, pyproject.toml and other
// build files. They do run code, but only when a person or a build runs
// them in the project the agent was given to change; flagging them would
// flag ordinary work. CI configuration is listed, because a push runs it
// with the repository's secrets and no one in between.
var sensitivePathRules = []struct {
	pattern    string
	secret     bool
	execConfig bool
}{
	// OpenSSH, ssh(1) and sshd(8) FILES: keys and known hosts are secrets;
	// authorized_keys, config, rc and environment decide what logs in and
	// what runs when it does.
	{"~/.ssh/**", true, false},
	{"**/.ssh/authorized_keys*", false, true},
	{"**/.ssh/config", false, true},
	{"**/.ssh/rc", false, true},
	{"**/.ssh/environment", false, true},
	{"**/id_rsa*", true, false}, {"**/id_dsa*", true, false}, {"**/id_ecdsa*", true, false},
	{"**/id_ed25519*", true, false}, {"**/id_xmss*", true, false},
	{"/etc/ssh/ssh_host_*key", true, false},
	{"/etc/ssh/sshd_config", false, true}, {"/etc/ssh/sshd_config.d/**", false, true},

	// Cloud and cluster credentials. AWS CLI (docs.aws.amazon.com/cli,
	// "Configuration and credential file settings"; config can name a
	// credential_process), gcloud (cloud.google.com/sdk/docs/configurations),
	// Azure CLI (learn.microsoft.com/cli/azure, "CLI configuration"),
	// kubeconfig (kubernetes.io, "Organizing Cluster Access Using kubeconfig
	// Files"; users[].exec runs a plugin), OCI CLI, DigitalOcean doctl.
	{"~/.aws/**", true, false}, {"~/.aws/config", false, true},
	{"~/.config/gcloud/**", true, false},
	{"~/AppData/Roaming/gcloud/**", true, false},
	{"~/.azure/**", true, false},
	{"~/.kube/**", true, true},
	{"/etc/kubernetes/**", true, true},
	{"~/.oci/**", true, false},
	{"~/.config/doctl/**", true, false},
	// Kubernetes service-account token and Docker/Kubernetes secrets mounts
	// (kubernetes.io, "Configure Service Accounts for Pods"; docs.docker.com,
	// "Manage sensitive data with Docker secrets").
	{"/var/run/secrets/**", true, false}, {"/run/secrets/**", true, false},

	// Registry, package and tool logins. Docker (docs.docker.com/reference/cli/docker/login),
	// netrc (curl, ftp, git), git-credential-store (git-scm.com/docs/git-credential-store),
	// npm (docs.npmjs.com/cli/configuring-npm/npmrc; it also sets
	// script-shell and node-options), Yarn, PyPI (packaging.python.org,
	// .pypirc), pip (pip.pypa.io, "Configuration": index-url decides what
	// installs), Cargo, RubyGems, Maven, Gradle, GitHub CLI, Terraform,
	// Vault, rclone, s3cmd, boto, PostgreSQL (.pgpass, .pg_service.conf),
	// MySQL (.my.cnf).
	{"~/.docker/config.json", true, false},
	{"**/.netrc", true, false}, {"**/_netrc", true, false},
	{"**/.git-credentials", true, false}, {"~/.config/git/credentials", true, false},
	{"**/.npmrc", true, true}, {"**/.yarnrc.yml", true, true}, {"**/.yarnrc", true, true},
	{"**/.pypirc", true, false},
	{"**/pip.conf", false, true}, {"**/pip.ini", false, true},
	{"~/.cargo/credentials*", true, false}, {"~/.gem/credentials", true, false},
	{"~/.m2/settings*.xml", true, false}, {"~/.gradle/gradle.properties", true, false},
	{"~/.config/gh/hosts.yml", true, false}, {"~/.terraform.d/credentials*", true, false},
	{"~/.terraformrc", true, false}, {"~/.vault-token", true, false},
	{"~/.config/rclone/**", true, false}, {"~/.s3cfg", true, false}, {"~/.boto", true, false},
	{"**/.pgpass", true, false}, {"**/.pg_service.conf", true, false}, {"**/.my.cnf", true, false},
	{"**/.mylogin.cnf", true, false},

	// Secrets by file name anywhere: dotenv files, private keys and
	// certificate stores, keystores, password databases, htpasswd.
	{"**/.env", true, false}, {"**/.env.*", true, false}, {"**/.envrc", true, true},
	{"**/*.pem", true, false}, {"**/*.key", true, false}, {"**/*.p12", true, false},
	{"**/*.pfx", true, false}, {"**/*.jks", true, false}, {"**/*.keystore", true, false},
	{"**/*.kdbx", true, false}, {"**/.htpasswd", true, false}, {"**/credentials", true, false},
	{"**/*.ppk", true, false},
	// Secrets by what a file or folder is named for: secrets.yaml,
	// client_secret.json, db-credentials.json, passwords.csv, a secrets/
	// folder (Kubernetes Secret manifests, SOPS files, Docker Compose
	// secrets). Data and configuration files only: secret_manager.py is code.
	{"**/secrets/*", true, false}, {"**/.secrets/*", true, false},
	{"**/*secret*.yaml", true, false}, {"**/*secret*.yml", true, false}, {"**/*secret*.json", true, false},
	{"**/*secret*.txt", true, false}, {"**/*secret*.env", true, false}, {"**/*secret*.ini", true, false},
	{"**/*secret*.conf", true, false}, {"**/*secret*.cfg", true, false}, {"**/*secret*.toml", true, false},
	{"**/*secret*.properties", true, false}, {"**/*secret*.xml", true, false},
	{"**/*credential*.json", true, false}, {"**/*credential*.yaml", true, false}, {"**/*credential*.yml", true, false},
	{"**/*credential*.xml", true, false}, {"**/*credential*.txt", true, false}, {"**/*credential*.csv", true, false},
	{"**/*password*.txt", true, false}, {"**/*password*.csv", true, false}, {"**/*password*.json", true, false},
	{"**/*password*.yaml", true, false}, {"**/*password*.yml", true, false},
	// Terraform state and variables hold every secret of the resources they
	// describe (developer.hashicorp.com/terraform/language/state/sensitive-data);
	// Google service-account keys and OAuth tokens; OpenVPN profiles carry
	// their private keys; WordPress keeps its database password in wp-config.php.
	{"**/*.tfstate", true, false}, {"**/*.tfstate.backup", true, false}, {"**/*.tfvars", true, false},
	{"**/service-account*.json", true, false}, {"**/token.json", true, false},
	{"**/*.ovpn", true, false}, {"**/wp-config.php", true, false}, {"**/.dockercfg", true, false},

	// Keyrings and password managers: GnuPG, pass, GNOME Keyring, KWallet,
	// macOS Keychain, 1Password, Bitwarden, KeePassXC.
	{"~/.gnupg/**", true, false}, {"~/.password-store/**", true, false},
	{"~/.local/share/keyrings/**", true, false}, {"~/.local/share/kwalletd/**", true, false},
	{"**/Library/Keychains/**", true, false},
	{"~/.config/1Password/**", true, false}, {"~/Library/Group Containers/*.com.1password/**", true, false},
	{"~/.config/Bitwarden/**", true, false}, {"~/AppData/Roaming/Bitwarden/**", true, false},

	// Browser profiles: cookies, saved passwords, session tokens (Firefox,
	// Chrome, Chromium, Edge, Brave, on Linux, macOS and Windows).
	{"~/.mozilla/**", true, false}, {"~/snap/firefox/**", true, false},
	{"~/.config/google-chrome/**", true, false}, {"~/.config/chromium/**", true, false},
	{"~/.config/microsoft-edge/**", true, false}, {"~/.config/BraveSoftware/**", true, false},
	{"~/Library/Application Support/Firefox/**", true, false},
	{"~/Library/Application Support/Google/Chrome/**", true, false},
	{"~/Library/Application Support/Microsoft Edge/**", true, false},
	{"~/Library/Application Support/BraveSoftware/**", true, false},
	{"~/Library/Cookies/**", true, false},
	{"~/AppData/Local/Google/Chrome/User Data/**", true, false},
	{"~/AppData/Local/Microsoft/Edge/User Data/**", true, false},
	{"~/AppData/Local/BraveSoftware/**", true, false},
	{"~/AppData/Roaming/Mozilla/Firefox/**", true, false},

	// Shell and tool histories: what was typed, passwords and tokens
	// included (bash HISTFILE, zsh, fish, Python, psql, mysql, sqlite3,
	// Node, redis-cli, irb, less).
	{"**/.bash_history", true, false}, {"**/.zsh_history", true, false}, {"**/.zhistory", true, false},
	{"**/.sh_history", true, false}, {"**/.history", true, false}, {"~/.local/share/fish/fish_history", true, false},
	{"**/.python_history", true, false}, {"**/.psql_history", true, false}, {"**/.mysql_history", true, false},
	{"**/.sqlite_history", true, false}, {"**/.node_repl_history", true, false}, {"**/.rediscli_history", true, false},
	{"**/.irb_history", true, false}, {"**/.lesshst", true, false},
	{"~/AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/*", true, false},

	// System secrets: shadow(5) and gshadow(5) with their backups (shadow-,
	// gshadow-), opasswd (pam_pwhistory), TLS private keys, Kerberos
	// keytab, sudoers (sudoers(5)), the whole of root's home.
	{"/etc/shadow*", true, false}, {"/etc/gshadow*", true, false},
	{"/etc/security/opasswd", true, false}, {"/etc/ssl/private/**", true, false},
	{"/etc/krb5.keytab", true, false},
	{"/etc/sudoers", true, true}, {"/etc/sudoers.d/**", true, true},
	{"/root/**", true, true}, {"/var/root/**", true, true},

	// Process memory and environment (proc(5)): environ, cmdline, mem, maps,
	// auxv, open files (fd), and kernel memory.
	{"/proc/*/environ", true, false}, {"/proc/*/cmdline", true, false}, {"/proc/*/mem", true, false},
	{"/proc/*/maps", true, false}, {"/proc/*/smaps", true, false}, {"/proc/*/auxv", true, false},
	{"/proc/*/fd/**", true, false}, {"/proc/*/map_files/**", true, false},
	{"/proc/*/task/*/environ", true, false}, {"/proc/*/task/*/mem", true, false},
	{"/proc/*/task/*/cmdline", true, false}, {"/proc/*/task/*/fd/**", true, false},
	{"/proc/kcore", true, false}, {"/proc/kallsyms", true, false}, {"/sys/firmware/**", true, false},

	// Devices (Linux devices.txt): raw disks and memory read out every file
	// and key. Writing them destroys rather than arms, so they are not
	// ExecConfig (shell analysis calls such writes destructive).
	{"/dev/mem", true, false}, {"/dev/kmem", true, false}, {"/dev/port", true, false},
	{"/dev/sd*", true, false}, {"/dev/hd*", true, false}, {"/dev/vd*", true, false}, {"/dev/xvd*", true, false},
	{"/dev/nvme*", true, false}, {"/dev/mmcblk*", true, false}, {"/dev/dm-*", true, false}, {"/dev/md*", true, false},
	{"/dev/loop*", true, false}, {"/dev/sg*", true, false}, {"/dev/disk/**", true, false},
	{"/dev/mapper/**", true, false}, {"/dev/block/**", true, false}, {"/dev/root", true, false},

	// Shell start-up files (bash(1) INVOCATION, zsh(1) STARTUP/SHUTDOWN
	// FILES, fish, csh, ksh, PowerShell profiles, X session scripts). The
	// ones that set a login's environment are secrets too: they are where
	// people export their tokens (export GITHUB_TOKEN=..., an API key).
	{"**/.bashrc", true, true}, {"**/.bash_profile", true, true}, {"**/.bash_login", true, true},
	{"**/.bash_logout", false, true}, {"**/.profile", true, true}, {"**/.zshrc", true, true},
	{"**/.zshenv", true, true}, {"**/.zprofile", true, true}, {"**/.zlogin", true, true},
	{"**/.zlogout", false, true}, {"**/.kshrc", true, true}, {"**/.cshrc", true, true},
	{"**/.tcshrc", true, true}, {"**/.login", true, true}, {"~/.config/fish/**", true, true},
	{"~/.xprofile", false, true}, {"~/.xinitrc", false, true}, {"~/.xsession", false, true},
	{"~/.config/powershell/**", false, true}, {"~/Documents/PowerShell/**", false, true},
	{"~/Documents/WindowsPowerShell/**", false, true},
	{"/etc/profile", false, true}, {"/etc/profile.d/**", false, true}, {"/etc/bash.bashrc", false, true},
	{"/etc/bashrc", false, true}, {"/etc/zsh/**", false, true}, {"/etc/zshrc", false, true},
	{"/etc/zshenv", false, true}, {"/etc/environment", false, true},
	// Editors that run their start-up files (vim, Neovim, Emacs).
	{"~/.vimrc", false, true}, {"~/.vim/**", false, true}, {"~/.config/nvim/**", false, true},
	{"~/.emacs", false, true}, {"~/.emacs.d/**", false, true},

	// Dynamic linker (ld.so(8)): preloaded libraries run in every program.
	{"/etc/ld.so.preload", false, true}, {"/etc/ld.so.conf", false, true}, {"/etc/ld.so.conf.d/**", false, true},
	// Python site-packages .pth files run at interpreter start (site module).
	{"**/site-packages/*.pth", false, true}, {"**/dist-packages/*.pth", false, true},

	// Schedulers and services: cron (crontab(5)), anacron, systemd units
	// (systemd.unit(5), system and user), SysV init, rc.local, XDG autostart
	// (XDG Autostart Specification), launchd (launchd.plist(5)), PAM,
	// update-motd, Windows Startup folders and system directory.
	{"/etc/crontab", false, true}, {"/etc/cron*/**", false, true}, {"/etc/anacrontab", false, true},
	{"/var/spool/cron/**", false, true}, {"/var/spool/anacron/**", false, true},
	{"/etc/systemd/**", false, true}, {"/lib/systemd/**", false, true}, {"/usr/lib/systemd/**", false, true},
	{"~/.config/systemd/**", false, true}, {"/etc/init.d/**", false, true}, {"/etc/rc.local", false, true},
	{"/etc/rc*.d/**", false, true}, {"/etc/xdg/autostart/**", false, true}, {"~/.config/autostart/**", false, true},
	{"/Library/LaunchAgents/**", false, true}, {"/Library/LaunchDaemons/**", false, true},
	{"~/Library/LaunchAgents/**", false, true}, {"/etc/pam.d/**", false, true}, {"/etc/update-motd.d/**", false, true},
	{"~/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/**", false, true},
	{"?:/ProgramData/Microsoft/Windows/Start Menu/Programs/StartUp/**", false, true},
	{"?:/Windows/System32/**", false, true}, {"?:/Windows/SysWOW64/**", false, true},

	// Git: configuration (git-config(1): core.sshCommand, core.pager,
	// aliases with "!" run commands; remote URLs and http.extraHeader can
	// hold tokens), hooks (githooks(5)).
	{"~/.gitconfig", false, true}, {"~/.config/git/config", false, true}, {"/etc/gitconfig", false, true},
	{"**/.git/config", true, true}, {"**/.git/hooks/**", false, true}, {"**/.git/info/attributes", false, true},

	// CI configuration, run on push with the repository's secrets: GitHub
	// Actions, GitLab CI, CircleCI, Jenkins, Travis, Azure Pipelines,
	// Bitbucket Pipelines, Buildkite, Drone.
	{"**/.github/workflows/**", false, true}, {"**/.github/actions/**", false, true},
	{"**/.gitlab-ci.yml", false, true}, {"**/.circleci/**", false, true}, {"**/Jenkinsfile", false, true},
	{"**/.travis.yml", false, true}, {"**/azure-pipelines.yml", false, true},
	{"**/bitbucket-pipelines.yml", false, true}, {"**/.buildkite/**", false, true}, {"**/.drone.yml", false, true},

	// Git hook managers, whose files git runs as hooks: Husky (typicode
	// docs: core.hooksPath is .husky), pre-commit (pre-commit.com,
	// .pre-commit-config.yaml), Lefthook (lefthook.yml and its spellings).
	{"**/.husky/**", false, true}, {"**/.pre-commit-config.yaml", false, true},
	{"**/lefthook.yml", false, true}, {"**/.lefthook.yml", false, true},
	{"**/lefthook-local.yml", false, true}, {"**/.lefthook-local.yml", false, true},

	// Agent, editor and container settings that name commands to run:
	// Claude Code (docs.anthropic.com, "Claude Code settings" and "Hooks":
	// .claude/settings.json and settings.local.json hold hooks, ~/.claude.json
	// and .mcp.json start MCP servers), Cursor (.cursor/mcp.json), Gemini CLI
	// (.gemini/settings.json: mcpServers), VS Code (code.visualstudio.com,
	// "Tasks": a task can run on folder open; "Debugging": launch.json runs
	// programs and preLaunchTask; settings.json names executables), Dev
	// Containers (containers.dev, devcontainer.json: initializeCommand runs
	// on the host, postCreateCommand in the container).
	{"**/.claude/settings*.json", false, true}, {"~/.claude.json", true, true}, {"**/.mcp.json", false, true},
	{"**/.cursor/mcp.json", false, true}, {"**/.gemini/settings.json", false, true},
	{"**/.vscode/tasks.json", false, true}, {"**/.vscode/launch.json", false, true},
	{"**/.vscode/settings.json", false, true}, {"**/*.code-workspace", false, true},
	{"**/.devcontainer/**", false, true}, {"**/.devcontainer.json", false, true},
}
