package webpush

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Services are the push services of the browsers people use, as URL
// prefixes: rein sends only to subscriptions whose endpoint starts with
// one of the prefixes it is given (these by default). An endpoint is a URL
// that whoever subscribes chooses, so without this list anyone who may
// sign in to the console could make rein send requests to any address it
// can reach.
var Services = []string{
	"https://fcm.googleapis.com/",                // Chrome, Chromium-based browsers on Android and desktop
	"https://updates.push.services.mozilla.com/", // Firefox
	"https://web.push.apple.com/",                // Safari
	"https://*.notify.windows.com/",              // Edge
}

// ErrGone is returned when the push service says the subscription no longer
// exists (404, 410): it should be forgotten.
var ErrGone = errors.New("web push: the subscription is gone")

// Subscription is where a message goes: the endpoint and the browser's keys
// (base64url, as the Push API gives them).
type Subscription struct {
	Endpoint string
	P256DH   string
	Auth     string
}

// Keys decodes and checks the subscription's keys: a P-256 point and a
// 16-octet secret.
func (s Subscription) Keys() (p256dh, auth []byte, err error) {
	if p256dh, err = decode(s.P256DH); err != nil || len(p256dh) != 65 || p256dh[0] != 4 {
		return nil, nil, errors.New("keys.p256dh must be the browser's P-256 public key: 65 octets, uncompressed, base64url")
	}
	if auth, err = decode(s.Auth); err != nil || len(auth) != 16 {
		return nil, nil, errors.New("keys.auth must be the browser's 16-octet authentication secret, base64url")
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil {
		return nil, nil, errors.New("keys.p256dh is not a point on P-256")
	}
	return p256dh, auth, nil
}

func decode(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// Message is one push message.
type Message struct {
	Payload []byte
	// TTL is how long the push service keeps the message for a browser that
	// is offline (0: deliver now or never).
	TTL time.Duration
	// Urgency is very-low, low, normal or high (RFC 8030 section 5.3).
	Urgency string
	// Topic, when set, replaces an undelivered message of the same topic
	// (RFC 8030 section 5.4): at most 32 characters of the base64url
	// alphabet.
	Topic string
}

// Sender sends push messages.
type Sender struct {
	VAPID *VAPID
	// Services are the URL prefixes endpoints must start with (nil: the
	// default Services).
	Services []string
	// Client sends the requests (nil: a client with a 10 s timeout that
	// follows no redirects).
	Client *http.Client
	Now    func() time.Time
}

// Allowed reports whether rein may send to endpoint: an absolute URL
// without credentials that starts with one of the allowed prefixes (a
// "*." in a prefix's host matches one or more labels).
func (s *Sender) Allowed(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("endpoint %q is not an absolute URL of a push service", endpoint)
	}
	services := s.Services
	if services == nil {
		services = Services
	}
	for _, p := range services {
		if matchPrefix(p, u) {
			return nil
		}
	}
	return fmt.Errorf("endpoint %s is not at a push service rein sends to (%s); an operator can add one with push.services", u.Scheme+"://"+u.Host, strings.Join(services, ", "))
}

func matchPrefix(prefix string, u *url.URL) bool {
	p, err := url.Parse(prefix)
	if err != nil || !strings.EqualFold(p.Scheme, u.Scheme) || p.Port() != u.Port() {
		return false
	}
	host, want := strings.ToLower(u.Hostname()), strings.ToLower(p.Hostname())
	if rest, ok := strings.CutPrefix(want, "*."); ok {
		if !strings.HasSuffix(host, "."+rest) || strings.TrimSuffix(host, "."+rest) == "" {
			return false
		}
	} else if host != want {
		return false
	}
	path := p.EscapedPath()
	if path == "" {
		path = "/"
	}
	got := u.EscapedPath()
	if got == "" {
		got = "/"
	}
	return strings.HasPrefix(got, path) && !strings.Contains(got, "/../") && !strings.HasSuffix(got, "/..")
}

// Send encrypts msg for sub and posts it to the push service. A
// subscription the service no longer knows is ErrGone.
func (s *Sender) Send(ctx context.Context, sub Subscription, msg Message) error {
	if err := s.Allowed(sub.Endpoint); err != nil {
		return err
	}
	p256dh, auth, err := sub.Keys()
	if err != nil {
		return err
	}
	body, err := Encrypt(msg.Payload, p256dh, auth)
	if err != nil {
		return err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	authz, err := s.VAPID.Authorization(sub.Endpoint, now().Add(12*time.Hour))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", authz)
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("TTL", strconv.Itoa(int(max(msg.TTL, 0)/time.Second)))
	if msg.Urgency != "" {
		req.Header.Set("Urgency", msg.Urgency)
	}
	if msg.Topic != "" {
		req.Header.Set("Topic", msg.Topic)
	}
	client := s.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("web push: %w", err)
	}
	defer resp.Body.Close()
	detail, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return ErrGone
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return fmt.Errorf("web push: the push service answered %s: %s", resp.Status, strings.TrimSpace(string(detail)))
	}
	return nil
}

var defaultClient = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Config is the push section of rein's configuration.
type Config struct {
	// Disabled turns Web Push off: the console offers no notifications.
	Disabled bool `yaml:"disabled"`
	// Subject is the contact in every VAPID token: a mailto: or https: URL
	// (default: rein's base URL). Safari's push service requires one it
	// can use.
	Subject string `yaml:"subject"`
	// Services replaces the push services rein sends to (URL prefixes;
	// default Services).
	Services []string `yaml:"services"`
}

// Check validates the section.
func (c *Config) Check() error {
	if c.Subject != "" && !strings.HasPrefix(c.Subject, "mailto:") && !strings.HasPrefix(c.Subject, "https://") && !strings.HasPrefix(c.Subject, "http://") {
		return fmt.Errorf("push.subject %q: use a mailto: or https: URL", c.Subject)
	}
	for _, s := range c.Services {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return fmt.Errorf("push.services: %q is not an http(s) URL prefix such as https://push.example.com/", s)
		}
	}
	return nil
}
