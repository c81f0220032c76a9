package risk

import (
	"slices"
	"strings"
	"testing"
)

func TestClassifyPath(t *testing.T) {
	cases := []struct {
		raw, workspace, clean string
		tags                  []string
		absent                []string
	}{
		{"src/main.go", "/srv/app", "src/main.go", []string{"path"}, []string{"path.sensitive", "path.traversal", "path.outside_workspace"}},
		{"/home/dev/.ssh/id_ed25519", "", "/home/dev/.ssh/id_ed25519", []string{"path.sensitive"}, nil},
		{"~/.aws/credentials", "", "~/.aws/credentials", []string{"path.sensitive"}, nil},
		{"app/.env", "", "app/.env", []string{"path.sensitive"}, nil},
		{"app/.env.production", "", "app/.env.production", []string{"path.sensitive"}, nil},
		{"repo/.git/config", "", "repo/.git/config", []string{"path.sensitive"}, nil},
		{"/etc/shadow", "", "/etc/shadow", []string{"path.sensitive"}, nil},
		{"/etc/../etc/./shadow", "", "/etc/shadow", []string{"path.sensitive", "path.traversal"}, nil},
		{"docs/../../../etc/sudoers", "/srv/app", "../../etc/sudoers", []string{"path.traversal", "path.outside_workspace"}, nil},
		{"/srv/app/../other/x", "/srv/app", "/srv/other/x", []string{"path.traversal", "path.outside_workspace"}, nil},
		{"/srv/app/x", "/srv/app", "/srv/app/x", nil, []string{"path.outside_workspace"}},
		{"/srv/application/x", "/srv/app", "/srv/application/x", []string{"path.outside_workspace"}, nil},
		{`..\..\windows\system32`, "/srv/app", "../../windows/system32", []string{"path.traversal", "path.outside_workspace"}, nil},
		{"~/.bashrc", "/srv/app", "~/.bashrc", []string{"path.sensitive", "path.outside_workspace"}, nil},
		{"certs/server.key", "", "certs/server.key", []string{"path.sensitive"}, nil},
		{"README.md", "", "README.md", nil, []string{"path.sensitive"}},
		// Windows: drive letters and UNC paths are absolute; names ignore case.
		{`C:\Users\u\.SSH\ID_RSA`, "/srv/app", "C:/Users/u/.SSH/ID_RSA", []string{"path.sensitive", "path.outside_workspace"}, nil},
		{`c:/windows/system32/drivers/etc/hosts`, "", "c:/windows/system32/drivers/etc/hosts", []string{"path.sensitive"}, nil},
		// A UNC path connects to the host it names (path.network), and
		// outside the workspace it is not known public.
		{`\\fileserver\share\notes.txt`, "/srv/app", "//fileserver/share/notes.txt", []string{"path.outside_workspace", "path.network", "path.sensitive"}, nil},
		{`C:\proj\app\src\x.go`, `C:\Proj\App`, "C:/proj/app/src/x.go", nil, []string{"path.outside_workspace", "path.sensitive"}},
		{`D:\data`, `C:\Proj\App`, "D:/data", []string{"path.outside_workspace"}, nil},
	}
	for _, c := range cases {
		f, tags := ClassifyPath(c.raw, c.workspace)
		if f.Clean != c.clean {
			t.Errorf("%q: clean %q, want %q", c.raw, f.Clean, c.clean)
		}
		checkTags(t, c.raw, tags, c.tags, c.absent)
	}
}

// TestSensitivePathRules derives, for every rule of the table, a concrete
// path it names, and checks that the path (and its spellings: other
// homes, Windows separators and case, /proc/PID/root, braces and globs
// that cover it) gets the rule's flags; and that a sibling path outside
// every rule gets none.
func TestSensitivePathRules(t *testing.T) {
	for _, r := range sensitivePathRules {
		p := strings.NewReplacer("**/", "a/", "/**", "/x", "*", "x", "?:", "C:", "?", "x").Replace(r.pattern)
		if strings.HasPrefix(r.pattern, "**/") {
			p = "proj/" + p[2:]
		}
		spellings := []string{p}
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			spellings = append(spellings, "/home/dev/"+rest, "/Users/dev/"+rest, "/root/"+rest, "$HOME/"+rest,
				`C:\Users\Dev\`+strings.ReplaceAll(rest, "/", `\`), "/home/*/"+rest)
		}
		if strings.HasPrefix(p, "/") {
			spellings = append(spellings, "/proc/self/root"+p, "/proc/1/task/1/root"+p, "/proc/thread-self/root/."+p)
		}
		if i := strings.LastIndexByte(p, '/'); i >= 0 && len(p)-i > 2 {
			base := p[i+1:]
			spellings = append(spellings, p[:i+1]+"{"+base+",zzz}", p[:i+1]+base[:2]+"*")
			if !strings.HasPrefix(r.pattern, "**/") && !strings.HasPrefix(base, ".") {
				spellings = append(spellings, p[:i+1]+"*"+base[len(base)-1:])
			}
		}
		spellings = append(spellings, strings.ToUpper(p[:1])+p[1:])
		for _, s := range spellings {
			f, _ := ClassifyPath(s, "")
			if r.secret && !f.Secret || r.execConfig && !f.ExecConfig || !f.Sensitive {
				t.Errorf("rule %q: %q has secret %v exec_config %v sensitive %v", r.pattern, s, f.Secret, f.ExecConfig, f.Sensitive)
			}
		}
	}
	// Secrets by name, in any folder and any case.
	for _, p := range []string{"deploy/secrets.yaml", "k8s/db-secret.yml", "client_secret_123.apps.googleusercontent.com.json",
		"config/Credentials.JSON", "ops/passwords.csv", "infra/terraform.tfstate", "prod.auto.tfvars", "secrets/db.env",
		".secrets/token", "service-account-prod.json", "vpn/office.ovpn", "/var/www/html/wp-config.php"} {
		if f, _ := ClassifyPath(p, ""); !f.Secret {
			t.Errorf("%q is not a secret", p)
		}
	}
	// Braces that would expand to millions of words are read as globs.
	for _, p := range []string{strings.Repeat("/*{a,b}", 200), "/root/" + strings.Repeat("{a,{b,c}}", 300), "~/.ssh/" + strings.Repeat("{x,y}", 300)} {
		if f, _ := ClassifyPath(p, ""); !f.Sensitive {
			t.Errorf("%.40q... is not sensitive", p)
		}
	}
	for _, p := range []string{"src/main.go", "/etc/hostname", "/proc/self/status", "/dev/null", "/home/dev/project/notes.md",
		"/dev/tty", "docs/*.md", "/usr/share/doc/*", "~/Downloads/report.pdf", "/tmp/{a,b}.txt", "Makefile", "package.json",
		"src/secret_manager.py", "docs/secrets.md", "internal/credentials/store.go", "password_reset.html"} {
		if f, _ := ClassifyPath(p, ""); f.Sensitive {
			t.Errorf("%q is sensitive (secret %v exec_config %v)", p, f.Secret, f.ExecConfig)
		}
	}
}

func FuzzClassifyPath(f *testing.F) {
	for _, s := range []string{"a/../b", "/etc/shadow", "~/.ssh/x", `..\x`, "", "/proc/self/root/etc/sha{dow,x}", `C:\x\*`, "{{{a,b},c}",
		"/home/u/.ssh/authorized_keys", "x/.git/hooks/pre-commit", "/etc/cron.d/a", "c:/windows/system32/x"} {
		f.Add(s, "/srv/app")
	}
	f.Fuzz(func(t *testing.T, raw, ws string) {
		fact, tags := ClassifyPath(raw, ws)
		if len(tags) == 0 || tags[0] != "path" || fact.Clean == "" {
			t.Fatalf("%q: %v %+v", raw, tags, fact)
		}
		if fact.Sensitive != (fact.Secret || fact.ExecConfig) {
			t.Fatalf("%q: %+v", raw, fact)
		}
		// The quick matcher for plain paths agrees with the glob matcher.
		if c := fact.Clean; !strings.ContainsAny(c, "*?[") {
			segs := strings.Split(strings.ToLower(c), "/")
			for i := range compiledPathRules {
				r := &compiledPathRules[i]
				if r.matches(segs) != globsMeet(sensitivePathRules[i].pattern, c) {
					t.Fatalf("%q: rule %q: quick %v, glob %v", c, sensitivePathRules[i].pattern, r.matches(segs), !r.matches(segs))
				}
			}
		}
	})
}

// TestDoubleSlashPaths: a path that starts with "//" is also read as Linux
// resolves it ("//etc/shadow" is "/etc/shadow"), and a Windows device or
// administrative-share path as the local path it names; the UNC reading is
// only one more.
func TestDoubleSlashPaths(t *testing.T) {
	for _, c := range []struct {
		raw                string
		secret, execConfig bool
	}{
		{"//etc/shadow", true, false},
		{"//home/u/.kube/config", true, false},
		{"//root/.ssh/id_rsa", true, false},
		{"//proc/self/root/etc/shadow", true, false},
		{"//etc/cron.d/x", false, true},
		{"//etc/profile.d/x.sh", false, true},
		{`\\?\C:\Windows\System32\drivers\etc\hosts`, false, true},
		{`\\.\C:\Windows\System32\x.dll`, false, true},
		{`\\localhost\C$\Windows\System32\x.dll`, false, true},
		// UNC readings name another host: outside the workspace, not public.
		{`\\fileserver\share\notes.txt`, true, false},
		{"//etc/hosts", true, false},
	} {
		f, _ := ClassifyPath(c.raw, "/srv/agent")
		if c.secret && !f.Secret || c.execConfig && !f.ExecConfig || !c.secret && !c.execConfig && f.Sensitive {
			t.Errorf("%q: secret %v exec_config %v, want at least %v %v", c.raw, f.Secret, f.ExecConfig, c.secret, c.execConfig)
		}
		if !f.OutsideWorkspace {
			t.Errorf("%q: inside the workspace", c.raw)
		}
	}
	if _, tags := ClassifyShell("cat //etc/shadow"); !slices.Contains(tags, tS) {
		t.Errorf("cat //etc/shadow: tags %v", tags)
	}
}

// TestHookAndSettingsExecConfig: files that agents, editors, containers and
// git hook managers run commands from arm later execution.
func TestHookAndSettingsExecConfig(t *testing.T) {
	for _, p := range []string{
		".claude/settings.json", ".claude/settings.local.json", "app/.claude/settings.json", "~/.claude/settings.json",
		"~/.claude.json", ".mcp.json", ".cursor/mcp.json", ".gemini/settings.json",
		".vscode/tasks.json", ".vscode/launch.json", ".vscode/settings.json", "proj.code-workspace",
		".devcontainer/devcontainer.json", ".devcontainer.json", ".husky/pre-commit", ".husky",
		".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
	} {
		if f, _ := ClassifyPath(p, "/srv/agent"); !f.ExecConfig {
			t.Errorf("%s: writing it arms later execution", p)
		}
		if _, tags := ClassifyShell("echo x > " + p); !slices.Contains(tags, "shell.exec_config") {
			t.Errorf("echo x > %s: tags %v", p, tags)
		}
	}
	// .claude/commands/*.md run their "!" lines (Claude Code "Slash
	// commands"), so only extension recommendations stay inert here.
	for _, p := range []string{".vscode/extensions.json", "husky.md", "src/settings.json"} {
		if f, _ := ClassifyPath(p, "/srv/agent"); f.ExecConfig {
			t.Errorf("%s: not execution configuration", p)
		}
	}
}

// TestOtherSpellings: a path is judged as the system would open it too — cut
// at NUL, a file: URL decoded, Windows' trailing dots and spaces and
// alternate data streams dropped — and the worse answer counts.
func TestOtherSpellings(t *testing.T) {
	for _, c := range []struct {
		raw                string
		secret, execConfig bool
	}{
		{"/srv/agent/.env\x00.txt", true, false},
		{"file:///etc/shadow", true, false},
		{"FILE:///etc/shadow", true, false},
		{"file://localhost/etc/shadow", true, false},
		{"file:///home/u/.ssh/id_rsa", true, false},
		{"file:///home/u/%2essh/id%5Frsa", true, false},
		{"file:///C:/Users/u/.aws/credentials", true, false},
		{"file:/etc/shadow", true, false},
		{".env ", true, false},
		{".env. . ", true, false},
		{".env::$DATA", true, false},
		{".env:secret", true, false},
		{`C:\Users\u\.ssh\id_rsa::$DATA`, true, false},
		{`C:\Users\u\.ssh. \id_rsa`, true, false},
		{".git/hooks./pre-commit", false, true},
		{".g\u200cit/hooks/pre-commit", false, true}, // HFS+ ignores U+200C
		{"\ufeff.env", true, false},
		{".s\u200dsh/id_rsa", true, false},
		// Windows 8.3 short names: the long names they may stand for.
		{`GIT~1\hooks\pre-commit`, false, true},
		{`C:\Users\u\AWS~1\config`, true, true},
		{"GITHUB~2/workflows/ci.yml", false, true},
		{`C:\Users\u\NEWTOO~1\token`, true, false},
		{"HEAD~1/main.go", false, true}, // may be .head/: a hidden folder, not a secret
		{"CREDEN~1.JSO", true, false},   // credentials.json
		{"master~1", false, true},       // no secret (git diff master~1 reads none); as a name it may be .master
		{"backup~/x", false, false},
		{"README.md", false, false},
		{"notes.txt ", false, false},
		{"file:///srv/agent/README.md", false, false},
	} {
		f, _ := ClassifyPath(c.raw, "/srv/agent")
		if c.secret && !f.Secret || c.execConfig && !f.ExecConfig || !c.secret && !c.execConfig && f.Sensitive {
			t.Errorf("%q: secret %v exec_config %v, want %v %v", c.raw, f.Secret, f.ExecConfig, c.secret, c.execConfig)
		}
		if f.Path != c.raw {
			t.Errorf("%q: the fact's path is %q, not what was written", c.raw, f.Path)
		}
	}
	if f, _ := ClassifyPath("file:///srv/agent/README.md", "/srv/agent"); f.OutsideWorkspace {
		t.Error("file:///srv/agent/README.md is inside the workspace")
	}
	if f, _ := ClassifyPath("file:///etc/hosts", "/srv/agent"); !f.OutsideWorkspace {
		t.Error("file:///etc/hosts is outside the workspace")
	}
}

// TestPlainPathsHaveNoOtherSpelling: the quick test passes plain paths
// (dot segments included) without looking further or allocating, and
// every spelling TestOtherSpellings needs gets past it.
func TestPlainPathsHaveNoOtherSpelling(t *testing.T) {
	for _, p := range []string{"README.md", "src/main.go", "./a/b", "../x", "a/../b/.", "/etc/hosts", `C:\proj\x.go`, "C:/x", "~/.ssh/", "."} {
		if mayBeSpelledOtherwise(p) {
			t.Errorf("%q: taken for a path with another spelling", p)
		}
		if n := testing.AllocsPerRun(10, func() { otherSpellings(p) }); n != 0 {
			t.Errorf("%q: %v allocations", p, n)
		}
	}
	for _, p := range []string{"a\x00b", "file:///x", ".env ", ".env.", "x/.env./y", ".env::$DATA", `C:\x\y:z`} {
		if !mayBeSpelledOtherwise(p) {
			t.Errorf("%q: passed over", p)
		}
	}
}
