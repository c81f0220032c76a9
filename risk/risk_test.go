package risk

import (
	"slices"
	"strings"
	"testing"
)

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
	a := Assess("web.fetch", map[string]any{"url": "http://x"}, []ToolSpec{{Pattern: "web.*", TaintsSession: true}}, "")
	if !a.TaintsSession {
		t.Error("a tool matching a taints_session spec must taint the session")
	}
	if a.Tags == nil || a.Facts["shell"] == nil || a.Facts["urls"] == nil {
		t.Errorf("facts skeleton incomplete: %#v", a)
	}
}

func TestAssessURLs(t *testing.T) {
	specs := []ToolSpec{{Pattern: "http.*", URL: []string{"url", "mirrors"}}}
	a := Assess("http.post", map[string]any{"url": "http://0x7f.1/admin", "mirrors": []any{"https://example.com/", 5}}, specs, "")
	want := []string{"egress", "url", "url.private"}
	if strings.Join(a.Tags, ",") != strings.Join(want, ",") {
		t.Errorf("tags %v, want %v", a.Tags, want)
	}
	urls := a.Facts["urls"].([]any)
	if len(urls) != 2 || urls[0].(map[string]any)["ip"] != "127.0.0.1" || urls[0].(map[string]any)["private"] != true {
		t.Errorf("facts %v", urls)
	}
	if b := Assess("shell.exec", map[string]any{"url": "http://10.0.0.1/"}, specs, ""); len(b.Tags) != 0 {
		t.Errorf("a tool no spec names gets no URL facts: %v", b.Tags)
	}
	if c := Assess("http.get", map[string]any{"url": "https://example.com/"}, specs, ""); strings.Join(c.Tags, ",") != "url" {
		t.Errorf("a public GET: %v", c.Tags)
	}
}

func TestAssessPaths(t *testing.T) {
	specs := []ToolSpec{{Pattern: "fs.*", Path: []string{"path", "destination"}}}
	a := Assess("fs.copy", map[string]any{"path": "notes.txt", "destination": "../../home/u/.ssh/authorized_keys"}, specs, "/srv/app")
	want := "path,path.outside_workspace,path.sensitive,path.traversal"
	if strings.Join(a.Tags, ",") != want {
		t.Errorf("tags %v, want %s", a.Tags, want)
	}
	if ps := a.Facts["paths"].([]any); len(ps) != 2 || ps[1].(map[string]any)["clean"] != "../../home/u/.ssh/authorized_keys" {
		t.Errorf("facts %v", ps)
	}
}

// checkTags asserts that tags hold every tag of want and none of absent.
func checkTags(t *testing.T, input string, tags, want, absent []string) {
	t.Helper()
	for _, tag := range want {
		if !slices.Contains(tags, tag) {
			t.Errorf("%q: tags %v lack %s", input, tags, tag)
		}
	}
	for _, tag := range absent {
		if slices.Contains(tags, tag) {
			t.Errorf("%q: tags %v must not have %s", input, tags, tag)
		}
	}
}
