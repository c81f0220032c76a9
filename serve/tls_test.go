package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with the given
// serial number.
func writeCert(t *testing.T, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "rein test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	// Write to temporary names and rename, as certificate tools do.
	for _, f := range []struct {
		path string
		blk  *pem.Block
	}{{certFile, &pem.Block{Type: "CERTIFICATE", Bytes: der}}, {keyFile, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}}} {
		if err := os.WriteFile(f.path+".new", pem.EncodeToMemory(f.blk), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f.path+".new", f.path); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

// TestHTTPSWithCertificateRenewal: rein serves HTTPS from --tls-cert and
// --tls-key, and a renewed certificate is used without a restart.
func TestHTTPSWithCertificateRenewal(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, 1)
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, []byte("version: 1\nrules: []\n"), 0o600)
	t.Setenv("REIN_ADMIN_KEY", "")
	srv, err := Start(context.Background(), Config{Data: filepath.Join(dir, "data"), Listen: "127.0.0.1:0", Policy: pol,
		TLSCert: certFile, TLSKey: keyFile}, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if srv.URL != "https://"+srv.Addr {
		t.Fatalf("URL %s", srv.URL)
	}
	serial := func() int64 {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
		res, err := client.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("healthz over HTTPS: %d", res.StatusCode)
		}
		return res.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if s := serial(); s != 1 {
		t.Fatalf("serial %d, want 1", s)
	}
	if res, err := http.Get("http://" + srv.Addr + "/healthz"); err == nil && res.StatusCode == 200 {
		t.Fatal("plain HTTP is served on the HTTPS port")
	}
	writeCert(t, dir, 2)
	deadline := time.Now().Add(5 * time.Second)
	for serial() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the renewed certificate was not picked up")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A broken renewal keeps the last good certificate.
	os.WriteFile(certFile, []byte("not a certificate"), 0o600)
	time.Sleep(1100 * time.Millisecond)
	if s := serial(); s != 2 {
		t.Fatalf("after a broken renewal: serial %d, want 2", s)
	}
	if _, err := newCertificate(certFile, "", nil); err == nil {
		t.Error("a certificate without a key was accepted")
	}
}
