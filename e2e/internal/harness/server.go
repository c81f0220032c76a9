package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for one writer and many readers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Server is a running `rein serve`.
type Server struct {
	T      testing.TB
	URL    string // http://ADDR as printed by rein
	Data   string
	Cmd    *exec.Cmd
	Stdout *SyncBuffer
	Stderr *SyncBuffer
	// Exited is closed when the process has exited; Err is then what
	// Wait returned.
	Exited chan struct{}
	Err    error
}

// StartServer runs `rein serve --data DATA --listen 127.0.0.1:0 ARGS...`,
// reads the address it prints, and waits until /readyz answers 200.
// env entries (KEY=VALUE) are added to a clean environment; unless they
// name REIN_RESOLVER, the server resolves names with DNS (the test internet).
func StartServer(t testing.TB, data string, env []string, args ...string) *Server {
	t.Helper()
	s := &Server{T: t, Data: data, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}, Exited: make(chan struct{})}
	s.Cmd = exec.Command(Bin, append([]string{"serve", "--data", data, "--listen", "127.0.0.1:0"}, args...)...)
	s.Cmd.Dir = ModuleRoot
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "REIN_RESOLVER=") }) {
		env = append(env, "REIN_RESOLVER="+DNS(t))
	}
	s.Cmd.Env = CleanEnv(env...)
	s.Cmd.Stderr = s.Stderr
	pipe, err := s.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Cmd.Start(); err != nil {
		t.Fatalf("start rein serve: %v", err)
	}
	t.Cleanup(s.Kill)

	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.Stdout.Write([]byte(line + "\n"))
			if a, ok := strings.CutPrefix(strings.TrimSpace(line), "rein is listening on "); ok {
				select {
				case addr <- a:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
		s.Err = s.Cmd.Wait()
		close(s.Exited)
	}()

	select {
	case s.URL = <-addr:
	case <-s.Exited:
		t.Fatalf("rein serve exited before listening (%v)\nstdout:\n%s\nstderr:\n%s", s.Err, s.Stdout, s.Stderr)
	case <-time.After(StartTimeout):
		t.Fatalf("rein serve printed no \"rein is listening on http://ADDR\" line within %s\nstdout:\n%s\nstderr:\n%s",
			StartTimeout, s.Stdout, s.Stderr)
	}
	if !strings.HasPrefix(s.URL, "http://") {
		t.Fatalf("rein serve printed a listening address without http://: %q", s.URL)
	}
	s.WaitReady()
	return s
}

// WaitReady waits until /readyz answers 200.
func (s *Server) WaitReady() {
	s.T.Helper()
	deadline := time.Now().Add(StartTimeout)
	var last string
	for time.Now().Before(deadline) {
		code, body := HTTPDo(s.T, "GET", s.URL+"/readyz", "", nil, "")
		if code == http.StatusOK {
			return
		}
		last = fmt.Sprintf("%d %s", code, body)
		time.Sleep(50 * time.Millisecond)
	}
	s.T.Fatalf("%s/readyz did not answer 200 within %s; last answer: %s\nstderr:\n%s", s.URL, StartTimeout, last, s.Stderr)
}

// Stop sends SIGINT and requires a clean exit (code 0) within ShutdownTimeout.
func (s *Server) Stop() {
	s.T.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGINT); err != nil {
		s.T.Fatalf("send SIGINT to rein serve: %v", err)
	}
	select {
	case <-s.Exited:
	case <-time.After(ShutdownTimeout):
		s.Cmd.Process.Kill()
		<-s.Exited
		s.T.Fatalf("rein serve did not exit within %s of SIGINT\nstderr:\n%s", ShutdownTimeout, s.Stderr)
	}
	if s.Err != nil {
		s.T.Fatalf("rein serve did not shut down cleanly after SIGINT: %v (want exit code 0)\nstderr:\n%s", s.Err, s.Stderr)
	}
}

// Kill ends the process if a test left it running.
func (s *Server) Kill() {
	select {
	case <-s.Exited:
	default:
		s.Cmd.Process.Kill()
		select {
		case <-s.Exited:
		case <-time.After(ShutdownTimeout):
		}
	}
}

// AdminKey reads <data>/admin.key.
func (s *Server) AdminKey() string {
	s.T.Helper()
	b, err := os.ReadFile(filepath.Join(s.Data, "admin.key"))
	if err != nil {
		s.T.Fatalf("read admin key: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// ClientEnv is the environment of a CLI user talking to s with key.
func (s *Server) ClientEnv(key string) []string {
	return []string{"REIN_SERVER=" + s.URL, "REIN_KEY=" + key}
}
