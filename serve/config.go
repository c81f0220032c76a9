package serve

import (
	"fmt"
	"strconv"
	"time"
)

// Setting is one server setting as users reach it: a flag of `rein serve`,
// an environment variable and a key of the config file. Flags win over
// environment variables, which win over the config file.
type Setting struct {
	Flag, Env, Key string
	Usage          string
}

// Settings lists every setting of `rein serve` (docs/configuration.md
// documents each; a test keeps the two in step).
var Settings = []Setting{
	{"data", "REIN_DATA", "data", "data directory: SQLite database, admin key, audit key (default ./rein-data)"},
	{"listen", "REIN_LISTEN", "listen", "address to listen on (default 127.0.0.1:8750)"},
	{"policy", "REIN_POLICY", "policy", "policy file, reloaded when it changes"},
	{"policy-dir", "REIN_POLICY_DIR", "policy_dir", "policy directory: global.yaml and tenants/<tenant>.yaml"},
	{"policy-poll", "REIN_POLICY_POLL", "policy_poll", "how often policy files are checked for changes (default 1s)"},
	{"db", "REIN_DB", "db", "database URL: sqlite:PATH or postgres://… (default: SQLite in the data directory)"},
	{"base-url", "REIN_BASE_URL", "base_url", "the address people reach rein at, for links in approvals and passkeys (default http(s)://<listen>; http://localhost:<port> when listening on a loopback address without TLS)"},
	{"tls-cert", "REIN_TLS_CERT", "tls_cert", "PEM certificate (chain) to serve HTTPS with; re-read when the file changes"},
	{"tls-key", "REIN_TLS_KEY", "tls_key", "PEM private key of --tls-cert; re-read when the file changes"},
	{"body-timeout", "REIN_BODY_TIMEOUT", "body_timeout", "how long a request body may take to arrive after its headers (default 10s)"},
	{"log-format", "REIN_LOG_FORMAT", "log_format", "log format: text or json (default text)"},
	{"pprof", "REIN_PPROF", "pprof", "serve Go's profiler (/debug/pprof/) on this separate address, e.g. 127.0.0.1:6060; keep it private"},
	{"otlp-endpoint", "REIN_OTLP_ENDPOINT", "otlp_endpoint", "send OpenTelemetry traces of checks and approvals over OTLP/HTTP to this address, e.g. http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_* work too)"},
	{"resolver", "REIN_RESOLVER", "resolver", "DNS server (host:port) that names of tools with resolve: true are looked up with, e.g. your corporate resolver (default: the system's)"},
	{"audit-origin", "REIN_AUDIT_ORIGIN", "audit_origin", "name of the audit log in its checkpoints (default rein/<deployment id>)"},
	{"audit-key-file", "REIN_AUDIT_KEY_FILE", "audit_key_file", "checkpoint signing key file (default <data>/audit.key, created on first start; REIN_AUDIT_KEY, the key itself, wins)"},
	{"console-key-file", "REIN_CONSOLE_KEY_FILE", "console_key_file", "secret that signs console session cookies (REIN_CONSOLE_KEY, the secret itself, wins; default: derived from the audit key)"},
	{"console-session", "REIN_CONSOLE_SESSION", "console_session", "longest console session after sign-in (default 12h)"},
	{"console-idle", "REIN_CONSOLE_IDLE", "console_idle", "console sessions end after this long without a request (default 1h)"},
}

// Set sets the setting named by its config-file key from text, as a flag
// or an environment variable gives it.
func (c *Config) Set(key, value string) error {
	dur := func(d *time.Duration) error {
		v, err := time.ParseDuration(value)
		if err != nil || v < 0 {
			return fmt.Errorf("%s: %q is not a duration; use e.g. 1s, 30s, 12h", key, value)
		}
		*d = v
		return nil
	}
	switch key {
	case "data":
		c.Data = value
	case "listen":
		c.Listen = value
	case "policy":
		c.Policy = value
	case "policy_dir":
		c.PolicyDir = value
	case "policy_poll":
		return dur(&c.PolicyPoll)
	case "db":
		c.DB = value
	case "base_url":
		c.BaseURL = value
	case "tls_cert":
		c.TLSCert = value
	case "tls_key":
		c.TLSKey = value
	case "body_timeout":
		return dur(&c.BodyTimeout)
	case "log_format":
		if value != "text" && value != "json" {
			return fmt.Errorf("log_format: %q; use text or json", value)
		}
		c.LogFormat = value
	case "pprof":
		c.Pprof = value
	case "otlp_endpoint":
		c.OTLPEndpoint = value
	case "resolver":
		c.Resolver = value
	case "audit_origin":
		c.AuditOrigin = value
	case "audit_key_file":
		c.AuditKeyFile = value
	case "console_key_file":
		c.ConsoleKeyFile = value
	case "console_session":
		return dur(&c.ConsoleSession)
	case "console_idle":
		return dur(&c.ConsoleIdle)
	default:
		return fmt.Errorf("unknown setting %s", strconv.Quote(key))
	}
	return nil
}
