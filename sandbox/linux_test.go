//go:build linux

package sandbox

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGitIdentity: the private home gets user.name and user.email from git
// config --null --get-regexp (the last of a key wins), and never a value git
// would need quoting or escaping for.
func TestGitIdentity(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"user.name\nAda Lovelace\x00user.email\nada@example.com\x00", "[user]\n\tname = \"Ada Lovelace\"\n[user]\n\temail = \"ada@example.com\"\n"},
		{"user.email\nold@example.com\x00user.email\nnew@example.com\x00", "[user]\n\temail = \"new@example.com\"\n"},
		{"user.name\nA \"quoted\" name\x00user.email\nx\\y@example.com\x00", ""},
		{"user.name\nline one\nline two\x00", ""},
		{"user.signingkey\nABCDEF\x00user.name\n\x00", ""},
		{"", ""},
	} {
		if got := gitIdentity([]byte(c.out)); got != c.want {
			t.Errorf("gitIdentity(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

// TestHandoff: what the sandbox's rein process hands over (the filter's
// descriptor, then one listener per port) is received once, and each
// listener's connections are carried to its socket outside; a handoff
// with the wrong number of descriptors is refused.
func TestHandoff(t *testing.T) {
	dir := t.TempDir()
	s := Spec{ProxySocket: filepath.Join(dir, "proxy.sock"), NotifySocket: filepath.Join(dir, "notify.sock"),
		Forward: []Forward{{Port: 1, Socket: filepath.Join(dir, "relay.sock")}}}
	// The sockets outside answer with their name.
	for _, name := range []string{s.ProxySocket, s.Forward[0].Socket} {
		l, err := net.Listen("unix", name)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				io.WriteString(c, filepath.Base(name))
				c.Close()
			}
		}()
	}
	receive := func(fds []int) (*Handoff, error) {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.NotifySocket, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		sent := make(chan error, 1)
		go func() { sent <- sendFDs(s.NotifySocket, fds) }()
		h, err := Receive(l, s)
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(s.NotifySocket); err == nil {
			t.Errorf("the handoff's socket is still there after Receive")
		}
		return h, err
	}
	r, w, err := os.Pipe() // stands for the filter's descriptor
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var listeners []*os.File
	var addrs []string
	for range 2 {
		l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := l.File()
		addrs = append(addrs, l.Addr().String())
		l.Close()
		defer f.Close()
		listeners = append(listeners, f)
	}
	if _, err := receive([]int{int(r.Fd()), int(listeners[0].Fd())}); err == nil {
		t.Fatal("a handoff without the forwarded port's listener was received")
	}
	h, err := receive([]int{int(r.Fd()), int(listeners[0].Fd()), int(listeners[1].Fd())})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Notify < 0 {
		t.Fatal("no notification descriptor")
	}
	for i, want := range []string{"proxy.sock", "relay.sock"} {
		c, err := net.DialTimeout("tcp", addrs[i], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		got, _ := io.ReadAll(c)
		c.Close()
		if string(got) != want {
			t.Errorf("a connection to the listener of port %d reached %q, want %q", i, got, want)
		}
	}
}

// TestPackageDir: the directory shown for the command's own package is
// absolute, also for a command named relative to the working directory
// (a directory bound at "." would replace the sandbox's root).
func TestPackageDir(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "tools"), 0o755)
	os.WriteFile(filepath.Join(dir, "tools", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	t.Chdir(dir)
	for _, name := range []string{"./tools/run.sh", "tools/../tools/run.sh"} {
		if got := packageDir(name); got != filepath.Join(dir, "tools") {
			t.Errorf("packageDir(%q) = %q, want %q", name, got, filepath.Join(dir, "tools"))
		}
	}
}
