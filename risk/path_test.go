package risk

import "testing"

func TestClassifyPath(t *testing.T) {
	cases := []struct {
		raw, workspace, clean string
		tags                  []string
		absent                []string
	}{
		{"src/main.go", "/srv/app", "src/main.go", []string{"path"}, []string{"path.sensitive", "path.traversal", "path.outside_workspace"}},
		{"/home/dev/.ssh/id_ed25519", "", "/home/dev/.ssh/id_ed25519", []string{"path.sensitive"}, nil},
		{"~/.aws/credentials", "", "~/.aws/credentials", []string{"path.sensitive"}, nil},
		{"app/.env", "", "app/.env", []string{"path.sensitive"}, nil},
		{"app/.env.production", "", "app/.env.production", []string{"path.sensitive"}, nil},
		{"repo/.git/config", "", "repo/.git/config", []string{"path.sensitive"}, nil},
		{"/etc/shadow", "", "/etc/shadow", []string{"path.sensitive"}, nil},
		{"/etc/../etc/./shadow", "", "/etc/shadow", []string{"path.sensitive", "path.traversal"}, nil},
		{"docs/../../../etc/sudoers", "/srv/app", "../../etc/sudoers", []string{"path.traversal", "path.outside_workspace"}, nil},
		{"/srv/app/../other/x", "/srv/app", "/srv/other/x", []string{"path.traversal", "path.outside_workspace"}, nil},
		{"/srv/app/x", "/srv/app", "/srv/app/x", nil, []string{"path.outside_workspace"}},
		{"/srv/application/x", "/srv/app", "/srv/application/x", []string{"path.outside_workspace"}, nil},
		{`..\..\windows\system32`, "/srv/app", "../../windows/system32", []string{"path.traversal", "path.outside_workspace"}, nil},
		{"~/.bashrc", "/srv/app", "~/.bashrc", []string{"path.sensitive", "path.outside_workspace"}, nil},
		{"certs/server.key", "", "certs/server.key", []string{"path.sensitive"}, nil},
		{"README.md", "", "README.md", nil, []string{"path.sensitive"}},
	}
	for _, c := range cases {
		f, tags := ClassifyPath(c.raw, c.workspace)
		if f.Clean != c.clean {
			t.Errorf("%q: clean %q, want %q", c.raw, f.Clean, c.clean)
		}
		checkTags(t, c.raw, tags, c.tags, c.absent)
	}
}

func FuzzClassifyPath(f *testing.F) {
	for _, s := range []string{"a/../b", "/etc/shadow", "~/.ssh/x", `..\x`, ""} {
		f.Add(s, "/srv/app")
	}
	f.Fuzz(func(t *testing.T, raw, ws string) {
		fact, tags := ClassifyPath(raw, ws)
		if len(tags) == 0 || tags[0] != "path" || fact.Clean == "" {
			t.Fatalf("%q: %v %+v", raw, tags, fact)
		}
	})
}
