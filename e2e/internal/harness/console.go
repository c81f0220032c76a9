package harness

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// ConsolePolicy is the policy of NewConsoleEnv.
const ConsolePolicy = `version: 1
default: allow
approval: {approvers: ["group:oncall"], quorum: 1, ttl: 15m, grant_ttl: 10m}
rules:
  - id: deploys-need-on-call
    when: 'tool == "deploy"'
    decision: ask
    reason: "production deploys need an on-call approval"
  - id: destructive-shell
    when: 'tool == "shell.exec" && "shell.destructive" in risk'
    decision: ask
    reason: "destructive shell commands need an on-call approval"
  - id: no-root-wipe
    when: 'tool == "shell.exec" && has(args.command) && args.command.contains("rm -rf /etc")'
    decision: deny
    reason: "never touch /etc"
  - id: refunds
    when: 'tool == "payments.refund"'
    decision: ask
    reason: "refunds are approved by a person"
`

// ConsoleEnv is one server with the people and agents of the console tests.
type ConsoleEnv struct {
	T    *testing.T
	S    *Server
	Keys map[string]string // name -> secret
}

// NewConsoleEnv starts a server with ConsolePolicy and the keys of ConsoleEnv.
func NewConsoleEnv(t *testing.T) *ConsoleEnv {
	t.Helper()
	return NewConsoleEnvPolicy(t, ConsolePolicy)
}

// NewConsoleEnvPolicy is NewConsoleEnv with another policy and more
// arguments for rein serve.
func NewConsoleEnvPolicy(t *testing.T, policy string, args ...string) *ConsoleEnv {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	WriteFile(t, pol, policy)
	s := StartServer(t, t.TempDir(), nil, append([]string{"--policy", pol}, args...)...)
	e := &ConsoleEnv{T: t, S: s, Keys: map[string]string{"admin": s.AdminKey()}}
	for _, k := range []struct{ name, tenant, roles, groups string }{
		{"builder", "acme", `"agent"`, ``},
		{"alice", "acme", `"approver"`, `"oncall"`},
		{"fin", "acme", `"approver"`, `"finance"`},
		{"olga", "acme", `"admin","approver"`, `"oncall"`},
		{"audra", "acme", `"auditor"`, ``},
		{"eve", "other", `"approver"`, `"oncall"`},
	} {
		code, body := HTTPDo(t, "POST", s.URL+"/v1/keys", e.Keys["admin"], []byte(fmt.Sprintf(
			`{"name":%q,"tenant":%q,"roles":[%s],"groups":[%s]}`, k.name, k.tenant, k.roles, k.groups)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", k.name, code, body)
		}
		var created struct{ Key string }
		json.Unmarshal(body, &created)
		e.Keys[k.name] = created.Key
	}
	return e
}

// AgentRun is a CLI command running in the background (an agent waiting).
type AgentRun struct {
	args []string
	done chan struct{}
	res  Result
	err  error
}

// StartAgent runs rein ARGS as the agent builder in the background.
func (e *ConsoleEnv) StartAgent(args ...string) *AgentRun {
	a := &AgentRun{args: args, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, Bin, args...)
		cmd.Dir = ModuleRoot
		cmd.Env = CleanEnv(e.S.ClientEnv(e.Keys["builder"])...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		a.res = Result{Stdout: stdout.String(), Stderr: stderr.String()}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			a.res.Code = exit.ExitCode()
		} else {
			a.err = err
		}
	}()
	return a
}

// Wait returns the command's result, or an error when it is still running after d.
func (a *AgentRun) Wait(d time.Duration) (Result, error) {
	select {
	case <-a.done:
		return a.res, a.err
	case <-time.After(d):
		return Result{}, fmt.Errorf("rein %s still running after %s", strings.Join(a.args, " "), d)
	}
}

// PendingFor polls the approvals of tenant acme until one for tool is pending.
func (e *ConsoleEnv) PendingFor(tool, session string) (string, error) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var list []struct{ ID, Tool, Session string }
		code, body := HTTPDo(e.T, "GET", e.S.URL+"/v1/approvals?status=pending", e.Keys["alice"], nil, "")
		if code == 200 && json.Unmarshal(body, &list) == nil {
			for _, a := range list {
				if a.Tool == tool && a.Session == session {
					return a.ID, nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("no pending approval for %s in session %s within 15s", tool, session)
}

// ScreenshotDir is where the tests put their screenshots.
func ScreenshotDir(t *testing.T) string {
	if os.Getenv("REIN_UPDATE_SCREENSHOTS") == "1" {
		dir := filepath.Join(ModuleRoot, "docs", "img")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// StepFunc does one thing the browser script asked for and returns the
// line to send back; a line starting with "FAIL" fails the script.
type StepFunc func(arg string) string

// RunBrowser runs node e2e/browser/SCRIPT against the environment's server,
// answering its "@step NAME ARG" lines with steps. The script's exit code
// decides; its output is logged.
func (e *ConsoleEnv) RunBrowser(script string, steps map[string]StepFunc) {
	t := e.T
	t.Helper()
	dir := testenv.NodeModules(t, filepath.Join(ModuleRoot, "e2e", "browser"))
	chromium := testenv.Chromium(t)
	keys, _ := json.Marshal(e.Keys)
	// Alone, the longest script (decisions.mjs) takes under a minute and a
	// half; beside the other browser tests on two cores it once ran past
	// five.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(CleanEnv(), "REIN_URL="+e.S.URL, "REIN_KEYS="+string(keys), "CHROMIUM="+chromium,
		"SCREENSHOT_DIR="+ScreenshotDir(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr SyncBuffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node %s: %v", script, err)
	}
	var out strings.Builder
	var mu sync.Mutex
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		mu.Lock()
		out.WriteString(line + "\n")
		mu.Unlock()
		rest, ok := strings.CutPrefix(line, "@step ")
		if !ok {
			continue
		}
		name, arg, _ := strings.Cut(rest, " ")
		f := steps[name]
		answer := "FAIL: the Go test has no step " + name
		if f != nil {
			answer = f(arg)
		}
		if strings.HasPrefix(answer, "FAIL") {
			t.Errorf("step %s %s: %s", name, arg, answer)
		}
		io.WriteString(stdin, strings.ReplaceAll(answer, "\n", " ")+"\n")
	}
	err = cmd.Wait()
	t.Logf("node %s took %s", script, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("browser script %s failed: %v\nstdout:\n%s\nstderr:\n%s\nrein serve stderr:\n%s", script, err, out.String(), stderr.String(), e.S.Stderr)
	}
	t.Logf("browser script output:\n%s", out.String())
}

// CheckAnswerJSON decodes `rein check --output json`.
func CheckAnswerJSON(r Result) (CheckAnswer, error) {
	var a CheckAnswer
	if err := json.Unmarshal([]byte(r.Stdout), &a); err != nil {
		return a, fmt.Errorf("rein check printed no JSON: %v\n%s", err, r)
	}
	return a, nil
}

// MustJSON is v in JSON.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// UntarBundle unpacks the tar file at path into dir and returns the one
// directory it holds.
func UntarBundle(path, dir string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	top := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("the bundle is not a tar file: %v", err)
		}
		name := filepath.Clean(h.Name)
		d, _, ok := strings.Cut(name, string(filepath.Separator))
		if !ok || strings.HasPrefix(name, "..") || filepath.IsAbs(name) || (top != "" && d != top) {
			return "", fmt.Errorf("unexpected name %q in the bundle", h.Name)
		}
		top = d
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return "", err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	if top == "" {
		return "", errors.New("the bundle is empty")
	}
	return filepath.Join(dir, top), nil
}
