package harness

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/webpush"
)

// PushService is a push service (RFC 8030) for devices whose keys the
// test holds: it checks each message's VAPID token against rein's key,
// decrypts it as the browser would, and keeps it for the device.
type PushService struct {
	t     *testing.T
	HTTP  *httptest.Server
	VAPID func() *ecdsa.PublicKey
	mu    sync.Mutex
	dev   map[string]*ecdh.PrivateKey
	auth  map[string][]byte
	got   map[string]chan []byte
}

// checkVAPID verifies the token as a push service does (RFC 8292): rein's
// key, this service as the audience, not expired.
func (p *PushService) checkVAPID(h string) error {
	rest, ok := strings.CutPrefix(h, "vapid t=")
	token, k, ok2 := strings.Cut(rest, ", k=")
	if !ok || !ok2 {
		return fmt.Errorf("the Authorization header %q is not vapid", h)
	}
	pub := p.VAPID()
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
	if claims.Aud != p.HTTP.URL || claims.Exp < time.Now().Unix() || claims.Exp > time.Now().Add(24*time.Hour).Unix() || claims.Sub != "mailto:ops@example.com" {
		return fmt.Errorf("claims %+v", claims)
	}
	return nil
}

// NewPushService starts a push service; set VAPID to rein's public key
// before messages arrive.
func NewPushService(t *testing.T) *PushService {
	p := &PushService{t: t, dev: map[string]*ecdh.PrivateKey{}, auth: map[string][]byte{}, got: map[string]chan []byte{}}
	p.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	t.Cleanup(p.HTTP.Close)
	return p
}

// Device makes a device's keys and returns its subscription as the Push
// API gives it.
func (p *PushService) Device(name string) map[string]string {
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	p.mu.Lock()
	p.dev[name], p.auth[name], p.got[name] = k, auth, make(chan []byte, 16)
	p.mu.Unlock()
	return map[string]string{"endpoint": p.HTTP.URL + "/push/" + name,
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}
}

// Next waits for the device's next message whose type is want.
func (p *PushService) Next(name, want string, d time.Duration) (string, error) {
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
