package console

import (
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func TestSealerExpiry(t *testing.T) {
	k := &rein.Key{ID: "key_1", SecretHash: "h1"}
	s := &Sealer{Secret: []byte("0123456789abcdef0123456789abcdef"), MaxAge: 12 * time.Hour, Idle: time.Hour}
	t0 := time.Unix(1_800_000_000, 0)
	tok := s.New(k, t0)
	v := s.Seal(k, tok)

	renewed := *tok
	renewed.Seen = t0.Add(11*time.Hour + 30*time.Minute)
	late := s.Seal(k, &renewed)

	cases := []struct {
		name  string
		key   *rein.Key
		value string
		at    time.Time
		ok    bool
	}{
		{"fresh", k, v, t0, true},
		{"within the idle time", k, v, t0.Add(59 * time.Minute), true},
		{"idle too long", k, v, t0.Add(61 * time.Minute), false},
		{"renewed, within the idle time", k, late, t0.Add(11*time.Hour + 50*time.Minute), true},
		{"renewed, past the absolute limit", k, late, t0.Add(12*time.Hour + time.Minute), false},
		{"from the future", k, v, t0.Add(-2 * time.Minute), false},
		{"the key's secret changed", &rein.Key{ID: "key_1", SecretHash: "h2"}, v, t0, false},
		{"another key", &rein.Key{ID: "key_2", SecretHash: "h1"}, v, t0, false},
		{"revoked", &rein.Key{ID: "key_1", SecretHash: "h1", RevokedAt: &t0}, v, t0, false},
		{"another server secret", k, (&Sealer{Secret: []byte("another secret of 32 characters!")}).Seal(k, tok), t0, false},
		{"altered", k, strings.Replace(v, ".", ".1", 1), t0, false},
	}
	for _, c := range cases {
		_, err := s.Verify(c.key, c.value, c.at)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
	}
	if !s.Stale(tok, t0.Add(2*time.Minute)) || s.Stale(tok, t0.Add(10*time.Second)) {
		t.Error("Stale: want renewal after a minute, not before")
	}
	if got := s.Expires(tok); !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("Expires %v, want the idle limit %v", got, t0.Add(time.Hour))
	}
	if !s.CheckCSRF(k, tok, s.CSRF(k, tok)) || s.CheckCSRF(k, tok, "") || s.CheckCSRF(k, s.New(k, t0), s.CSRF(k, tok)) {
		t.Error("CSRF tokens: want one per session, checked exactly")
	}
}
