package release

import (
	"bufio"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// TestRelease builds the host's release binary as `make release` does and
// checks what a user downloading it relies on: `rein version` names the
// version, commit and date it was stamped with, the binary is static, the
// checksums file matches, and the SBOM lists the modules inside.
func TestRelease(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required to build a release (Debian: apt-get install -y %s)", tool, tool)
		}
	}
	dist := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	const version = "9.8.7-e2e"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "release", "PLATFORMS="+platform, "DIST="+dist, "VERSION="+version)
	cmd.Dir = harness.ModuleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release PLATFORMS=%s: %v\n%s", platform, err, out)
	}
	head, err := exec.Command("git", "-C", harness.ModuleRoot, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	commit := strings.TrimSpace(string(head))

	name := "rein_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(dist, name)

	t.Run("rein version prints what was stamped", func(t *testing.T) {
		out, err := exec.Command(bin, "version", "--output", "json").Output()
		if err != nil {
			t.Fatalf("%s version --output json: %v", bin, err)
		}
		var v map[string]string
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("rein version --output json: %v\n%s", err, out)
		}
		goVersion, _ := exec.Command("go", "env", "GOVERSION").Output()
		want := map[string]string{
			"version":  version,
			"commit":   commit,
			"go":       strings.TrimSpace(string(goVersion)),
			"platform": platform,
			"module":   "github.com/reinhq/rein",
		}
		for k, w := range want {
			if v[k] != w {
				t.Errorf("rein version: %s = %q, want %q\n%s", k, v[k], w, out)
			}
		}
		if _, err := time.Parse(time.RFC3339, v["date"]); err != nil {
			t.Errorf("rein version: date %q is not RFC 3339: %v", v["date"], err)
		}
		// The revision the toolchain recorded, when it could (a git
		// checkout), is printed and is the stamped commit.
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
			t.Errorf("the release binary was built with CGO_ENABLED=%q -trimpath=%q, want a static, path-free build", settings["CGO_ENABLED"], settings["-trimpath"])
		}
		if r := settings["vcs.revision"]; r != "" && (v["vcs_revision"] != r || r != commit) {
			t.Errorf("rein version: vcs_revision = %q, binary records %q, HEAD is %s", v["vcs_revision"], r, commit)
		}

		text, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{"rein " + version + "\n", "commit:", commit, "date:", "go:", "platform:"} {
			if !strings.Contains(string(text), line) {
				t.Errorf("rein version lacks %q:\n%s", line, text)
			}
		}
	})

	t.Run("checksums match the files", func(t *testing.T) {
		f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		seen := map[string]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			sum, file, ok := strings.Cut(sc.Text(), "  ")
			if !ok {
				t.Fatalf("SHA256SUMS line %q is not \"<sum>  <file>\"", sc.Text())
			}
			data, err := os.ReadFile(filepath.Join(dist, file))
			if err != nil {
				t.Fatal(err)
			}
			if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
				t.Errorf("SHA256SUMS: %s has sum %x, file says %s", file, h, sum)
			}
			seen[file] = true
		}
		if !seen[name] || !seen[name+".cdx.json"] || len(seen) != 2 {
			t.Errorf("SHA256SUMS covers %v, want %s and its SBOM", seen, name)
		}
	})

	t.Run("SBOM lists the modules inside", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dist, name+".cdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		var bom struct {
			BOMFormat, SpecVersion string
			Metadata               struct {
				Timestamp string
				Component struct {
					Name, Version string
					Hashes        []struct{ Alg, Content string }
				}
			}
			Components []struct{ Name, Version, Purl string }
		}
		if err := json.Unmarshal(data, &bom); err != nil {
			t.Fatalf("SBOM is not JSON: %v", err)
		}
		if bom.BOMFormat != "CycloneDX" || !regexp.MustCompile(`^1\.\d+$`).MatchString(bom.SpecVersion) {
			t.Errorf("SBOM format %q %q, want CycloneDX 1.x", bom.BOMFormat, bom.SpecVersion)
		}
		m := bom.Metadata.Component
		bin, _ := os.ReadFile(bin)
		h := sha256.Sum256(bin)
		if m.Name != "github.com/reinhq/rein" || m.Version != version || len(m.Hashes) != 1 || m.Hashes[0].Content != hex.EncodeToString(h[:]) {
			t.Errorf("SBOM describes %s %s %+v, want github.com/reinhq/rein %s with the binary's SHA-256", m.Name, m.Version, m.Hashes, version)
		}
		found := map[string]bool{}
		for _, c := range bom.Components {
			if !strings.HasPrefix(c.Purl, "pkg:golang/"+c.Name+"@") {
				t.Errorf("component %s has purl %q", c.Name, c.Purl)
			}
			found[c.Name] = true
		}
		for _, mod := range []string{"modernc.org/sqlite", "cel.dev/cel-go", "github.com/jackc/pgx/v5", "github.com/modelcontextprotocol/go-sdk"} {
			if !found[mod] {
				t.Errorf("SBOM lacks %s", mod)
			}
		}
	})
}

// TestImageEntrypoint starts rein as the container image does: `rein serve
// --config /etc/rein/rein.yaml` with the flags given to `docker run` added.
// The flags must win over the image's settings (here the config's
// /etc/rein/policy.yaml, /var/lib/rein and 0.0.0.0:8750 do not exist or are
// not ours), or rein would not start.
func TestImageEntrypoint(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := harness.StartServer(t, data, nil, "--config", "deploy/docker/rein.yaml", "--policy", harness.SamplePolicy)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("rein listens on %s, want the --listen flag's address", s.URL)
	}
	if _, err := os.Stat(filepath.Join(data, "rein.db")); err != nil {
		t.Errorf("the database is not in the --data directory: %v", err)
	}
	agent := s.ClientEnv(harness.AgentKey(t, s, s.AdminKey(), "builder", "demo"))
	if r := harness.Rein(t, agent, "check", "crypto.mine"); r.Code != 1 {
		t.Errorf("a check the sample policy denies: exit %d, want 1\n%s", r.Code, r)
	}
}

// TestReadmeMCPConfig runs the MCP client configuration of the README's
// Install section as a client would: the command `rein` found on PATH, the
// README's arguments up to `--`, its environment variables (with this test's
// server and key), and the reference filesystem server behind it.
func TestReadmeMCPConfig(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(harness.ModuleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	install, _, _ := strings.Cut(string(readme)[strings.Index(string(readme), "\n## Install\n")+1:], "\n## ")
	block := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(install)
	if block == nil {
		t.Fatal("README's Install section has no JSON MCP configuration")
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(block[1]), &cfg); err != nil {
		t.Fatalf("README's MCP configuration is not JSON: %v\n%s", err, block[1])
	}
	fs, ok := cfg.MCPServers["fs"]
	if !ok || fs.Command != "rein" {
		t.Fatalf("README's MCP configuration: want server fs with command rein, got %+v", cfg.MCPServers)
	}
	for _, v := range []string{"REIN_SERVER", "REIN_KEY"} {
		if _, ok := fs.Env[v]; !ok {
			t.Errorf("README's MCP configuration does not set %s", v)
		}
	}
	dash := slices.Index(fs.Args, "--")
	if dash < 0 {
		t.Fatalf("README's MCP configuration: args %q have no -- before the upstream server", fs.Args)
	}

	m := harness.NewMCPEnv(t)
	bin := t.TempDir()
	if err := os.Symlink(harness.Bin, filepath.Join(bin, "rein")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for k := range fs.Env {
		env[k] = map[string]string{"REIN_SERVER": m.S.URL, "REIN_KEY": m.Keys["builder"]}[k]
	}
	plan := map[string]any{"transport": "stdio", "command": fs.Command, "elicitation": "none", "env": env,
		"args": append(append([]string{}, fs.Args[:dash+1]...), m.FSServer()...),
		"steps": []map[string]any{
			harness.MCPStep("listTools"),
			harness.MCPCall("read_text_file", map[string]any{"path": filepath.Join(m.Root, "README.md")}),
			harness.MCPCall("write_file", map[string]any{"path": filepath.Join(m.Root, "deps.lock"), "content": "x"}),
		}}
	res := m.RunClient(t, plan).Results
	if len(res) != 4 {
		t.Fatalf("results: %+v", res)
	}
	if res[2].IsError || !strings.Contains(res[2].Text, "hello from the workspace") {
		t.Errorf("allowed read through the configured gateway: %+v", res[2])
	}
	if !res[3].IsError || !strings.Contains(res[3].Text, "rein denied fs.write_file") {
		t.Errorf("denied write through the configured gateway: %+v", res[3])
	}
}

// TestVersionStory: a build has one version wherever it is named. `make
// version` (what `make release` stamps and names its files with), `rein
// version` of a plain `go build` of the same checkout, and the running
// server (its rein_build_info metric) agree: the commit's pseudo-version,
// or X.Y.Z on a commit tagged vX.Y.Z.
func TestVersionStory(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is required (Debian: apt-get install -y make)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mk := exec.CommandContext(ctx, "make", "-s", "version")
	mk.Dir = harness.ModuleRoot
	out, err := mk.Output()
	if err != nil {
		t.Fatalf("make version: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+dirty)?$`).MatchString(want) {
		t.Fatalf("make version = %q, not a version", want)
	}

	bin := filepath.Join(t.TempDir(), "rein")
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", bin, "./cmd/rein")
	build.Dir = harness.ModuleRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true ./cmd/rein: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bi.Main.Version == "(devel)" || bi.Main.Version == "" {
		t.Skipf("the Go toolchain recorded no version for this checkout (%q): nothing to compare", bi.Main.Version)
	}
	// The checkout may change between the two (another build writing into
	// it): compare without the +dirty mark, which the next lines check.
	if got := strings.TrimPrefix(bi.Main.Version, "v"); strings.TrimSuffix(got, "+dirty") != strings.TrimSuffix(want, "+dirty") {
		t.Errorf("make version says %s, the Go toolchain recorded %s for the same commit", want, bi.Main.Version)
	}
	out, err = exec.Command(bin, "version", "--output", "json").Output()
	if err != nil {
		t.Fatalf("rein version: %v", err)
	}
	var v struct{ Version string }
	if err := json.Unmarshal(out, &v); err != nil || v.Version != strings.TrimPrefix(bi.Main.Version, "v") {
		t.Errorf("rein version of a plain go build says %q (%v), want %s\n%s", v.Version, err, strings.TrimPrefix(bi.Main.Version, "v"), out)
	}

	// The server names itself the same.
	srv := exec.CommandContext(ctx, bin, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--policy", harness.SamplePolicy)
	srv.Dir, srv.Env = harness.ModuleRoot, harness.CleanEnv()
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	sc := bufio.NewScanner(stdout)
	url := ""
	for url == "" && sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "rein is listening on "); ok {
			url = a
		}
	}
	go io.Copy(io.Discard, stdout)
	if url == "" {
		t.Fatal("rein serve printed no address")
	}
	var metrics string
	for deadline := time.Now().Add(harness.StartTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code, body := harness.HTTPDo(t, "GET", url+"/metrics", "", nil, ""); code == 200 {
			metrics = string(body)
			break
		}
	}
	if m := regexp.MustCompile(`rein_build_info\{[^}]*version="([^"]*)"`).FindStringSubmatch(metrics); m == nil || m[1] != v.Version {
		t.Errorf("the server's rein_build_info names version %v, rein version says %s", m, v.Version)
	}
}
