package egress

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
)

// BenchmarkConnect is the proxy's cost per connection once rein has
// decided (the decision itself is a check: see the pipeline's benchmarks):
// CONNECT, judge, dial, a one-line echo, close; BenchmarkDirect is the same
// exchange without the proxy.
func BenchmarkConnect(b *testing.B) {
	up := upstream(b).Addr().String()
	p := &Proxy{
		Decide: func(context.Context, string, int) (Verdict, error) { return Verdict{Allowed: true}, nil },
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("203.0.113.5")}, nil
		},
		Dial: func(ctx context.Context, _ netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", up)
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go p.Serve(l)
	b.ResetTimer()
	for b.Loop() {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		io.WriteString(c, "CONNECT ok.test:443 HTTP/1.1\r\nHost: ok.test\r\n\r\n")
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != 200 {
			b.Fatal(res, err)
		}
		io.WriteString(c, "hello\n")
		if _, err := br.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

func BenchmarkDirect(b *testing.B) {
	up := upstream(b).Addr().String()
	for b.Loop() {
		c, err := net.Dial("tcp", up)
		if err != nil {
			b.Fatal(err)
		}
		io.WriteString(c, "hello\n")
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
