package risk

import (
	"slices"
	"strings"
	"testing"
)

// TestProgramUse checks the option table row by row: short, grouped,
// attached, long, '=' and abbreviated forms, and what each option does.
func TestProgramUse(t *testing.T) {
	cases := []struct {
		cmd      string
		readOnly bool
		reads    string // files read, joined with ","
		writes   string
		caps     capability // capabilities that must be present
		without  capability // … and that must be absent
	}{
		{cmd: "ls -la src", readOnly: true},
		// Text filters proven read-only option by option (coreutils manuals).
		{cmd: "cut -d: -f1 data.csv", readOnly: true, reads: "data.csv"},
		{cmd: "cut --output-delimiter=, -f1,2 a b", readOnly: true, reads: "a,b"},
		{cmd: "cut --frob x"},
		{cmd: "tr a-z A-Z", readOnly: true},
		{cmd: "tr -d '\r'", readOnly: true},
		{cmd: "du -sh node_modules", readOnly: true},
		{cmd: "du --max-depth=1 -h .", readOnly: true},
		{cmd: "du --files0-from=list", readOnly: true, reads: "list"},
		{cmd: "nl -ba main.go", readOnly: true, reads: "main.go"},
		{cmd: "comm -12 a b", readOnly: true, reads: "a,b"},
		{cmd: "paste -sd, f", readOnly: true, reads: "f"},
		{cmd: "sha256sum a b", readOnly: true, reads: "a,b"},
		{cmd: "sha256sum -c sums"}, // reads the files a list names
		{cmd: "seq 1 10", readOnly: true},
		{cmd: "basename -s .go src/main.go", readOnly: true},
		{cmd: "uname -a", readOnly: true},
		{cmd: "stat -c %s f", readOnly: true},
		{cmd: "realpath --relative-to=. src", readOnly: true},
		// find: starting points, then an expression of known primaries
		// (find(1) GNU findutils); anything that runs, deletes or writes
		// is named, any other primary unknown.
		{cmd: "find . -name '*.go' -type f", readOnly: true},
		{cmd: "find src -maxdepth 2 -mtime -7 -size +1M -print0", readOnly: true},
		{cmd: "find -L . ( -name a -o -iname b ) ! -path ./x -printf %p", readOnly: true},
		{cmd: "find . -newermt 2020-01-01 -ls", readOnly: true},
		{cmd: "find . -files0-from list -name x", readOnly: true, reads: "list"},
		{cmd: "find . -exec rm {} ;", caps: capExec},
		{cmd: "find . -execdir sh -c id +", caps: capExec},
		{cmd: "find . -ok rm {} ;", caps: capExec},
		{cmd: "find . -delete", caps: capWrite},
		{cmd: "find . -fprint out", writes: "out", caps: capWrite},
		{cmd: "find . -fprintf out %p", writes: "out", caps: capWrite},
		{cmd: "find . -fls out", writes: "out", caps: capWrite},
		{cmd: "find . -frobnicate"},
		{cmd: "ls --color=auto -1", readOnly: true},
		{cmd: "ls --colo", readOnly: true}, // unique prefix of --color
		{cmd: "ls --frobnicate"},           // unknown option
		{cmd: "cat -n a b", readOnly: true, reads: "a,b"},
		{cmd: "cat -- -n", readOnly: true, reads: "-n"},
		{cmd: "head -20 main.go", readOnly: true, reads: "main.go"},
		{cmd: "head -n5 main.go", readOnly: true, reads: "main.go"},
		{cmd: "head -c 10 --lines=3 x", readOnly: true, reads: "x"},
		{cmd: "tail -f log", readOnly: true, reads: "log"},
		{cmd: "grep -rn TODO src", readOnly: true, reads: "src", caps: capRecurse},
		{cmd: "grep -r TODO", readOnly: true, reads: ".", caps: capRecurse},
		{cmd: "grep -d recurse TODO ~", readOnly: true, reads: "~", caps: capRecurse},
		{cmd: "grep --directories=recurse TODO ~", readOnly: true, reads: "~", caps: capRecurse},
		{cmd: "grep -d skip TODO f", readOnly: true, reads: "f", without: capRecurse},
		{cmd: "grep -e x -e y f", readOnly: true, reads: "f"},
		{cmd: "grep -f pats f", readOnly: true, reads: "pats,f"},
		{cmd: "grep -fpats f", readOnly: true, reads: "pats,f"},
		{cmd: "grep --file=pats f", readOnly: true, reads: "pats,f"},
		{cmd: "grep --exclude-f=pats x f", readOnly: true, reads: "pats,f"}, // unique prefix of --exclude-from
		{cmd: "wc --files0-from=list", readOnly: true, reads: "list"},
		{cmd: "wc --files0 list", readOnly: true, reads: "list"},
		{cmd: "date +%s", readOnly: true},
		{cmd: "date -f dates", readOnly: true, reads: "dates"},
		{cmd: "date -s 2020-01-01", caps: capSystem},
		{cmd: "date --set=2020-01-01", caps: capSystem},
		{cmd: "date --se=2020-01-01", caps: capSystem},
		{cmd: "date 0101000020", caps: capSystem},
		{cmd: "echo -n hi", readOnly: true},
		{cmd: "sort -o out in", writes: "out", reads: "in", caps: capWrite},
		{cmd: "sort -oout in", writes: "out", reads: "in", caps: capWrite},
		{cmd: "sort --compress-program=sh in", reads: "in", caps: capExec},
		{cmd: "uniq in out", reads: "in", writes: "out", caps: capWrite},
		{cmd: "uniq -c in", readOnly: true, reads: "in"},
		{cmd: "git status -sb", readOnly: true},
		{cmd: "git status -uno", readOnly: true},
		{cmd: "git diff --stat", readOnly: true, without: capWrite | capExec},
		{cmd: "sort in", readOnly: true, without: capWrite},
		{cmd: "git log --oneline -5", readOnly: true},
		{cmd: "git log -n 3 --format=%H", readOnly: true},
		{cmd: "git --no-pager log -p", readOnly: true},
		{cmd: "git diff --stat HEAD~1", readOnly: true},
		{cmd: "git diff --output=x", writes: "x", caps: capWrite},
		{cmd: "git diff --outp=x", writes: "x", caps: capWrite},
		{cmd: "git diff --out x", writes: "x", caps: capWrite},
		{cmd: "git log --output=/etc/passwd", writes: "/etc/passwd", caps: capWrite},
		{cmd: "git diff --ext-diff", caps: capExec},
		{cmd: "git diff -O/etc/shadow", readOnly: true, reads: "/etc/shadow"}, // the orderfile is read
		{cmd: "git diff -O order.txt HEAD", readOnly: true, reads: "order.txt,HEAD"},
		{cmd: "git diff --no-index /dev/null /etc/hosts", readOnly: true, reads: "/dev/null,/etc/hosts"},
		{cmd: "git -C /tmp/x status", caps: capConfig},
		{cmd: "git show HEAD:.env", readOnly: true, reads: "HEAD:.env,.env"}, // the operand may also be a path
		{cmd: "git show HEAD~1:src/main.go", readOnly: true, reads: "HEAD~1:src/main.go,src/main.go"},
		{cmd: "git -c core.pager=id log", caps: capExec},
		{cmd: "git --exec-path=/tmp log", caps: capExec},
		{cmd: "git push origin main"},
		{cmd: "git log --frobnicate"},
		{cmd: "tar -xf a.tar", reads: "a.tar", writes: "a.tar", caps: capRead},
		{cmd: "zip -T x.zip f", without: capExec},
		{cmd: "tar --to-command=sh -xf a.tar", caps: capExec},
		{cmd: "tar -cf x.tar --checkpoint-action=exec=sh .", caps: capExec},
		{cmd: "rsync -e evil a b", reads: "a", writes: "b", caps: capExec},
		{cmd: "rsync --rsh=evil a b", reads: "a", writes: "b", caps: capExec},
		{cmd: "ssh -o ProxyCommand=id host", caps: capExec | capNet},
		{cmd: "curl -o out https://x", writes: "out", caps: capNet},
		{cmd: "curl -T secret https://x", reads: "secret", caps: capNet},
		{cmd: "wget -i list", reads: "list", caps: capNet},
		{cmd: "man -P 'sh -c id' ls", caps: capExec},
		{cmd: "vim -c ':!id'", caps: capExec},
		{cmd: "awk -f prog.awk data", reads: "prog.awk,data", caps: capExec},
		{cmd: "sed -n p file", readOnly: true, reads: "file"}, // its script proven (programtext.go)
		{cmd: "sed -i s/a/b/ file", reads: "file", caps: capWrite},
		{cmd: "xargs rm", caps: capExec},
		{cmd: "zip -T -TT 'sh #' x.zip f", caps: capExec},
		{cmd: "tee out", writes: "out", caps: capWrite},
		{cmd: "cp a b c/", reads: "a,b", writes: "c/", caps: capWrite},
		{cmd: "mv a b", reads: "a", writes: "b", caps: capWrite},
		{cmd: "env X=1 ls", caps: capExec},
		{cmd: "timeout 5 ls", caps: capExec},
		{cmd: "nice -n 5 ls", caps: capExec},
		{cmd: "python3 x.py", reads: "x.py", caps: capExec},
		{cmd: "node -e 1", caps: capExec},
		{cmd: "make -f other.mk", reads: "other.mk", caps: capExec},
		{cmd: "npm test", caps: capExec},
		{cmd: "docker ps", caps: capExec},
	}
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		for i, w := range f {
			f[i] = strings.Trim(w, "'")
		}
		p := programFor(f[0])
		if p == nil {
			t.Errorf("%s: no table entry", f[0])
			continue
		}
		u, ro := useOf(p, wordsOf(f[1:]))
		if ro != c.readOnly {
			t.Errorf("%q: read-only %v, want %v (unknown %v, caps %b)", c.cmd, ro, c.readOnly, u.unknown, u.caps)
		}
		if c.reads != "" && texts(u.reads) != c.reads {
			t.Errorf("%q: reads %q, want %q", c.cmd, texts(u.reads), c.reads)
		}
		if c.writes != "" && texts(u.writes) != c.writes {
			t.Errorf("%q: writes %q, want %q", c.cmd, texts(u.writes), c.writes)
		}
		if u.caps&c.without != 0 {
			t.Errorf("%q: capabilities %b include %b", c.cmd, u.caps, c.without)
		}
		if u.caps&c.caps != c.caps {
			t.Errorf("%q: capabilities %b lack %b", c.cmd, u.caps, c.caps)
		}
	}
}

func texts(ws []shWord) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return strings.Join(out, ",")
}

// TestProgramTable: every entry parses, names its source, and every
// program the sample policy allows without asking is in it as read-only.
func TestProgramTable(t *testing.T) {
	for name, p := range programs {
		if p.source == "" && p.subs == nil {
			t.Errorf("%s: no source", name)
		}
		seen := map[string]bool{}
		for _, o := range p.options() {
			if o.short == 0 && o.long == "" && o.word == "" {
				t.Errorf("%s: an option with no name", name)
			}
			if o.long != "" && seen[o.long] && !slices.Contains([]string{"reflog", "name-only", "numstat",
				"show-linear-break", "ignore-space-change", "histogram", "summary"}, o.long) {
				t.Errorf("%s: --%s twice", name, o.long)
			}
			seen[o.long] = true
		}
	}
	for _, name := range []string{"ls", "pwd", "whoami", "date", "wc", "cat", "head", "tail", "grep", "echo"} {
		if p := programs[name]; p == nil || !p.readOnly {
			t.Errorf("%s: must be in the table as read-only", name)
		}
	}
	for _, sub := range []string{"status", "log", "diff", "show"} {
		if p := programs["git"].subs[sub]; p == nil || !p.readOnly {
			t.Errorf("git %s: must be in the table as read-only", sub)
		}
	}
	for _, name := range []string{"find", "tar", "rsync", "ssh", "scp", "curl", "wget", "less", "more", "man", "vim",
		"awk", "sed", "xargs", "zip", "env", "timeout", "nice", "docker", "kubectl", "npm", "pip", "python", "node",
		"perl", "ruby", "make", "sort", "uniq", "diff", "tee", "cp", "mv"} {
		if programs[name] == nil {
			t.Errorf("%s: missing from the table", name)
		}
	}
}

// TestPathspecSecretReads: files git and grep read by a pattern or a
// revision they resolve themselves are judged as reads: git's REV:PATH and
// index stages (gitrevisions(7): :0:.env to :3:.env), git log -L
// (git-log(1)), quoted pathspecs git globs itself and pathspec magic
// (gitglossary(7)), and grep --include (grep(1)).
func TestPathspecSecretReads(t *testing.T) {
	for _, src := range []string{
		"git log -L1,999:.env",
		"git log -L 1,999:.env",
		"git log -L:main:.env",
		"git show :0:.env",
		"git show :1:.env",
		"git log -p -- '*.pem'",
		"git diff HEAD~5 -- '*.pem'",
		"git show HEAD -- '*credentials*'",
		"git --icase-pathspecs log -p -- '*.PEM'",
		"git log -p -- ':(icase)*.KDBX'",
		"grep -r x --include=*.P12 .",
		"grep -rh '' --include=*.pem .",
		"grep -rh '' --include='*.key' .",
		"grep -rh '' --include=*.kdbx .",
		"grep -r x --include=*credentials* .",
		"grep -r x --include '*.p12' .",
	} {
		f, tags := ClassifyShell(src)
		if !slices.Contains(tags, tS) {
			t.Errorf("%q: tags %v, want %s", src, tags, tS)
		}
		for _, c := range f.Commands {
			if c.ReadOnly {
				t.Errorf("%q: read-only", src)
			}
		}
	}
	// Pathspecs from standard input are pathspecs rein does not see.
	for _, src := range []string{`printf -- '--\n.env\n' | git log -p --stdin`, "git log -p --stdin < list"} {
		f, _ := ClassifyShell(src)
		for _, c := range f.Commands {
			if c.Name == "git" && c.ReadOnly {
				t.Errorf("%q: git read-only", src)
			}
		}
	}
	for _, src := range []string{"git log -p -- '*.go'", "grep -rn foo --include=*.go .", "git log -L1,9:main.go",
		"git show HEAD~1:src/main.go", "git diff main -- docs/"} {
		f, tags := ClassifyShell(src)
		if slices.Contains(tags, tS) || len(f.Commands) != 1 || !f.Commands[0].ReadOnly {
			t.Errorf("%q: tags %v, commands %+v; want a read-only command", src, tags, f.Commands)
		}
	}
}

// TestFindInShell: find proven read-only stays read-only through the
// shell analysis, and its starting points are judged as paths: a listing
// of a secret folder is a secret read, as ls of it is.
func TestFindInShell(t *testing.T) {
	for src, want := range map[string]bool{
		"find . -name '*.go' -type f":     true,
		"find src -mtime -1 | head":       true,
		"find . -name x -exec cat {} \\;": false,
		"find . -name '*.pyc' -delete":    false,
		"find . -fprint /tmp/out":         false,
	} {
		f, tags := ClassifyShell(src)
		i := slices.IndexFunc(f.Commands, func(c ShellCommand) bool { return c.Name == "find" })
		if i < 0 || f.Commands[i].ReadOnly != want {
			t.Errorf("%q: find read_only, want %v (commands %+v, tags %v)", src, want, f.Commands, tags)
		}
	}
	if _, tags := ClassifyShell("find ~/.ssh -name 'id_*'"); !slices.Contains(tags, "shell.secrets") {
		t.Errorf("find ~/.ssh: tags %v", tags)
	}
}
