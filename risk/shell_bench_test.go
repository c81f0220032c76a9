package risk

import (
	"encoding/json"
	"os"
	"testing"
)

// BenchmarkClassifyShellClosedWorld times the closed-world judgments: a
// read-only pipeline (program tables for every command), a glob tried
// against the secret names, and the whole attack set (per command).
func BenchmarkClassifyShellClosedWorld(b *testing.B) {
	raw, err := os.ReadFile("testdata/shell_attacks.json")
	if err != nil {
		b.Fatal(err)
	}
	var attacks []shellCase
	if err := json.Unmarshal(raw, &attacks); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		run  func()
	}{
		{"read-only-pipeline", func() { ClassifyShell("git log --oneline -20 | grep -i fix | head -3") }},
		{"glob-read", func() { ClassifyShell("head ~/.s*/id_*") }},
		{"env-prefix", func() { ClassifyShell("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor git status") }},
		{"attack-set-per-command", func() {
			for _, a := range attacks {
				ClassifyShell(a.Src)
			}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.run()
			}
			if c.name == "attack-set-per-command" {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(attacks))/1000, "µs/command")
			}
		})
	}
}
