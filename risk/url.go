package risk

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
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

// metadataHosts are cloud metadata endpoints reached by name.
var metadataHosts = map[string]bool{
	"metadata.google.internal": true, "metadata": true, "metadata.goog": true,
	"instance-data": true, "instance-data.ec2.internal": true,
}

// metadataIPs are cloud metadata endpoints reached by address.
var metadataIPs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
}

// privatePrefixes are the addresses an agent must not reach by default: the
// SSRF boundary of risk.md.
var privatePrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// ClassifyURL parses one URL and returns its fact and tags. A URL that does
// not parse gets url.parse_error, never a clean bill.
func ClassifyURL(raw string) (URLFact, []string) {
	f := URLFact{URL: raw}
	tags := []string{"url"}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" {
		return f, append(tags, "url.parse_error")
	}
	f.Scheme = strings.ToLower(u.Scheme)
	web := f.Scheme == "http" || f.Scheme == "https"
	if !web {
		tags = append(tags, "url.non_http")
		if u.Host == "" {
			return f, tags // file:, mailto:, data: ... : no host to judge
		}
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	f.Host = host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return f, append(tags, "url.parse_error")
		}
		f.Port = n
	} else {
		f.Port = map[string]int{"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}[f.Scheme]
	}
	if host == "" {
		return f, append(tags, "url.parse_error")
	}
	if ip, ok := ParseHostIP(host); ok {
		f.IP = ip.String()
		f.Private = IsPrivate(ip)
		if metadataIPs[ip] {
			tags = append(tags, "url.metadata")
			f.Private = true
		}
	} else if metadataHosts[host] {
		tags = append(tags, "url.metadata")
		f.Private = true
	} else if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".internal") || strings.HasSuffix(host, ".local") {
		f.Private = true
	}
	if f.Private {
		tags = append(tags, "url.private")
	}
	return f, tags
}

// ParseHostIP reads a host as an IP address in any notation a resolver or
// socket library accepts: dotted IPv4 with decimal, octal (leading 0) or hex
// (0x) parts, shortened forms (127.1, 0x7f.1, a single 32-bit number), and
// IPv6, with IPv4 embedded in IPv6 (mapped, compatible, NAT64) unwrapped.
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
	return a
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
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return a == netip.IPv4Unspecified() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsPrivate()
}
