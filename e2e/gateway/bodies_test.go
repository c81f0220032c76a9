package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// bodiesPolicy asks for deploys, so that a check and an approval can be
// waited on.
const bodiesPolicy = `version: 1
default: deny
approval: {approvers: ["role:approver"], ttl: 15m}
rules:
  - {id: read, when: 'tool == "fs.read"', decision: allow}
  - {id: deploy, when: 'tool == "deploy.run"', decision: ask, reason: deploys need an approval}
`

// stalledBody sends the headers of a POST that announces a body of 1000
// bytes, sends 10 of them and stalls. It returns when the server closes
// the connection, with the time that took and the status line it got.
func stalledBody(addr, path, auth, header string) (took time.Duration, status string, err error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n", path, addr)
	if auth != "" {
		fmt.Fprintf(conn, "Authorization: Bearer %s\r\n", auth)
	}
	fmt.Fprintf(conn, "%s\r\n{\"tool\": \"", header)
	conn.SetReadDeadline(start.Add(45 * time.Second))
	r := bufio.NewReader(conn)
	status, _ = r.ReadString('\n')
	if _, err := io.Copy(io.Discard, r); err != nil {
		return time.Since(start), strings.TrimSpace(status), fmt.Errorf("still open after %s: %v", time.Since(start).Round(time.Second), err)
	}
	return time.Since(start), strings.TrimSpace(status), nil
}

// TestStalledBodiesAreCut: on every listener rein opens (the API with its
// console, ACS, AuthZEN and hook endpoints, and the MCP gateway's
// --listen), a client that sends its headers and then stalls its body has
// its connection closed once the default body deadline of 10 s passes,
// whether or not the handler reads the body (an unauthenticated request,
// an unknown path, a console form). Meanwhile the answers rein gives slowly
// on purpose still arrive: a check that waits 14 s for its approval, a
// long-poll of 14 s on the approval, an event stream, and a body sent in
// pieces within the deadline is read.
func TestStalledBodiesAreCut(t *testing.T) {
	t.Parallel() // mostly waiting
	e := harness.NewApprovalEnvWith(t, t.TempDir(), bodiesPolicy)
	bin, err := buildMCPServer()
	if err != nil {
		t.Fatal(err)
	}
	gw := startAndRead(t, exec.Command(harness.Bin, "mcp", "--listen", "127.0.0.1:0", "--name", "go", "--upstream", bin, "--upstream-arg", filepath.Join(t.TempDir(), "record.txt")),
		harness.CleanEnv("REIN_SERVER="+e.S.URL, "REIN_KEY="+e.Keys["builder"]), "rein mcp is listening on ", true)
	api := strings.TrimPrefix(e.S.URL, "http://")
	gwAddr := strings.TrimSuffix(strings.TrimPrefix(gw, "http://"), "/mcp")
	agent := e.Keys["builder"]

	// An approval to long-poll on.
	code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", agent, []byte(`{"tool":"deploy.run","args":{"env":"prod"}}`), "application/json")
	var asked struct{ Approval struct{ ID string } }
	if json.Unmarshal(body, &asked); code != 200 || asked.Approval.ID == "" {
		t.Fatalf("the asked check: %d %s", code, body)
	}

	stalled := []struct{ name, addr, path, auth, header string }{
		{"api check", api, "/v1/check", agent, ""},
		{"api check without a key", api, "/v1/check", "", ""},
		{"api unknown path", api, "/v1/nope", agent, ""},
		{"claude code hook", api, "/v1/hooks/claude-code", agent, ""},
		{"acs", api, "/acs", agent, ""},
		{"authzen", api, "/access/v1/evaluation", agent, ""},
		{"console sign-in form", api, "/sign-in", "", ""},
		{"mcp gateway", gwAddr, "/mcp", "", ""},
		{"mcp gateway, unknown session", gwAddr, "/mcp", "", "Mcp-Session-Id: nope\r\n"},
	}
	type outcome struct {
		took   time.Duration
		status string
		err    error
	}
	got := make([]outcome, len(stalled))
	var wg sync.WaitGroup
	for i, s := range stalled {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took, status, err := stalledBody(s.addr, s.path, s.auth, s.header)
			got[i] = outcome{took, status, err}
		}()
	}

	// The slow answers, at the same time.
	type slow struct {
		name string
		took time.Duration
		code int
		body string
	}
	slows := make(chan slow, 4)
	wg.Add(3)
	go func() {
		defer wg.Done()
		start := time.Now()
		code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", agent, []byte(`{"tool":"deploy.run","args":{"env":"staging"},"wait_ms":14000}`), "application/json")
		slows <- slow{"a check waiting 14 s", time.Since(start), code, string(body)}
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		code, body := harness.HTTPDo(t, "GET", e.S.URL+"/v1/approvals/"+asked.Approval.ID+"/wait?timeout_ms=14000", agent, nil, "")
		slows <- slow{"a 14 s long-poll", time.Since(start), code, string(body)}
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		req, _ := http.NewRequest("GET", e.S.URL+"/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+e.Keys["alice"])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			slows <- slow{"an event stream", time.Since(start), 0, err.Error()}
			return
		}
		defer res.Body.Close()
		done := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, res.Body); done <- err }()
		select {
		case err := <-done:
			slows <- slow{"an event stream", time.Since(start), res.StatusCode, fmt.Sprintf("ended after %s: %v", time.Since(start), err)}
		case <-time.After(14 * time.Second):
			slows <- slow{"an event stream", time.Since(start), res.StatusCode, "open"}
		}
	}()
	// A whole body sent in two pieces 3 s apart, within the deadline.
	conn, err := net.Dial("tcp", api)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	whole := `{"tool":"fs.read","args":{"path":"README.md"}}`
	fmt.Fprintf(conn, "POST /v1/check HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", api, agent, len(whole), whole[:10])
	time.Sleep(3 * time.Second)
	fmt.Fprint(conn, whole[10:])
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || res.StatusCode != 200 {
		t.Errorf("a body sent in pieces within the deadline: %v %v", res, err)
	}

	wg.Wait()
	close(slows)
	for i, s := range stalled {
		o := got[i]
		t.Logf("%s (%s%s): closed after %s, answered %q", s.name, s.addr, s.path, o.took.Round(10*time.Millisecond), o.status)
		if o.err != nil || o.took > 14*time.Second {
			t.Errorf("%s: a stalled body must lose its connection within the 10 s deadline: %s %v", s.name, o.took, o.err)
		}
	}
	for s := range slows {
		t.Logf("%s: %d after %s", s.name, s.code, s.took.Round(10*time.Millisecond))
		if s.code != 200 || s.took < 13*time.Second || s.name == "an event stream" && s.body != "open" {
			t.Errorf("%s must be answered after its 14 s, not cut by the body deadline: %d after %s: %.300s", s.name, s.code, s.took, s.body)
		}
	}
}
