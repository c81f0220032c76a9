package http_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest sends the headers of a POST and part of its body over a plain
// TCP connection, then stalls: it sends nothing more and waits for an answer.
func rawRequest(t *testing.T, e *env, path, key, partial string, length int) (status string, body string, took time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: rein\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, length)
	if key != "" {
		fmt.Fprintf(conn, "Authorization: Bearer %s\r\n", e.key(key).Secret)
	}
	fmt.Fprintf(conn, "\r\n%s", partial)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body after %s: %v", time.Since(start), err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.Status, string(b), time.Since(start)
}

// TestStalledBodyIsCut: a client that sends its headers and half a body,
// then stalls, gets a 400 that says so once the body deadline passes,
// instead of holding a connection and a goroutine for ever.
func TestStalledBodyIsCut(t *testing.T) {
	e := newEnv(t, globalPolicy)
	e.api.BodyTimeout = 300 * time.Millisecond
	for _, path := range []string{"/v1/check", "/v1/hooks/claude-code", "/v1/questions"} {
		t.Run(path, func(t *testing.T) {
			status, body, took := rawRequest(t, e, path, "acme-agent", `{"tool":"fs.`, 100)
			if took < 250*time.Millisecond || took > 5*time.Second {
				t.Errorf("answered after %s; the body deadline is 300ms", took)
			}
			if path == "/v1/hooks/claude-code" {
				// The hook answers every error as a decision the agent's host reads.
				if !strings.Contains(body, "did not arrive within 300ms") {
					t.Errorf("hook answer %s %s: want the stalled body named", status, body)
				}
				return
			}
			if !strings.HasPrefix(status, "400") || !strings.Contains(body, "did not arrive within 300ms of its headers") {
				t.Errorf("answer %s %s: want a 400 saying the body did not arrive", status, body)
			}
		})
	}
	t.Run("a request refused before its body is read is cut too", func(t *testing.T) {
		_, _, took := rawRequest(t, e, "/v1/check", "", `{"tool":"fs.`, 100)
		if took > 5*time.Second {
			t.Errorf("answered after %s", took)
		}
	})
	t.Run("a whole body sent slowly within the deadline is read", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := `{"tool":"fs.read","args":{"path":"a"}}`
		fmt.Fprintf(conn, "POST /v1/check HTTP/1.1\r\nHost: rein\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", e.key("acme-agent").Secret, len(body), body[:10])
		time.Sleep(100 * time.Millisecond)
		fmt.Fprint(conn, body[10:])
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("answer %v %v", res, err)
		}
	})
}

// TestBodyDeadlineSparesLongRequests: the deadline covers reading a body
// only. An event stream (no body) and a check that waits for its approval
// (a body read at once, then a long answer) outlive it.
func TestBodyDeadlineSparesLongRequests(t *testing.T) {
	e := newEnv(t, globalPolicy)
	e.api.BodyTimeout = 200 * time.Millisecond

	stream := openStream(t, e, "acme-auditor")
	start := time.Now()
	r := e.do("POST", "/v1/check", "acme-agent", map[string]any{"tool": "deploy", "wait_ms": 1000})
	wantStatus(t, r, 200)
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Errorf("a check waiting 1s for its approval answered after %s: the body deadline cut it", took)
	}
	if d := str(r.object(t), "decision"); d != "ask" {
		t.Errorf("decision %q, want ask (nobody approved)", d)
	}
	// The stream, open for over 1s (five body deadlines), still delivers.
	e.check("acme-agent", map[string]any{"tool": "fs.read", "session": "after-the-wait"})
	readUntil(t, stream, "after-the-wait")

	// A keep-alive connection serves a second request after the first
	// one's body deadline would have passed.
	client := e.srv.Client()
	for i := range 2 {
		res, err := client.Post(e.srv.URL+"/v1/check", "application/json", strings.NewReader(`{"tool":"fs.read"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 401 {
			t.Errorf("request %d: %s", i, res.Status)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
