package serve

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestEverySettingIsDocumented: docs/configuration.md names every flag,
// environment variable and config key, and every key is one Set knows and
// the config file accepts.
func TestEverySettingIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Settings {
		for _, want := range []string{"`--" + st.Flag + "`", "`" + st.Env + "`", "`" + st.Key + "`"} {
			if !strings.Contains(string(doc), want) {
				t.Errorf("docs/configuration.md does not mention %s", want)
			}
		}
		var c Config
		if err := c.Set(st.Key, "1s"); err != nil && strings.Contains(err.Error(), "unknown setting") {
			t.Errorf("setting %s: %v", st.Key, err)
		}
		file := t.TempDir() + "/rein.yaml"
		os.WriteFile(file, []byte(st.Key+": \"1s\"\n"), 0o600)
		if _, err := LoadConfig(file); err != nil && strings.Contains(err.Error(), "not found") {
			t.Errorf("config key %s is not a field of the config file: %v", st.Key, err)
		}
	}
}

func TestSetParsesAndRefuses(t *testing.T) {
	var c Config
	if err := c.Set("console_idle", "90m"); err != nil || c.ConsoleIdle != 90*time.Minute {
		t.Fatalf("console_idle: %v %v", c.ConsoleIdle, err)
	}
	for _, bad := range [][2]string{{"policy_poll", "soon"}, {"body_timeout", "-1s"}, {"log_format", "xml"}, {"nope", "x"}} {
		if err := c.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s accepted", bad[0], bad[1])
		}
	}
}
