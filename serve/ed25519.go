package serve

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
)

type edPublic = ed25519.PublicKey

// decodeEd25519 reads the key data of a note signer key: algorithm byte 1
// (Ed25519) and the 32-byte seed.
func decodeEd25519(s string) (ed25519.PrivateKey, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 1+ed25519.SeedSize || b[0] != 1 {
		return nil, errors.New("not an Ed25519 note signer key")
	}
	return ed25519.NewKeyFromSeed(b[1:]), nil
}
