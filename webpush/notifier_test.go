package webpush

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/sqlite"
)

// device is a browser as the test's push service knows it.
type device struct {
	key  *ecdh.PrivateKey
	auth []byte
}

// pushService is a push service that records what each device would get.
type pushService struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	devices map[string]*device
	gone    map[string]bool
	got     map[string][]Payload
}

func newPushService(t *testing.T) *pushService {
	p := &pushService{t: t, devices: map[string]*device{}, gone: map[string]bool{}, got: map[string][]Payload{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		name := strings.TrimPrefix(r.URL.Path, "/push/")
		d := p.devices[name]
		if d == nil || p.gone[name] {
			w.WriteHeader(http.StatusGone)
			return
		}
		body, _ := io.ReadAll(r.Body)
		plain, err := Decrypt(body, d.key, d.auth)
		if err != nil {
			t.Errorf("device %s cannot open its message: %v", name, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var pl Payload
		if err := json.Unmarshal(plain, &pl); err != nil {
			t.Errorf("device %s: %v", name, err)
		}
		p.got[name] = append(p.got[name], pl)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pushService) subscribe(t *testing.T, store rein.PushSubscriptionStore, tenant, person, name string) {
	t.Helper()
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	d := &device{key: k, auth: make([]byte, 16)}
	rand.Read(d.auth)
	p.mu.Lock()
	p.devices[name] = d
	p.mu.Unlock()
	s := &rein.PushSubscription{ID: "push_" + name, Tenant: tenant, Name: person, Endpoint: p.srv.URL + "/push/" + name,
		P256DH: base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), Auth: base64.RawURLEncoding.EncodeToString(d.auth),
		Label: name, CreatedAt: time.Now()}
	if err := store.SavePushSubscription(context.Background(), s, nil); err != nil {
		t.Fatal(err)
	}
}

func (p *pushService) take() map[string][]Payload {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = map[string][]Payload{}
	return got
}

func names(m map[string][]Payload) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestNotifier: an approval is pushed, encrypted for each device, to the
// people who may vote on it — not to the agent that asked, not to people
// of other groups or tenants (a person of the same name in another tenant
// included), but to eligible people of every tenant (tenant *); not to a
// revoked key's person, not again to
// one who voted — and taken off their devices once decided; a device the
// push service forgot is removed.
func TestNotifier(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, k := range []*rein.Key{
		{ID: "key_agent", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent, rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_fiona", Name: "fiona", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_frank", Name: "frank", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_oscar", Name: "oscar", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}},
		{ID: "key_olga", Name: "olga", Tenant: "acme", Roles: []rein.Role{rein.RoleAuditor}, Groups: []string{"finance"}},
		{ID: "key_eve", Name: "eve", Tenant: "other", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_gina", Name: "gina", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}},
		{ID: "key_fiona_other", Name: "fiona", Tenant: "other", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"oncall"}},
	} {
		k.CreatedAt = time.Now()
		_, k.SecretHash = rein.NewSecret()
		if err := store.CreateKey(ctx, k, &rein.Entry{TS: time.Now(), Tenant: k.Tenant, Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID}); err != nil {
			t.Fatal(err)
		}
	}
	ps := newPushService(t)
	for _, s := range [][3]string{{"acme", "builder", "agent-phone"}, {"acme", "fiona", "fiona-phone"}, {"acme", "fiona", "fiona-laptop"},
		{"acme", "frank", "frank-phone"}, {"acme", "oscar", "oscar-phone"}, {"acme", "olga", "olga-phone"}, {"other", "eve", "eve-phone"}, {rein.AllTenants, "gina", "gina-phone"}, {"other", "fiona", "other-fiona-phone"}} {
		ps.subscribe(t, store, s[0], s[1], s[2])
	}
	ps.gone["fiona-laptop"] = true

	n := &Notifier{Store: store, BaseURL: "https://rein.example/",
		Sender: &Sender{VAPID: &VAPID{Key: mustKey(t), Subject: "https://rein.example"}, Services: []string{ps.srv.URL + "/push/"}}}
	a := &rein.Approval{ID: "apr_1", Tenant: "acme", Status: rein.StatusPending, Agent: "builder", AgentKeyID: "key_agent",
		Tool: "payments.transfer", Args: json.RawMessage(`{"amount":5000,"payee":"ACME-SECRET-PAYEE"}`), Risk: []string{"money"},
		Rule: "big-transfers", Approvers: []string{"group:finance"}, Quorum: 2, ExpiresAt: time.Now().Add(time.Hour)}

	if err := n.Announce(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	got := ps.take()
	if want := []string{"fiona-phone", "frank-phone", "gina-phone"}; !slices.Equal(names(got), want) {
		t.Fatalf("pushed to %v, want %v", names(got), want)
	}
	p := got["fiona-phone"][0]
	if p.Type != "approval" || p.ID != "apr_1" || p.URL != "https://rein.example/approvals/apr_1?revision=1" || p.Revision != 1 ||
		p.Title != "builder wants to run payments.transfer" || !strings.Contains(p.Body, "Risk: money") || !strings.Contains(p.Body, "rule big-transfers") {
		t.Fatalf("payload %+v", p)
	}
	if raw, _ := json.Marshal(got); strings.Contains(string(raw), "ACME-SECRET-PAYEE") || strings.Contains(string(raw), "5000") {
		t.Fatalf("the arguments went into a push message (lock screens show them): %s", raw)
	}
	if list, _ := store.PushSubscriptionsOf(ctx, "acme", "fiona"); len(list) != 1 || list[0].Label != "fiona-phone" {
		t.Fatalf("the device the push service forgot is still subscribed: %+v", list)
	}

	// Frank voted: the update of the still-pending approval skips him.
	a.Votes = []rein.Vote{{ByKey: "key_frank", Vote: "approve"}}
	if err := n.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := ps.take(); !slices.Equal(names(got), []string{"fiona-phone", "gina-phone"}) {
		t.Fatalf("update pushed to %v", names(got))
	}

	// Decided: both are told to take it away.
	a.Status = rein.StatusApproved
	if err := n.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	got = ps.take()
	if !slices.Equal(names(got), []string{"fiona-phone", "frank-phone", "gina-phone"}) || got["frank-phone"][0].Type != "closed" || got["frank-phone"][0].Status != "approved" {
		t.Fatalf("closing: %+v", got)
	}
	// A reminder of a decided approval sends nothing.
	if err := n.Remind(ctx, a, nil); err != nil || len(ps.take()) != 0 {
		t.Fatalf("reminded of a decided approval: %v", err)
	}

	// Fiona's key is revoked: her devices get nothing.
	if err := store.RevokeKey(ctx, "key_fiona", time.Now(), &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindKeyRevoked, Actor: "test", Subject: "key_fiona"}); err != nil {
		t.Fatal(err)
	}
	b := *a
	b.ID, b.Status, b.Votes = "apr_2", rein.StatusPending, nil
	if err := n.Remind(ctx, &b, nil); err != nil {
		t.Fatal(err)
	}
	got = ps.take()
	if !slices.Equal(names(got), []string{"frank-phone", "gina-phone"}) || !got["frank-phone"][0].Renotify || !strings.HasPrefix(got["frank-phone"][0].Title, "Reminder: ") {
		t.Fatalf("reminder after revoking fiona: %+v", got)
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := KeyFromSecret([]byte("a secret for the notifier's test key"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestNotifierSendsSideBySide: devices are sent to concurrently, so one
// slow push service does not hold the others up behind it.
func TestNotifierSendsSideBySide(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var mu sync.Mutex
	inFlight, most := 0, 0
	both := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 2 {
			close(both)
		}
		mu.Unlock()
		select { // the first request waits for the second to arrive
		case <-both:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	for _, name := range []string{"fiona", "frank"} {
		k := &rein.Key{ID: "key_" + name, Name: name, Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"finance"}, CreatedAt: time.Now()}
		_, k.SecretHash = rein.NewSecret()
		if err := store.CreateKey(ctx, k, &rein.Entry{TS: time.Now(), Tenant: "acme", Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID}); err != nil {
			t.Fatal(err)
		}
		dk, _ := ecdh.P256().GenerateKey(rand.Reader)
		if err := store.SavePushSubscription(ctx, &rein.PushSubscription{ID: "push_" + name, Tenant: "acme", Name: name, Endpoint: srv.URL + "/push/" + name,
			P256DH: base64.RawURLEncoding.EncodeToString(dk.PublicKey().Bytes()), Auth: base64.RawURLEncoding.EncodeToString(make([]byte, 16)), CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := &Notifier{Store: store, BaseURL: "https://rein.example",
		Sender: &Sender{VAPID: &VAPID{Key: mustKey(t), Subject: "https://rein.example"}, Services: []string{srv.URL + "/push/"}}}
	a := &rein.Approval{ID: "apr_1", Tenant: "acme", Status: rein.StatusPending, Agent: "builder", AgentKeyID: "key_agent",
		Tool: "pay", Approvers: []string{"group:finance"}, Quorum: 1, ExpiresAt: time.Now().Add(time.Hour)}
	if err := n.Announce(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	if most != 2 {
		t.Fatalf("at most %d messages were in flight at once; the two devices were sent to one after the other", most)
	}
}
