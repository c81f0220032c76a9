// Package httpbody bounds how long a request body may take to arrive once
// its headers have, on every HTTP listener rein opens: a client that sends
// headers and then stalls its body must not hold a connection for ever.
// Only the body read is bounded, so answers that rein gives slowly on
// purpose (long-polls, event streams, held MCP calls) are not cut.
package httpbody

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultTimeout is how long a body may take when none is configured: a
// client that means to send its (at most a few MiB) body does so well
// within it, and a stalled one is cut long before it adds up.
const DefaultTimeout = 10 * time.Second

// TimeoutError is what reading a body that stalled past its deadline
// returns.
type TimeoutError struct{ Limit time.Duration }

func (e TimeoutError) Error() string {
	return fmt.Sprintf("the request body did not arrive within %s of its headers; send the whole body without pausing", e.Limit)
}

// Deadline sets a read deadline d (DefaultTimeout if d <= 0) on r's
// connection for as long as its body is being read, and lifts it once the
// body has been read to its end, so that a long answer after it (a check
// that waits for its approval) is not cut. (net/http lifts it too when it
// starts watching the connection for a client that hangs up.) A request
// without a body (GET: event streams, long-polls) gets no deadline. A
// handler that answers without reading the body is covered as well: the
// server then reads the rest to reuse the connection, under the same
// deadline, and closes the connection when it passes.
func Deadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	if d <= 0 {
		d = DefaultTimeout
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return // not a network connection (a test recorder): nothing to bound
	}
	r.Body = &body{ReadCloser: r.Body, rc: rc, header: w.Header(), limit: d}
}

// Handler puts every request's body under Deadline(d) before h sees it.
func Handler(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Deadline(w, r, d)
		h.ServeHTTP(w, r)
	})
}

// body is a request body read under a connection read deadline.
type body struct {
	io.ReadCloser
	rc     *http.ResponseController
	header http.Header
	limit  time.Duration
	done   bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.done:
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		// The rest of the body may still come: the connection cannot
		// carry another request, whatever the handler does with the
		// body next (net/http keeps a connection whose body the handler
		// closed or replaced).
		b.header.Set("Connection", "close")
		return n, TimeoutError{b.limit}
	}
	return n, err
}
