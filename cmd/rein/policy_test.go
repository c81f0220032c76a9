package main

import (
	"bytes"
	"context"
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
