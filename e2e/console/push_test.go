package console

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
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

// TestConsolePush: Web Push from end to end (see e2e/browser/push.mjs):
// the console subscribes the device, rein pushes a new approval encrypted
// for it and signed with its VAPID key — to the approver it is for and not
// to another person's device — the service worker shows it, its link
// decides it, and the decision takes it away.
func TestConsolePush(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	ps := harness.NewPushService(t)
	cfg := filepath.Join(t.TempDir(), "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf("push:\n  subject: mailto:ops@example.com\n  services: [%q]\n", ps.HTTP.URL+"/push/"))
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
	ps.VAPID = func() *ecdsa.PublicKey { return pub }

	// Alice (on-call, not finance) has a device too: it must get nothing.
	alice := ps.Device("alice-phone")
	body, _ := json.Marshal(map[string]any{"endpoint": alice["endpoint"], "keys": map[string]string{"p256dh": alice["p256dh"], "auth": alice["auth"]}, "label": "Alice's phone"})
	if code, b := harness.HTTPDo(t, "POST", e.S.URL+"/v1/push/subscriptions", e.Keys["alice"], body, "application/json"); code != 201 {
		t.Fatalf("subscribe alice: %d %s", code, b)
	}

	var approval string
	e.RunBrowser("push.mjs", map[string]harness.StepFunc{
		"device": func(string) string {
			b, _ := json.Marshal(ps.Device("fin-phone"))
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
			m, err := ps.Next("fin-phone", "approval", 15*time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			if !strings.Contains(m, approval) {
				return "FAIL: the message is about another approval: " + m
			}
			return m
		},
		"decided": func(string) string {
			m, err := ps.Next("fin-phone", "closed", 15*time.Second)
			if err != nil {
				return "FAIL: " + err.Error()
			}
			if !strings.Contains(m, approval) || !strings.Contains(m, `"status":"approved"`) {
				return "FAIL: closing message " + m
			}
			return m
		},
		"tested": func(string) string {
			m, err := ps.Next("fin-phone", "test", 10*time.Second)
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
	if m, err := ps.Next("alice-phone", "approval", 500*time.Millisecond); err == nil {
		t.Fatalf("alice, who may not decide the transfer, was pushed it: %s", m)
	}
}
