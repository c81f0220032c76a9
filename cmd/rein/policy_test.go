package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyExplainExitStatus: `rein policy explain` exits as `rein check`
// does, 0 when the action may run and 1 otherwise, an ask included; its
// --help says so.
func TestPolicyExplainExitStatus(t *testing.T) {
	for _, tc := range []struct {
		check string
		code  int
		shows string
	}{
		{`{"tool": "payments.transfer", "args": {"amount": 50, "to": "acme"}}`, exitOK, "decision: allow"},
		{`{"tool": "payments.transfer", "args": {"amount": 5000, "to": "acme"}}`, exitNegative, "decision: ask"},
		{`{"tool": "crypto.mine"}`, exitNegative, "decision: deny"},
	} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(context.Background(), e, []string{"policy", "explain", "../../examples/policy.yaml", "--check", tc.check})
		if code != tc.code || !strings.Contains(out.String(), tc.shows) {
			t.Errorf("explain %s: exit %d, want %d; printed:\n%s%s", tc.check, code, tc.code, out.String(), errb.String())
		}
	}
	var help bytes.Buffer
	e := &env{stdout: &help, stderr: &help, getenv: func(string) string { return "" }}
	run(context.Background(), e, []string{"policy", "explain", "--help"})
	if !strings.Contains(help.String(), "1 otherwise (deny, ask, throttle)") {
		t.Errorf("rein policy explain --help does not say when it exits 1:\n%s", help.String())
	}
}

// TestPolicyTestDNS: a fixture's dns: map is all its cases resolve with: a
// listed name leads where the map says, an unlisted one does not resolve,
// whatever this machine's DNS answers; an entry that is not an address is a
// usage error that says how to write one.
func TestPolicyTestDNS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("policy.yaml", `
version: 1
default: deny
tools:
  "web.get": {url: [url], resolve: true}
rules:
  - {id: inside, when: '"url.private" in risk', decision: deny}
  - {id: unknown, when: '"url.unresolved" in risk', decision: ask}
  - {id: web, when: 'tool == "web.get"', decision: allow}
`)
	good := write("good.yaml", `
policy: policy.yaml
dns:
  public.example: [93.184.215.14]
  Inside.Example.: [93.184.215.14, "fd00::7"]
cases:
  - {name: public, check: {tool: web.get, args: {url: "https://public.example/"}}, expect: {decision: allow, rule: web}}
  - {name: inside, check: {tool: web.get, args: {url: "https://inside.example/"}}, expect: {decision: deny, rule: inside}}
  - {name: unlisted, check: {tool: web.get, args: {url: "https://localhost.example/"}}, expect: {decision: ask, rule: unknown}}
`)
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"policy", "test", good}); code != exitOK {
		t.Errorf("policy test with dns: exit %d\n%s%s", code, out.String(), errb.String())
	}
	bad := write("bad.yaml", "policy: policy.yaml\ndns: {public.example: [not-an-address]}\ncases: []\n")
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), e, []string{"policy", "test", bad}); code != exitUsage ||
		!strings.Contains(errb.String(), `"not-an-address" is not an IP address`) {
		t.Errorf("a dns: entry that is no address: exit %d, want %d with a message that says so\n%s%s", code, exitUsage, out.String(), errb.String())
	}
}

// TestPolicyFixtureDocumented: the fixture shown in docs/policy.md reads as
// a fixture (strictly: every field it shows exists), dns: included.
func TestPolicyFixtureDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "`rein policy test FILE...` reads:\n\n```yaml\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/policy.md shows no fixture after \"`rein policy test FILE...` reads:\"")
	}
	p := filepath.Join(t.TempDir(), "fixture.yaml")
	if err := os.WriteFile(p, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := loadFixture(p)
	if err != nil {
		t.Fatalf("the documented fixture does not load: %v", err)
	}
	if len(f.DNS) == 0 || len(f.Cases) == 0 || f.Cases[0].Expect.Decision == "" {
		t.Errorf("the documented fixture lost its dns: or cases: %+v", f)
	}
}
