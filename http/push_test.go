package http_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein"
)

// newTestDevice is what a browser's PushSubscription.toJSON() gives for
// endpoint, with fresh keys.
func newTestDevice(t testing.TB, endpoint string) map[string]any {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return map[string]any{"endpoint": endpoint, "expirationTime": nil, "label": "Test phone",
		"keys": map[string]any{"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}}
}

// TestPushSubscriptions: a person subscribes only devices at the allowed
// push services with well-formed keys, sees and removes only their own,
// at most ten; a test message reports a device its push service forgot;
// each change is audited.
func TestPushSubscriptions(t *testing.T) {
	e := newEnv(t, globalPolicy)
	var got struct {
		PublicKey     string           `json:"public_key"`
		Services      []string         `json:"services"`
		Subscriptions []map[string]any `json:"subscriptions"`
	}
	r := e.do("GET", "/v1/push", "acme-approver", nil)
	if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil || len(got.PublicKey) != 87 || len(got.Subscriptions) != 0 {
		t.Fatalf("GET /v1/push: %d %s", r.Status, r.Body)
	}
	for _, k := range []string{"acme-agent", "acme-auditor"} {
		if r := e.do("GET", "/v1/push", k, nil); r.Status != 403 {
			t.Fatalf("%s: %d", k, r.Status)
		}
	}

	good := newTestDevice(t, e.push.URL+"/push/phone")
	for name, c := range map[string]struct {
		edit func(m map[string]any)
		want string
	}{
		"another host":       {func(m map[string]any) { m["endpoint"] = "https://evil.example/push/x" }, "not at a push service"},
		"cloud metadata":     {func(m map[string]any) { m["endpoint"] = "http://169.254.169.254/latest/meta-data/" }, "not at a push service"},
		"outside the prefix": {func(m map[string]any) { m["endpoint"] = e.push.URL + "/admin" }, "not at a push service"},
		"credentials in URL": {func(m map[string]any) { m["endpoint"] = strings.Replace(e.push.URL, "://", "://u:p@", 1) + "/push/x" }, "not an absolute URL"},
		"short auth":         {func(m map[string]any) { m["keys"].(map[string]any)["auth"] = "AAAA" }, "keys.auth"},
		"not a point": {func(m map[string]any) {
			m["keys"].(map[string]any)["p256dh"] = base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
		}, "P-256"},
		"compressed point": {func(m map[string]any) {
			m["keys"].(map[string]any)["p256dh"] = base64.RawURLEncoding.EncodeToString(make([]byte, 33))
		}, "keys.p256dh"},
		"unknown field":        {func(m map[string]any) { m["owner"] = "someone-else" }, "owner"},
		"label with a newline": {func(m map[string]any) { m["label"] = "a\nb" }, "label"},
	} {
		m := map[string]any{}
		b, _ := json.Marshal(good)
		json.Unmarshal(b, &m)
		c.edit(m)
		if r := e.do("POST", "/v1/push/subscriptions", "acme-approver", m); r.Status != 400 || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	r = e.do("POST", "/v1/push/subscriptions", "acme-approver", good)
	if r.Status != 201 {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	var sub map[string]any
	json.Unmarshal(r.Body, &sub)
	if sub["label"] != "Test phone" || sub["service"] != e.push.URL || strings.Contains(string(r.Body), "p256dh") {
		t.Fatalf("subscription view: %s", r.Body)
	}
	// The same browser again: still one device.
	if r = e.do("POST", "/v1/push/subscriptions", "acme-approver", good); r.Status != 201 {
		t.Fatalf("again: %d %s", r.Status, r.Body)
	}
	json.Unmarshal(r.Body, &sub)
	json.Unmarshal(e.do("GET", "/v1/push", "acme-approver", nil).Body, &got)
	if len(got.Subscriptions) != 1 {
		t.Fatalf("subscribing again made %d devices", len(got.Subscriptions))
	}
	id := got.Subscriptions[0]["id"].(string)
	if id != sub["id"] {
		t.Fatalf("subscribing again kept %s, want the new subscription %s", id, sub["id"])
	}

	// Nobody else sees or removes it: another person of the tenant, an
	// admin, another tenant.
	for _, k := range []string{"acme-admin", "globex-approver", "root"} {
		var theirs struct {
			Subscriptions []any `json:"subscriptions"`
		}
		if r := e.do("GET", "/v1/push", k, nil); r.Status != 200 || json.Unmarshal(r.Body, &theirs) != nil || len(theirs.Subscriptions) != 0 {
			t.Fatalf("%s sees: %d %s", k, r.Status, r.Body)
		}
		if r := e.do("DELETE", "/v1/push/subscriptions/"+id, k, nil); r.Status != 404 {
			t.Fatalf("%s removed another person's device: %d %s", k, r.Status, r.Body)
		}
	}

	// A device the push service forgot: the test says so.
	if r := e.do("POST", "/v1/push/subscriptions", "acme-approver", newTestDevice(t, e.push.URL+"/push/gone-laptop")); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var res struct {
		Sent   []map[string]any `json:"sent"`
		Failed []map[string]any `json:"failed"`
	}
	r = e.do("POST", "/v1/push/test", "acme-approver", nil)
	if r.Status != 200 || json.Unmarshal(r.Body, &res) != nil || len(res.Sent) != 1 || len(res.Failed) != 1 || !strings.Contains(fmt.Sprint(res.Failed[0]["error"]), "gone") {
		t.Fatalf("test message: %d %s", r.Status, r.Body)
	}

	// At most ten devices.
	for i := 2; i < 10; i++ {
		if r := e.do("POST", "/v1/push/subscriptions", "acme-approver", newTestDevice(t, fmt.Sprintf("%s/push/d%d", e.push.URL, i))); r.Status != 201 {
			t.Fatalf("device %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := e.do("POST", "/v1/push/subscriptions", "acme-approver", newTestDevice(t, e.push.URL+"/push/d11")); r.Status != 409 || !strings.Contains(string(r.Body), "remove one") {
		t.Fatalf("an eleventh device: %d %s", r.Status, r.Body)
	}

	if r := e.do("DELETE", "/v1/push/subscriptions/"+id, "acme-approver", nil); r.Status != 204 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	entries, err := e.store.Entries(e.ctx, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, x := range entries {
		if x.Tenant == "acme" && strings.Contains(string(x.Bytes), `"actor":"acme-approver"`) {
			kinds[x.Kind]++
		}
	}
	if kinds[rein.KindPushSubscribed] != 11 || kinds[rein.KindPushUnsubscribed] != 1 {
		t.Fatalf("audit: %v", kinds)
	}
}
