// Package profiles tests end to end that containment profiles are policy:
// `rein run --profile NAME` applies what the policy in force names (a path
// one profile adds is readable inside, one without it is not), a bad profile
// never becomes policy, and the egress proxy, resolving allowed names with a
// resolver the person gives, refuses every name that leads inside.
package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }

// env is a running rein with an admin and an agent key.
type env struct {
	s            *harness.Server
	admin, agent string
}

func start(t *testing.T, policy string) *env {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, policy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	admin := s.AdminKey()
	return &env{s: s, admin: admin, agent: harness.CreateAgentKey(t, s.ClientEnv(admin), "builder", "acme")}
}

// run is `rein run` with the agent's key, ARGS and the script on stdin.
func (e *env) run(t *testing.T, script string, args ...string) harness.Result {
	t.Helper()
	return harness.ReinWithInput(t, e.s.ClientEnv(e.agent), script, append([]string{"run"}, args...)...)
}

// entries are the audit entries of kind.
func (e *env) entries(t *testing.T, kind string) []map[string]any {
	t.Helper()
	_, body := harness.HTTPDo(t, "GET", e.s.URL+"/v1/audit/entries?start=0&limit=5000", e.admin, nil, "")
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(body), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["kind"] == kind {
			out = append(out, m)
		}
	}
	return out
}

// check is one check of a session, with its result.
type check struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Check    struct {
		Tool string `json:"tool"`
		Args struct {
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"args"`
	} `json:"check"`
	Result *struct {
		Status  string `json:"status"`
		Summary string `json:"summary"`
		Address string `json:"address"`
	} `json:"result"`
}

func (e *env) checks(t *testing.T, session string) map[string]check {
	t.Helper()
	var cs []check
	harness.GetJSON(t, e.s.URL+"/v1/sessions/"+session+"/checks?tenant=acme&limit=500", e.admin, &cs)
	out := map[string]check{}
	for _, c := range cs {
		out[fmt.Sprintf("%s:%d", c.Check.Args.Host, c.Check.Args.Port)] = c
	}
	return out
}
