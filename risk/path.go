package risk

import (
	"path"
	"strings"
)

// PathFact is what rein reads from one file path (risk.md, Paths).
type PathFact struct {
	Path      string `json:"path"`
	Clean     string `json:"clean"`
	Sensitive bool   `json:"sensitive"` // Secret or ExecConfig
	// Secret: reading the path can reveal a key, credential or secret.
	Secret bool `json:"secret"`
	// ExecConfig: writing the path arms later execution (shell start-up
	// files, scheduled jobs, a tool's or repository's configuration, CI).
	ExecConfig       bool `json:"exec_config"`
	OutsideWorkspace bool `json:"outside_workspace"`
}

// sensitiveNames are file or directory names that hold keys, credentials or
// shell start-up code, wherever they are.
var sensitiveNames = map[string]bool{
	".ssh": true, ".aws": true, ".gnupg": true, ".kube": true, ".docker": true, ".azure": true,
	".env": true, ".netrc": true, ".npmrc": true, ".pypirc": true, ".git-credentials": true, ".pgpass": true,
	".bashrc": true, ".bash_profile": true, ".profile": true, ".zshrc": true, ".zprofile": true, ".bash_login": true,
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true, "authorized_keys": true, "known_hosts": true,
	"credentials": true, "Keychains": true, "gcloud": true,
}

// rcFiles run at every shell start: sensitive to write, harmless to read.
var rcFiles = map[string]bool{".bashrc": true, ".bash_profile": true, ".profile": true, ".zshrc": true,
	".zprofile": true, ".bash_login": true}

// sensitivePaths are absolute paths (and everything under them).
var sensitivePaths = []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssl/private", "/root", "/proc/self/environ"}

// ClassifyPath cleans a path lexically and judges it. workspace, when set, is
// the root that agents' paths should stay under.
func ClassifyPath(raw, workspace string) (PathFact, []string) {
	f := PathFact{Path: raw}
	tags := []string{"path"}
	p := strings.ReplaceAll(raw, `\`, "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			tags = append(tags, "path.traversal")
			break
		}
	}
	f.Clean = path.Clean(p)
	for _, seg := range strings.Split(f.Clean, "/") {
		base := seg
		if sensitiveNames[base] || strings.HasPrefix(base, ".env.") || strings.HasPrefix(base, "id_rsa") ||
			strings.HasPrefix(base, "id_ed25519") || strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key") ||
			strings.HasSuffix(base, ".p12") || strings.HasSuffix(base, ".kdbx") {
			f.Sensitive = true
		}
	}
	if strings.HasSuffix(f.Clean, ".git/config") || strings.HasPrefix(f.Clean, "/proc/") && strings.HasSuffix(f.Clean, "/environ") {
		f.Sensitive = true
	}
	for _, s := range sensitivePaths {
		if f.Clean == s || strings.HasPrefix(f.Clean, s+"/") {
			f.Sensitive = true
		}
	}
	f.ExecConfig = f.Sensitive && rcFiles[path.Base(f.Clean)]
	f.Secret = f.Sensitive && !f.ExecConfig
	if workspace != "" {
		ws := path.Clean(workspace)
		switch {
		case strings.HasPrefix(f.Clean, "~"), f.Clean == "..", strings.HasPrefix(f.Clean, "../"):
			f.OutsideWorkspace = true
		case strings.HasPrefix(f.Clean, "/"):
			f.OutsideWorkspace = f.Clean != ws && !strings.HasPrefix(f.Clean, strings.TrimSuffix(ws, "/")+"/")
		}
	}
	if f.Sensitive {
		tags = append(tags, "path.sensitive")
	}
	if f.OutsideWorkspace {
		tags = append(tags, "path.outside_workspace")
	}
	return f, tags
}
