package harness

import (
	"net"
	"os"
	"testing"
	"time"
)

// WriteFile writes data to path atomically (a rename), as editors do.
func WriteFile(t testing.TB, path, data string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Eventually polls cond until it returns "" or the timeout passes, then
// fails with the last reason cond gave.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for {
		if why = cond(); why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %s; last: %s", what, timeout, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreeAddr returns a local address where nothing listens.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
