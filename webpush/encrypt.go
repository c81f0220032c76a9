// Package webpush sends Web Push messages (RFC 8030) the way browsers'
// push services accept them: the payload encrypted for the subscriber
// (RFC 8291, "aes128gcm" content coding of RFC 8188) and the sender
// identified by a VAPID token (RFC 8292). It holds no state: the
// subscriptions are the store's, the key is derived from rein's console
// secret, and which approvals are announced to whom is the notify
// package's business.
package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// recordSize is the "rs" of the one record a push message has (RFC 8291
// section 4: greater than the plaintext, delimiter, padding and tag).
const recordSize = 4096

// MaxPayload is the longest plaintext Encrypt takes: push services need
// not accept bodies over 4096 octets (RFC 8030 section 7.2), and the
// header (86), the delimiter (1) and the tag (16) take their share.
const MaxPayload = 4096 - 86 - 1 - 16

// padTo rounds the padded plaintext up to a multiple of this many octets,
// so that the push service cannot tell messages apart by their length.
const padTo = 256

// Encrypt encrypts plaintext for a subscriber whose public key (an
// uncompressed P-256 point) and authentication secret (16 octets) the
// browser gave with its subscription. It returns the message body: the
// aes128gcm header with a fresh salt and a fresh sender key, then the one
// record.
func Encrypt(plaintext, uaPublic, authSecret []byte) ([]byte, error) {
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return encrypt(plaintext, uaPublic, authSecret, as, salt, padTo)
}

// encrypt is Encrypt with the sender key, salt and padding given (the
// RFC's example fixes them).
func encrypt(plaintext, uaPublic, authSecret []byte, as *ecdh.PrivateKey, salt []byte, pad int) ([]byte, error) {
	if len(plaintext) > MaxPayload {
		return nil, fmt.Errorf("web push: a payload of %d octets is over the %d a push service must accept", len(plaintext), MaxPayload)
	}
	if len(authSecret) != 16 {
		return nil, fmt.Errorf("web push: the subscription's auth secret has %d octets, not 16", len(authSecret))
	}
	ua, err := ecdh.P256().NewPublicKey(uaPublic)
	if err != nil {
		return nil, fmt.Errorf("web push: the subscription's p256dh key is not a P-256 point: %w", err)
	}
	secret, err := as.ECDH(ua)
	if err != nil {
		return nil, err
	}
	asPublic := as.PublicKey().Bytes()
	cek, nonce, err := keys(secret, authSecret, uaPublic, asPublic, salt)
	if err != nil {
		return nil, err
	}

	// The plaintext, the last-record delimiter 0x02, and zero padding up to
	// a multiple of pad (never past what fits).
	n := len(plaintext) + 1
	if pad > 1 {
		n = min((n+pad-1)/pad*pad, MaxPayload+1)
	}
	record := make([]byte, n)
	copy(record, plaintext)
	record[len(plaintext)] = 0x02

	gcm, err := newGCM(cek)
	if err != nil {
		return nil, err
	}
	header := make([]byte, 0, 16+4+1+len(asPublic))
	header = append(header, salt...)
	header = binary.BigEndian.AppendUint32(header, recordSize)
	header = append(header, byte(len(asPublic)))
	header = append(header, asPublic...)
	return gcm.Seal(header, nonce, record, nil), nil
}

// keys derives the content encryption key and the nonce (RFC 8291
// section 3.4, RFC 8188 section 2.2 and 2.3).
func keys(ecdhSecret, authSecret, uaPublic, asPublic, salt []byte) (cek, nonce []byte, err error) {
	// PRK_key = HMAC(auth_secret, ecdh_secret); IKM = HKDF-Expand(PRK_key,
	// "WebPush: info" 0x00 ua_public as_public, 32).
	prkKey := hmacSHA256(authSecret, ecdhSecret)
	info := append(append([]byte("WebPush: info\x00"), uaPublic...), asPublic...)
	ikm, err := hkdf.Expand(sha256.New, prkKey, string(info), 32)
	if err != nil {
		return nil, nil, err
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, nil, err
	}
	if cek, err = hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16); err != nil {
		return nil, nil, err
	}
	nonce, err = hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	return cek, nonce, err
}

// newGCM is AEAD_AES_128_GCM with the content encryption key.
func newGCM(cek []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// Decrypt opens a message body as the browser does, with its private key
// and authentication secret. rein does not receive push messages; the
// tests use it to read what was sent, and it checks what RFC 8291 asks a
// receiver to check (one record, the delimiter 0x02).
func Decrypt(body []byte, ua *ecdh.PrivateKey, authSecret []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("web push: body shorter than the aes128gcm header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idlen {
		return nil, errors.New("web push: body shorter than its key id")
	}
	asPublic, ciphertext := body[21:21+idlen], body[21+idlen:]
	if uint32(len(ciphertext)) > rs {
		return nil, errors.New("web push: more than one record")
	}
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, fmt.Errorf("web push: the key id is not a P-256 point: %w", err)
	}
	secret, err := ua.ECDH(as)
	if err != nil {
		return nil, err
	}
	cek, nonce, err := keys(secret, authSecret, ua.PublicKey().Bytes(), asPublic, salt)
	if err != nil {
		return nil, err
	}
	gcm, err := newGCM(cek)
	if err != nil {
		return nil, err
	}
	record, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, fmt.Errorf("web push: %w", err)
	}
	end := len(record) - 1
	for end >= 0 && record[end] == 0 {
		end--
	}
	if end < 0 || record[end] != 0x02 {
		return nil, errors.New("web push: the record does not end with the last-record delimiter")
	}
	return record[:end], nil
}
