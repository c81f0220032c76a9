package webpush

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The example of RFC 8291, section 5 and appendix A.
const (
	rfcPlaintext = "V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24"
	rfcASPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
	rfcUAPublic  = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
	rfcUAPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
	rfcSalt      = "DGv6ra1nlYgDCS1FRnbzlw"
	rfcAuth      = "BTBZMqHH6r4Tts7J_aSIgg"
	rfcBody      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
)

// TestRFC8291Example: with the example's sender key and salt, and no
// padding, the body is the RFC's byte for byte; the receiver's side opens
// it.
func TestRFC8291Example(t *testing.T) {
	as, err := ecdh.P256().NewPrivateKey(b64(t, rfcASPrivate))
	if err != nil {
		t.Fatal(err)
	}
	body, err := encrypt(b64(t, rfcPlaintext), b64(t, rfcUAPublic), b64(t, rfcAuth), as, b64(t, rfcSalt), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := base64.RawURLEncoding.EncodeToString(body); got != rfcBody {
		t.Fatalf("body\n got %s\nwant %s", got, rfcBody)
	}
	ua, err := ecdh.P256().NewPrivateKey(b64(t, rfcUAPrivate))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Decrypt(b64(t, rfcBody), ua, b64(t, rfcAuth))
	if err != nil || string(plain) != "When I grow up, I want to be a watermelon" {
		t.Fatalf("decrypted %q, %v", plain, err)
	}
	// Another authentication secret does not open it.
	if _, err := Decrypt(b64(t, rfcBody), ua, bytes.Repeat([]byte{1}, 16)); err == nil {
		t.Fatal("opened with the wrong auth secret")
	}
}

// TestEncryptPadsAndIsFresh: every message has its own salt and sender key,
// and lengths are rounded up so the push service cannot tell messages
// apart by size.
func TestEncryptPadsAndIsFresh(t *testing.T) {
	ua, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	a, err := Encrypt([]byte(`{"id":"apr_1"}`), ua.PublicKey().Bytes(), auth)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Encrypt([]byte(`{"id":"apr_1","title":"a longer message"}`), ua.PublicKey().Bytes(), auth)
	if len(a) != len(b) {
		t.Fatalf("lengths %d and %d give the payload's length away", len(a), len(b))
	}
	if bytes.Equal(a[:16], b[:16]) || bytes.Equal(a[21:86], b[21:86]) {
		t.Fatal("salt or sender key reused")
	}
	for _, body := range [][]byte{a, b} {
		if _, err := Decrypt(body, ua, auth); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Encrypt(make([]byte, MaxPayload+1), ua.PublicKey().Bytes(), auth); err == nil {
		t.Fatal("a payload over the limit was encrypted")
	}
	big, err := Encrypt(make([]byte, MaxPayload), ua.PublicKey().Bytes(), auth)
	if err != nil || len(big) != 4096 {
		t.Fatalf("the largest payload: %d octets, %v", len(big), err)
	}
}

func TestKeyFromSecret(t *testing.T) {
	a, err := KeyFromSecret([]byte("a console secret of thirty-two bytes"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KeyFromSecret([]byte("a console secret of thirty-two bytes"))
	c, _ := KeyFromSecret([]byte("another console secret, 32 bytes!!"))
	if !a.Equal(b) || a.Equal(c) {
		t.Fatal("the key must follow the secret, and only it")
	}
	if _, err := KeyFromSecret([]byte("short")); err == nil {
		t.Fatal("a short secret was accepted")
	}
}

// verifyVAPID checks an Authorization header as a push service does.
func verifyVAPID(t *testing.T, header, endpoint string, pub *ecdsa.PublicKey) map[string]any {
	t.Helper()
	rest, ok := strings.CutPrefix(header, "vapid t=")
	if !ok {
		t.Fatalf("not a vapid header: %q", header)
	}
	token, k, ok := strings.Cut(rest, ", k=")
	if !ok {
		t.Fatalf("no k= in %q", header)
	}
	want, _ := pub.Bytes()
	if k != base64.RawURLEncoding.EncodeToString(want) {
		t.Fatalf("k=%s is not the VAPID public key", k)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", token)
	}
	var hdr map[string]string
	json.Unmarshal(b64(t, parts[0]), &hdr)
	if hdr["alg"] != "ES256" {
		t.Fatalf("header %v", hdr)
	}
	sig := b64(t, parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the VAPID signature does not verify")
	}
	var claims map[string]any
	json.Unmarshal(b64(t, parts[1]), &claims)
	return claims
}

func TestVAPID(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	v := &VAPID{Key: key, Subject: "mailto:ops@example.com"}
	exp := time.Now().Add(12 * time.Hour)
	h, err := v.Authorization("https://fcm.googleapis.com/fcm/send/abc?x=1", exp)
	if err != nil {
		t.Fatal(err)
	}
	claims := verifyVAPID(t, h, "", &key.PublicKey)
	if claims["aud"] != "https://fcm.googleapis.com" || claims["sub"] != "mailto:ops@example.com" || int64(claims["exp"].(float64)) != exp.Unix() {
		t.Fatalf("claims %v", claims)
	}
	if _, err := v.Authorization("/relative", exp); err == nil {
		t.Fatal("a relative endpoint was signed for")
	}
}

func TestAllowed(t *testing.T) {
	s := &Sender{}
	for _, ok := range []string{
		"https://fcm.googleapis.com/fcm/send/xyz",
		"https://updates.push.services.mozilla.com/wpush/v2/abc",
		"https://web.push.apple.com/QK2ab",
		"https://wns2-by3p.notify.windows.com/w/?token=abc",
	} {
		if err := s.Allowed(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"http://fcm.googleapis.com/fcm/send/xyz",    // not https
		"https://fcm.googleapis.com.evil.example/x", // another host
		"https://evil.example/fcm.googleapis.com/",
		"https://user:pw@fcm.googleapis.com/x",
		"https://fcm.googleapis.com:8443/x",
		"https://notify.windows.com/x", // the wildcard needs a label
		"https://127.0.0.1/",
		"https://169.254.169.254/latest/meta-data/",
		"fcm.googleapis.com/x",
		"",
	} {
		if err := s.Allowed(bad); err == nil {
			t.Errorf("%q allowed", bad)
		}
	}
	local := &Sender{Services: []string{"http://127.0.0.1:9999/push/"}}
	if err := local.Allowed("http://127.0.0.1:9999/push/abc"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"http://127.0.0.1:9999/other", "http://127.0.0.1:9998/push/x", "http://127.0.0.1:9999/push/../admin"} {
		if err := local.Allowed(bad); err == nil {
			t.Errorf("%q allowed by a prefix it does not start with", bad)
		}
	}
}

// TestSend: what reaches the push service is what RFC 8030, 8291 and 8292
// ask for, and it opens with the browser's keys; a gone subscription is
// ErrGone; redirects are not followed.
func TestSend(t *testing.T) {
	ua, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var got *http.Request
	var body []byte
	status := http.StatusCreated
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, nil
		body, _ = io.ReadAll(r.Body)
		if status == http.StatusFound {
			w.Header().Set("Location", "http://169.254.169.254/")
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	s := &Sender{VAPID: &VAPID{Key: key, Subject: "https://rein.example"}, Services: []string{srv.URL + "/push/"}}
	sub := Subscription{Endpoint: srv.URL + "/push/dev1", P256DH: base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes()),
		Auth: base64.RawURLEncoding.EncodeToString(auth)}
	msg := Message{Payload: []byte(`{"id":"apr_1"}`), TTL: 90 * time.Second, Urgency: "high", Topic: "apr_1"}
	if err := s.Send(context.Background(), sub, msg); err != nil {
		t.Fatal(err)
	}
	h := got.Header
	if h.Get("Content-Encoding") != "aes128gcm" || h.Get("TTL") != "90" || h.Get("Urgency") != "high" || h.Get("Topic") != "apr_1" {
		t.Fatalf("headers %v", h)
	}
	if claims := verifyVAPID(t, h.Get("Authorization"), sub.Endpoint, &key.PublicKey); claims["aud"] != srv.URL {
		t.Fatalf("aud %v", claims["aud"])
	}
	plain, err := Decrypt(body, ua, auth)
	if err != nil || string(plain) != `{"id":"apr_1"}` {
		t.Fatalf("%q %v", plain, err)
	}

	status = http.StatusGone
	if err := s.Send(context.Background(), sub, msg); !errors.Is(err, ErrGone) {
		t.Fatalf("410: %v", err)
	}
	status = http.StatusFound
	if err := s.Send(context.Background(), sub, msg); err == nil || !strings.Contains(err.Error(), "302") {
		t.Fatalf("a redirect: %v", err)
	}
	if err := s.Send(context.Background(), Subscription{Endpoint: "http://169.254.169.254/push/x", P256DH: sub.P256DH, Auth: sub.Auth}, msg); err == nil {
		t.Fatal("sent to an endpoint outside the allowed services")
	}
	bad := sub
	bad.P256DH = base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
	if err := s.Send(context.Background(), bad, msg); err == nil || !strings.Contains(err.Error(), "p256dh") {
		t.Fatalf("a key that is no point: %v", err)
	}
}
