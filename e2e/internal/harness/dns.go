package harness

import (
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/dnstest"
)

var dns struct {
	once sync.Once
	addr string
	err  error
}

// DNS is the address (host:port) of this test process's DNS server, which
// answers dnstest.Internet: every name public but a few that lead inside,
// fail or hang. Servers started by StartServer resolve with it, so what the
// sample policy's resolve: true tools see does not depend on the machine's
// network (which may have no DNS at all).
func DNS(t testing.TB) string {
	t.Helper()
	dns.once.Do(func() {
		s, err := dnstest.Start(dnstest.Internet)
		if err != nil {
			dns.err = err
			return
		}
		dns.addr = s.Addr
	})
	if dns.err != nil {
		t.Fatalf("test DNS server: %v", dns.err)
	}
	return dns.addr
}
