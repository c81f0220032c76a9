package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is a local server that stands for every public host: it echoes
// what it reads after a line "hello".
func upstream(t testing.TB) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, _ := br.ReadString('\n')
				if strings.HasPrefix(line, "GET ") { // a plain HTTP request
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nplain ok\n")
					return
				}
				io.WriteString(c, "echo "+line)
			}()
		}
	}()
	return l
}

type calls struct {
	mu      sync.Mutex
	decided []string
	reports []string
}

func proxy(t *testing.T, up net.Listener, c *calls) string {
	names := map[string][]netip.Addr{
		"ok.test":      {netip.MustParseAddr("203.0.113.5")},
		"rebind.test":  {netip.MustParseAddr("10.1.2.3")},
		"meta.test":    {netip.MustParseAddr("169.254.169.254")},
		"mapped.test":  {netip.MustParseAddr("::ffff:127.0.0.1")},
		"denied.test":  {netip.MustParseAddr("203.0.113.6")},
		"failing.test": {netip.MustParseAddr("203.0.113.7")},
	}
	p := &Proxy{
		Decide: func(ctx context.Context, host string, port int) (Verdict, error) {
			c.mu.Lock()
			c.decided = append(c.decided, host)
			c.mu.Unlock()
			switch host {
			case "denied.test":
				return Verdict{Reason: "not on the list", CheckID: "chk_d"}, nil
			case "failing.test":
				return Verdict{}, errors.New("rein is unreachable")
			}
			return Verdict{Allowed: true, CheckID: "chk_" + host}, nil
		},
		Report: func(_ context.Context, id string, ok bool, address, s string) {
			c.mu.Lock()
			c.reports = append(c.reports, id+" ["+address+"] "+s)
			c.mu.Unlock()
		},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return a, nil
			}
			return nil, errors.New("no such host")
		},
		Dial: func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			if a.Addr() != netip.MustParseAddr("203.0.113.5") {
				t.Errorf("dialled %s", a)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", up.Addr().String())
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go p.Serve(l)
	return l.Addr().String()
}

func connect(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	io.WriteString(c, "hello\n")
	line, _ := br.ReadString('\n')
	return 200, line
}

// TestProxy: a name is decided before it is resolved; an allowed name
// connects to exactly the address judged; a refused, undecidable or
// non-public destination never connects, whatever name leads to it, and
// whatever policy says of an address literal (the attempt is still a check,
// with a result that says it was refused).
func TestProxy(t *testing.T) {
	up := upstream(t)
	var c calls
	addr := proxy(t, up, &c)
	for _, tc := range []struct {
		target string
		code   int
		says   string
		asked  bool
	}{
		{"ok.test:443", 200, "echo hello", true},
		{"denied.test:443", 403, "not on the list", true},
		{"failing.test:443", 403, "rein is unreachable", true},
		{"rebind.test:443", 403, "10.1.2.3, which is not a public address", true},
		{"meta.test:80", 403, "169.254.169.254", true},
		{"mapped.test:443", 403, "not a public address", true},
		{"127.0.0.1:8750", 403, "not a public address", true},
		{"[::1]:22", 403, "not a public address", true},
		{"169.254.169.254:80", 403, "not a public address", true},
		{"10.0.0.1:443", 403, "not a public address", true},
	} {
		c.mu.Lock()
		before := len(c.decided)
		c.mu.Unlock()
		code, body := connect(t, addr, tc.target)
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("CONNECT %s: %d %q, want %d %q", tc.target, code, body, tc.code, tc.says)
		}
		c.mu.Lock()
		asked := len(c.decided) > before
		c.mu.Unlock()
		if asked != tc.asked {
			t.Errorf("CONNECT %s: rein asked %v, want %v", tc.target, asked, tc.asked)
		}
	}
	c.mu.Lock()
	reports := strings.Join(c.reports, "\n")
	c.mu.Unlock()
	if !strings.Contains(reports, "chk_ok.test [203.0.113.5] connected to 203.0.113.5:443") ||
		!strings.Contains(reports, "chk_rebind.test [10.1.2.3] rebind.test resolves to 10.1.2.3") ||
		!strings.Contains(reports, "chk_mapped.test [::ffff:127.0.0.1] mapped.test resolves to ::ffff:127.0.0.1") ||
		!strings.Contains(reports, "chk_169.254.169.254 [169.254.169.254] 169.254.169.254 is not a public address: a contained run never connects there; refused by the egress proxy") {
		t.Errorf("results reported:\n%s", reports)
	}

	// Plain HTTP through the proxy.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET http://ok.test/x HTTP/1.1\r\nHost: ok.test\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "plain ok\n" {
		t.Errorf("plain HTTP: %d %q", res.StatusCode, b)
	}
	// A request that is not for a proxy is refused.
	conn2, _ := net.Dial("tcp", addr)
	defer conn2.Close()
	io.WriteString(conn2, "GET /x HTTP/1.1\r\nHost: ok.test\r\n\r\n")
	if res, err := http.ReadResponse(bufio.NewReader(conn2), nil); err != nil || res.StatusCode != 400 {
		t.Errorf("an origin-form request: %v %v", res, err)
	}
}

// TestResolverFailsClosed: a resolver that does not answer refuses the
// connection within ResolveTimeout, with the reason, and reports it on the
// check with no address; a resolver that is not host:port is refused.
func TestResolverFailsClosed(t *testing.T) {
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	resolve, err := DNSResolver(silent.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reports []string
	p := &Proxy{
		Decide: func(context.Context, string, int) (Verdict, error) {
			return Verdict{Allowed: true, CheckID: "chk_1"}, nil
		},
		Report: func(_ context.Context, id string, ok bool, address, s string) {
			mu.Lock()
			reports = append(reports, fmt.Sprintf("%s %v [%s] %s", id, ok, address, s))
			mu.Unlock()
		},
		Resolve:        resolve,
		ResolveTimeout: 300 * time.Millisecond,
		Dial: func(context.Context, netip.AddrPort) (net.Conn, error) {
			t.Error("dialled without an answer")
			return nil, errors.New("no")
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go p.Serve(l)
	start := time.Now()
	code, body := connect(t, l.Addr().String(), "api.example.com:443")
	if code != 403 || !strings.Contains(body, "api.example.com does not resolve, so the connection is refused") || time.Since(start) > 5*time.Second {
		t.Errorf("a silent resolver: %d %q after %s", code, body, time.Since(start))
	}
	mu.Lock()
	got := strings.Join(reports, "\n")
	mu.Unlock()
	if !strings.HasPrefix(got, "chk_1 false [] api.example.com does not resolve") {
		t.Errorf("reported: %q", got)
	}
	for _, bad := range []string{"", "dns.example.com:domain", "10.0.0.53:99999", "a b:53"} {
		if _, err := DNSResolver(bad); err == nil {
			t.Errorf("DNSResolver(%q) accepted", bad)
		}
	}
	if _, err := DNSResolver("10.0.0.53"); err != nil {
		t.Errorf("a host without a port (53): %v", err)
	}
}
