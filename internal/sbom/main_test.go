package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/reinhq/rein", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "modernc.org/sqlite", Version: "v1.61.1", Sum: "h1:abc="},
			{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1", Sum: "h1:def="}},
			{Path: "cel.dev/cel-go", Version: "v0.33.2"},
		},
		Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}, {Key: "GOOS", Value: "linux"}},
	}
	sum := bytes.Repeat([]byte{0xab}, 32)

	cases := []struct {
		name, version, wantVersion, wantRef string
	}{
		{"stamped release", "1.2.0", "1.2.0", "pkg:golang/github.com/reinhq/rein@1.2.0"},
		{"unstamped checkout build", "", "(devel)", "pkg:golang/github.com/reinhq/rein"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := describe(bi, c.version, "2026-01-02T03:04:05Z", sum)
			if b.BOMFormat != "CycloneDX" || b.SpecVersion != "1.6" || b.Version != 1 {
				t.Errorf("header = %s %s %d", b.BOMFormat, b.SpecVersion, b.Version)
			}
			m := b.Metadata.Component
			if m.Version != c.wantVersion || m.BOMRef != c.wantRef || m.Type != "application" {
				t.Errorf("main component = %+v, want version %q ref %q", m, c.wantVersion, c.wantRef)
			}
			if len(m.Hashes) != 1 || m.Hashes[0].Alg != "SHA-256" || m.Hashes[0].Content != strings.Repeat("ab", 32) {
				t.Errorf("main hashes = %+v", m.Hashes)
			}
			props := map[string]string{}
			for _, p := range m.Properties {
				props[p.Name] = p.Value
			}
			if props["go:version"] != "go1.26.8" || props["go:build:CGO_ENABLED"] != "0" {
				t.Errorf("main properties = %v", props)
			}
			var refs []string
			for _, comp := range b.Components {
				refs = append(refs, comp.BOMRef)
			}
			want := []string{"pkg:golang/cel.dev/cel-go@v0.33.2", "pkg:golang/example.com/fork@v1.0.1", "pkg:golang/modernc.org/sqlite@v1.61.1"}
			if strings.Join(refs, " ") != strings.Join(want, " ") {
				t.Errorf("components = %v, want %v (sorted, replacements resolved)", refs, want)
			}
			if fork := b.Components[1]; len(fork.Properties) != 2 || fork.Properties[1].Value != "pkg:golang/example.com/old@v1.0.0" {
				t.Errorf("replacement's properties = %+v", fork.Properties)
			}
			if len(b.Dependencies) != 1 || b.Dependencies[0].Ref != m.BOMRef || strings.Join(b.Dependencies[0].DependsOn, " ") != strings.Join(want, " ") {
				t.Errorf("dependencies = %+v", b.Dependencies)
			}
			if !regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(b.SerialNumber) {
				t.Errorf("serial number %q is not an RFC 9562 UUID URN", b.SerialNumber)
			}
			if again := describe(bi, c.version, "2026-01-02T03:04:05Z", sum); again.SerialNumber != b.SerialNumber {
				t.Errorf("serial number changed between two runs on the same binary")
			}
			if other := describe(bi, c.version, "", bytes.Repeat([]byte{1}, 32)); other.SerialNumber == b.SerialNumber {
				t.Errorf("two different binaries got the same serial number")
			}
		})
	}
}

// TestRunOnABinary reads a real Go binary: this test's own.
func TestRunOnABinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(&out, exe, "9.9.9", ""); err != nil {
		t.Fatal(err)
	}
	var b bom
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.Bytes())
	}
	if b.Metadata.Component.Name != "github.com/reinhq/rein" || b.Metadata.Component.Version != "9.9.9" {
		t.Errorf("main component = %+v", b.Metadata.Component)
	}
	if err := run(&out, "main_test.go", "", ""); err == nil {
		t.Errorf("a file that is not a Go binary was accepted")
	}
}
