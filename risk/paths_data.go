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

	// Formerly the shell's own lists, now one table for every tool: client
	// histories and token files (vim's viminfo, Vault, boto, s3cmd, MySQL,
	// pass, keyrings, Kerberos keytabs, shadow backups, pam_pwhistory),
	// command-line clients' tokens (gh, Composer (getcomposer.org "auth.json"),
	// Cargo, Terraform, rclone, Rails' config/master.key, hub, RubyGems, Maven
	// settings-security), container and cluster secrets (kubelet's state).
	{"**/.viminfo", true, false}, {"**/.vault-token", true, false}, {"**/.boto", true, false},
	{"**/.s3cfg", true, false}, {"**/.password-store/**", true, false}, {"**/keyrings/*", true, false}, {"**/keyrings/*/**", true, false},
	{"**/*.keytab", true, false}, {"**/*_history", true, false},
	{"**/shadow-", true, false}, {"**/gshadow-", true, false}, {"**/opasswd", true, false},
	{"**/ssh_host_*_key", true, false},
	{"**/.composer/auth.json", true, false}, {"**/.config/composer/auth.json", true, false}, {"**/auth.json", true, false},
	{"**/config/master.key", true, false}, {"**/.config/hub", true, false}, {"**/.m2/settings-security.xml", true, false},
	{"/var/lib/kubelet/**", true, false},
	// Files the shell already counted as arming later execution: git's
	// attributes and submodules (gitattributes(5) selects filter and diff
	// drivers; gitmodules(5)), curl's and wget's start-up files (curlrc,
	// wgetrc: output files, proxies), readline's inputrc (macros),
	// PYTHONSTARTUP's usual name, less's lesskey, vi's .exrc.
	{"**/.gitattributes", false, true}, {"**/.gitmodules", false, true}, {"**/.curlrc", false, true},
	{"**/.wgetrc", false, true}, {"**/.inputrc", false, true}, {"**/.pythonrc", false, true},
	{"**/.lesskey", false, true}, {"**/.exrc", false, true}, {"**/.config/git/**", false, true},
	{"**/.config/autostart/**", false, true}, {"**/.config/systemd/**", false, true},

	// Secrets by shape inside any folder (a template such as .env.example,
	// .env.sample, .env.template or .env.dist is not one: isTemplate):
	// dotenv files under any name (prod.env, .env.local; dotenv and Docker
	// Compose "env_file"), kubeconfigs (kubernetes.io, "Organizing Cluster
	// Access Using kubeconfig Files"), Terraform variables in JSON, Ceph and
	// other keyrings, Oracle wallets (cwallet.sso), credentials in
	// configuration formats.
	{"**/*.env", true, false}, {"**/kubeconfig", true, true}, {"**/kubeconfig.*", true, true},
	{"**/*.kubeconfig", true, true}, {"**/*.tfvars.json", true, false}, {"**/*.keyring", true, false},
	{"**/cwallet.sso", true, false}, {"**/*credential*.ini", true, false}, {"**/*credential*.toml", true, false},
	{"**/*credential*.conf", true, false}, {"**/*credential*.cfg", true, false}, {"**/*credential*.env", true, false},
	{"**/*credential*.properties", true, false}, {"**/*credential*.db", true, false},
	{"**/credentials.*", true, false},

	// Container registries: Docker's whole folder (contexts and machine
	// keys, docs.docker.com "docker context"), containers-auth.json(5) for
	// Podman, Buildah and Skopeo (per user, per run-time directory, system),
	// Helm's registry logins and repositories (helm.sh "helm registry login").
	{"~/.docker/**", true, false}, {"~/.config/containers/auth.json", true, false},
	{"/run/user/*/containers/auth.json", true, false}, {"/etc/containers/auth.json", true, false},
	{"~/.config/helm/**", true, false}, {"~/Library/Preferences/helm/**", true, false},
	// Cluster configurations and join tokens: k3s and RKE2 (docs.k3s.io
	// "Cluster Access", "Server configuration": server/token, node-token),
	// MicroK8s credentials, minikube client keys, Talos, Docker Swarm's keys,
	// kubeadm's /etc/kubernetes (above), Nomad and Consul agents' data.
	{"/etc/rancher/**", true, true}, {"/var/lib/rancher/**", true, false},
	{"/var/snap/microk8s/*/credentials/**", true, false}, {"~/.minikube/**", true, false},
	{"~/.talos/**", true, false}, {"/var/lib/docker/swarm/**", true, false}, {"/var/lib/docker/**", true, false},
	{"/etc/nomad.d/**", true, true}, {"/etc/consul.d/**", true, true}, {"/opt/nomad/**", true, false},
	{"/opt/consul/**", true, false},
	// VPN and IPsec keys: WireGuard (wg-quick(8): /etc/wireguard/*.conf
	// hold private keys), strongSwan (ipsec.secrets(5), swanctl.conf(5)),
	// OpenVPN, NetworkManager (nm-settings-keyfile(5): system-connections
	// hold PSKs and VPN secrets), wpa_supplicant, Tailscale and ZeroTier
	// node identities.
	{"/etc/wireguard/**", true, true}, {"/etc/ipsec.secrets", true, false},
	{"/etc/ipsec.d/**", true, false}, {"/etc/swanctl/**", true, false}, {"/etc/strongswan.d/**", true, false},
	{"/etc/openvpn/**", true, true}, {"/etc/NetworkManager/system-connections/**", true, false},
	{"/etc/wpa_supplicant/**", true, false}, {"/var/lib/tailscale/**", true, false},
	{"/var/lib/zerotier-one/**", true, false}, {"**/identity.secret", true, false},
	// Mail relays: Postfix SASL passwords (postfix SASL_README), msmtp
	// (msmtp(1)), sSMTP, Exim's passwd.client, sendmail's authinfo, and mail
	// clients' start-up files that hold passwords (mutt, mbsync, fetchmail,
	// OfflineIMAP).
	{"/etc/postfix/sasl_passwd*", true, false}, {"/etc/postfix/sasl/**", true, false}, {"**/.msmtprc", true, false},
	{"/etc/msmtprc", true, false}, {"/etc/ssmtp/**", true, false}, {"/etc/exim4/passwd.client", true, false},
	{"/etc/mail/authinfo*", true, false}, {"**/.muttrc", true, true}, {"**/.mbsyncrc", true, true},
	{"**/.fetchmailrc", true, true}, {"**/.offlineimaprc", true, true}, {"**/.netrc.gpg", true, false},
	// Storage keyrings and keys: Ceph (docs.ceph.com "User Management":
	// /etc/ceph/*.keyring), Samba's private store, s3fs's passwd files,
	// MinIO's client, LUKS key files (crypttab(5)).
	{"/etc/ceph/**", true, false}, {"/var/lib/samba/private/**", true, false}, {"/etc/samba/smbpasswd", true, false},
	{"**/.passwd-s3fs", true, false}, {"/etc/passwd-s3fs", true, false}, {"~/.mc/**", true, false},
	{"/etc/cryptsetup-keys.d/**", true, false}, {"/etc/crypttab", true, false},
	// Secret managers' keys: SOPS age keys (github.com/getsops/sops, "Encrypting
	// using age"), age's key files, Ansible Vault password files, git-crypt
	// keys, 1Password CLI, Bitwarden CLI, Doppler, Infisical, gopass, chezmoi.
	{"~/.config/sops/**", true, false}, {"~/Library/Application Support/sops/**", true, false},
	{"**/age/keys.txt", true, false}, {"**/.vault_pass*", true, false}, {"**/vault_pass*", true, false},
	{"**/.vault-password*", true, false}, {"**/.git/git-crypt/**", true, true}, {"~/.config/op/**", true, false},
	{"~/.op/**", true, false}, {"~/.config/Bitwarden CLI/**", true, false}, {"~/.doppler/**", true, false},
	{"~/.infisical/**", true, false}, {"~/.local/share/gopass/**", true, false}, {"~/.config/gopass/**", true, false},
	{"~/.config/chezmoi/**", true, true},
	// Wallets: Bitcoin Core (wallet.dat, wallets/), Ethereum keystores,
	// Electrum, Solana CLI (id.json), Monero, Exodus, on Linux, macOS, Windows.
	{"**/wallet.dat", true, false}, {"~/.bitcoin/**", true, false}, {"~/.ethereum/keystore/**", true, false},
	{"**/keystore/utc--*", true, false}, {"~/.electrum/**", true, false}, {"~/.config/solana/**", true, false},
	{"~/.bitmonero/**", true, false}, {"~/.config/Exodus/**", true, false},
	{"~/Library/Application Support/Bitcoin/**", true, false}, {"~/Library/Application Support/Exodus/**", true, false},
	{"~/AppData/Roaming/Bitcoin/**", true, false}, {"~/AppData/Roaming/Electrum/**", true, false},
	{"~/AppData/Roaming/Exodus/**", true, false},
	// AI command-line clients' logins: Claude Code (.credentials.json),
	// OpenAI Codex (auth.json), Gemini CLI (oauth_creds.json, .env), GitHub
	// Copilot (hosts.json, apps.json), Hugging Face (token), llm (keys.json),
	// Aider (.aider.conf.yml and .env hold API keys).
	{"~/.claude/.credentials.json", true, false}, {"~/.codex/auth.json", true, false},
	{"~/.gemini/oauth_creds.json", true, false}, {"~/.gemini/.env", true, false},
	{"~/.config/github-copilot/**", true, false}, {"~/.cache/huggingface/token", true, false},
	{"~/.huggingface/token", true, false}, {"~/.config/io.datasette.llm/keys.json", true, false},
	{"~/Library/Application Support/io.datasette.llm/keys.json", true, false},
	{"**/.aider.conf.yml", true, true},
	// Data-warehouse and database profiles: dbt (profiles.yml, in ~/.dbt or
	// the project: docs.getdbt.com "About profiles.yml"), Snowflake
	// (connections.toml, config.toml, SnowSQL's config), Databricks
	// (.databrickscfg), ODBC DSNs with passwords (odbc.ini), ClickHouse,
	// cqlsh, MongoDB's shell start-up files, Oracle's wallets (above).
	{"**/profiles.yml", true, false}, {"~/.snowflake/**", true, false}, {"~/.snowsql/**", true, false},
	{"**/.databrickscfg", true, false}, {"**/.odbc.ini", true, false}, {"/etc/odbc.ini", true, false},
	{"~/.clickhouse-client/**", true, false}, {"~/.cassandra/**", true, false}, {"**/.mongoshrc.js", true, true},
	{"**/.mongorc.js", true, true},
	// Windows credential stores and hives: the SAM, SECURITY, SYSTEM and
	// SOFTWARE hives and their backups (Microsoft "Registry Hives"), Active
	// Directory's ntds.dit, users' NTUSER.DAT and UsrClass.dat, Credential
	// Manager and Vault folders, DPAPI master keys (Protect), Wi-Fi profiles
	// with keys, unattended-setup answer files that hold passwords
	// (Microsoft "Unattended Windows Setup Reference").
	{"?:/Windows/System32/config/**", true, true}, {"?:/Windows/repair/**", true, false},
	{"?:/Windows/NTDS/**", true, false}, {"~/NTUSER.DAT*", true, true}, {"~/ntuser.ini", true, false},
	{"~/AppData/Local/Microsoft/Windows/UsrClass.dat*", true, true},
	{"~/AppData/Roaming/Microsoft/Credentials/**", true, false}, {"~/AppData/Local/Microsoft/Credentials/**", true, false},
	{"~/AppData/Roaming/Microsoft/Protect/**", true, false}, {"~/AppData/Local/Microsoft/Vault/**", true, false},
	{"~/AppData/Roaming/Microsoft/Vault/**", true, false}, {"?:/ProgramData/Microsoft/Vault/**", true, false},
	{"?:/ProgramData/Microsoft/Wlansvc/**", true, false}, {"?:/Windows/System32/Microsoft/Protect/**", true, false},
	{"?:/Windows/Panther/**", true, false}, {"**/unattend.xml", true, false}, {"**/autounattend.xml", true, false},
	{"**/sysprep.inf", true, false}, {"**/*.hiv", true, false},
	// Browser profiles inside application sandboxes and other browsers:
	// Flatpak keeps each application's home in ~/.var/app/ID
	// (docs.flatpak.org), snapd in ~/snap/NAME (snapcraft.io "Data
	// locations"), macOS sandboxed applications in ~/Library/Containers
	// (Safari's data included) and ~/Library/Safari; Vivaldi, Opera, Arc.
	{"~/.var/app/**", true, true}, {"~/snap/*/**", true, false}, {"~/Library/Containers/**", true, false},
	{"~/Library/Safari/**", true, false}, {"~/.config/vivaldi/**", true, false}, {"~/.config/opera/**", true, false},
	{"~/Library/Application Support/Arc/**", true, false}, {"~/Library/Application Support/Vivaldi/**", true, false},
	{"~/Library/Application Support/com.operasoftware.Opera/**", true, false},
	{"~/Library/Application Support/Chromium/**", true, false}, {"~/AppData/Local/Vivaldi/**", true, false},
	{"~/AppData/Roaming/Opera Software/**", true, false},
	// macOS's BSD password database (master.passwd(5)).
	{"/etc/master.passwd", true, false}, {"/private/etc/master.passwd", true, false},

	// Writes that arm later execution, closed-world (execClosed in
	// pathworld.go adds every hidden path and package folder that is not
	// known inert, .github/, .gitlab/ and .vscode/ included); the rows here
	// name what is not hidden, or hidden folders that are never inert.
	// Version control internals: everything under .git (githooks(5),
	// git-config(1), gitrepository-layout(5): commondir, worktrees'
	// gitdir files, modules/*/config of submodules), a .git file that points
	// elsewhere (gitdir:), alternative hooks folders named by core.hooksPath
	// (.githooks, githooks, git-hooks by convention), Mercurial's hgrc
	// (hgrc(5): [hooks]), Subversion's and Jujutsu's folders.
	{"**/.git/**", false, true}, {"**/.git", false, true}, {"**/.githooks/**", false, true},
	{"**/githooks/*", false, true}, {"**/githooks/*/**", false, true}, {"**/git-hooks/*", false, true},
	{"**/git-hooks/*/**", false, true}, {"**/.hg/**", false, true},
	{"**/.hgrc", false, true}, {"**/.svn/**", false, true}, {"**/.jj/**", false, true},
	// CI of every forge: Gitea and Forgejo Actions (docs.gitea.com,
	// forgejo.org: .gitea/workflows, .forgejo/workflows), Woodpecker
	// (.woodpecker.yml, .woodpecker/), Drone's Starlark and Jsonnet, GitLab's
	// included files under .gitlab/ and .gitlab-ci/, Azure's .yaml spelling
	// and folder, AppVeyor, Google Cloud Build, AWS CodeBuild, Bitrise,
	// Codemagic, Cirrus, Semaphore, Tekton, Jenkins' named pipelines.
	{"**/.gitea/**", false, true}, {"**/.forgejo/**", false, true}, {"**/.woodpecker.yml", false, true},
	{"**/.woodpecker.yaml", false, true}, {"**/.woodpecker/**", false, true}, {"**/.drone.star", false, true},
	{"**/.drone.jsonnet", false, true}, {"**/.drone.yaml", false, true},
	{"**/.gitlab-ci/**", false, true}, {"**/.gitlab-ci.yaml", false, true}, {"**/azure-pipelines.yaml", false, true},
	{"**/.azure-pipelines/**", false, true}, {"**/.azuredevops/**", false, true}, {"**/appveyor.yml", false, true},
	{"**/.appveyor.yml", false, true}, {"**/cloudbuild.yaml", false, true}, {"**/cloudbuild.yml", false, true},
	{"**/cloudbuild.json", false, true}, {"**/buildspec.yml", false, true}, {"**/buildspec.yaml", false, true},
	{"**/bitrise.yml", false, true}, {"**/codemagic.yaml", false, true}, {"**/.cirrus.yml", false, true},
	{"**/.semaphore/**", false, true}, {"**/.tekton/**", false, true}, {"**/Jenkinsfile*", false, true},
	{"**/*.jenkinsfile", false, true}, {"**/.travis.yaml", false, true}, {"**/.circleci", false, true},
	// MCP and agent settings of every editor: VS Code (.vscode/mcp.json),
	// Cursor, Claude Code (.claude/ whole: hooks, commands with "!" lines,
	// agents), Codex (.codex/config.toml: mcp_servers), Zed (.zed/settings.json:
	// context_servers), Windsurf (.windsurf/, ~/.codeium/windsurf/mcp_config.json),
	// Continue (.continue/), Roo and Cline, Kiro, Amazon Q, Junie, opencode
	// (opencode.json: mcp, commands), Claude Desktop's configuration.
	{"**/.vscode/mcp.json", false, true}, {"**/.cursor/**", false, true}, {"**/.claude/**", false, true},
	{"**/.codex/**", false, true}, {"**/.zed/**", false, true}, {"**/.windsurf/**", false, true},
	{"**/.codeium/**", false, true}, {"**/.continue/**", false, true}, {"**/.roo/**", false, true},
	{"**/.kiro/**", false, true}, {"**/.amazonq/**", false, true}, {"**/.junie/**", false, true},
	{"**/.gemini/**", false, true}, {"**/opencode.json", false, true}, {"**/opencode.jsonc", false, true},
	{"**/claude_desktop_config.json", false, true}, {"**/cline_mcp_settings.json", false, true},
	// Package managers' hook and settings files: pnpm's .pnpmfile.cjs
	// (pnpm.io "pnpmfile": hooks run on install), Bun's bunfig.toml
	// (bun.sh "bunfig.toml": preload), uv.toml (index URLs), Conda's
	// .condarc, Bundler's .bundle/config, Cargo's .cargo/config.toml (runner,
	// rustc-wrapper), Maven's .mvn/ (extensions, jvm.config), the Gradle
	// wrapper's properties (distributionUrl: the build tool it downloads and
	// runs), mise's mise.toml (tasks and hooks).
	{"**/.pnpmfile.cjs", false, true}, {"**/.pnpmfile.mjs", false, true}, {"**/bunfig.toml", false, true},
	{"**/uv.toml", false, true}, {"**/.condarc", false, true}, {"**/.bundle/config", false, true},
	{"**/.cargo/config", false, true}, {"**/.cargo/config.toml", false, true}, {"**/.mvn/**", false, true},
	{"**/gradle/wrapper/gradle-wrapper.properties", false, true}, {"**/mise.toml", false, true},
	{"**/mise.*.toml", false, true}, {"**/.tool-versions", false, true},
	// Language start-up files: Python's sitecustomize and usercustomize
	// modules and .pth files (docs.python.org "site"), R's Rprofile.site,
	// Ruby's .irbrc and .pryrc, Julia's startup.jl, IPython's startup folder.
	{"**/sitecustomize.py", false, true}, {"**/usercustomize.py", false, true}, {"**/*.pth", false, true},
	{"**/Rprofile.site", false, true}, {"**/.Rprofile", false, true}, {"**/.irbrc", false, true},
	{"**/.pryrc", false, true}, {"**/config/startup.jl", false, true}, {"**/.ipython/**", false, true},
}
