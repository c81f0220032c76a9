package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// Session lengths: a session ends 12 hours after sign-in, or after an hour
// without a request, whichever comes first.
const (
	DefaultMaxAge = 12 * time.Hour
	DefaultIdle   = time.Hour
	// refreshAfter is how old the last-seen time of a session may get
	// before a request renews its cookie (sliding the idle expiry).
	refreshAfter = time.Minute
)

// Token is a console session: who signed in, when, when last seen, and a
// random nonce that names the session (the CSRF token is derived from it).
// It travels as a cookie "KEYID.ISSUED.SEEN.NONCE.MAC": nothing is stored
// on the server, so every replica sharing the store and the console secret
// accepts it.
type Token struct {
	KeyID  string
	Issued time.Time
	Seen   time.Time
	Nonce  string
}

// Sealer signs and verifies session tokens. The MAC key of a token is
// derived from the server's console secret and the API key's stored secret
// hash: nothing in the database alone can forge a session, and revoking
// the key ends its sessions at once.
type Sealer struct {
	Secret []byte
	MaxAge time.Duration
	Idle   time.Duration
}

var b64 = base64.RawURLEncoding

// ErrSession is why a session cookie is not accepted.
var ErrSession = errors.New("the console session is not valid or has expired; sign in again")

func (s *Sealer) macKey(k *rein.Key) []byte {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte("rein console session\x00" + k.ID + "\x00" + k.SecretHash))
	return m.Sum(nil)
}

func (s *Sealer) mac(k *rein.Key, msg string) string {
	m := hmac.New(sha256.New, s.macKey(k))
	m.Write([]byte(msg))
	return b64.EncodeToString(m.Sum(nil))
}

// New starts a session for k at now.
func (s *Sealer) New(k *rein.Key, now time.Time) *Token {
	var n [18]byte
	if _, err := rand.Read(n[:]); err != nil {
		panic("console: crypto/rand failed: " + err.Error())
	}
	return &Token{KeyID: k.ID, Issued: now, Seen: now, Nonce: b64.EncodeToString(n[:])}
}

// Seal returns the cookie value of t, signed for k.
func (s *Sealer) Seal(k *rein.Key, t *Token) string {
	body := t.KeyID + "." + strconv.FormatInt(t.Issued.Unix(), 10) + "." + strconv.FormatInt(t.Seen.Unix(), 10) + "." + t.Nonce
	return body + "." + s.mac(k, body)
}

// Parse reads a cookie value without verifying it; Verify checks it
// against the key it names.
func Parse(v string) (*Token, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 5 {
		return nil, ErrSession
	}
	issued, err1 := strconv.ParseInt(parts[1], 10, 64)
	seen, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || parts[0] == "" || parts[3] == "" {
		return nil, ErrSession
	}
	return &Token{KeyID: parts[0], Issued: time.Unix(issued, 0), Seen: time.Unix(seen, 0), Nonce: parts[3]}, nil
}

// Verify checks the cookie value v against k (the key it names) at now.
func (s *Sealer) Verify(k *rein.Key, v string, now time.Time) (*Token, error) {
	t, err := Parse(v)
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(v, '.')
	if k == nil || k.ID != t.KeyID || k.RevokedAt != nil ||
		!hmac.Equal([]byte(v[i+1:]), []byte(s.mac(k, v[:i]))) {
		return nil, ErrSession
	}
	const skew = time.Minute
	if now.After(t.Issued.Add(s.maxAge())) || now.After(t.Seen.Add(s.idle())) || t.Seen.After(now.Add(skew)) || t.Seen.Before(t.Issued) {
		return nil, ErrSession
	}
	return t, nil
}

// Expires returns when t ends if it is not used again.
func (s *Sealer) Expires(t *Token) time.Time {
	end := t.Issued.Add(s.maxAge())
	if idle := t.Seen.Add(s.idle()); idle.Before(end) {
		return idle
	}
	return end
}

// Stale reports whether t's cookie should be renewed at now.
func (s *Sealer) Stale(t *Token, now time.Time) bool { return now.Sub(t.Seen) >= refreshAfter }

// CSRF returns the session's CSRF token: state-changing requests made with
// the session cookie must send it (header X-Rein-CSRF or form field csrf).
func (s *Sealer) CSRF(k *rein.Key, t *Token) string {
	return s.mac(k, "csrf\x00"+t.Nonce)
}

// CheckCSRF compares a presented CSRF token with the session's in constant time.
func (s *Sealer) CheckCSRF(k *rein.Key, t *Token, presented string) bool {
	return presented != "" && hmac.Equal([]byte(presented), []byte(s.CSRF(k, t)))
}

func (s *Sealer) maxAge() time.Duration {
	if s.MaxAge > 0 {
		return s.MaxAge
	}
	return DefaultMaxAge
}

func (s *Sealer) idle() time.Duration {
	if s.Idle > 0 {
		return s.Idle
	}
	return DefaultIdle
}
