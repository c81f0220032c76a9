package risk

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// This file reads a URL's host the way the WHATWG URL Standard
// (https://url.spec.whatwg.org/, "host parsing") says browsers and
// WHATWG-conformant clients do: percent-decode, UTS #46 mapping
// (full-width digits, ideographic full stops, ignorable code points),
// forbidden code points, then the IPv4 parser whenever the last label
// "ends in a number". rein judges the host a client will really connect to,
// not the text the agent wrote.

// errHost is the reason a host cannot be processed; ClassifyURL turns it
// into url.unparseable.
var errHost = errors.New("host cannot be processed")

// uts46 is the "domain to ASCII" profile of the URL Standard: UTS #46
// ToASCII with CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false, Transitional_Processing=false and
// VerifyDnsLength=false (beStrict is false for URL parsing).
var uts46 = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
	idna.RemoveLeadingDots(false),
)

// specialPorts are the URL Standard's special schemes and their default
// ports (file has none).
var specialPorts = map[string]int{"ftp": 21, "file": 0, "http": 80, "https": 443, "ws": 80, "wss": 443}

// whatwgURL is the part of a parsed URL rein judges.
type whatwgURL struct {
	scheme  string
	hasHost bool   // an authority with a host was present
	host    string // serialised host: a domain, dotted IPv4, or [IPv6]
	port    int    // -1 when none was written
}

// errNoScheme means the input is not an absolute URL.
var errNoScheme = errors.New("no scheme")

// errPort means the port is not a number from 0 to 65535.
var errPort = errors.New("bad port")

// parseWHATWG reads an absolute URL (no base) as far as rein needs: its
// scheme, host and port. It follows the URL Standard's basic URL parser for
// those parts; paths, queries and fragments are not read.
func parseWHATWG(raw string) (whatwgURL, error) {
	u := whatwgURL{port: -1}
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= 0x20 })
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	i := 0
	for i < len(s) && (isASCIIAlpha(s[i]) || i > 0 && (isASCIIDigit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return u, errNoScheme
	}
	u.scheme = strings.ToLower(s[:i])
	rest := s[i+1:]
	_, special := specialPorts[u.scheme]
	isSlash := func(c byte) bool { return c == '/' || special && c == '\\' }
	var authority string
	switch {
	case u.scheme == "file":
		if len(rest) < 2 || !isSlash(rest[0]) || !isSlash(rest[1]) {
			return u, nil // file:/path, file:path: no host
		}
		rest = rest[2:]
		end := strings.IndexAny(rest, `/\?#`)
		if end < 0 {
			end = len(rest)
		}
		h := rest[:end]
		if isWindowsDriveLetter(h) || h == "" {
			return u, nil
		}
		host, err := parseHost(h, true)
		if err != nil {
			return u, err
		}
		if host == "localhost" {
			host = ""
		}
		u.hasHost = host != ""
		u.host = host
		return u, nil
	case special:
		for len(rest) > 0 && isSlash(rest[0]) {
			rest = rest[1:]
		}
		authority = rest
	case strings.HasPrefix(rest, "//"):
		authority = rest[2:]
	default:
		return u, nil // mailto:, data:, urn: ... have no host
	}
	if end := strings.IndexAny(authority, map[bool]string{true: `/\?#`, false: "/?#"}[special]); end >= 0 {
		authority = authority[:end]
	}
	at := strings.LastIndexByte(authority, '@')
	hostport := authority[at+1:]
	if at >= 0 && hostport == "" {
		return u, errHost // credentials without a host
	}
	hostText, portText, hasPort := splitHostPort(hostport)
	if hasPort && hostText == "" {
		return u, errHost
	}
	if hostText == "" {
		if special {
			return u, errHost
		}
		if hasPort && portText != "" {
			return u, errHost
		}
		return u, nil // scheme://  (empty host of a non-special URL)
	}
	if portText != "" {
		for j := 0; j < len(portText); j++ {
			if !isASCIIDigit(portText[j]) {
				return u, errPort
			}
		}
		p := strings.TrimLeft(portText, "0")
		if len(p) > 5 {
			return u, errPort
		}
		n, _ := strconv.Atoi("0" + p)
		if n > 65535 {
			return u, errPort
		}
		if def, ok := specialPorts[u.scheme]; !ok || n != def || u.scheme == "file" {
			u.port = n
		}
	}
	host, err := parseHost(hostText, special)
	if err != nil {
		return u, err
	}
	u.hasHost = true
	u.host = host
	return u, nil
}

// splitHostPort splits "host:port" at the first colon outside brackets.
func splitHostPort(s string) (host, port string, hasPort bool) {
	inside := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			inside = true
		case ']':
			inside = false
		case ':':
			if !inside {
				return s[:i], s[i+1:], true
			}
		}
	}
	return s, "", false
}

func isASCIIAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWindowsDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

// parseHost is the URL Standard's host parser. special hosts are domains
// or IP addresses; other hosts are opaque (only checked for forbidden code
// points). It returns the serialised host.
func parseHost(input string, special bool) (string, error) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") || len(input) < 2 {
			return "", errHost
		}
		a, err := parseIPv6(input[1 : len(input)-1])
		if err != nil {
			return "", err
		}
		return "[" + serializeIPv6(a) + "]", nil
	}
	if !special {
		for _, r := range input {
			if r < 0x80 && strings.ContainsRune(forbiddenHostCodePoints, r) {
				return "", errHost
			}
		}
		return percentEncodeC0(input), nil
	}
	domain := percentDecode(input)
	if !utf8.ValidString(domain) {
		domain = strings.ToValidUTF8(domain, "\uFFFD")
	}
	ascii, err := domainToASCII(domain)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(ascii); i++ {
		c := ascii[i]
		if c <= 0x1f || c == '%' || c == 0x7f || strings.IndexByte(forbiddenHostCodePoints, c) >= 0 || c >= 0x80 {
			return "", errHost
		}
	}
	if endsInNumber(ascii) {
		a, err := parseWHATWGIPv4(ascii)
		if err != nil {
			return "", err
		}
		return a.String(), nil
	}
	return ascii, nil
}

// forbiddenHostCodePoints are the URL Standard's forbidden host code points
// (U+0000 NULL is checked with the C0 controls).
const forbiddenHostCodePoints = "\x00\t\n\r #/:<>?@[\\]^|"

// domainToASCII is the URL Standard's "domain to ASCII" with beStrict false.
func domainToASCII(domain string) (string, error) {
	fast := true
	for i := 0; i < len(domain); i++ {
		if domain[i] >= 0x80 {
			fast = false
			break
		}
	}
	if fast {
		for _, label := range strings.Split(domain, ".") {
			if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
				fast = false
				break
			}
		}
	}
	if fast {
		if domain == "" {
			return "", errHost
		}
		return strings.ToLower(domain), nil
	}
	out, err := uts46.ToASCII(domain)
	if err != nil || out == "" {
		return "", errHost
	}
	return out, nil
}

func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool { return isASCIIDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func percentEncodeC0(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x1f || c >= 0x7f {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// endsInNumber is the URL Standard's "ends in a number checker": a host
// whose last label (a trailing dot aside) is digits or 0x-hex is read as an
// IPv4 address, and fails if it is not one.
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number is the URL Standard's IPv4 number parser: decimal, 0x hex or
// 0-prefixed octal; "0x" alone is 0. Values past 2^32 saturate (they are
// failures later anyway).
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && p[1]|0x20 == 'x':
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, true
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		var d uint64
		switch c := p[i]; {
		case isASCIIDigit(c):
			d = uint64(c - '0')
		case base == 16 && c|0x20 >= 'a' && c|0x20 <= 'f':
			d = uint64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if v < 1<<40 {
			v = v*base + d
		}
	}
	return v, true
}

// parseWHATWGIPv4 is the URL Standard's IPv4 parser.
func parseWHATWGIPv4(s string) (netip.Addr, error) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, errHost
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, errHost
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, errHost
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, errHost
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// parseIPv6 reads the inside of [ ... ]. The URL Standard has no zone
// identifiers, so "%" fails.
func parseIPv6(s string) (netip.Addr, error) {
	if strings.Contains(s, "%") || s == "" {
		return netip.Addr{}, errHost
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return netip.Addr{}, errHost
	}
	return a, nil
}

// serializeIPv6 is the URL Standard's IPv6 serializer: lower-case hex
// pieces, the first longest run of two or more zero pieces compressed, no
// dotted IPv4 tail.
func serializeIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	var out strings.Builder
	ignore0 := false
	for i := 0; i < 8; i++ {
		if ignore0 && pieces[i] == 0 {
			continue
		}
		ignore0 = false
		if i == best {
			if i == 0 {
				out.WriteString("::")
			} else {
				out.WriteString(":")
			}
			ignore0 = true
			continue
		}
		out.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i != 7 {
			out.WriteString(":")
		}
	}
	return out.String()
}
