package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"
)

func TestMasked(t *testing.T) {
	for name, want := range map[string]bool{
		".env": true, ".env.local": true, "prod.env": true, "server.key": true, "tls.pem": true, "id_ed25519": true,
		"credentials.json": true, ".netrc": true, ".pgpass": true, "x.tfvars": true, "kubeconfig": true,
		".env.example": false, ".env.sample": false, ".env.template": false, "main.go": false, "README.md": false, "keys.go": false,
		"credentials.go": false, "credentials.ts": false, "kubeconfig.py": false, "credentials.sh": true, "credentials.yaml": true,
	} {
		if Masked(name) != want {
			t.Errorf("Masked(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestExecConfig(t *testing.T) {
	for rel, want := range map[string]bool{
		".git/config": true, ".git/hooks/pre-commit": true, ".git/hooks": true, ".git/HEAD": false, ".git/objects/ab/cd": false,
		".github/workflows/ci.yml": true, ".github/CODEOWNERS": false, ".vscode/settings.json": true, ".envrc": true,
		"sub/dir/.envrc": true, "lib/python3/site-packages/evil.pth": true, "tools/sitecustomize.py": true, "Jenkinsfile": true,
		"src/Jenkinsfile.md": false, "main.go": false, "./.mcp.json": true, "pkg/.npmrc": true,
	} {
		if ExecConfig(rel) != want {
			t.Errorf("ExecConfig(%q) = %v, want %v", rel, !want, want)
		}
	}
}

// TestCreatedAndQuarantine: exec-config files the run made are found and
// moved out of the workspace; those that existed are left.
func TestCreatedAndQuarantine(t *testing.T) {
	ws := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	write(".git/config")
	write(".env")
	before, err := FindWalls(ws)
	if err != nil || len(before.ReadOnly) != 1 || len(before.Masked) != 1 {
		t.Fatalf("before: %+v %v", before, err)
	}
	write(".envrc")
	write(".github/workflows/x.yml")
	write("main.go")
	after, _ := FindWalls(ws)
	created := Created(before, after)
	if len(created) != 2 {
		t.Fatalf("created: %v", created)
	}
	q := t.TempDir()
	moved, err := Quarantine(ws, q, created)
	if err != nil || len(moved) != 2 {
		t.Fatalf("quarantine: %v %v", moved, err)
	}
	for _, rel := range []string{".envrc", ".github/workflows"} {
		if exists(filepath.Join(ws, rel)) || !exists(filepath.Join(q, rel)) {
			t.Errorf("%s was not moved", rel)
		}
	}
	if !exists(filepath.Join(ws, ".git/config")) || !exists(filepath.Join(ws, "main.go")) {
		t.Error("files that existed or are not exec-config were moved")
	}
}

// TestSecretsMaskedInsideReadOnly: a secret-shaped file is masked inside a
// directory that is read only as a whole (.github/workflows, .vscode), and a
// file that is both exec-config and secret-shaped is masked, not shown
// read only; the read-only directory is listed once, not its contents.
func TestSecretsMaskedInsideReadOnly(t *testing.T) {
	ws := t.TempDir()
	for _, rel := range []string{".github/workflows/deploy.pem", ".github/workflows/ci.yml", ".vscode/.env",
		".vscode/settings.json", ".git/hooks/pre-commit", ".git/config", "main.go"} {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	w, err := FindWalls(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".github/workflows/deploy.pem", ".vscode/.env"} {
		if !slices.Contains(w.Masked, filepath.Join(ws, rel)) {
			t.Errorf("%s is not masked: %+v", rel, w)
		}
	}
	ro := []string{".git/config", ".git/hooks", ".github/workflows", ".vscode"}
	for _, rel := range ro {
		if !slices.Contains(w.ReadOnly, filepath.Join(ws, rel)) {
			t.Errorf("%s is not read only: %+v", rel, w)
		}
	}
	if len(w.ReadOnly) != len(ro) {
		t.Errorf("read only: %v, want %v alone (not what they hold)", w.ReadOnly, ro)
	}
	npmrc := filepath.Join(ws, "pkg", ".npmrc")
	os.MkdirAll(filepath.Dir(npmrc), 0o755)
	os.WriteFile(npmrc, []byte("//registry.npmjs.org/:_authToken=x"), 0o644)
	if Masked(".npmrc") {
		w, _ = FindWalls(ws)
		if !slices.Contains(w.Masked, npmrc) || slices.Contains(w.ReadOnly, npmrc) {
			t.Errorf("pkg/.npmrc (exec-config and secret-shaped) is not masked: %+v", w)
		}
	}
}

// TestMatchName: matchName answers as path.Match for every masked pattern
// and for patterns with other wildcards, over names that meet the
// patterns' ends, miss them, or overlap them.
func TestMatchName(t *testing.T) {
	patterns := append([]string{"a*b*c", "*", "**", "x?y*", "[ab]*.pem", "id_*_sk", "a*a"}, maskedNames...)
	names := []string{"", "a", "ab", "abc", "aXbYc", "ac", "aa", "a.a", ".env", ".env.local", "prod.env", "env", ".envx",
		"server.key", "key", ".key", "tls.pem", "b.pem", "id_ed25519_sk", "id__sk", "id_sk", "credentials", "credentials.json",
		"credentials-prod.json", "credentialsjson", "service-account.json", "my-sa.json", "-sa.json", "sa.json", "xzy", "x1y2",
		"terraform.tfstate.backup", "kubeconfig", "a.kubeconfig", ".kubeconfig", "main.go"}
	for _, p := range patterns {
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := matchName(p, n); got != want {
				t.Errorf("matchName(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
}

func BenchmarkMasked(b *testing.B) {
	names := []string{"main.go", "README.md", "go.sum", "abc123def456-d", ".env", "credentials.json", "x.pem", "Makefile"}
	for i := 0; i < b.N; i++ {
		Masked(names[i%len(names)])
	}
}
