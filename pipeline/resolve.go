package pipeline

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// lookupTimeout bounds the name lookup of a resolve: true tool, so that a
// slow DNS server cannot hold a decision.
const lookupTimeout = 2 * time.Second

// LookupHost resolves a host name for the URL classifier (tools with
// resolve: true). A failed lookup returns no addresses: the URL is then
// judged by its name alone, as when resolve is off.
func LookupHost(host string) []netip.Addr {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	return addrs
}
