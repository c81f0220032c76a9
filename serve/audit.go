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
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// signingKey loads the checkpoint signing key: REIN_AUDIT_KEY (the key
// itself), the config's audit_key_file, or <data>/audit.key, generated
// (mode 0600) on first start. It returns the signer and its verifier key.
func signingKey(cfg Config, origin string) (note.Signer, string, error) {
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
				return nil, "", fmt.Errorf("generate the audit signing key: %w", err)
			}
			if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
				return nil, "", fmt.Errorf("write %s: %w", path, err)
			}
			skey = s
		case err != nil:
			return nil, "", fmt.Errorf("read the audit signing key: %w", err)
		default:
			skey = strings.TrimSpace(string(b))
		}
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", fmt.Errorf("audit signing key: %w (want a note signer key: PRIVATE+KEY+<name>+<hash>+<key>)", err)
	}
	vkey, err := verifierOf(skey)
	if err != nil {
		return nil, "", err
	}
	return signer, vkey, nil
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
func knownVerifiers(ctx context.Context, store rein.Store) (note.Verifiers, error) {
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
