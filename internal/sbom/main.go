// Command sbom writes a CycloneDX software bill of materials (JSON) for a Go
// binary from the module list the Go toolchain recorded in it, the same data
// `go version -m` prints. It reads any platform's binary, so a release built
// for six platforms gets six exact bills.
//
//	go run ./internal/sbom -version 1.2.0 -date 2026-01-01T00:00:00Z dist/rein-linux-amd64 > rein.cdx.json
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
)

// The CycloneDX 1.6 JSON format: https://cyclonedx.org/docs/1.6/json/
type bom struct {
	BOMFormat    string       `json:"bomFormat"`
	SpecVersion  string       `json:"specVersion"`
	SerialNumber string       `json:"serialNumber"`
	Version      int          `json:"version"`
	Metadata     metadata     `json:"metadata"`
	Components   []component  `json:"components"`
	Dependencies []dependency `json:"dependencies"`
}

type metadata struct {
	Timestamp string    `json:"timestamp,omitempty"`
	Tools     tools     `json:"tools"`
	Component component `json:"component"`
}

type tools struct {
	Components []component `json:"components"`
}

type component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

// purl is the package URL of a Go module
// (https://github.com/package-url/purl-spec, type golang).
func purl(path, version string) string {
	if version == "" || version == "(devel)" {
		return "pkg:golang/" + path
	}
	return "pkg:golang/" + path + "@" + version
}

// describe turns a binary's build information into a bill of materials.
// version names the release when the binary's main module has none (a build
// from a checkout records "(devel)"); date is the release's time (RFC 3339),
// and sum the binary's SHA-256. The serial number derives from sum, so the
// same binary always gets the same bill.
func describe(bi *debug.BuildInfo, version, date string, sum []byte) bom {
	mainVersion := bi.Main.Version
	if version != "" {
		mainVersion = version
	}
	main := component{Type: "application", Name: bi.Main.Path, Version: mainVersion, PURL: purl(bi.Main.Path, mainVersion)}
	main.BOMRef = main.PURL
	if sum != nil {
		main.Hashes = []hash{{Alg: "SHA-256", Content: hex.EncodeToString(sum)}}
	}
	main.Properties = append(main.Properties, property{"go:version", bi.GoVersion})
	for _, s := range bi.Settings {
		main.Properties = append(main.Properties, property{"go:build:" + s.Key, s.Value})
	}

	var comps []component
	deps := dependency{Ref: main.BOMRef, DependsOn: []string{}}
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		c := component{Type: "library", Name: m.Path, Version: m.Version, PURL: purl(m.Path, m.Version)}
		c.BOMRef = c.PURL
		if m.Sum != "" {
			// go.sum's h1: hash covers the module's whole file tree, not one
			// file, so it is a property rather than a CycloneDX hash.
			c.Properties = append(c.Properties, property{"go:module:sum", m.Sum})
		}
		if d.Replace != nil {
			c.Properties = append(c.Properties, property{"go:module:replaces", purl(d.Path, d.Version)})
		}
		comps = append(comps, c)
		deps.DependsOn = append(deps.DependsOn, c.BOMRef)
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i].BOMRef < comps[j].BOMRef })
	sort.Strings(deps.DependsOn)

	// A version 5 style UUID (RFC 9562) taken from the binary's digest.
	h := sha256.Sum256(append([]byte("rein sbom "+main.BOMRef+" "), sum...))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	serial := fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])

	return bom{
		BOMFormat: "CycloneDX", SpecVersion: "1.6", SerialNumber: serial, Version: 1,
		Metadata: metadata{
			Timestamp: date,
			Tools:     tools{Components: []component{{Type: "application", Name: "rein internal/sbom"}}},
			Component: main,
		},
		Components:   comps,
		Dependencies: []dependency{deps},
	}
}

func main() {
	version := flag.String("version", "", "the release's version, when the binary's module records none")
	date := flag.String("date", "", "the release's time, RFC 3339")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: sbom [-version V] [-date RFC3339] BINARY > BOM.cdx.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *version, *date); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, path, version, date string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read build information of %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hash %s: %w", path, err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(describe(bi, version, date, h.Sum(nil)))
}
