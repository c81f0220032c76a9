package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/serve"
)

// TestServeSettingsPrecedence: the config file, then REIN_* variables, then
// flags, each winning over the one before.
func TestServeSettingsPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rein.yaml")
	os.WriteFile(file, []byte("data: /from/file\nlisten: file:1\ndb: sqlite:file.db\nlog_format: text\n"), 0o600)
	t.Setenv("REIN_CONFIG", file)
	t.Setenv("REIN_LISTEN", "env:2")
	t.Setenv("REIN_DB", "postgres://env")
	t.Setenv("REIN_LOG_FORMAT", "json")
	fs := flag.NewFlagSet("rein serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, st := range serve.Settings {
		fs.String(st.Flag, "", st.Usage)
	}
	if err := fs.Parse([]string{"--db", "postgres://flag"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := serveConfig(fs, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Data != "/from/file" || cfg.Listen != "env:2" || cfg.DB != "postgres://flag" || cfg.LogFormat != "json" {
		t.Fatalf("settings: data %q listen %q db %q log_format %q", cfg.Data, cfg.Listen, cfg.DB, cfg.LogFormat)
	}
	t.Setenv("REIN_POLICY_POLL", "often")
	if _, err := serveConfig(fs, ""); err == nil || err.Error()[:16] != "REIN_POLICY_POLL" {
		t.Fatalf("a bad variable must be refused naming it: %v", err)
	}
}
