package sandbox

import (
	"path"
	"strings"
)

// Profile is what a contained run may touch beyond its workspace and its
// private home and temp directories: the system paths it may read (closed
// world: nothing else outside the workspace is even visible), and the
// environment variables that pass through.
type Profile struct {
	Name string
	// Read are system paths (directories or files) visible read-only.
	// Missing ones are skipped.
	Read []string
	// Env are the variables kept from the caller's environment, besides
	// PATH, TERM, LANG and LC_* (never one shaped like a secret).
	Env []string
}

// Coding is the profile for building, testing and searching code: what
// toolchains read (containment.md, "Boundaries"), never /etc wholesale,
// never a home directory.
var Coding = Profile{
	Name: "coding",
	Read: []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/pki",
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/os-release", "/etc/debian_version",
		"/etc/hosts", "/etc/localtime", "/etc/timezone", "/usr/share/zoneinfo", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/alternatives", "/etc/mime.types", "/etc/gitconfig", "/etc/inputrc", "/etc/profile",
		"/opt",
		"/usr/local/go",
	},
	Env: []string{"GOFLAGS", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "NODE_OPTIONS", "CI", "COLORTERM", "TZ", "EDITOR"},
}

// Profiles are the profiles rein ships, by name.
var Profiles = map[string]Profile{Coding.Name: Coding}

// maskedNames are workspace files whose contents a contained run never sees:
// environment files and files shaped like keys and credentials
// (containment.md, "Masked inside the workspace"). Patterns match a file's
// base name (path.Match).
var maskedNames = []string{
	".env", ".env.*", "*.env",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_*_sk", "id_ecdsa_sk", "id_ed25519_sk",
	"credentials", "credentials.*", "*.credentials", "credentials*.json",
	".netrc", "_netrc", ".pgpass", ".htpasswd", ".git-credentials", ".npmrc.secret",
	"*.kdbx", "*.ovpn", "*.tfvars", "terraform.tfstate", "terraform.tfstate.backup",
	"service-account*.json", "*-sa.json", "kubeconfig", "*.kubeconfig",
}

// envTemplates are environment files that are templates, not secrets.
var envTemplates = []string{".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"}

// Masked reports whether the workspace file with base name name is hidden
// from a contained run.
func Masked(name string) bool {
	for _, t := range envTemplates {
		if name == t {
			return false
		}
	}
	for _, p := range maskedNames {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// execConfig are workspace paths (relative, slash-separated) that run
// implicitly when a person or a tool later works on the workspace outside
// containment, so a contained run may read them but not change them
// (containment.md, "Read-only inside the workspace"). A trailing slash names
// a directory.
var execConfig = []string{
	".git/config", ".git/hooks/", ".git/commondir", ".git/info/", ".git/modules/", ".gitmodules", ".envrc",
	".vscode/", ".idea/", ".zed/", ".claude/", ".codex/", ".cursor/", ".windsurf/", ".continue/", ".mcp.json", ".cursorrules",
	".github/workflows/", ".github/actions/", ".gitlab-ci.yml", ".gitlab/", ".gitea/", ".forgejo/", ".circleci/", "Jenkinsfile",
	".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".buildkite/", ".drone.yml", ".woodpecker.yml", ".woodpecker/",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "pip.conf", ".pypirc", ".pre-commit-config.yaml", ".husky/",
	"sitecustomize.py", "usercustomize.py",
}

// execConfigAnywhere are exec-config files by base name, at any depth: a
// tool reads them in whatever directory it runs (direnv, npm, pip, Python's
// site, an MCP client).
var execConfigAnywhere = []string{".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "pip.conf",
	"sitecustomize.py", "usercustomize.py", ".mcp.json", "*.pth"}

// ExecConfig reports whether the workspace path rel (slash-separated) is
// exec-config, by the tables above.
func ExecConfig(rel string) bool {
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	for _, p := range execConfigAnywhere {
		if ok, _ := path.Match(p, path.Base(rel)); ok {
			return true
		}
	}
	for _, p := range execConfig {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			if rel == dir || strings.HasPrefix(rel, p) {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// secretShaped reports whether an environment variable's name says it
// holds a secret; such a variable never passes into a contained run.
func secretShaped(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "SESSION", "COOKIE", "PRIVATE"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	switch n {
	case "SSH_AUTH_SOCK", "DOCKER_HOST", "KUBECONFIG", "REIN_SERVER", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS":
		return true
	}
	return false
}
