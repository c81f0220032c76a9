// Package passkey registers people's passkeys and verifies the passkey
// confirmations (WebAuthn assertions) that votes on approvals needing
// step-up carry. The WebAuthn ceremonies are go-webauthn's; this package
// binds each one to the person, the purpose (an approval and the exact
// action it is about) and a short life, and keeps no state between the
// ceremony's two halves but a sealed token the browser carries.
package passkey

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/reinhq/rein"
)

// Timeout is how long a person has to answer the browser's passkey prompt.
const Timeout = 2 * time.Minute

// Service registers passkeys and verifies confirmations.
type Service struct {
	Store rein.PasskeyStore
	// BaseURL returns the address people reach rein at: its host is the
	// WebAuthn relying party id, its origin the only one accepted.
	BaseURL func() string
	// Secret seals ceremonies (derived from the console secret, which
	// replicas share, so any replica finishes what another began).
	Secret []byte
	Now    func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // challenges already answered, until they expire
}

// Errors a caller maps to answers.
var (
	ErrUnavailable  = errors.New("passkeys need rein's base_url to name a host (WebAuthn does not accept an IP address), e.g. https://rein.example.com")
	ErrNoPasskey    = errors.New("you have no passkey registered: add one in the console (Passkeys) first")
	ErrConfirm      = errors.New("the passkey confirmation is not valid (expired, used already, for another approval or action, or not from your passkey); confirm again")
	ErrNeedExisting = errors.New("you have a passkey already: adding another needs a confirmation with one you have")
)

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// relyingParty is the WebAuthn configuration for the current base URL.
func (s *Service) relyingParty() (*webauthn.WebAuthn, error) {
	u, err := url.Parse(strings.TrimRight(s.BaseURL(), "/"))
	if err != nil || u.Host == "" || protocol.ValidateRPID(u.Hostname()) != nil {
		return nil, ErrUnavailable
	}
	w, err := webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "rein", RPOrigins: []string{u.Scheme + "://" + u.Host},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: Timeout, TimeoutUVD: Timeout},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: Timeout, TimeoutUVD: Timeout}}})
	if err != nil {
		return nil, ErrUnavailable
	}
	return w, nil
}

// person is the WebAuthn user behind a key: the person (tenant and key
// name), so that a re-issued key keeps its person's passkeys.
type person struct {
	id    []byte
	key   *rein.Key
	keys  []*rein.Passkey
	creds []webauthn.Credential
}

func (p *person) WebAuthnID() []byte                         { return p.id }
func (p *person) WebAuthnName() string                       { return p.key.Name }
func (p *person) WebAuthnDisplayName() string                { return p.key.Name + " (" + p.key.Tenant + ")" }
func (p *person) WebAuthnCredentials() []webauthn.Credential { return p.creds }

func (s *Service) person(ctx context.Context, key *rein.Key) (*person, error) {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte("rein passkey user\x00" + key.Tenant + "\x00" + key.Name))
	p := &person{id: m.Sum(nil), key: key}
	list, err := s.Store.PasskeysOf(ctx, key.Tenant, key.Name)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot read passkeys: %v", err)
	}
	for _, k := range list {
		var c webauthn.Credential
		if err := json.Unmarshal(k.Credential, &c); err != nil {
			return nil, fmt.Errorf("passkey %s: %w", k.ID, err)
		}
		p.keys = append(p.keys, k)
		p.creds = append(p.creds, c)
	}
	return p, nil
}

// Purposes a ceremony is bound to.
const (
	purposeRegister = "register"
	purposeAdd      = "add-passkey"
)

// ApprovalPurpose binds a confirmation to an approval and the exact action
// it would approve now: an edit in between makes the confirmation useless.
func ApprovalPurpose(a *rein.Approval) string {
	args := a.ApprovedArgs
	if len(args) == 0 {
		args = a.Args
	}
	sum := sha256.Sum256(args)
	return "approval\x00" + a.ID + "\x00" + a.ActionHash + "\x00" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// seal encrypts a ceremony's session data, bound to the key and purpose.
func (s *Service) seal(sd *webauthn.SessionData, key *rein.Key, purpose string) string {
	body, _ := json.Marshal(sd)
	aead := s.aead()
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("passkey: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, body, ad(key, purpose)))
}

func (s *Service) open(token string, key *rein.Key, purpose string) (*webauthn.SessionData, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	aead := s.aead()
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, ErrConfirm
	}
	body, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], ad(key, purpose))
	if err != nil {
		return nil, ErrConfirm
	}
	var sd webauthn.SessionData
	if json.Unmarshal(body, &sd) != nil || !s.now().Before(sd.Expires) {
		return nil, ErrConfirm
	}
	return &sd, nil
}

// ad is the associated data of a sealed ceremony: it opens only for the
// same key (a revoked and re-issued key begins again) and purpose.
func ad(key *rein.Key, purpose string) []byte {
	return []byte("rein passkey ceremony v1\x00" + key.ID + "\x00" + purpose)
}

func (s *Service) aead() cipher.AEAD {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte("rein passkey ceremonies v1"))
	block, _ := aes.NewCipher(m.Sum(nil))
	aead, _ := cipher.NewGCM(block)
	return aead
}

// spend marks a challenge answered; false when it was answered before.
func (s *Service) spend(challenge string, until time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.used == nil {
		s.used = map[string]time.Time{}
	}
	for c, exp := range s.used {
		if now.After(exp) {
			delete(s.used, c)
		}
	}
	if _, ok := s.used[challenge]; ok {
		return false
	}
	s.used[challenge] = until
	return true
}

// Ceremony is what the browser needs for navigator.credentials: the
// options, and the sealed token it sends back with the answer.
type Ceremony struct {
	Options  json.RawMessage `json:"options"`
	Ceremony string          `json:"ceremony"`
}

// Confirmation is a passkey's answer to a ceremony: the token of the
// ceremony and the browser's PublicKeyCredential as JSON.
type Confirmation struct {
	Ceremony   string          `json:"ceremony"`
	Credential json.RawMessage `json:"credential"`
}

// BeginStepUp starts a confirmation of purpose (ApprovalPurpose) by key's
// person with one of their passkeys, user verification required.
func (s *Service) BeginStepUp(ctx context.Context, key *rein.Key, purpose string) (*Ceremony, error) {
	w, err := s.relyingParty()
	if err != nil {
		return nil, err
	}
	p, err := s.person(ctx, key)
	if err != nil {
		return nil, err
	}
	if len(p.creds) == 0 {
		return nil, ErrNoPasskey
	}
	opts, sd, err := w.BeginLogin(p, webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("begin passkey confirmation: %w", err)
	}
	body, _ := json.Marshal(opts)
	return &Ceremony{Options: body, Ceremony: s.seal(sd, key, purpose)}, nil
}

// Verify checks a confirmation of purpose by key's person: the ceremony
// sealed for this key and purpose, not expired, not answered before, and
// an assertion signed by one of the person's passkeys over its challenge,
// for rein's origin, with the user verified. It records the passkey's use.
func (s *Service) Verify(ctx context.Context, key *rein.Key, purpose string, c *Confirmation) error {
	if c == nil || c.Ceremony == "" || len(c.Credential) == 0 {
		return ErrConfirm
	}
	w, err := s.relyingParty()
	if err != nil {
		return err
	}
	sd, err := s.open(c.Ceremony, key, purpose)
	if err != nil {
		return err
	}
	p, err := s.person(ctx, key)
	if err != nil {
		return err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(c.Credential)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrConfirm, err)
	}
	cred, err := w.ValidateLogin(p, *sd, parsed)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrConfirm, err)
	}
	if cred.Authenticator.CloneWarning {
		return fmt.Errorf("%w: the passkey's signature counter went back (a cloned authenticator?)", ErrConfirm)
	}
	if !s.spend(sd.Challenge, sd.Expires) {
		return ErrConfirm
	}
	for _, k := range p.keys {
		if k.ID == base64.RawURLEncoding.EncodeToString(cred.ID) {
			body, _ := json.Marshal(cred)
			if err := s.Store.UsePasskey(ctx, k.ID, body, s.now().UTC()); err != nil {
				return rein.Errorf(rein.ECodeUnavailable, "cannot record the passkey's use: %v", err)
			}
		}
	}
	return nil
}

// BeginAdd starts the confirmation an already protected person gives
// before adding another passkey.
func (s *Service) BeginAdd(ctx context.Context, key *rein.Key) (*Ceremony, error) {
	return s.BeginStepUp(ctx, key, purposeAdd)
}

// BeginRegistration starts registering a passkey for key's person. A
// person with passkeys must confirm with one of them first (add, from
// BeginAdd): whoever holds only their API key or session cannot add a
// passkey of their own to pass step-up as them.
func (s *Service) BeginRegistration(ctx context.Context, key *rein.Key, add *Confirmation) (*Ceremony, error) {
	w, err := s.relyingParty()
	if err != nil {
		return nil, err
	}
	p, err := s.person(ctx, key)
	if err != nil {
		return nil, err
	}
	if len(p.creds) > 0 {
		if add == nil {
			return nil, ErrNeedExisting
		}
		if err := s.Verify(ctx, key, purposeAdd, add); err != nil {
			return nil, err
		}
	}
	var exclude []protocol.CredentialDescriptor
	for i := range p.creds {
		exclude = append(exclude, p.creds[i].Descriptor())
	}
	opts, sd, err := w.BeginRegistration(p, webauthn.WithExclusions(exclude),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementPreferred, UserVerification: protocol.VerificationRequired}))
	if err != nil {
		return nil, fmt.Errorf("begin passkey registration: %w", err)
	}
	body, _ := json.Marshal(opts)
	return &Ceremony{Options: body, Ceremony: s.seal(sd, key, purposeRegister)}, nil
}

// FinishRegistration verifies the browser's answer to a registration and
// stores the passkey, with a passkey.added audit entry.
func (s *Service) FinishRegistration(ctx context.Context, key *rein.Key, c *Confirmation, label string) (*rein.Passkey, error) {
	if c == nil || c.Ceremony == "" || len(c.Credential) == 0 {
		return nil, ErrConfirm
	}
	w, err := s.relyingParty()
	if err != nil {
		return nil, err
	}
	sd, err := s.open(c.Ceremony, key, purposeRegister)
	if err != nil {
		return nil, err
	}
	p, err := s.person(ctx, key)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBody(bytes.NewReader(c.Credential))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfirm, err)
	}
	cred, err := w.CreateCredential(p, *sd, parsed)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfirm, err)
	}
	if !cred.Flags.UserVerified {
		return nil, fmt.Errorf("%w: the authenticator did not verify the user (PIN or biometrics)", ErrConfirm)
	}
	if !s.spend(sd.Challenge, sd.Expires) {
		return nil, ErrConfirm
	}
	if label = strings.TrimSpace(label); label == "" {
		label = "passkey"
	}
	if len(label) > 64 {
		label = label[:64]
	}
	body, _ := json.Marshal(cred)
	now := s.now().UTC()
	pk := &rein.Passkey{ID: base64.RawURLEncoding.EncodeToString(cred.ID), Tenant: key.Tenant, Name: key.Name, Label: label,
		Credential: body, CreatedAt: now}
	e := &rein.Entry{TS: now, Tenant: key.Tenant, Kind: rein.KindPasskeyAdded, Actor: key.Name, Subject: pk.ID,
		Data: map[string]any{"label": label, "key_id": key.ID}}
	if err := s.Store.AddPasskey(ctx, pk, e); err != nil {
		return nil, err
	}
	return pk, nil
}

// List returns key's person's passkeys.
func (s *Service) List(ctx context.Context, key *rein.Key) ([]*rein.Passkey, error) {
	p, err := s.person(ctx, key)
	if err != nil {
		return nil, err
	}
	return p.keys, nil
}

// Remove deletes one of key's person's passkeys, with a passkey.removed
// audit entry.
func (s *Service) Remove(ctx context.Context, key *rein.Key, id string) error {
	p, err := s.person(ctx, key)
	if err != nil {
		return err
	}
	for _, k := range p.keys {
		if k.ID == id {
			e := &rein.Entry{TS: s.now().UTC(), Tenant: key.Tenant, Kind: rein.KindPasskeyRemoved, Actor: key.Name, Subject: id,
				Data: map[string]any{"label": k.Label}}
			return s.Store.RemovePasskey(ctx, id, e)
		}
	}
	return rein.ErrNotFound
}
