package harness

import (
	"encoding/json"
	"testing"
)

// SamplePolicy is the sample policy shipped with rein, relative to the
// module root (where the CLI runs).
const SamplePolicy = "examples/policy.yaml"

// CheckAnswer is the part of a check response the tests look at.
type CheckAnswer struct {
	ID            string         `json:"id"`
	Decision      string         `json:"decision"`
	Reason        string         `json:"reason"`
	Rule          string         `json:"rule"`
	PolicyVersion string         `json:"policy_version"`
	Args          map[string]any `json:"args"`
	Approval      *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"approval"`
}

// CheckJSON runs `rein check TOOL --args ARGS --output json` and decodes the answer.
func CheckJSON(t *testing.T, env []string, tool, args string, extra ...string) (CheckAnswer, Result) {
	t.Helper()
	r := Rein(t, env, append([]string{"check", tool, "--args", args, "--output", "json"}, extra...)...)
	var a CheckAnswer
	if err := json.Unmarshal([]byte(r.Stdout), &a); err != nil {
		t.Fatalf("rein check %s --args %s --output json: not JSON: %v\n%s", tool, args, err, r)
	}
	return a, r
}

// AgentKey runs `rein keys create NAME --role agent --tenant T --output json`
// as admin and returns the new secret.
func AgentKey(t *testing.T, s *Server, admin, name, tenant string) string {
	t.Helper()
	return CreateAgentKey(t, s.ClientEnv(admin), name, tenant)
}
