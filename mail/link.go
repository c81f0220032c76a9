package mail

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Link is what an approval link grants: one vote on one approval, for the
// action it was made for, by one approver, until it expires. The link
// carries these claims and an HMAC-SHA256 over them with the server's link
// secret; changing any of them breaks the MAC.
type Link struct {
	Approval   string `json:"a"`
	ActionHash string `json:"h"`
	Tenant     string `json:"t"`
	Key        string `json:"k"`   // the approver's key name
	KeyID      string `json:"kid"` // and id: a re-issued key does not inherit old links
	Expires    int64  `json:"x"`   // unix seconds
	Nonce      string `json:"n"`   // makes each link unique, so that it can be used once
	// Only, when set, is the one vote the link may cast ("reject"): the
	// link of an e-mail that could not show the whole action.
	Only string `json:"o,omitempty"`
}

// Errors of a link that cannot be used.
var (
	ErrLinkForged  = errors.New("the link is not one rein made (its signature does not match)")
	ErrLinkExpired = errors.New("the link has expired")
)

// seal returns the link's token: base64url(claims) "." base64url(mac).
func seal(secret []byte, l Link) string {
	if l.Nonce == "" {
		var b [12]byte
		rand.Read(b[:])
		l.Nonce = base64.RawURLEncoding.EncodeToString(b[:])
	}
	claims, _ := json.Marshal(l)
	body := base64.RawURLEncoding.EncodeToString(claims)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(secret, "link", body))
}

func mac(secret []byte, purpose, s string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rein approval " + purpose + "\x00"))
	m.Write([]byte(s))
	return m.Sum(nil)
}

// open verifies a token and returns its claims. A forged token is refused
// before its claims are read; an expired one after.
func open(secret []byte, token string, now time.Time) (Link, error) {
	var l Link
	body, sig, ok := strings.Cut(token, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, mac(secret, "link", body)) {
		return l, ErrLinkForged
	}
	claims, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || json.Unmarshal(claims, &l) != nil || l.Approval == "" || l.Nonce == "" {
		return l, ErrLinkForged
	}
	if !now.Before(time.Unix(l.Expires, 0)) {
		return l, ErrLinkExpired
	}
	return l, nil
}

// csrf is the form token of a link page: a MAC of the link and the
// browser's cookie, so that a form posted from elsewhere (without the
// cookie, or for another link) is refused.
func csrf(secret []byte, token, cookie string) string {
	return base64.RawURLEncoding.EncodeToString(mac(secret, "csrf", cookie+"\x00"+token))
}
