package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// Result is what one CLI invocation did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// Rein runs the CLI in the module root with a clean environment plus env.
func Rein(t testing.TB, env []string, args ...string) Result {
	t.Helper()
	return ReinWithInput(t, env, "", args...)
}

// ReinWithInput is Rein with input on the CLI's standard input.
func ReinWithInput(t testing.TB, env []string, input string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Bin, args...)
	cmd.Dir = ModuleRoot
	cmd.Env = CleanEnv(env...)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rein %s did not finish within %s", strings.Join(args, " "), CommandTimeout)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run rein %s: %v", strings.Join(args, " "), err)
	}
	return Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// CreateAgentKey runs `rein keys create NAME --role agent --tenant T
// --output json` against the server at env (REIN_SERVER, REIN_KEY of an
// admin) and returns the new secret.
func CreateAgentKey(t testing.TB, env []string, name, tenant string) string {
	t.Helper()
	r := Rein(t, env, "keys", "create", name, "--role", "agent", "--tenant", tenant, "--output", "json")
	if r.Code != 0 {
		t.Fatalf("rein keys create %s: %s", name, r)
	}
	var k struct {
		Key    string   `json:"key"`
		Name   string   `json:"name"`
		Tenant string   `json:"tenant"`
		Roles  []string `json:"roles"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil {
		t.Fatalf("rein keys create --output json: not JSON: %v\n%s", err, r)
	}
	if k.Key == "" || k.Name != name || k.Tenant != tenant || len(k.Roles) != 1 || k.Roles[0] != "agent" {
		t.Fatalf("rein keys create: unexpected key %+v\n%s", k, r)
	}
	return k.Key
}
