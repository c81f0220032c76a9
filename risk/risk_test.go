package risk

import "testing"

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"fs.*", "fs.read", true},
		{"fs.*", "fs.", true},
		{"fs.*", "fsx", false},
		{"*", "", true},
		{"", "", true},
		{"", "a", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*.exec", "shell.exec", true},
		{"*.exec", "shell.exe", false},
		{"/etc/*", "/etc/ssh/sshd_config", true},
		{`fs.\*`, "fs.*", true},
		{`fs.\*`, "fs.read", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"http.*", "HTTP.get", false},
		{"*ü*", "grün", true},
	}
	for _, c := range cases {
		if got := Glob(c.pattern, c.s); got != c.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

func TestAssessSkeleton(t *testing.T) {
	a := Assess("web.fetch", map[string]any{"url": "http://x"}, []ToolSpec{{Pattern: "web.*", TaintsSession: true}})
	if !a.TaintsSession {
		t.Error("a tool matching a taints_session spec must taint the session")
	}
	if a.Tags == nil || a.Facts["shell"] == nil || a.Facts["urls"] == nil {
		t.Errorf("facts skeleton incomplete: %#v", a)
	}
}
