package mail

import (
	"strings"
	"testing"
	"time"
)

func TestLinkSealOpen(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	l := Link{Approval: "apr_1", ActionHash: "sha256:ab", Tenant: "acme", Key: "alice", KeyID: "key_a", Expires: now.Add(time.Minute).Unix()}
	tok := seal(secret, l)
	got, err := open(secret, tok, now)
	if err != nil || got.Approval != "apr_1" || got.Key != "alice" || got.Nonce == "" {
		t.Fatalf("open: %+v %v", got, err)
	}
	if seal(secret, l) == tok {
		t.Error("two links for the same vote are equal; they could not be used once each")
	}
	body, sig, _ := strings.Cut(tok, ".")
	other := seal(secret, Link{Approval: "apr_1", ActionHash: "sha256:ab", Tenant: "acme", Key: "bob", KeyID: "key_b", Expires: l.Expires})
	otherBody, _, _ := strings.Cut(other, ".")
	cases := []struct {
		name, token string
		at          time.Time
		want        error
	}{
		{"valid", tok, now, nil},
		{"expired", tok, now.Add(time.Minute), ErrLinkExpired},
		{"other secret", seal([]byte("another secret of thirty-two by!"), l), now, ErrLinkForged},
		{"claims of another approver under this mac", otherBody + "." + sig, now, ErrLinkForged},
		{"no mac", body, now, ErrLinkForged},
		{"empty", "", now, ErrLinkForged},
		{"garbage mac", body + ".AAAA", now, ErrLinkForged},
	}
	for _, c := range cases {
		if _, err := open(secret, c.token, c.at); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if csrf(secret, tok, "c1") == csrf(secret, tok, "c2") || csrf(secret, tok, "c1") == csrf(secret, other, "c1") {
		t.Error("csrf tokens do not depend on both the cookie and the link")
	}
}
