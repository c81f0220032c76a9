package webpush

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// VAPID identifies rein to push services (RFC 8292): every request carries
// a token signed with Key, whose public half the browser was given when it
// subscribed; a push service refuses messages to that subscription signed
// with any other key.
type VAPID struct {
	Key *ecdsa.PrivateKey
	// Subject is how the push service's operator can reach the sender: a
	// mailto: or https: URL.
	Subject string
}

// KeyFromSecret derives the VAPID key from a secret that every replica
// shares (rein's console secret), so that each of them signs for the
// subscriptions any of them took, and nothing needs storing. A changed
// secret is a changed key: browsers then subscribe again (the console does
// it when the key it sees differs from its subscription's).
func KeyFromSecret(secret []byte) (*ecdsa.PrivateKey, error) {
	if len(secret) < 16 {
		return nil, errors.New("web push: the secret to derive the VAPID key from is too short")
	}
	for i := range 64 {
		b, err := hkdf.Key(sha256.New, secret, nil, fmt.Sprintf("rein web push VAPID key v1 %d", i), 32)
		if err != nil {
			return nil, err
		}
		// Fails only for a scalar of zero or not below the group order: a
		// chance of about 2^-32 per try.
		if k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b); err == nil {
			return k, nil
		}
	}
	return nil, errors.New("web push: no valid P-256 key derived from the secret")
}

// PublicKey is the key the browser needs to subscribe
// (applicationServerKey): the uncompressed point, base64url without
// padding.
func (v *VAPID) PublicKey() string {
	b, _ := v.Key.PublicKey.Bytes()
	return base64.RawURLEncoding.EncodeToString(b)
}

// Authorization is the Authorization header of a message to endpoint,
// valid until exp (at most 24 hours ahead, RFC 8292 section 2).
func (v *VAPID) Authorization(endpoint string, exp time.Time) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("web push: endpoint %q is not an absolute URL", endpoint)
	}
	header, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "ES256"})
	claims, err := json.Marshal(map[string]any{"aud": u.Scheme + "://" + u.Host, "exp": exp.Unix(), "sub": v.Subject})
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, v.Key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signing + "." + base64.RawURLEncoding.EncodeToString(sig) + ", k=" + v.PublicKey(), nil
}
