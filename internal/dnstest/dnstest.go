// Package dnstest is a DNS server for rein's tests: it answers a zone of
// names over UDP on 127.0.0.1, so that what a name resolves to is the
// test's choice, not the machine's network's.
package dnstest

import (
	"net"
	"net/netip"
	"strings"
	"sync/atomic"

	"golang.org/x/net/dns/dnsmessage"
)

// Public is the address Server answers for names its zone does not hold
// when Zone.Public is set: a public address, as most names on the internet
// resolve to one.
const Public = "93.184.215.14"

// Zone is what a Server answers. Names maps a lower-case name without the
// final dot to its records, in order: an address ("127.0.0.1", "::1"),
// "CNAME target" (the chain is answered in full, as a recursive resolver
// does), "TIMEOUT" (no answer at all), "SERVFAIL" or "NXDOMAIN". A name Names does not
// hold is answered with Public when Public is true, else NXDOMAIN.
type Zone struct {
	Names  map[string][]string
	Public bool
}

// Internet is the zone rein's tests resolve with by default: every name is
// public, as on the internet, but these public-looking names, which lead
// inside (loopback, private, metadata, CGNAT, unspecified, IPv4 in IPv6,
// one private address among public ones, CNAME chains to such names), do
// not resolve (no such name, a failing server) or never answer.
var Internet = Zone{Public: true, Names: map[string][]string{
	"api.loopback-cdn.com":  {"127.0.0.1"},
	"api.private-cdn.com":   {"10.20.30.40"},
	"api.metadata-cdn.com":  {"169.254.169.254"},
	"api.v6loop-cdn.com":    {"::1"},
	"api.mapped-cdn.com":    {"::ffff:127.0.0.1"},
	"api.ula-cdn.com":       {"fd00::1"},
	"api.cgnat-cdn.com":     {"100.64.1.2"},
	"api.zero-cdn.com":      {"0.0.0.0"},
	"api.mixed-cdn.com":     {Public, "192.168.1.1"},
	"www.chain-cdn.com":     {"CNAME edge.chain-cdn.com", "CNAME origin.chain-cdn.com", "10.0.0.7"},
	"www.metachain-cdn.com": {"CNAME api.metadata-cdn.com", "169.254.169.254"},
	"api.gone-cdn.com":      {"NXDOMAIN"},
	"api.broken-cdn.com":    {"SERVFAIL"},
	"api.slow-cdn.com":      {"TIMEOUT"},
}}

// Inside are the names of Internet that lead inside.
var Inside = []string{"api.loopback-cdn.com", "api.private-cdn.com", "api.metadata-cdn.com", "api.v6loop-cdn.com",
	"api.mapped-cdn.com", "api.ula-cdn.com", "api.cgnat-cdn.com", "api.zero-cdn.com", "api.mixed-cdn.com",
	"www.chain-cdn.com", "www.metachain-cdn.com"}

// Unresolved are the names of Internet that resolve to nothing.
var Unresolved = []string{"api.gone-cdn.com", "api.broken-cdn.com", "api.slow-cdn.com"}

// Server is a running DNS server.
type Server struct {
	Addr    string       // host:port to give as a resolver
	Queries atomic.Int64 // questions received
	pc      net.PacketConn
}

// Start answers zone on a new UDP port of 127.0.0.1 until Close.
func Start(zone Zone) (*Server, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: pc.LocalAddr().String(), pc: pc}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.Queries.Add(1)
			if out := zone.answer(buf[:n]); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.pc.Close() }

// answer builds the reply to one query, or nil to stay silent.
func (z Zone) answer(q []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	question, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(question.Name.String()), ".")
	records, known := z.Names[name]
	if !known && z.Public {
		records, known = []string{Public}, true
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	switch {
	case !known || records[0] == "NXDOMAIN":
		rh.RCode = dnsmessage.RCodeNameError
	case records[0] == "TIMEOUT":
		return nil
	case records[0] == "SERVFAIL":
		rh.RCode = dnsmessage.RCodeServerFailure
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	b.StartQuestions()
	b.Question(question)
	b.StartAnswers()
	if rh.RCode == dnsmessage.RCodeSuccess {
		owner := question.Name
		for _, r := range records {
			hdr := dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET, TTL: 60}
			if target, ok := strings.CutPrefix(r, "CNAME "); ok {
				next, err := dnsmessage.NewName(target + ".")
				if err != nil {
					return nil
				}
				b.CNAMEResource(hdr, dnsmessage.CNAMEResource{CNAME: next})
				owner = next
				continue
			}
			a, err := netip.ParseAddr(r)
			if err != nil {
				return nil
			}
			switch {
			case question.Type == dnsmessage.TypeA && a.Is4():
				b.AResource(hdr, dnsmessage.AResource{A: a.As4()})
			case question.Type == dnsmessage.TypeAAAA && !a.Is4():
				b.AAAAResource(hdr, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
