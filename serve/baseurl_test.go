package serve

import (
	"net"
	"testing"
)

// TestDefaultBaseURL: without base_url, plain HTTP on a loopback address is
// reached at localhost (which WebAuthn accepts); anything else at the
// address rein listens on.
func TestDefaultBaseURL(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		addr   *net.TCPAddr
		want   string
	}{
		{"http://", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8750}, "http://localhost:8750"},
		{"http://", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 8750}, "http://localhost:8750"},
		{"http://", &net.TCPAddr{IP: net.IPv6loopback, Port: 8750}, "http://localhost:8750"},
		{"http://", &net.TCPAddr{IP: net.IPv4zero, Port: 8750}, "http://0.0.0.0:8750"},
		{"http://", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 80}, "http://10.0.0.5:80"},
		{"https://", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}, "https://127.0.0.1:8443"}, // the certificate names the address
	} {
		if got := defaultBaseURL(tc.scheme, tc.addr); got != tc.want {
			t.Errorf("defaultBaseURL(%s, %s) = %s, want %s", tc.scheme, tc.addr, got, tc.want)
		}
	}
}
