package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// consoleSecret returns the secret that signs console session cookies:
// REIN_CONSOLE_KEY, else the file named by console_key_file, else
// <data>/console.key, generated (32 random bytes, hex, mode 0600) on first
// start. Replicas that share a database share this secret too, so that a
// session cookie from one is accepted by all.
func consoleSecret(cfg Config) ([]byte, error) {
	if s := strings.TrimSpace(os.Getenv("REIN_CONSOLE_KEY")); s != "" {
		if len(s) < 32 {
			return nil, errors.New("REIN_CONSOLE_KEY is shorter than 32 characters; use a long random value (openssl rand -hex 32)")
		}
		return []byte(s), nil
	}
	path := cfg.ConsoleKeyFile
	if path == "" {
		path = filepath.Join(cfg.Data, "console.key")
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && cfg.ConsoleKeyFile == "":
		var k [32]byte
		if _, err := rand.Read(k[:]); err != nil {
			return nil, fmt.Errorf("generate the console secret: %w", err)
		}
		s := hex.EncodeToString(k[:])
		if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		return []byte(s), nil
	case err != nil:
		return nil, fmt.Errorf("read the console secret: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 32 {
		return nil, fmt.Errorf("the console secret in %s is shorter than 32 characters; use a long random value (openssl rand -hex 32)", path)
	}
	return []byte(s), nil
}
