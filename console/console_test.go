package console

import "testing"

// TestLocalPath: after sign-in the console only ever goes to one of its own
// paths; every form a browser would read as another site goes home.
func TestLocalPath(t *testing.T) {
	for next, want := range map[string]string{
		"/approvals/apr_1":                "/approvals/apr_1",
		"/inbox?compact=1#top":            "/inbox?compact=1#top",
		"":                                "/inbox",
		"https://evil.example/":           "/inbox",
		"//evil.example/x":                "/inbox",
		"/\t/evil.example/x":              "/inbox",
		"/\n/evil.example/x":              "/inbox",
		"/\r/evil.example":                "/inbox",
		"/\\evil.example":                 "/inbox",
		"\\/evil.example":                 "/inbox",
		"/ /evil.example":                 "/inbox",
		"/\u00a0/evil.example":            "/inbox",
		"/\u200b/evil.example":            "/inbox",
		"javascript:alert(1)":             "/inbox",
		"/%2F%2Fevil.example":             "/inbox", // harmless in a browser, but nothing that decodes to "//" is kept
		"/x" + string(make([]byte, 3000)): "/inbox",
	} {
		if got := localPath(next); got != want {
			t.Errorf("localPath(%q) = %q, want %q", next, got, want)
		}
	}
}
