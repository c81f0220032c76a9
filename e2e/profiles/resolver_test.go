package profiles

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
	"github.com/reinhq/rein/internal/dnstest"
)

// zone is what the test DNS server answers: public-looking names that lead
// inside (loopback, private, link-local, metadata, CGNAT, unspecified, IPv4
// in IPv6), one with a public and a private answer, CNAME chains to such
// names (answered in full, as a recursive resolver does), and names whose
// lookup times out or fails.
var zone = map[string][]string{
	"api.loopback-cdn.com":    {"127.0.0.1"},
	"api.private-cdn.com":     {"10.20.30.40"},
	"api.metadata-cdn.com":    {"169.254.169.254"},
	"api.v6loop-cdn.com":      {"::1"},
	"api.mapped-cdn.com":      {"::ffff:127.0.0.1"},
	"api.ula-cdn.com":         {"fd00::1"},
	"api.cgnat-cdn.com":       {"100.64.1.2"},
	"api.zero-cdn.com":        {"0.0.0.0"},
	"api.mixed-cdn.com":       {"93.184.215.14", "192.168.1.1"},
	"www.chain-cdn.com":       {"CNAME edge.chain-cdn.com", "CNAME origin.chain-cdn.com", "10.0.0.7"},
	"www.metachain-cdn.com":   {"CNAME api.metadata-cdn.com", "169.254.169.254"},
	"www.v6chain-cdn.com":     {"CNAME api.v6loop-cdn.com", "::1"},
	"api.slow-resolver.com":   {"TIMEOUT"},
	"api.broken-resolver.com": {"SERVFAIL"},
}

// dnsServer answers zone over UDP on 127.0.0.1, and counts the queries.
func dnsServer(t *testing.T) (addr string, queries *atomic.Int64) {
	t.Helper()
	s, err := dnstest.Start(dnstest.Zone{Names: zone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Addr, &s.Queries
}

// TestNamesThatResolveInside: with policy allowing every name, and rein run
// told to resolve with a DNS server that answers public-looking names with
// addresses inside, no connection reaches those addresses (a listener on
// loopback counts what arrives); each attempt is a net.connect check on
// record, allowed by policy, whose result says the egress proxy refused it
// and names the address; a resolver that times out or fails refuses the
// connection with a reason (fail closed).
func TestNamesThatResolveInside(t *testing.T) {
	t.Parallel()
	e := start(t, `version: 1
rules:
  - {id: every-name, when: 'tool == "net.connect" && sandbox.contained', decision: allow}
`)
	dns, queries := dnsServer(t)
	// Where a proxy fooled by a name would connect: loopback, on the port
	// every attempt names.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var reached atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port

	names := make([]string, 0, len(zone))
	var script strings.Builder
	for name := range zone {
		names = append(names, name)
		fmt.Fprintf(&script, `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT %[1]s:%[2]d HTTP/1.1\r\nHost: %[1]s\r\n\r\n' >&3; echo "%[1]s: $(head -1 <&3)"; exec 3<&-
`, name, port)
	}
	// The resolver is rein run's (its flag, or REIN_RESOLVER outside), not
	// the contained command's: the flag is used for half, the variable for
	// the other half.
	r := e.run(t, script.String(), "--workspace", t.TempDir(), "--session", "dns-1", "--resolver", dns, "--", "bash", "-s")
	if r.Code != 0 {
		t.Fatalf("rein run: %s", r)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d connections reached loopback through names:\n%s", n, r)
	}
	if queries.Load() == 0 {
		t.Fatalf("the test DNS server was never asked: rein run did not use --resolver\n%s", r)
	}
	checks := e.checks(t, "dns-1")
	for _, name := range names {
		line := ""
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.HasPrefix(l, name+": ") {
				line = l
			}
		}
		if !strings.Contains(line, " 403 ") {
			t.Errorf("%s: the proxy answered %q, want 403", name, line)
		}
		c, ok := checks[fmt.Sprintf("%s:%d", name, port)]
		if !ok || c.Decision != "allow" || c.Check.Tool != "net.connect" {
			t.Errorf("%s: no allowed net.connect check on record: %+v", name, c)
			continue
		}
		if c.Result == nil || c.Result.Status != "failed" {
			t.Errorf("%s: the check's result: %+v", name, c.Result)
			continue
		}
		records := zone[name]
		last := records[len(records)-1]
		switch last {
		case "TIMEOUT", "SERVFAIL":
			if c.Result.Address != "" || !strings.Contains(c.Result.Summary, "does not resolve, so the connection is refused") {
				t.Errorf("%s: a failing resolver: %+v", name, c.Result)
			}
		default:
			want := netip.MustParseAddr(last).String()
			if name == "api.mixed-cdn.com" {
				want = "192.168.1.1"
			}
			if c.Result.Address != want || !strings.Contains(c.Result.Summary, "resolves to "+want) || !strings.Contains(c.Result.Summary, "refused by the egress proxy") {
				t.Errorf("%s: the result names %q: %q, want the address %s", name, c.Result.Address, c.Result.Summary, want)
			}
		}
	}

	// REIN_RESOLVER, set outside, does the same as the flag.
	env := append(e.s.ClientEnv(e.agent), "REIN_RESOLVER="+dns)
	before := queries.Load()
	one := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT api.metadata-cdn.com:%d HTTP/1.1\r\nHost: x\r\n\r\n' >&3; head -1 <&3
`, port)
	r2 := harness.ReinWithInput(t, env, one, "run", "--workspace", t.TempDir(), "--session", "dns-2", "--", "bash", "-s")
	if queries.Load() == before || !strings.Contains(r2.Stdout, " 403 ") || reached.Load() != 0 {
		t.Errorf("with REIN_RESOLVER: %s", r2)
	}
	if c := e.checks(t, "dns-2")[fmt.Sprintf("api.metadata-cdn.com:%d", port)]; c.Result == nil || c.Result.Address != "169.254.169.254" {
		t.Errorf("with REIN_RESOLVER, the check: %+v", c)
	}
	// The record says which resolver each run used.
	resolvers := map[string]any{}
	for _, en := range e.entries(t, "sandbox.started") {
		data, _ := en["data"].(map[string]any)
		resolvers[fmt.Sprint(data["session"])] = data["resolver"]
	}
	if resolvers["dns-1"] != dns || resolvers["dns-2"] != dns {
		t.Errorf("sandbox.started's resolver: %v, want %s", resolvers, dns)
	}
	// A resolver that is not host:port is refused before anything runs.
	if r := e.run(t, "echo ran\n", "--workspace", t.TempDir(), "--resolver", "dns.example.com:domain", "--", "bash", "-s"); r.Code != 2 || strings.Contains(r.Stdout, "ran") {
		t.Errorf("a bad --resolver: %s", r)
	}
}
