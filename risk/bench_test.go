package risk

import (
	"fmt"
	"strings"
	"testing"
)

// script50 is a 50-line deployment-style script: variables, a function,
// loops, pipelines, substitutions and here-docs.
var script50 = func() string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\nset -euo pipefail\nAPP=api\nOUT=./build\n")
	b.WriteString("log() { echo \"[$(date +%T)] $*\" >&2; }\n")
	for i := 0; strings.Count(b.String(), "\n") < 46; i++ {
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "log \"step %d\"\n", i)
		case 1:
			fmt.Fprintf(&b, "for f in src/*.go; do gofmt -l \"$f\" | tee -a $OUT/fmt.log; done\n")
		case 2:
			fmt.Fprintf(&b, "if [ -d \"$OUT/%d\" ]; then rm -f \"$OUT/%d/tmp\"; fi\n", i, i)
		case 3:
			fmt.Fprintf(&b, "VERSION=$(git describe --tags 2>/dev/null || echo dev)\n")
		case 4:
			fmt.Fprintf(&b, "go build -o \"$OUT/$APP\" -ldflags \"-X main.v=$VERSION\" ./cmd/$APP\n")
		case 5:
			fmt.Fprintf(&b, "curl -fsS https://status.example.com/ping/%d > /dev/null\n", i)
		}
	}
	b.WriteString("cat <<EOF > $OUT/manifest\napp: $APP\nEOF\nlog done\n")
	return b.String()
}()

func BenchmarkClassify(b *testing.B) {
	cases := []struct {
		name string
		run  func()
	}{
		{"shell-one-line", func() { ClassifyShell("git commit -am 'fix: handle nil' && git push origin main") }},
		{"shell-50-lines", func() { ClassifyShell(script50) }},
		{"shell-evasive", func() { ClassifyShell(`X=rm; bash -c "sh -c '$X${IFS}-rf /'" | sudo tee /etc/x`) }},
		{"url", func() { ClassifyURL("http://0x7f.1:8080/admin?x=1") }},
		{"path", func() { ClassifyPath("docs/../../home/dev/.ssh/id_rsa", "/srv/agent") }},
		{"path-workspace", func() { ClassifyPath("/srv/agent/out/1234.txt", "/srv/agent") }},
		{"sql", func() {
			ClassifySQL("UPDATE users SET plan = 'pro' WHERE id IN (SELECT user_id FROM orders WHERE total > 100)")
		}},
		{"args-scan", func() {
			ScanArgs(map[string]any{"to": "ops@example.com", "subject": "weekly report", "body": strings.Repeat("lorem ipsum ", 40),
				"attachments": []any{map[string]any{"name": "r.pdf", "size": int64(1200)}}})
		}},
		{"assess-bash", func() {
			Assess("Bash", map[string]any{"command": "npm test -- --coverage 2>&1 | tail -20", "description": "run tests"}, Env{})
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.run()
			}
		})
	}
}

func TestScript50IsFiftyLines(t *testing.T) {
	if n := strings.Count(script50, "\n"); n != 50 {
		t.Fatalf("script50 has %d lines", n)
	}
	f, tags := ClassifyShell(script50)
	if len(f.Commands) < 40 || strings.Contains(strings.Join(tags, ","), "parse_error") {
		t.Errorf("script50: %d commands, tags %v", len(f.Commands), tags)
	}
}
