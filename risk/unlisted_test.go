package risk

import (
	"slices"
	"testing"
)

// TestUnlisted: a path that is secret only by the closed world (outside the
// workspace and not known public, a private system place, a hidden name in
// a home) is marked unlisted, so that policy can ask where it denies a
// known credential store; a known store never is.
func TestUnlisted(t *testing.T) {
	for _, tc := range []struct {
		path, ws         string
		secret, unlisted bool
	}{
		{"/root/.ssh/id_ed25519", "/srv/agent", true, false},
		{"/home/u/.aws/credentials", "/srv/agent", true, false},
		{"/srv/agent/.env", "/srv/agent", true, false},
		{"/tmp/rein-demo/README.md", "/srv/agent", true, true},
		{"/srv/other/app.conf", "/srv/agent", true, true},
		{"/usr/share/doc/README", "/srv/agent", false, false},
		{"/srv/agent/src/main.go", "/srv/agent", false, false},
		{"/var/lib/app/state.db", "", true, true},
		{"/etc/shadow", "", true, false},
	} {
		f, _ := ClassifyPath(tc.path, tc.ws)
		if f.Secret != tc.secret || f.Unlisted != tc.unlisted {
			t.Errorf("%s (workspace %q): secret %v unlisted %v, want %v %v", tc.path, tc.ws, f.Secret, f.Unlisted, tc.secret, tc.unlisted)
		}
	}
}

// TestRecursiveListingsOutsideTheWorkspace: ls -R, find, tree and du list
// every name below their folders. Listing a private place by name (ls
// /root) is never a plain read, so neither is a recursive listing of a
// folder above one (ls -R /, find / -name id_rsa, tree ~): a person looks
// first. Recursive listings inside the workspace, and of public system
// folders, stay plain reads.
func TestRecursiveListingsOutsideTheWorkspace(t *testing.T) {
	readOnly := func(f ShellFacts) bool {
		for _, c := range f.Commands {
			if !c.ReadOnly {
				return false
			}
		}
		return len(f.Commands) > 0
	}
	for _, cmd := range []string{"ls -R /", "ls -laR /", "ls --recursive /home", "find /", "find / -name id_rsa",
		"find ~ -name '*.pem'", "find /etc -name '*.key'", "tree /", "du -a /", "du -sh ~", "ls -R ~", "find /home -maxdepth 3"} {
		f, tags := classifyShell(cmd, "/srv/agent")
		if readOnly(f) || !slices.Contains(tags, "shell.unlisted") && !slices.Contains(tags, "shell.secrets") {
			t.Errorf("%s: tags %v, read-only %v; want shell.unlisted and not read-only", cmd, tags, readOnly(f))
		}
	}
	for _, cmd := range []string{"ls -R", "ls -R src", "find . -name '*.go'", "find src -type f", "tree", "du -sh .",
		"ls -R /usr/share/doc", "find /usr/include -name '*.h'", "ls /", "ls -la"} {
		f, tags := classifyShell(cmd, "/srv/agent")
		if !readOnly(f) || slices.Contains(tags, "shell.unlisted") || slices.Contains(tags, "shell.secrets") {
			t.Errorf("%s: tags %v, read-only %v; want a plain read", cmd, tags, readOnly(f))
		}
	}
}

// TestGitDiffOrderFileIsARead: git diff -O<orderfile> reads the file it
// names, so a credential store named there is a secret read, as cat's.
func TestGitDiffOrderFileIsARead(t *testing.T) {
	for _, cmd := range []string{"git diff -O/etc/shadow", "git diff -O /root/.ssh/id_rsa HEAD", "git log -p -O~/.aws/credentials"} {
		_, tags := classifyShell(cmd, "/srv/agent")
		if !slices.Contains(tags, "shell.secrets") {
			t.Errorf("%s: tags %v, want shell.secrets", cmd, tags)
		}
	}
	if _, tags := classifyShell("git diff -Oorder.txt", "/srv/agent"); len(tags) != 1 {
		t.Errorf("git diff -Oorder.txt: tags %v, want a plain read", tags)
	}
}
