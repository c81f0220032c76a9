package signin

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// flow is one sign-in in progress: what the callback must find again. It
// travels in a cookie of its own, encrypted and authenticated, so that no
// server keeps state and any replica can finish a sign-in another started.
type flow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"` // the PKCE code verifier
	Next     string    `json:"p"` // the console page to go to afterwards
	Expires  time.Time `json:"e"`
}

// flowTTL is how long a person has at the provider to sign in.
const flowTTL = 10 * time.Minute

// flowCookie names the cookie of the flow with this state: sign-ins in two
// tabs do not overwrite each other.
func flowCookie(state string) string {
	if len(state) > 16 {
		state = state[:16]
	}
	return "rein_oidc_" + state
}

var errFlow = errors.New("no sign-in with this state was started in this browser, or it expired; start again")

type flowSealer struct{ aead cipher.AEAD }

// newFlowSealer derives the flow cookies' AES-256-GCM key from the console
// secret, which replicas share.
func newFlowSealer(secret []byte) *flowSealer {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rein oidc sign-in flow v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &flowSealer{aead: aead}
}

var b64 = base64.RawURLEncoding

func (s *flowSealer) seal(f *flow) string {
	body, _ := json.Marshal(f)
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("signin: crypto/rand failed: " + err.Error())
	}
	return b64.EncodeToString(s.aead.Seal(nonce, nonce, body, []byte(flowCookie(f.State))))
}

// open decrypts a flow cookie and checks that it is the flow of state and
// has not expired.
func (s *flowSealer) open(v, state string, now time.Time) (*flow, error) {
	raw, err := b64.DecodeString(v)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, errFlow
	}
	n := s.aead.NonceSize()
	body, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(flowCookie(state)))
	if err != nil {
		return nil, errFlow
	}
	var f flow
	if json.Unmarshal(body, &f) != nil || !hmac.Equal([]byte(f.State), []byte(state)) || !now.Before(f.Expires) {
		return nil, errFlow
	}
	return &f, nil
}

func random() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("signin: crypto/rand failed: " + err.Error())
	}
	return b64.EncodeToString(b[:])
}

// LocalPath returns next when it is a path on this server, else /inbox:
// after sign-in rein never sends anyone to another site. Browsers drop
// tabs and newlines from URLs and read '\' as '/', so "/\evil" and
// "/\t/evil" are refused like "//evil"; so are spaces, invisible format
// characters and an encoded "//" (the same rules as the API-key sign-in).
func LocalPath(next string) string {
	const home = "/inbox"
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || len(next) > 2048 {
		return home
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f || c == '\\' || unicode.IsSpace(c) || unicode.Is(unicode.Cf, c) {
			return home
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return home
	}
	return next
}
