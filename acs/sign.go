package acs

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/reinhq/rein/canonjson"
)

// Request and response signatures (ACS v0.1 §10). ACS-Core requires a
// signature over every request and response; HMAC-SHA256 is the baseline
// that satisfies it, with a per-session key derived by HKDF-SHA256 from a
// pre-shared secret and the session id. rein's pre-shared secret is the
// agent key the request authenticates with: the Observed Agent holds it, and
// rein sees it on every request, so no second secret has to be distributed.

// AlgHMAC is the one signature algorithm rein supports, the ACS-Core
// baseline (§10.1).
const AlgHMAC = "HMAC-SHA256"

// Algorithms is what the ServerHello declares in signature_algorithms_supported.
var Algorithms = []string{AlgHMAC}

// CodeSignature is SIGNATURE_INVALID: a required signature is missing,
// malformed, or fails verification (§17.1).
const CodeSignature = -32004

// Signature is the §10 signature envelope.
type Signature struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"value"`
	KeyID     string `json:"key_id"`
}

// SessionKey is the per-session HMAC key: HKDF-SHA256 with the pre-shared
// secret as input keying material, an empty salt, and the session id as
// info, 32 bytes (the derivation the ACS reference Guardian's published
// signing vectors use).
func SessionKey(secret, sessionID string) []byte {
	k, err := hkdf.Key(sha256.New, []byte(secret), nil, sessionID, 32)
	if err != nil {
		panic(err) // only for lengths over 255*32 bytes
	}
	return k
}

// SigningInput is the §10 signed input of an envelope: the RFC 8785
// canonical form of the envelope with the signature removed from holder
// ("params" for a request, "result" or "error" for a response), and the
// signature that was there (nil when there was none). An envelope with a
// repeated member is refused: two readers could see two different requests.
func SigningInput(raw []byte, holder string) ([]byte, *Signature, error) {
	if err := noDuplicates(raw); err != nil {
		return nil, nil, err
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, nil, fmt.Errorf("the envelope is not a JSON object: %v", err)
	}
	var sig *Signature
	if h, ok := env[holder]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(h, &m) == nil && m != nil {
			if s, ok := m["signature"]; ok {
				var got Signature
				dec := json.NewDecoder(bytes.NewReader(s))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&got); err != nil || got.Algorithm == "" || got.Value == "" || got.KeyID == "" {
					return nil, nil, errors.New(`the signature is malformed: it must be {"algorithm", "value", "key_id"}, each a non-empty string`)
				}
				sig = &got
				delete(m, "signature")
				b, err := json.Marshal(m)
				if err != nil {
					return nil, nil, err
				}
				env[holder] = b
			}
		}
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, nil, err
	}
	out, err := canonjson.Append(nil, b)
	return out, sig, err
}

// Mac is the base64 HMAC-SHA256 of input under key.
func Mac(key, input []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(input)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// VerifyRequest checks a request's signature under the session key: it
// must be present, name HMAC-SHA256 and one of keyIDs, and cover the whole
// envelope. It returns the signature's key id.
func VerifyRequest(raw []byte, key []byte, keyIDs ...string) (string, *Error) {
	input, sig, err := SigningInput(raw, "params")
	switch {
	case err != nil:
		return "", errorf(CodeSignature, "SIGNATURE_INVALID: %v", err)
	case sig == nil:
		return "", errorf(CodeSignature, `SIGNATURE_INVALID: the request carries no "params.signature"; ACS-Core requires an %s signature over the whole envelope`, AlgHMAC)
	case sig.Algorithm != AlgHMAC:
		return "", errorf(CodeSignature, "SIGNATURE_INVALID: algorithm %q was not negotiated; rein supports %s", sig.Algorithm, AlgHMAC)
	}
	known := false
	for _, id := range keyIDs {
		known = known || (id != "" && hmac.Equal([]byte(id), []byte(sig.KeyID)))
	}
	if !known {
		return "", errorf(CodeSignature, "SIGNATURE_INVALID: key_id %q is not the key this request authenticates with", sig.KeyID)
	}
	got, err := base64.StdEncoding.DecodeString(sig.Value)
	want, _ := base64.StdEncoding.DecodeString(Mac(key, input))
	if err != nil || !hmac.Equal(got, want) {
		return "", errorf(CodeSignature, "SIGNATURE_INVALID: the signature does not verify over the canonical envelope (RFC 8785, signature removed)")
	}
	return sig.KeyID, nil
}

// SignResponse signs a response in place: result.signature, or
// error.signature for an error, over the canonical response envelope.
func SignResponse(resp *Response, key []byte, keyID string) error {
	holder := "result"
	if resp.Error != nil {
		holder = "error"
		resp.Error.Signature = nil
	} else if resp.Result != nil {
		resp.Result.Signature = nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	input, _, err := SigningInput(b, holder)
	if err != nil {
		return err
	}
	sig := &Signature{Algorithm: AlgHMAC, Value: Mac(key, input), KeyID: keyID}
	if resp.Error != nil {
		resp.Error.Signature = sig
	} else if resp.Result != nil {
		resp.Result.Signature = sig
	}
	return nil
}

// noDuplicates reports an object with a repeated member anywhere in raw.
func noDuplicates(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func() error
	walk = func() error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if seen[k.(string)] {
					return fmt.Errorf("member %q appears twice", k)
				}
				seen[k.(string)] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(); err != nil {
		return fmt.Errorf("the envelope is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the envelope has data after its end")
	}
	return nil
}
