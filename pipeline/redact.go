package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/risk"
)

// How a check's arguments are kept in its audit entry, chosen per tool.
const (
	ArgsRedactSecrets = "redact_secrets" // values, with every secrets-tagged value replaced by its hash (default)
	ArgsValues        = "values"         // values as sent, secrets included
	ArgsHashes        = "hashes"         // only args_hash, the hash of the canonical arguments
)

// ArgsRule chooses how the arguments of the tools matching a glob are
// kept in the audit log; the first matching rule wins.
type ArgsRule struct {
	Tool  string `yaml:"tool"`
	Store string `yaml:"store"`
}

func (p *Pipeline) argsMode(tool string) string {
	for _, r := range p.AuditArgs {
		if risk.Glob(r.Tool, tool) {
			return r.Store
		}
	}
	return ArgsRedactSecrets
}

// hashOf is "sha256:" + the hex SHA-256 of b.
func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// auditArgs returns the arguments as the audit entry keeps them, and the
// argument paths whose values were replaced by their hash.
func (p *Pipeline) auditArgs(c *check, args json.RawMessage) (map[string]any, bool) {
	switch p.argsMode(c.input.Tool) {
	case ArgsValues:
		return map[string]any{"args": args}, true
	case ArgsHashes:
		return map[string]any{"args_hash": hashOf(args)}, true
	}
	secret := map[string]bool{}
	list, _ := c.assessment.Facts["secrets"].([]any)
	for _, f := range list {
		if m, ok := f.(map[string]any); ok {
			if at, ok := m["arg"].(string); ok {
				secret[at] = true
			}
		}
	}
	if len(secret) == 0 {
		return map[string]any{"args": args}, true
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return map[string]any{"args_hash": hashOf(args)}, false // cannot redact: keep only the hash
	}
	var redacted []string
	v = redactAt("", v, secret, &redacted)
	return map[string]any{"args": v, "args_redacted": redacted}, true
}

// redactAt replaces the values at the secret paths (as risk.ScanArgs names
// them: keys and indexes joined by dots) with the hash of their JSON.
func redactAt(at string, v any, secret map[string]bool, out *[]string) any {
	if at != "" && secret[at] {
		b, _ := rein.Canonical(v)
		*out = append(*out, at)
		return hashOf(b)
	}
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactAt(join(k), e, secret, out)
		}
	case []any:
		for i, e := range x {
			x[i] = redactAt(join(strconv.Itoa(i)), e, secret, out)
		}
	}
	return v
}
