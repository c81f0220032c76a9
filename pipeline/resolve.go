package pipeline

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// lookupTimeout bounds the name lookup of a resolve: true tool, so that a
// slow DNS server cannot hold a decision.
const lookupTimeout = 2 * time.Second

// Resolver looks a host name up: its addresses, or an error.
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

// resolver is the lookup LookupHost asks; nil: the system's resolver.
var resolver atomic.Pointer[Resolver]

// UseResolver makes every later lookup of this process ask r instead of the
// system's resolver (rein serve --resolver); nil restores the system's.
// A server has one resolver, as it has one DNS configuration.
func UseResolver(r Resolver) {
	if r == nil {
		resolver.Store(nil)
		return
	}
	resolver.Store(&r)
}

// LookupHost resolves a host name for the URL classifier (tools with
// resolve: true). A failed lookup returns no addresses: the URL is then
// judged by its name alone and tagged url.unresolved (risk.md).
func LookupHost(host string) []netip.Addr {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	var addrs []netip.Addr
	var err error
	if r := resolver.Load(); r != nil {
		addrs, err = (*r)(ctx, host)
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	if err != nil {
		return nil
	}
	return addrs
}
