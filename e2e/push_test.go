package e2e

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/webpush"
)

const pushPolicy = `version: 1
default: allow
rules:
  - id: transfers
    when: 'tool == "payments.transfer"'
    decision: ask
    reason: "transfers need finance"
    approval: {approvers: ["group:finance"], quorum: 1, ttl: 15m}
`

// testPushService is a push service (RFC 8030) for devices whose keys the
// test holds: it checks each message's VAPID token against rein's key,
// decrypts it as the browser would, and keeps it for the device.
type testPushService struct {
	t     *testing.T
	srv   *httptest.Server
	vapid func() *ecdsa.PublicKey
	mu    sync.Mutex
	dev   map[string]*ecdh.PrivateKey
	auth  map[string][]byte
	got   map[string]chan []byte
}

func newTestPushService(t *testing.T) *testPushService {
	p := &testPushService{t: t, dev: map[string]*ecdh.PrivateKey{}, auth: map[string][]byte{}, got: map[string]chan []byte{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/push/")
		p.mu.Lock()
		key, auth, ch := p.dev[name], p.auth[name], p.got[name]
		p.mu.Unlock()
		if key == nil {
			w.WriteHeader(http.StatusGone)
			return
		}
		if err := p.checkVAPID(r.Header.Get("Authorization")); err != nil {
			t.Errorf("push to %s: %v", name, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("TTL") == "" {
			t.Errorf("push to %s: headers %v", name, r.Header)
		}
		body, _ := io.ReadAll(r.Body)
		plain, err := webpush.Decrypt(body, key, auth)
		if err != nil {
			t.Errorf("push to %s does not open with the device's keys: %v", name, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		ch <- plain
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// checkVAPID verifies the token as a push service does (RFC 8292): rein's
// key, this service as the audience, not expired.
func (p *testPushService) checkVAPID(h string) error {
	rest, ok := strings.CutPrefix(h, "vapid t=")
	token, k, ok2 := strings.Cut(rest, ", k=")
	if !ok || !ok2 {
		return fmt.Errorf("Authorization %q is not vapid", h)
	}
	pub := p.vapid()
	want, _ := pub.Bytes()
	if k != base64.RawURLEncoding.EncodeToString(want) {
		return fmt.Errorf("k=%s is not rein's VAPID key", k)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return fmt.Errorf("token %q", token)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return fmt.Errorf("the VAPID signature does not verify")
	}
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(raw, &claims)
	if claims.Aud != p.srv.URL || claims.Exp < time.Now().Unix() || claims.Exp > time.Now().Add(24*time.Hour).Unix() || claims.Sub != "mailto:ops@example.com" {
		return fmt.Errorf("claims %+v", claims)
	}
	return nil
}

// device makes a device's keys and returns its subscription as the Push
// API gives it.
func (p *testPushService) device(name string) map[string]string {
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	p.mu.Lock()
	p.dev[name], p.auth[name], p.got[name] = k, auth, make(chan []byte, 16)
	p.mu.Unlock()
	return map[string]string{"endpoint": p.srv.URL + "/push/" + name,
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}
}

// next waits for the device's next message whose type is want.
func (p *testPushService) next(name, want string, d time.Duration) (string, error) {
	p.mu.Lock()
	ch := p.got[name]
	p.mu.Unlock()
	deadline := time.After(d)
	for {
		select {
		case b := <-ch:
			var m struct{ Type string }
			json.Unmarshal(b, &m)
			if m.Type == want {
				return string(b), nil
			}
		case <-deadline:
			return "", fmt.Errorf("no %s message for %s within %s", want, name, d)
		}
	}
}

// TestConsolePush: Web Push from end to end (see e2e/browser/push.mjs):
// the console subscribes the device, rein pushes a new approval encrypted
// for it and signed with its VAPID key — to the approver it is for and not
// to another person's device — the service worker shows it, its link
// decides it, and the decision takes it away.
func TestConsolePush(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	ps := newTestPushService(t)
	cfg := filepath.Join(t.TempDir(), "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf("push:\n  subject: mailto:ops@example.com\n  services: [%q]\n", ps.srv.URL+"/push/"))
	e := harness.NewConsoleEnvPolicy(t, pushPolicy, "--config", cfg)
	// A push's link names rein's base URL, which on a loopback address is
	// localhost: the console runs there, as people open it, so that its
	// service worker opens the link.
	e.S.URL = strings.Replace(e.S.URL, "http://127.0.0.1:", "http://localhost:", 1)
	var info struct {
		PublicKey string `json:"public_key"`
	}
	harness.GetJSON(t, e.S.URL+"/v1/push", e.Keys["fin"], &info)
	raw, err := base64.RawURLEncoding.DecodeString(info.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatalf("public_key %q is not a P-256 point: %v", info.PublicKey, err)
	}
	ps.vapid = func() *ecdsa.PublicKey { return pub }

	// Alice (on-call, not finance) has a device too: it must get nothing.
	alice := ps.device("alice-phone")
	body, _ := json.Marshal(map[string]any{"endpoint": alice["endpoint"], "keys": map[string]string{"p256dh": alice["p256dh"], "auth": alice["auth"]}, "label": "Alice's phone"})
	if code, b := harness.HTTPDo(t, "POST", e.S.URL+"/v1/push/subscriptions", e.Keys["alice"], body, "application/json"); code != 201 {
		t.Fatalf("subscribe alice: %d %s", code, b)
	}

	var approval string
	e.RunBrowser("push.mjs", map[string]harness.StepFunc{
		"device": func(string) string {
			b, _ := json.Marshal(ps.device("fin-phone"))
			return string(b)
		},
		"subscribed": func(string) string {
			var got struct {
				Subscriptions []struct{ Label, Endpoint string }
			}
			harness.GetJSON(t, e.S.URL+"/v1/push", e.Keys["fin"], &got)
			if len(got.Subscriptions) != 1 || got.Subscriptions[0].Label != "Fin's phone" || !strings.HasSuffix(got.Subscriptions[0].Endpoint, "/push/fin-phone") {
				return fmt.Sprintf("FAIL: fin's devices: %+v", got.Subscriptions)
			}
			return "ok"
		},
		"ask": func(string) string {
			code, b := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys["builder"], []byte(`{"session":"push-1","tool":"payments.transfer","args":{"amount":12000,"currency":"EUR","payee":"Acme Supplies GmbH"}}`), "application/json")
			var a struct{ Approval struct{ ID string } }
			if json.Unmarshal(b, &a) != nil || a.Approval.ID == "" {
				return fmt.Sprintf("FAIL: the check: %d %s", code, b)
			}
			approval = a.Approval.ID
			m, err := ps.next("fin-phone", "approval", 15*time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			if !strings.Contains(m, approval) {
				return "FAIL: the message is about another approval: " + m
			}
			return m
		},
		"decided": func(string) string {
			m, err := ps.next("fin-phone", "closed", 15*time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			if !strings.Contains(m, approval) || !strings.Contains(m, `"status":"approved"`) {
				return "FAIL: closing message " + m
			}
			return m
		},
		"tested": func(string) string {
			m, err := ps.next("fin-phone", "test", 10*time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			var p struct{ Type string }
			json.Unmarshal([]byte(m), &p)
			return p.Type
		},
		"devices": func(string) string {
			var got struct{ Subscriptions []any }
			harness.GetJSON(t, e.S.URL+"/v1/push", e.Keys["fin"], &got)
			return fmt.Sprint(len(got.Subscriptions))
		},
	})
	if m, err := ps.next("alice-phone", "approval", 500*time.Millisecond); err == nil {
		t.Fatalf("alice, who may not decide the transfer, was pushed it: %s", m)
	}
}
