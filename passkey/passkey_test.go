package passkey

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/sqlite"
)

func service(t *testing.T, base string) (*Service, *sqlite.DB) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &Service{Store: store, Secret: []byte("0123456789abcdef0123456789abcdef"), BaseURL: func() string { return base }}, store
}

var carol = &rein.Key{ID: "key_carol", Name: "carol", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}}

// TestCeremonySealing: a sealed ceremony opens only for the key and the
// purpose it was made for, and only before it expires.
func TestCeremonySealing(t *testing.T) {
	s, _ := service(t, "https://rein.example.com")
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return t0 }
	sd := &webauthn.SessionData{Challenge: "abc", Expires: t0.Add(Timeout)}
	a := &rein.Approval{ID: "apr_1", ActionHash: "sha256:1", Args: json.RawMessage(`{"amount":5}`)}
	purpose := ApprovalPurpose(a)
	tok := s.seal(sd, carol, purpose)

	edited := *a
	edited.ApprovedArgs = json.RawMessage(`{"amount":50000}`)
	other := *a
	other.ID = "apr_2"
	reissued := *carol
	reissued.ID = "key_carol2"
	cases := []struct {
		name    string
		token   string
		key     *rein.Key
		purpose string
		at      time.Time
		ok      bool
	}{
		{"as made", tok, carol, purpose, t0.Add(time.Minute), true},
		{"another approval", tok, carol, ApprovalPurpose(&other), t0, false},
		{"the approval edited since", tok, carol, ApprovalPurpose(&edited), t0, false},
		{"another key", tok, &reissued, purpose, t0, false},
		{"adding a passkey instead", tok, carol, purposeAdd, t0, false},
		{"expired", tok, carol, purpose, t0.Add(Timeout), false},
		{"tampered", "A" + tok[1:], carol, purpose, t0, false},
		{"not a token", "%%%", carol, purpose, t0, false},
	}
	for _, c := range cases {
		s.Now = func() time.Time { return c.at }
		got, err := s.open(c.token, c.key, c.purpose)
		if c.ok != (err == nil) || (err == nil && got.Challenge != "abc") {
			t.Errorf("%s: %+v %v", c.name, got, err)
		}
		if err != nil && !errors.Is(err, ErrConfirm) {
			t.Errorf("%s: error %v, want ErrConfirm", c.name, err)
		}
	}
	if tok == "A"+tok[1:] {
		t.Fatal("the tampered token is the token")
	}
}

// TestCeremonyRefusals: the refusals that come before any authenticator.
func TestCeremonyRefusals(t *testing.T) {
	ctx := context.Background()
	ip, _ := service(t, "http://127.0.0.1:8750")
	if _, err := ip.BeginRegistration(ctx, carol, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("base_url with an IP address: %v", err)
	}
	s, store := service(t, "http://localhost:8750")
	if _, err := s.BeginStepUp(ctx, carol, "x"); !errors.Is(err, ErrNoPasskey) {
		t.Errorf("step-up without a passkey: %v", err)
	}
	c, err := s.BeginRegistration(ctx, carol, nil)
	if err != nil || c.Ceremony == "" {
		t.Fatalf("first passkey: %+v %v", c, err)
	}
	var opts struct {
		PublicKey struct {
			RP                     struct{ ID string }
			AuthenticatorSelection struct{ UserVerification string }
		}
	}
	json.Unmarshal(c.Options, &opts)
	if opts.PublicKey.RP.ID != "localhost" || opts.PublicKey.AuthenticatorSelection.UserVerification != "required" {
		t.Errorf("registration options: %s", c.Options)
	}
	// With a passkey, another one needs a confirmation with it.
	cred, _ := json.Marshal(webauthn.Credential{ID: []byte("cred-1"), PublicKey: []byte("pk")})
	if err := store.AddPasskey(ctx, &rein.Passkey{ID: "Y3JlZC0x", Tenant: "acme", Name: "carol", Credential: cred, CreatedAt: time.Now()},
		&rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindPasskeyAdded, Actor: "carol", Subject: "Y3JlZC0x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginRegistration(ctx, carol, nil); !errors.Is(err, ErrNeedExisting) {
		t.Errorf("a second passkey without confirmation: %v", err)
	}
	if _, err := s.BeginRegistration(ctx, carol, &Confirmation{Ceremony: "x", Credential: json.RawMessage(`{}`)}); !errors.Is(err, ErrConfirm) {
		t.Errorf("a second passkey with a made-up confirmation: %v", err)
	}
	st, err := s.BeginStepUp(ctx, carol, "x")
	if err != nil || st.Ceremony == "" {
		t.Fatalf("step-up with a passkey: %v", err)
	}
	// A confirmation for another key's person is refused before any
	// signature is looked at.
	bob := &rein.Key{ID: "key_bob", Name: "bob", Tenant: "acme"}
	if err := s.Verify(ctx, bob, "x", &Confirmation{Ceremony: st.Ceremony, Credential: json.RawMessage(`{"id":"Y3JlZC0x"}`)}); !errors.Is(err, ErrConfirm) {
		t.Errorf("carol's ceremony as bob: %v", err)
	}
	if err := s.Remove(ctx, bob, "Y3JlZC0x"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("bob removes carol's passkey: %v", err)
	}
	if list, _ := s.List(ctx, carol); len(list) != 1 {
		t.Errorf("carol's passkeys: %d", len(list))
	}
}

// TestChallengeUsedOnce: a challenge verifies once; it is forgotten only
// after its ceremony expired (and then its token no longer opens).
func TestChallengeUsedOnce(t *testing.T) {
	s, _ := service(t, "https://rein.example.com")
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	now := t0
	s.Now = func() time.Time { return now }
	if !s.spend("c1", t0.Add(Timeout)) {
		t.Fatal("a fresh challenge was refused")
	}
	if s.spend("c1", t0.Add(Timeout)) {
		t.Error("a challenge was accepted twice")
	}
	if !s.spend("c2", t0.Add(Timeout)) {
		t.Error("another challenge was refused")
	}
	now = t0.Add(Timeout + time.Second)
	s.spend("c3", now.Add(Timeout))
	if _, kept := s.used["c1"]; kept {
		t.Error("an expired challenge is kept forever")
	}
}
