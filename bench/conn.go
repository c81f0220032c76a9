package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// conn is one worker's keep-alive HTTP/1.1 connection, written and read by
// hand. net/http's client costs the generator about 60 µs of CPU per check
// (a goroutine pair per connection, header maps, a pool): on a machine the
// generator shares with the server it measures, that CPU is taken from the
// server and compresses every ratio. This client writes a request prepared
// once but for its body, and reads the status, the headers it needs and the
// body into buffers it reuses.
type conn struct {
	addr   string // host:port
	head   []byte // request line and headers, up to "Content-Length: "
	c      net.Conn
	r      *bufio.Reader
	out    []byte // the request being written
	body   []byte // the last answer's body
	closes bool   // the server said Connection: close
}

// newConn prepares requests to t (http:// only); the connection is dialled
// on first use.
func newConn(t *Target) (*conn, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("the load generator speaks plain HTTP; %s is %s", t.URL, u.Scheme)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	head := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), u.Host)
	keys := make([]string, 0, len(t.Header))
	for k := range t.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range t.Header[k] {
			head = fmt.Appendf(head, "%s: %s\r\n", k, v)
		}
	}
	head = append(head, "Content-Length: "...)
	return &conn{addr: host, head: head}, nil
}

// post sends body and returns the answer's body (valid until the next
// call) for a 200 answer, or an error.
func (c *conn) post(ctx context.Context, body []byte) ([]byte, error) {
	if c.c == nil {
		d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
		nc, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		c.c = nc
		if c.r == nil {
			c.r = bufio.NewReaderSize(nc, 16<<10)
		} else {
			c.r.Reset(nc)
		}
	}
	c.out = append(c.out[:0], c.head...)
	c.out = strconv.AppendInt(c.out, int64(len(body)), 10)
	c.out = append(c.out, "\r\n\r\n"...)
	c.out = append(c.out, body...)
	if _, err := c.c.Write(c.out); err != nil {
		c.close()
		return nil, err
	}
	status, err := c.read()
	if err != nil {
		c.close()
		return nil, err
	}
	if c.closes {
		c.close()
	}
	if status != 200 {
		return nil, fmt.Errorf("HTTP %d: %.300s", status, bytes.TrimSpace(c.body))
	}
	return c.body, nil
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

var errAnswer = errors.New("malformed HTTP answer")

// read reads one answer: the status code, and the body into c.body.
func (c *conn) read() (int, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, errAnswer
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, errAnswer
	}
	length, chunked := -1, false
	c.closes = line[7] == '0' // HTTP/1.0 closes unless told otherwise
	for {
		line, err = c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, errAnswer
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil || length < 0 {
				return 0, errAnswer
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			c.closes = bytes.EqualFold(v, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			line, err = c.r.ReadSlice('\n')
			if err != nil {
				return 0, err
			}
			size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
			n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 16, 31)
			if err != nil {
				return 0, errAnswer
			}
			if n == 0 { // trailers, then an empty line
				for {
					if line, err = c.r.ReadSlice('\n'); err != nil {
						return 0, err
					}
					if len(bytes.TrimRight(line, "\r\n")) == 0 {
						return status, nil
					}
				}
			}
			if err := c.readN(int(n)); err != nil {
				return 0, err
			}
			if _, err := c.r.Discard(2); err != nil { // CRLF after the chunk
				return 0, err
			}
		}
	case length >= 0:
		return status, c.readN(length)
	}
	// No length: the body runs to the end of the connection.
	c.closes = true
	b, err := io.ReadAll(c.r)
	c.body = append(c.body, b...)
	return status, err
}

// readN appends the next n bytes to c.body.
func (c *conn) readN(n int) error {
	start := len(c.body)
	c.body = append(c.body, make([]byte, n)...)
	_, err := io.ReadFull(c.r, c.body[start:])
	return err
}
