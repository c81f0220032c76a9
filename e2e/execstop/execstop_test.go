// Package execstop tests end to end what rein runs itself and how people
// stop what runs: rein exec (a shell command checked, then run contained by
// rein, its exit status and output hashes on the record) and the Stop of a
// contained session (a lock that ends every process of rein run), with the
// console's live view of a contained session.
package execstop

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }

// execPolicy: contained shell commands run as sh -c without a person,
// printf asks the on-call group, anything that deletes is denied, and one
// command is allowed outside containment (what an agent could run itself).
const execPolicy = `version: 1
rules:
  - {id: contained-sh, when: 'tool == "shell.exec" && sandbox.contained && args.command.startsWith("sh -c ")', decision: allow}
  - {id: contained-printf, when: 'tool == "shell.exec" && sandbox.contained && args.command.startsWith("printf ")', decision: ask, approval: {approvers: ["group:oncall"]}}
  - {id: no-deleting, when: 'tool == "shell.exec" && args.command.contains("rm ")', decision: deny, reason: "nothing is deleted"}
  - {id: agent-echo, when: 'tool == "shell.exec" && args.command == "echo by the agent"', decision: allow}
  - {id: hosts, when: 'tool == "net.connect"', decision: ask, reason: "a new destination", approval: {approvers: ["group:oncall"]}}
`

type env struct {
	t    *testing.T
	s    *harness.Server
	keys map[string]string
}

func newEnv(t *testing.T, policy string) *env {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, policy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	e := &env{t: t, s: s, keys: map[string]string{"admin": s.AdminKey()}}
	for _, k := range []struct{ name, roles, groups string }{
		{"builder", `"agent"`, ``},
		{"alice", `"approver"`, `"oncall"`},
		{"ops", `"admin"`, ``},
	} {
		code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", e.keys["admin"], []byte(fmt.Sprintf(
			`{"name":%q,"tenant":"acme","roles":[%s],"groups":[%s]}`, k.name, k.roles, k.groups)), "application/json")
		if code != 201 {
			t.Fatalf("create key %s: %d %s", k.name, code, body)
		}
		var created struct{ Key string }
		json.Unmarshal(body, &created)
		e.keys[k.name] = created.Key
	}
	return e
}

// api calls the API as key and decodes the answer into out (if not nil).
func (e *env) api(method, path, key string, body any, out any) int {
	e.t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	code, resp := harness.HTTPDo(e.t, method, e.s.URL+path, key, b, "application/json")
	if out != nil && code < 300 {
		if err := json.Unmarshal(resp, out); err != nil {
			e.t.Fatalf("%s %s: %v\n%s", method, path, err, resp)
		}
	}
	return code
}

type checkRecord struct {
	ID       string          `json:"id"`
	Decision string          `json:"decision"`
	Args     json.RawMessage `json:"args"`
	Check    struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	} `json:"check"`
	Result *struct {
		Status       string `json:"status"`
		ExecutedBy   string `json:"executed_by"`
		ExitStatus   *int   `json:"exit_status"`
		StdoutSHA256 string `json:"stdout_sha256"`
		StdoutBytes  int64  `json:"stdout_bytes"`
		StderrSHA256 string `json:"stderr_sha256"`
		StderrBytes  int64  `json:"stderr_bytes"`
		ArgsMatch    *bool  `json:"args_match"`
	} `json:"result"`
}

func (e *env) checks(session string) []checkRecord {
	e.t.Helper()
	var out []checkRecord
	e.api("GET", "/v1/sessions/"+session+"/checks", e.keys["alice"], nil, &out)
	return out
}

// entries are the audit entries of kind about subject.
func (e *env) entries(kind, subject string) []map[string]any {
	e.t.Helper()
	_, body := harness.HTTPDo(e.t, "GET", e.s.URL+"/v1/audit/entries?start=0&limit=10000", e.keys["admin"], nil, "")
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(body), []byte("\n")) {
		var en struct {
			Kind    string
			Subject string
			Data    map[string]any
		}
		json.Unmarshal(line, &en)
		if en.Kind == kind && en.Subject == subject {
			out = append(out, en.Data)
		}
	}
	return out
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestExecRunsWhatReinAllowed: rein exec runs an allowed command contained
// and records executed_by rein with its exit status and the hashes of
// exactly what it wrote; after an approver's edit it runs the edited
// command, never the original; a denied command runs nothing; and the
// agent's key cannot claim executed_by rein for what it ran itself.
func TestExecRunsWhatReinAllowed(t *testing.T) {
	e := newEnv(t, execPolicy)
	ws := t.TempDir()
	harness.WriteFile(t, filepath.Join(ws, "keep.txt"), "kept\n")
	cli := append(e.s.ClientEnv(e.keys["builder"]), "HOME="+t.TempDir())

	// Allowed: runs, streams, exits with the command's status.
	r := harness.Rein(t, cli, "exec", "--workspace", ws, "--session", "exec-ok", "--", "sh", "-c",
		"echo out-line; echo err-line >&2; echo made > made-by-exec; exit 3")
	if r.Code != 3 || r.Stdout != "out-line\n" || !strings.Contains(r.Stderr, "err-line\n") {
		t.Fatalf("rein exec of an allowed command: %s", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made-by-exec")); err != nil || string(b) != "made\n" {
		t.Fatalf("the command did not run in the workspace: %q %v", b, err)
	}
	cs := e.checks("exec-ok")
	if len(cs) != 1 || cs[0].Check.Tool != "shell.exec" || cs[0].Decision != "allow" {
		t.Fatalf("the exec's checks: %+v", cs)
	}
	var asked struct{ Command string }
	json.Unmarshal(cs[0].Check.Args, &asked)
	if asked.Command != `sh -c 'echo out-line; echo err-line >&2; echo made > made-by-exec; exit 3'` {
		t.Errorf("the check names %q", asked.Command)
	}
	res := cs[0].Result
	if res == nil || res.ExecutedBy != "rein" || res.ExitStatus == nil || *res.ExitStatus != 3 || res.Status != "failed" ||
		res.StdoutSHA256 != sha("out-line\n") || res.StdoutBytes != 9 || res.StderrSHA256 != sha("err-line\n") || res.StderrBytes != 9 ||
		res.ArgsMatch == nil || !*res.ArgsMatch {
		t.Fatalf("the recorded result: %+v", res)
	}
	results := e.entries("check.result", cs[0].ID)
	if len(results) != 1 || results[0]["executed_by"] != "rein" || results[0]["exit_status"] != float64(3) ||
		results[0]["stdout_sha256"] != sha("out-line\n") || results[0]["stderr_sha256"] != sha("err-line\n") {
		t.Errorf("the result's audit entry: %v", results)
	}
	started := e.entries("sandbox.started", "exec-ok")
	ended := e.entries("sandbox.ended", "exec-ok")
	if len(started) != 1 || started[0]["runner"] != "exec" || len(ended) != 1 || ended[0]["exit_status"] != float64(3) {
		t.Errorf("the exec's containment on the record: %v %v", started, ended)
	}

	// Edited by an approver: the edited command runs, the original never.
	cmd := exec.Command(harness.Bin, "exec", "--workspace", ws, "--session", "exec-edit", "--wait", "1m", "--", "printf", `original\n`)
	cmd.Dir, cmd.Env = ws, harness.CleanEnv(cli...)
	var stdout, stderr harness.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pending []struct {
		ID   string
		Args struct{ Command string }
	}
	harness.Eventually(t, 20*time.Second, "the exec's approval", func() string {
		e.api("GET", "/v1/approvals?status=pending&session=exec-edit", e.keys["alice"], nil, &pending)
		if len(pending) != 1 {
			return fmt.Sprintf("%d pending approvals; rein exec said: %s", len(pending), stderr.String())
		}
		return ""
	})
	if pending[0].Args.Command != `printf 'original\n'` {
		t.Errorf("the approval shows %q", pending[0].Args.Command)
	}
	edited := map[string]any{"vote": "edit", "message": "say edited", "args": map[string]string{"command": `printf 'edited\n'`}}
	if code := e.api("POST", "/v1/approvals/"+pending[0].ID+"/votes", e.keys["alice"], edited, nil); code != 200 {
		t.Fatalf("edit vote: %d", code)
	}
	code := waitExit(t, cmd, 30*time.Second)
	if code != 0 || stdout.String() != "edited\n" || !strings.Contains(stderr.String(), "not as asked") {
		t.Fatalf("rein exec after an edit: exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	var usedRes *checkRecord
	for _, c := range e.checks("exec-edit") {
		if c.Result != nil {
			usedRes = &c
		}
	}
	if usedRes == nil || usedRes.Result.ExecutedBy != "rein" || usedRes.Result.StdoutSHA256 != sha("edited\n") || *usedRes.Result.ExitStatus != 0 ||
		!*usedRes.Result.ArgsMatch || !strings.Contains(string(usedRes.Args), "edited") {
		t.Fatalf("the edited run's record: %+v", usedRes)
	}

	// Denied: nothing runs, exit 77, no result.
	r = harness.Rein(t, cli, "exec", "--workspace", ws, "--session", "exec-denied", "--", "sh", "-c", "rm keep.txt; echo ran > denied-ran")
	if r.Code != 77 || !strings.Contains(r.Stderr, "nothing is deleted") {
		t.Fatalf("rein exec of a denied command: %s", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied-ran")); err == nil {
		t.Error("a denied command ran")
	}
	if _, err := os.Stat(filepath.Join(ws, "keep.txt")); err != nil {
		t.Errorf("a denied command deleted: %v", err)
	}
	if cs := e.checks("exec-denied"); len(cs) != 1 || cs[0].Decision != "deny" || cs[0].Result != nil {
		t.Errorf("the denied exec's record: %+v", cs)
	}
	if ended := e.entries("sandbox.ended", "exec-denied"); len(ended) != 1 || ended[0]["exit_status"] != float64(77) {
		t.Errorf("the denied exec's end: %v", ended)
	}

	// The agent's key claims executed_by rein for what it ran itself: refused.
	var own struct{ ID, Decision string }
	e.api("POST", "/v1/check", e.keys["builder"], map[string]any{"tool": "shell.exec", "args": map[string]string{"command": "echo by the agent"}, "session": "agent-1"}, &own)
	if own.Decision != "allow" {
		t.Fatalf("the agent's own check: %+v", own)
	}
	forged := map[string]any{"status": "succeeded", "executed_by": "rein", "exit_status": 0, "args": map[string]string{"command": "echo by the agent"},
		"stdout_sha256": sha("by the agent\n"), "stdout_bytes": 13, "stderr_sha256": sha(""), "stderr_bytes": 0}
	if code := e.api("POST", "/v1/checks/"+own.ID+"/result", e.keys["builder"], forged, nil); code != 403 {
		t.Errorf("a forged executed_by rein: %d, want 403", code)
	}
	if a := e.entries("check.result", own.ID); len(a) != 1 || !strings.Contains(fmt.Sprint(a[0]["anomaly"]), "executed_by_refused") {
		t.Errorf("the forged claim is not on the record as an anomaly: %v", a)
	}
	delete(forged, "executed_by")
	if code := e.api("POST", "/v1/checks/"+own.ID+"/result", e.keys["builder"], forged, nil); code != 204 {
		t.Errorf("the agent's own result: %d", code)
	}
	if c := e.checks("agent-1"); len(c) != 1 || c[0].Result == nil || c[0].Result.ExecutedBy != "agent" {
		t.Errorf("the agent's result: %+v", c)
	}
}

func waitExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(timeout):
		cmd.Process.Kill()
		t.Fatalf("%s did not exit within %s", strings.Join(cmd.Args, " "), timeout)
		return -1
	}
}

// processesWith lists the processes whose command line contains marker.
func processesWith(marker string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		line := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(line, marker) && !strings.Contains(line, "rein") {
			out = append(out, d.Name()+": "+line)
		}
	}
	return out
}

// startStoppable starts `rein run` of a command that leaves processes of
// every kind behind (a child, a grandchild in its own session, a process
// that ignores SIGTERM) and waits until they all run. It returns the run
// and the marker of its processes.
func startStoppable(t *testing.T, e *env, session string) (*exec.Cmd, *harness.SyncBuffer, string) {
	t.Helper()
	n := 3000 + rand.IntN(5000)
	marker := fmt.Sprintf("sleep %d", n)
	script := fmt.Sprintf("sleep %d & (setsid sleep %d.5 &); sh -c 'trap \"\" TERM; sleep %d.7' & sleep %d.9", n, n, n, n)
	ws := t.TempDir()
	cmd := exec.Command(harness.Bin, "run", "--workspace", ws, "--session", session, "--", "sh", "-c", script)
	cmd.Dir, cmd.Env = ws, harness.CleanEnv(append(e.s.ClientEnv(e.keys["builder"]), "HOME="+t.TempDir())...)
	var out harness.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range processesWith(marker) {
			var pid int
			fmt.Sscanf(p, "%d:", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	harness.Eventually(t, 20*time.Second, "the run's processes", func() string {
		if got := processesWith(marker); len(got) < 4 {
			return fmt.Sprintf("%d processes of the run: %v; rein run said: %s", len(got), got, out.String())
		}
		return ""
	})
	return cmd, &out, marker
}

// TestStopEndsEveryProcess: a lock on a running contained session (what the
// console's Stop creates) makes rein run kill every process of the sandbox
// (children, a grandchild in its own session, one that ignores SIGTERM)
// within a bounded time (rein answers its wait on the session at once; no
// poll), exit 137, and record the stop in sandbox.ended.
func TestStopEndsEveryProcess(t *testing.T) {
	e := newEnv(t, execPolicy)
	cmd, out, marker := startStoppable(t, e, "stop-1")
	var lock struct{ ID string }
	at := time.Now()
	if code := e.api("POST", "/v1/locks", e.keys["ops"], map[string]any{"target": map[string]string{"session": "stop-1"}, "reason": "runaway build"}, &lock); code != 201 {
		t.Fatalf("lock: %d", code)
	}
	// rein answers rein run's wait on the session as soon as the lock is
	// made: every process is gone well before a poll would have seen it.
	var killed time.Duration
	for time.Since(at) < 10*time.Second {
		if len(processesWith(marker)) == 0 {
			killed = time.Since(at)
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	code := waitExit(t, cmd, 10*time.Second)
	took := time.Since(at)
	t.Logf("every process gone %s after the lock was made, rein run ended after %s", killed.Round(time.Millisecond), took.Round(time.Millisecond))
	if killed == 0 || killed > time.Second {
		t.Errorf("the processes of the run were gone only after %s", killed)
	}
	if code != 137 || !strings.Contains(out.String(), "runaway build") || !strings.Contains(out.String(), lock.ID) {
		t.Fatalf("rein run after the stop: exit %d\n%s", code, out.String())
	}
	if took > 3*time.Second {
		t.Errorf("the stop took %s, more than 3s", took)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Fatalf("processes of the stopped run survive: %v", left)
	}
	time.Sleep(300 * time.Millisecond)
	if left := processesWith(marker); len(left) > 0 {
		t.Fatalf("processes of the stopped run survive: %v", left)
	}
	ended := e.entries("sandbox.ended", "stop-1")
	stopped, _ := ended[0]["stopped_by"].(map[string]any)
	if len(ended) != 1 || ended[0]["exit_status"] != float64(137) || stopped == nil || stopped["lock"] != lock.ID || stopped["reason"] != "runaway build" || stopped["by"] != "ops" {
		t.Errorf("sandbox.ended of the stopped run: %v", ended)
	}
	var st struct {
		Sandbox struct {
			ExitStatus *int   `json:"exit_status"`
			StoppedBy  string `json:"stopped_by"`
		}
		Stop *struct{ ID string }
	}
	e.api("GET", "/v1/sessions/stop-1/sandbox", e.keys["alice"], nil, &st)
	if st.Sandbox.ExitStatus == nil || *st.Sandbox.ExitStatus != 137 || st.Sandbox.StoppedBy != lock.ID || st.Stop == nil {
		t.Errorf("the stopped session: %+v", st)
	}
}

// TestConsoleLiveSession: the console shows a running contained session
// (what runs, where, its boundary checks and the destination waiting for
// approval), and its Stop, pressed by an admin in Chromium, ends every
// process of the run (e2e/browser/livesession.mjs).
func TestConsoleLiveSession(t *testing.T) {
	e := newEnv(t, execPolicy)
	code, body := harness.HTTPDo(t, "POST", e.s.URL+"/v1/keys", e.keys["admin"],
		[]byte(`{"name":"olga","tenant":"acme","roles":["admin","approver"],"groups":["oncall"]}`), "application/json")
	if code != 201 {
		t.Fatalf("create key olga: %d %s", code, body)
	}
	var created struct{ Key string }
	json.Unmarshal(body, &created)
	e.keys["olga"] = created.Key

	n := 3000 + rand.IntN(5000)
	marker := fmt.Sprintf("sleep %d", n)
	ws := t.TempDir()
	// The run asks for one destination (held while people decide) and sleeps.
	script := fmt.Sprintf(`(exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT api.stripe.com:443 HTTP/1.1\r\nHost: api.stripe.com\r\n\r\n' >&3; head -1 <&3) & sleep %d`, n)
	cmd := exec.Command(harness.Bin, "run", "--workspace", ws, "--session", "live-1", "--", "bash", "-c", script)
	cmd.Dir, cmd.Env = ws, harness.CleanEnv(append(e.s.ClientEnv(e.keys["builder"]), "HOME="+t.TempDir())...)
	var out harness.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, p := range processesWith(marker) {
			var pid int
			fmt.Sscanf(p, "%d:", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	console := &harness.ConsoleEnv{T: t, S: e.s, Keys: e.keys}
	console.RunBrowser("livesession.mjs", map[string]harness.StepFunc{
		"running": func(string) string {
			var pending []struct{ Tool string }
			harness.Eventually(t, 30*time.Second, "the run's destination waiting for approval", func() string {
				e.api("GET", "/v1/approvals?status=pending&session=live-1", e.keys["alice"], nil, &pending)
				if len(pending) != 1 || pending[0].Tool != "net.connect" || len(processesWith(marker)) == 0 {
					return fmt.Sprintf("%d pending approvals, processes %v; rein run said: %s", len(pending), processesWith(marker), out.String())
				}
				return ""
			})
			return "live-1"
		},
		"workspace": func(string) string { w, _ := filepath.EvalSymlinks(ws); return w },
		"stopped": func(string) string {
			code := waitExit(t, cmd, 20*time.Second)
			if left := processesWith(marker); code != 137 || len(left) > 0 {
				return fmt.Sprintf("FAIL: exit %d, left %v\n%s", code, left, out.String())
			}
			return "exit 137, nothing left"
		},
	})
}
