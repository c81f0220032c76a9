package sandbox

import (
	"path"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/risk"
)

// Profile is what a contained run may touch beyond its workspace and its
// private home and temp directories. Profiles are policy: rein run gets the
// one in force from rein (the policy's profiles section), never from the
// machine it runs on.
type Profile = rein.Profile

// Limits are a profile's resource limits (rein.Limits).
type Limits = rein.Limits

// Coding is the profile rein applies as "coding" when the policy in force
// names no profiles (docs/containment.md).
var Coding = rein.CodingProfile

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
	code := risk.IsSourceCode(name) // as the file tools judge it
	for _, p := range maskedNames {
		if code && strings.ContainsAny(p, "*?[") {
			continue // credentials.go is code that handles secrets, not a store of them
		}
		if matchName(p, name) {
			return true
		}
	}
	return false
}

// matchName is path.Match(pattern, name). For a pattern whose only
// wildcard is '*' (all of maskedNames), the literal text before the first
// star and after the last must begin and end name: most names of a
// workspace fail there, before the matcher, which makes the walk of a
// large workspace (rein run walks it at start and at end) several times
// faster.
func matchName(pattern, name string) bool {
	if !strings.ContainsAny(pattern, "?[\\") {
		first, last := strings.IndexByte(pattern, '*'), strings.LastIndexByte(pattern, '*')
		if first < 0 {
			return pattern == name
		}
		if len(name) < first+len(pattern)-last-1 || !strings.HasPrefix(name, pattern[:first]) || !strings.HasSuffix(name, pattern[last+1:]) {
			return false
		}
	}
	ok, _ := path.Match(pattern, name)
	return ok
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
func secretShaped(name string) bool { return rein.SecretShapedEnv(name) }
