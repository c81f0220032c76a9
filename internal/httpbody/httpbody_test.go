package httpbody

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStalledBodyLosesItsConnection: whatever a handler does with a body
// that stalls (reads it and answers the error, closes it, replaces it,
// never reads it), the connection is closed soon after the deadline.
func TestStalledBodyLosesItsConnection(t *testing.T) {
	const d = 300 * time.Millisecond
	for name, h := range map[string]http.HandlerFunc{
		"reads it": func(w http.ResponseWriter, r *http.Request) {
			_, err := io.ReadAll(r.Body)
			http.Error(w, fmt.Sprint(err), http.StatusBadRequest)
		},
		"reads, closes and replaces it": func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(b))
			http.Error(w, "no", http.StatusBadRequest)
		},
		"never reads it": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", http.StatusUnauthorized)
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(Handler(h, d))
			defer srv.Close()
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprint(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":")
			conn.SetReadDeadline(start.Add(5 * time.Second))
			r := bufio.NewReader(conn)
			res, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			io.Copy(io.Discard, res.Body)
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("the connection is still open after %s (%v); the deadline is %s", time.Since(start), err, d)
			}
			if took := time.Since(start); took < d || took > 3*time.Second {
				t.Errorf("closed after %s; the deadline is %s", took, d)
			}
		})
	}
}

// TestBodyInTimeIsRead: a body that arrives within the deadline is read
// whole, and the answer after it may take longer than the deadline.
func TestBodyInTimeIsRead(t *testing.T) {
	const d = 300 * time.Millisecond
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		time.Sleep(2 * d) // a slow answer after the body
		fmt.Fprintf(w, "%s %v", b, err)
	}), d))
	defer srv.Close()
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != `{"a":1} <nil>` {
		t.Errorf("got %q", b)
	}
}
