// Package egress is the only way out of a contained run: an HTTP proxy
// (CONNECT and plain HTTP) that turns every new destination into a rein
// check (tool net.connect, args {host, port}) and enforces the answer. It
// decides on the name before resolving it, so that a name cannot carry data
// out through DNS; only then it resolves, refuses any address on the private
// side of the SSRF boundary (loopback, private, link-local, metadata, …)
// whatever name led to it, and connects to exactly the address it judged.
// It keeps no allowlist of its own: policy decides.
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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/risk"
)

// Tool is the tool name of the check a new destination makes.
const Tool = "net.connect"

// Verdict is rein's answer for one destination.
type Verdict struct {
	Allowed bool
	Reason  string
	CheckID string // the check that decided, for the result
}

// Decider asks rein whether a contained run may connect to host:port. It
// may hold the call while people decide (ask), within ctx.
type Decider func(ctx context.Context, host string, port int) (Verdict, error)

// Reporter records what happened after an allowed check: the address the
// name resolved to ("" when it did not resolve) and whether the proxy
// connected there, or why the connection failed or was refused.
type Reporter func(ctx context.Context, checkID string, succeeded bool, address, summary string)

// Proxy serves the contained run's connections.
type Proxy struct {
	Decide Decider
	Report Reporter // optional
	// Resolve looks a name up (net.DefaultResolver when nil; DNSResolver
	// for a given server). It runs outside the sandbox, for names policy
	// allowed only.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// ResolveTimeout bounds one lookup; a resolver that does not answer in
	// time refuses the connection. Default 10 seconds.
	ResolveTimeout time.Duration
	// Dial connects to an address (net.Dialer when nil).
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// Blocked, when set, is told about every refused destination.
	Blocked func(host string, port int, reason string)
	// DecideTimeout bounds how long a connection waits for its decision
	// (people deciding an ask); then it is refused. Default 5 minutes.
	DecideTimeout time.Duration

	wg sync.WaitGroup
}

// Serve accepts connections on l until it is closed.
func (p *Proxy) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			p.wg.Wait()
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve handles one connection: one CONNECT tunnel, or one plain HTTP
// request (the connection closes after its answer).
func (p *Proxy) serve(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		refuse(c, http.StatusBadRequest, "rein's egress proxy could not read the request: "+err.Error())
		return
	}
	c.SetReadDeadline(time.Time{})
	host, port, err := destination(req)
	if err != nil {
		refuse(c, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.decideTimeout())
	defer cancel()
	up, why := p.open(ctx, host, port)
	if up == nil {
		if p.Blocked != nil {
			p.Blocked(host, port, why)
		}
		refuse(c, http.StatusForbidden, why)
		return
	}
	defer up.Close()
	if req.Method == http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		if n := br.Buffered(); n > 0 { // bytes the client sent after the request
			b, _ := br.Peek(n)
			up.Write(b)
		}
		splice(c, up)
		return
	}
	// Plain HTTP: forward this one request in origin form.
	req.RequestURI = ""
	req.URL.Scheme, req.URL.Host = "", ""
	req.Header.Del("Proxy-Authorization")
	req.Header.Del("Proxy-Connection")
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	io.Copy(c, up)
}

func (p *Proxy) decideTimeout() time.Duration {
	if p.DecideTimeout > 0 {
		return p.DecideTimeout
	}
	return 5 * time.Minute
}

// open decides host:port, resolves the name only once policy allowed it,
// judges the addresses and connects to the first public one. It returns
// the connection, or nil and why not.
func (p *Proxy) open(ctx context.Context, host string, port int) (net.Conn, string) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && risk.IsPrivate(a) {
		// Never reachable from a contained run, whatever policy says; the
		// attempt is still a check, so that it is on the record, and its
		// result says it was refused.
		why := fmt.Sprintf("%s is not a public address: a contained run never connects there", a)
		if v, err := p.Decide(ctx, host, port); err == nil && v.CheckID != "" && v.Allowed && p.Report != nil {
			p.Report(context.WithoutCancel(ctx), v.CheckID, false, a.String(), why+"; refused by the egress proxy")
		}
		return nil, why
	}
	v, err := p.Decide(ctx, host, port)
	if err != nil {
		return nil, fmt.Sprintf("rein could not decide %s:%d, so the connection is refused: %v", host, port, err)
	}
	if !v.Allowed {
		return nil, fmt.Sprintf("rein refused %s:%d: %s", host, port, v.Reason)
	}
	report := func(ok bool, addr, s string) {
		if p.Report != nil && v.CheckID != "" {
			p.Report(context.WithoutCancel(ctx), v.CheckID, ok, addr, s)
		}
	}
	addrs, err := p.resolve(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		why := fmt.Sprintf("%s does not resolve, so the connection is refused: %v", host, err)
		report(false, "", why)
		return nil, why
	}
	// One non-public answer refuses the name, even beside public ones: the
	// name is the attacker's, and a retry could get the other answer.
	var public []netip.Addr
	for _, a := range addrs {
		if risk.IsPrivate(a) {
			report(false, a.String(), fmt.Sprintf("%s resolves to %s, which is not a public address; refused by the egress proxy", host, a))
			return nil, fmt.Sprintf("%s resolves to %s, which is not a public address: a grant for a name never covers such an address", host, a)
		}
		public = append(public, a.Unmap())
	}
	var last error
	for _, a := range public {
		up, err := p.dial(ctx, netip.AddrPortFrom(a, uint16(port)))
		if err == nil {
			report(true, a.String(), "connected to "+netip.AddrPortFrom(a, uint16(port)).String())
			return up, ""
		}
		last = err
	}
	report(false, public[len(public)-1].String(), fmt.Sprintf("connecting to %s:%d failed: %v", host, port, last))
	return nil, fmt.Sprintf("connecting to %s:%d failed: %v", host, port, last)
}

func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	timeout := p.ResolveTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if p.Resolve != nil {
		return p.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// DNSResolver looks names up with the DNS server at server (host:port, or
// host for port 53) instead of the system's: e.g. a corporate resolver
// that rein run is told of outside the sandbox (--resolver), which the
// contained command cannot choose. Both A and AAAA answers are asked for,
// and a failure of either fails the lookup (StrictErrors), so a resolver
// that answers half never lets a name through on the other half.
func DNSResolver(server string) (func(ctx context.Context, host string) ([]netip.Addr, error), error) {
	if _, _, err := net.SplitHostPort(server); err != nil {
		server = net.JoinHostPort(strings.Trim(server, "[]"), "53")
	}
	h, port, err := net.SplitHostPort(server)
	if err != nil || h == "" || port == "" {
		return nil, fmt.Errorf("%q is not a DNS server: give host:port, e.g. 10.0.0.53:53", server)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("%q: the port must be 1-65535", server)
	}
	if strings.ContainsAny(h, " /\\@") {
		return nil, fmt.Errorf("%q is not a DNS server: give host:port, e.g. 10.0.0.53:53", server)
	}
	r := &net.Resolver{PreferGo: true, StrictErrors: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		return r.LookupNetIP(ctx, "ip", host)
	}, nil
}

func (p *Proxy) dial(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, a)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", a.String())
}

// destination is the host and port a proxy request names: CONNECT's
// authority, or a plain request's absolute URL (http only).
func destination(req *http.Request) (string, int, error) {
	var hostport string
	switch {
	case req.Method == http.MethodConnect:
		hostport = req.RequestURI
	case req.URL != nil && req.URL.IsAbs() && req.URL.Scheme == "http":
		hostport = req.URL.Host
		if req.URL.Port() == "" {
			hostport = net.JoinHostPort(req.URL.Hostname(), "80")
		}
	default:
		return "", 0, errors.New("rein's egress proxy takes CONNECT host:port, or a plain http:// request in absolute form")
	}
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port: %v", hostport, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("%q: the port must be 1-65535", hostport)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || strings.ContainsAny(host, " /\\@") {
		return "", 0, fmt.Errorf("%q is not a host name", host)
	}
	return host, port, nil
}

// refuse answers a proxy request with an error and its reason.
func refuse(c net.Conn, status int, why string) {
	body := why + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Rein-Reason: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, why), len(body), body)
}

// splice copies both ways until either side ends.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}
