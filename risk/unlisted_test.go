package risk

import "testing"

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
