package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// certificate serves the TLS certificate of cert/key files and re-reads
// them when either changes (checked at most once a second, on handshakes),
// so that a renewed certificate is used without a restart. A renewal that
// cannot be loaded (a half-written file) keeps the last good certificate
// and is logged once.
type certificate struct {
	certFile, keyFile string
	onError           func(error)

	mu      sync.Mutex
	current *tls.Certificate
	stamp   string // the files' sizes and modification times when loaded
	checked time.Time
	failed  string
}

func newCertificate(certFile, keyFile string, onError func(error)) (*certificate, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("HTTPS needs both --tls-cert and --tls-key")
	}
	c := &certificate{certFile: certFile, keyFile: keyFile, onError: onError}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certificate) fileStamp() (string, error) {
	var s string
	for _, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return s, nil
}

func (c *certificate) load() error {
	stamp, err := c.fileStamp()
	if err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate %s with key %s: %w", c.certFile, c.keyFile, err)
	}
	c.current, c.stamp = &pair, stamp
	return nil
}

// get is tls.Config.GetCertificate.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= time.Second {
		c.checked = now
		if stamp, err := c.fileStamp(); err == nil && stamp != c.stamp && stamp != c.failed {
			if err := c.load(); err != nil {
				c.failed = stamp
				if c.onError != nil {
					c.onError(err)
				}
			}
		}
	}
	return c.current, nil
}

func (c *certificate) config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.get}
}
