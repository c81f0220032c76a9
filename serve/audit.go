package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// keyRingStore is what the signing key's rotation needs of the store: the
// audit log for its entry and the keys that signed checkpoints.
type keyRingStore interface {
	rein.AuditStore
	rein.CheckpointStore
}

// keyRing holds the checkpoint signing key and rotates it.
type keyRing struct {
	mu     sync.Mutex
	origin string
	path   string // the key file in the data directory; "" when the key comes from outside
	signer note.Signer
	vkey   string
	store  keyRingStore
	sealer *audit.Sealer
}

// Rotate replaces the signing key with a new one. The old and the new key
// both sign a statement naming each other, which goes into the log as a
// signing_key.rotated entry; the old key seals the log up to and including
// that entry, and every checkpoint after it is signed by the new key.
func (k *keyRing) Rotate(ctx context.Context, by string) (*rein.AuditKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.path == "" {
		return nil, rein.Errorf(rein.ECodeConflict, "the signing key comes from REIN_AUDIT_KEY or audit_key_file, which rein does not write; put a new key there and restart (verifiers then need both keys)")
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, k.origin)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "generate a signing key: %v", err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "new signing key: %v", err)
	}
	stmt, err := note.Sign(&note.Note{Text: fmt.Sprintf("rein signing key rotation\n%s\nold %s\nnew %s\n", k.origin, k.vkey, vkey)}, k.signer, signer)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "sign the rotation: %v", err)
	}
	now := time.Now().UTC()
	if err := k.store.Append(ctx, &rein.Entry{TS: now, Tenant: rein.AllTenants, Kind: rein.KindSigningKeyRotated, Actor: by,
		Subject: k.origin, Data: map[string]any{"old": k.vkey, "new": vkey, "statement": string(stmt)}}); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "record the rotation: %v", err)
	}
	if _, err := k.sealer.Seal(ctx); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "seal the log with the old key: %v", err)
	}
	tmp := k.path + ".new"
	if err := os.WriteFile(tmp, []byte(skey+"\n"), 0o600); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "write the new key: %v", err)
	}
	if err := os.Rename(tmp, k.path); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "install the new key: %v", err)
	}
	key := &rein.AuditKey{Verifier: vkey, From: time.Now().UTC()}
	if err := k.store.AddAuditKey(ctx, key); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "record the new key: %v", err)
	}
	known, err := knownVerifiers(ctx, k.store)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "read the signing keys: %v", err)
	}
	k.sealer.SetSigner(signer, known)
	k.signer, k.vkey = signer, vkey
	return key, nil
}

// signingKey loads the checkpoint signing key: REIN_AUDIT_KEY (the key
// itself), the config's audit_key_file, or <data>/audit.key, generated
// (mode 0600) on first start. It returns the signer, its verifier key and
// the signer key itself.
func signingKey(cfg Config, origin string) (note.Signer, string, string, error) {
	skey := strings.TrimSpace(os.Getenv("REIN_AUDIT_KEY"))
	path := cfg.AuditKeyFile
	if skey == "" {
		if path == "" {
			path = filepath.Join(cfg.Data, "audit.key")
		}
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist) && cfg.AuditKeyFile == "":
			s, _, err := note.GenerateKey(rand.Reader, origin)
			if err != nil {
				return nil, "", "", fmt.Errorf("generate the audit signing key: %w", err)
			}
			if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
				return nil, "", "", fmt.Errorf("write %s: %w", path, err)
			}
			skey = s
		case err != nil:
			return nil, "", "", fmt.Errorf("read the audit signing key: %w", err)
		default:
			skey = strings.TrimSpace(string(b))
		}
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", "", fmt.Errorf("audit signing key: %w (want a note signer key: PRIVATE+KEY+<name>+<hash>+<key>)", err)
	}
	vkey, err := verifierOf(skey)
	if err != nil {
		return nil, "", "", err
	}
	return signer, vkey, skey, nil
}

// verifierOf derives the public verifier key string of a signer key.
func verifierOf(skey string) (string, error) {
	// PRIVATE+KEY+<name>+<hash>+<base64(alg || private key)>
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("audit signing key: not a note signer key")
	}
	priv, err := decodeEd25519(parts[4])
	if err != nil {
		return "", fmt.Errorf("audit signing key: %w", err)
	}
	return note.NewEd25519VerifierKey(parts[2], priv.Public().(edPublic))
}

// knownVerifiers are every key that ever signed this log's checkpoints.
func knownVerifiers(ctx context.Context, store rein.CheckpointStore) (note.Verifiers, error) {
	keys, err := store.AuditKeys(ctx)
	if err != nil {
		return nil, err
	}
	var vkeys []string
	for _, k := range keys {
		vkeys = append(vkeys, k.Verifier)
	}
	return audit.Verifiers(vkeys...)
}

// keyPath is where rein keeps the key it generated, or "" when the key is
// given from outside (environment or a configured file).
func keyPath(cfg Config) string {
	if os.Getenv("REIN_AUDIT_KEY") != "" || cfg.AuditKeyFile != "" {
		return ""
	}
	return filepath.Join(cfg.Data, "audit.key")
}

// seal signs a checkpoint every second while entries arrive.
func seal(ctx context.Context, s *audit.Sealer, log *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Seal(ctx); err != nil && ctx.Err() == nil {
				log.Error("sealing the audit log failed", "err", err)
			}
		}
	}
}
