package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"
)

// consoleSecret returns the secret that signs console session cookies:
// REIN_CONSOLE_KEY, else the file named by console_key_file, else one
// derived from the audit signing key (an HMAC of it, so the signing key
// cannot be recovered from it). Replicas must share the signing key, so by
// default they share this secret too: a session cookie from one is
// accepted by all. Nothing in the database can forge it.
func consoleSecret(cfg Config, auditKey string) ([]byte, error) {
	if s := strings.TrimSpace(os.Getenv("REIN_CONSOLE_KEY")); s != "" {
		if len(s) < 32 {
			return nil, errors.New("REIN_CONSOLE_KEY is shorter than 32 characters; use a long random value (openssl rand -hex 32)")
		}
		return []byte(s), nil
	}
	if cfg.ConsoleKeyFile != "" {
		b, err := os.ReadFile(cfg.ConsoleKeyFile)
		if err != nil {
			return nil, fmt.Errorf("read the console secret: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if len(s) < 32 {
			return nil, fmt.Errorf("the console secret in %s is shorter than 32 characters; use a long random value (openssl rand -hex 32)", cfg.ConsoleKeyFile)
		}
		return []byte(s), nil
	}
	if auditKey == "" {
		return nil, errors.New("no console secret: set REIN_CONSOLE_KEY or console_key_file")
	}
	m := hmac.New(sha256.New, []byte(auditKey))
	m.Write([]byte("rein console session secret v1"))
	return m.Sum(nil), nil
}
