package risk

import (
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// URLFact is what rein reads from one URL (risk.md, URLs).
type URLFact struct {
	URL     string `json:"url"`
	Scheme  string `json:"scheme"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	IP      string `json:"ip"` // the host as a normalised IP address, "" for names
	Private bool   `json:"private"`
}

// privatePrefixes are the addresses an agent must not reach by default: the
// SSRF boundary of risk.md.
var privatePrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
		"fec0::/10",      // site-local (deprecated by RFC 3879, still routed by some stacks)
		"64:ff9b:1::/48", // local-use NAT64 (RFC 8215): reaches IPv4 addresses of the local network
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// ClassifyURL reads one URL as a WHATWG-conformant client does (see
// urlhost.go) and returns its fact and tags. A URL without a scheme or
// with a bad port gets url.parse_error, a host that cannot be processed
// url.unparseable: neither is ever a clean bill. The host is also read the
// RFC 3986 way (Go's net/url, curl): when that reading reaches a private or
// metadata address, so does the URL, whatever the WHATWG reading says.
func ClassifyURL(raw string) (URLFact, []string) {
	f := URLFact{URL: raw}
	tags := []string{"url"}
	u, err := parseWHATWG(raw)
	if u.scheme != "" {
		f.Scheme = u.scheme
		if f.Scheme != "http" && f.Scheme != "https" {
			tags = append(tags, "url.non_http")
		}
	}
	switch {
	case err == errNoScheme || err == errPort:
		tags = append(tags, "url.parse_error")
	case err != nil:
		tags = append(tags, "url.unparseable")
	default:
		f.Host = strings.TrimSuffix(strings.Trim(u.host, "[]"), ".")
		f.Port = u.port
		if f.Port < 0 {
			f.Port = specialPorts[u.scheme]
		}
	}
	var metadata bool
	judge := func(host string) {
		if host == "" {
			return
		}
		ip, private, meta := judgeHost(host)
		if ip != "" && (f.IP == "" || private && !f.Private) {
			f.IP = ip
		}
		f.Private = f.Private || private
		metadata = metadata || meta
	}
	judge(f.Host)
	// The RFC 3986 reading (curl, Go's net/url, Python): the authority runs
	// to the first '/', '?' or '#', a backslash is an ordinary character.
	if h := rfc3986Host(raw); h != "" && h != f.Host {
		if ah, err := parseHost(h, true); err == nil {
			judge(strings.TrimSuffix(strings.Trim(ah, "[]"), "."))
		} else {
			judge(strings.TrimSuffix(strings.ToLower(percentDecode(h)), "."))
		}
	}
	if metadata {
		tags = append(tags, "url.metadata")
		f.Private = true
	}
	if f.Private {
		tags = append(tags, "url.private")
	}
	return f, tags
}

// rfc3986Host returns the host of scheme://[userinfo@]host[:port] as RFC
// 3986 splits it: after the last '@' of the authority, brackets kept.
func rfc3986Host(raw string) string {
	raw = strings.TrimSpace(raw)
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "//"); !ok { // scheme-relative: //host/path
			return ""
		}
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	rest = rest[strings.LastIndexByte(rest, '@')+1:]
	host, _, _ := splitHostPort(rest)
	return host
}

// judgeHost says whether a host (a name or an address, as serialised) is on
// the private side of the SSRF boundary or a cloud metadata endpoint.
// Names are not resolved.
func judgeHost(host string) (ip string, private, metadata bool) {
	if a, ok := ParseHostIP(host); ok {
		a = unwrap(a)
		return a.String(), IsPrivate(a), metadataIPs[a]
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataHosts[name] {
		return "", true, true
	}
	if localNames[name] || !strings.Contains(name, ".") {
		return "", true, false
	}
	for _, suffix := range privateNameSuffixes {
		if name == suffix[1:] || strings.HasSuffix(name, suffix) {
			return "", true, false
		}
	}
	if !publicTLD(name) || loopbackAlias(name) || rebindingService(name) {
		return "", true, false
	}
	for _, a := range embeddedIPv4(name) {
		a = unwrap(a)
		private, metadata = private || IsPrivate(a), metadata || metadataIPs[a]
	}
	return "", private, metadata
}

// publicTLD reports whether name ends in a top-level domain of the root
// zone (the ICANN section of the Public Suffix List). Any other last label
// (`corp`, `lan`, `svc` as in kubernetes.default.svc, `intranet`) is
// answered only by a local or corporate resolver: a private network.
//
// `example` (RFC 2606) is the one exception: documentation names, which no
// resolver answers, judged like public ones so that examples read as they
// would with a real domain. `test` and `invalid` (also RFC 2606) are
// private: development machines do point `.test` at themselves.
func publicTLD(name string) bool {
	tld := name[strings.LastIndexByte(name, '.')+1:]
	if tld == "example" {
		return true
	}
	_, icann := publicsuffix.PublicSuffix(tld)
	return icann
}

// loopbackAliases are public DNS names whose every subdomain resolves to
// 127.0.0.1 (or ::1), kept for local development. Names that carry the
// address itself (nip.io, sslip.io, …) are caught by embeddedIPv4.
var loopbackAliases = []string{"localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "localho.st"}

func loopbackAlias(name string) bool {
	for _, d := range loopbackAliases {
		if name == d || strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}

// embeddedIPv4 finds the addresses written into a DNS name, as wildcard
// DNS and rebinding services answer for any name (nip.io, sslip.io, xip.io,
// traefik.me, rbndr.us, 1u.ms and their many copies), each of which
// resolves to one of them (which one depends on the service, or on the
// moment for a rebinding service), so the name is judged by every one:
//   - four numbers in a row, the labels and dash-separated parts read as
//     one sequence (`10.0.0.1.nip.io`, `app.169.254.169.254.sslip.io`,
//     `10-0-0-1.nip.io`, `make-1.2.3.4-rebind-127.0.0.1-rr.1u.ms`), each
//     number read as decimal and as a resolver reads it (`0177` octal);
//   - eight hex digits, as a label or a dash-separated part
//     (`7f000001.nip.io`, `app-7f000001.nip.io`, `7f000001.c0a80001.rbndr.us`);
//   - an IPv6 address written with dashes for colons in a label, whole or
//     after a prefix and a dash (`--1.sslip.io`, `fe80--1.sslip.io`,
//     `2a01-4f8-c17-b8f--2.sslip.io`, `app---1.sslip.io`).
//
// The name is embeddedIPv4's for history: IPv6 addresses are among them.
func embeddedIPv4(name string) []netip.Addr {
	var out []netip.Addr
	labels := strings.Split(name, ".")
	var parts []string
	for _, l := range labels {
		parts = append(parts, strings.Split(l, "-")...)
	}
	for i := 0; i+4 <= len(parts); i++ {
		q := strings.Join(parts[i:i+4], ".")
		if a, err := netip.ParseAddr(q); err == nil && a.Is4() {
			out = append(out, a)
		}
		if strings.Trim(q, "0123456789.") == "" {
			if a, ok := parseIPv4(q); ok {
				out = append(out, a)
			}
		}
	}
	for _, p := range parts {
		if len(p) == 8 {
			if b, err := hex.DecodeString(p); err == nil {
				out = append(out, netip.AddrFrom4([4]byte(b)))
			}
		}
	}
	for _, l := range labels {
		if !strings.Contains(l, "--") && strings.Count(l, "-") < 7 {
			continue
		}
		for i := -1; i < len(l); i++ {
			if i >= 0 && l[i] != '-' {
				continue
			}
			if a, err := netip.ParseAddr(strings.ReplaceAll(l[i+1:], "-", ":")); err == nil && a.Is6() {
				out = append(out, unwrap(a))
			}
		}
	}
	return out
}

// rebindingServices answer with addresses that change from one lookup to
// the next (DNS rebinding test services: rbndr.us, taviso/rbndr; 1u.ms,
// neex/1u.ms; rebind.it, NCC Group's Singularity; rebind.network,
// brannondorsey/whonow), so a check made now says nothing about where a
// connection goes later: every name below them is private.
var rebindingServices = []string{"rbndr.us", "1u.ms", "rebind.it", "rebind.network"}

func rebindingService(name string) bool {
	for _, d := range rebindingServices {
		if name == d || strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}

// localNames are the loopback and local names the hosts files of common
// systems define: Red Hat and Fedora (localhost.localdomain, localhost4,
// localhost4.localdomain4, localhost6, localhost6.localdomain6; setup
// package /etc/hosts), Debian and Ubuntu (ip6-localhost, ip6-loopback and
// the ip6-* multicast names; netbase /etc/hosts, hosts(5)). A name without
// a dot is local too: the resolver tries it under the search domains
// first (resolv.conf(5), "search" and "ndots"), and LLMNR and NetBIOS
// answer it from the local network.
var localNames = map[string]bool{"localhost.localdomain": true, "localhost4": true,
	"localhost4.localdomain4": true, "localhost6": true, "localhost6.localdomain6": true, "ip6-localhost": true,
	"ip6-loopback": true, "ip6-localnet": true, "ip6-mcastprefix": true, "ip6-allnodes": true,
	"ip6-allrouters": true, "ip6-allhosts": true}

// privateNameSuffixes are names that stay on the machine or the local
// network: localhost (RFC 6761 section 6.3), .local (RFC 6762, multicast
// DNS), .internal (reserved for private use by ICANN in 2024), .home.arpa
// (RFC 8375), .localdomain (the local domain of many hosts files; not a
// delegated top-level domain).
var privateNameSuffixes = []string{".localhost", ".local", ".internal", ".home.arpa", ".localdomain"}

// ParseHostIP reads a host as an IP address in any notation a resolver or
// socket library accepts: dotted IPv4 with decimal, octal (leading 0) or hex
// (0x) parts, shortened forms (127.1, 0x7f.1, a single 32-bit number), and
// IPv6, with IPv4 embedded in IPv6 (mapped, compatible, translated, NAT64,
// 6to4) unwrapped.
func ParseHostIP(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // zone
	}
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, false
		}
		return unwrap(a), true
	}
	return parseIPv4(h)
}

func unwrap(a netip.Addr) netip.Addr {
	if a.Is4In6() {
		return a.Unmap()
	}
	b := a.As16()
	zero12 := true
	for _, x := range b[:12] {
		zero12 = zero12 && x == 0
	}
	nat64 := b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b
	for _, x := range b[4:12] {
		nat64 = nat64 && x == 0
	}
	if (zero12 && !(b[12] == 0 && b[13] == 0 && b[14] == 0)) || nat64 { // ::a.b.c.d (not :: or ::1), 64:ff9b::a.b.c.d
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	translated := b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0
	for _, x := range b[:8] {
		translated = translated && x == 0
	}
	if translated { // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765, 2.1: SIIT)
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if b[0] == 0x20 && b[1] == 0x02 { // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 is the site of A.B.C.D
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// teredoIPv4 are the IPv4 addresses a Teredo address (RFC 4380, 4:
// 2001:0::/32, the server in bits 32-63, the client's address inverted in
// the last 32 bits) leads to.
func teredoIPv4(a netip.Addr) (server, client netip.Addr, ok bool) {
	b := a.As16()
	if !a.Is6() || b[0] != 0x20 || b[1] != 0x01 || b[2] != 0 || b[3] != 0 {
		return netip.Addr{}, netip.Addr{}, false
	}
	return netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}),
		netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
}

// parseIPv4 implements inet_aton: 1 to 4 parts, each decimal, octal or hex;
// the last part fills the remaining bytes.
func parseIPv4(h string) (netip.Addr, bool) {
	if h == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" alone is 0 for inet_aton
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	v, err := strconv.ParseUint(p, base, 64)
	if err != nil || v > 0xffffffff {
		return 0, false
	}
	return v, true
}

// IsPrivate reports whether an address is on the private side of the SSRF boundary.
func IsPrivate(a netip.Addr) bool {
	a = unwrap(a)
	if metadataIPs[a] {
		return true
	}
	if server, client, ok := teredoIPv4(a); ok && (IsPrivate(server) || IsPrivate(client)) {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return a == netip.IPv4Unspecified() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsPrivate()
}
