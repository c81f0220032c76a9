package risk

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArithmeticOnLiterals: $((…)) on decimal literals is the number bash
// computes (bash(1), ARITHMETIC EVALUATION), so a read-only command with it
// stays read-only; other bases, operators rein does not evaluate, division
// by zero and variables stay unknown.
func TestArithmeticOnLiterals(t *testing.T) {
	for _, c := range []struct {
		src      string
		args     string
		readOnly bool
	}{
		{"echo $((1+2))", "3", true},
		{"echo $(( (2+3) * 4 - 6 / 3 % 2 ))", "20", true},
		{`echo "$((7-2))"`, "5", true},
		{"head -n $((10*2)) f", "-n 20 f", true},
		{"echo $((1/0))", "$((1/0))", false},
		{"echo $((2**3))", "$((2**3))", false},
		{"echo $((010))", "$((010))", false},
		{"echo $((0x10))", "$((0x10))", false},
		{"echo $((x+1))", "$((x+1))", false},
	} {
		f, tags := ClassifyShell(c.src)
		if len(f.Commands) != 1 {
			t.Fatalf("%s: commands %+v", c.src, f.Commands)
		}
		cmd := f.Commands[0]
		if got := strings.Join(cmd.Args, " "); got != c.args || cmd.ReadOnly != c.readOnly {
			t.Errorf("%s: args %q read_only %v, want %q %v (tags %v)", c.src, got, cmd.ReadOnly, c.args, c.readOnly, tags)
		}
	}
}

// TestProofsOfHarmlessness: each proof of read-only (risk.md, "Read-only
// programs proven by their table") in several spellings, next to the near
// misses that must stay unproven: an option that writes or runs, an
// unknown option, a read outside the workspace, a name from input rein
// cannot bound.
func TestProofsOfHarmlessness(t *testing.T) {
	const ws = "/srv/agent"
	for _, c := range []struct {
		src      string
		readOnly bool
	}{
		// grep -r and rg inside the workspace.
		{"grep -rn TODO src", true},
		{"grep -r TODO", true},
		{"grep -R --line-number 'func main' .", true},
		{"grep -rn TODO /srv/agent/internal", true},
		{"grep -d recurse TODO src", true},
		{"grep -r key ../other", false},
		{"grep -r key /srv/other", false},
		{"grep -r key ~", false},
		{"grep -r key /etc", false},
		{"grep -rn TODO /proc/self/cwd", false},
		{"grep -r x /var/run/../../srv/agent", false},
		{"grep -r x --include=.env* .", false},
		{"rg TODO", true},
		{"rg -n 'fn main' src", true},
		{"rg -i --type go todo", true},
		{"rg -l TODO -g '*.go'", true},
		{"rg --hidden TODO", false},
		{"rg -uu TODO", false},
		{"rg --no-ignore TODO", false},
		{"rg -L TODO", false},
		{"rg --pre cat TODO", false}, // not --pretty: ripgrep takes no abbreviations
		{"rg --pre=cat TODO", false},
		{"rg -z TODO", false},
		{"rg -g .env KEY", false},
		{"RIPGREP_CONFIG_PATH=rc rg TODO", false},
		{"rg --iglob '*.PEM' KEY", false},
		{"rg TODO ~/.config", false},
		// xargs -0 fed names a proven stage lists inside the workspace.
		{"find . -name '*.go' -print0 | xargs -0 wc -l", true},
		{"find src -type f -name '*.py' -print0 | xargs -0 grep -n import", true},
		{"find . -name '*.go' -print0 | xargs --null -r -n 10 head -5", true},
		{"grep -rlZ --include='*.go' TODO src | xargs -0 wc -l", true},
		{"find . -name '*.go' | xargs wc -l", false},         // blanks in names split them
		{"find . -name '*.go' -print0 | xargs -0 rm", false}, // xargs rm
		{"find . -name '*.go' -print0 | xargs -0 sort -o x", false},
		{"find . -name '*.go' -print0 | xargs -0 uniq", false}, // the second name is written
		{"find . -name '*.go' -print0 | xargs -0 -I{} cat {}", false},
		{"find . -name '*.go' -print0 | xargs -0 -a list cat", false},
		{"find . -name '.env' -print0 | xargs -0 cat", false},
		{"find . -name '*' -print0 | xargs -0 cat", false},
		{"find . -name '*.pem' -print0 | xargs -0 cat", false},
		{"find / -name '*.go' -print0 | xargs -0 cat", false},
		{"find .. -name '*.go' -print0 | xargs -0 cat", false},
		{"find . -name '*.go' -o -name .env -print0 | xargs -0 cat", false},
		{"find . -name '*.go' -printf '/etc/shadow\\0' | xargs -0 cat", false},
		{"grep -rlZ TODO src | xargs -0 cat", false},              // no --include: .env may match
		{"grep -rlZ --include='*.go' TODO | xargs -0 cat", false}, // bare names may read as options
		{"cat list | xargs -0 cat", false},
		{"echo /etc/shadow | xargs cat", false},
		{"xargs -0 cat < list", false},
		// for loops over literal items, each value judged.
		{`for f in *.go; do wc -l "$f"; done`, true},
		{"for f in a.txt b.txt; do head -3 $f; done", true},
		{`for f in src/*.go; do grep -n TODO "$f"; done`, true},
		{`for i in 1 2 3; do echo "$i"; done`, true},
		{`for i in {1..4}; do echo "line $i"; done`, true},
		{`for f in .*; do cat "$f"; done`, false},
		{`for f in *; do cat "$f"; done`, false},
		{`for f in ~/.ssh/*; do cat "$f"; done`, false},
		{`for f in a .env; do cat "$f"; done`, false},
		{"for d in /etc /root; do ls $d; done", false},
		{`for f in *.go; do rm "$f"; done`, false},
		{"for f in $(ls); do cat $f; done", false},
		{"for PATH in /tmp; do ls; done", false},
		// $((…)) on literals, locale prefixes.
		{"head -n $((5*4)) README.md", true},
		{"LC_ALL=C sort a.txt", true},
		{"LC_ALL=C.UTF-8 LANG=en_US.UTF-8 sort -u a.txt", true},
		{"LANGUAGE=en:de grep -c x a.txt", true},
		{"LC_ALL=/tmp/x sort a.txt", false},
		{"LC_ALL=$L sort a.txt", false},
		// Filters proven by their table.
		{"sort -k2 -n data.tsv | uniq -c", true},
		{"sort -o out.txt a.txt", false},
		{"sort --outp=x a.txt", false},
		{"sort --compress-program=sh a.txt", false},
		{"du -sh node_modules", true},
		{"du -sh ~/.ssh", false},
		{"cut -d, -f2 data.csv", true},
		{"cut -d: -f1 ~/.netrc", false},
		{"tr -d '\\r' < a.txt", true},
		{"tr a-z A-Z < ~/.aws/credentials", false},
		{"uniq -c sorted.txt", true},
		{"uniq a.txt b.txt", false},
		{"wc -l go.mod", true},
		{"wc --files0-from=list", true},    // counts of the files list names
		{"sort --files0-from=list", false}, // their lines
		{"head -20 main.go", true},
		{"tail -n 5 go.sum", true},
		{"tail -n 5 ~/.bash_history", false},
		// jq without file-writing or environment-reading filters.
		{"jq .name package.json", true},
		{"jq -r '.dependencies | keys[]' package.json", true},
		{"jq -c --arg v 1 '.[] | select(.v == $v)' data.json", true},
		{"jq --rawfile notes notes.txt -n '$notes'", true},
		{"jq -n env", false},
		{"jq -n '$ENV.AWS_SECRET_ACCESS_KEY'", false},
		{`jq '"\(env.HOME)"' a.json`, false},
		{"jq --rawfile k ~/.ssh/id_rsa -n '$k'", false},
		{"jq --slurpfile k ~/.docker/config.json -n '$k'", false},
		{"jq -L /tmp 'import \"x\" as x; .' a.json", false},
		{"jq -f prog.jq a.json", false},
		{"jq . ~/.kube/config", false},
		// git grep: tracked files and revisions.
		{`git grep "TODO"`, true},
		{`git grep -n -i todo -- "*.go"`, true},
		{"git grep TODO HEAD~2", true},
		{"git grep -O todo", false},
		{"git grep --open x", false},
		{"git grep --no-index x", false},
		{"git grep --untracked KEY", false},
		{"git grep --textconv x", false},
		{"git grep KEY HEAD:.env", false},
		{"git grep x -- '.env*'", false},
		{"git grep -f ~/.ssh/id_rsa x", false},
		// tree, file and column.
		{"tree -L 2", true},
		{"tree -P '*.go' --prune src", true},
		{"tree -o out.txt", false},
		{"tree -R -H .", false},
		{"tree --fromfile list", false},
		{"tree -a ~/.ssh", false},
		{"file -b go.mod", true},
		{"file --mime-type assets/logo.png", true},
		{"file -z a.gz", false},
		{"file -C -m magic", false},
		{"file -f list", false},
		{"file -s /dev/sda", false},
		{"column -t -s , data.csv", true},
		{"column -t ~/.netrc", false},
		// find, awk and sed near misses.
		{"find . -name '*.go' -fprint out", false},
		{"awk '{system(\"id\")}' a.txt", false},
		{"awk '{print > \"out\"}' a.txt", false},
		{"sed -i s/a/b/ a.txt", false},
		{"sed 'w out' a.txt", false},
		{"sed '1e id' a.txt", false},
		{"sed -n '1,5p' a.txt", true},
		{"awk -F, '{print $2}' data.csv", true},
	} {
		f, tags := classifyShell(c.src, ws)
		ro := len(f.Commands) > 0 && len(f.Writes) == 0
		for _, cmd := range f.Commands {
			ro = ro && cmd.ReadOnly && cmd.Resolved
		}
		for _, tg := range tags {
			ro = ro && (tg == "shell" || tg == "shell.tree") // a tree read is read-only; TestTreeReads
		}
		if ro != c.readOnly {
			t.Errorf("%s: proven read-only %v, want %v (tags %v, commands %+v)", c.src, ro, c.readOnly, tags, f.Commands)
		}
	}
}

// TestTreeReads: a recursive search inside the workspace writes nothing,
// but reads every file below its folder, those shaped like secrets
// included (GNU grep reads .env; ripgrep reads a server.key that no ignore
// file names; git grep reads a committed .env), so it is tagged shell.tree
// unless globs narrow it to names that are no secret.
func TestTreeReads(t *testing.T) {
	const ws = "/srv/agent"
	for _, c := range []struct {
		src  string
		tree bool
	}{
		{"grep -rn TODO src", true},
		{"grep -r password .", true},
		{"grep -R --line-number 'func main' .", true},
		{"grep -d recurse TODO src", true},
		{"grep -r TODO --exclude=.env .", true}, // an exclusion names one secret, not all
		{"rg TODO", true},
		{"rg -i --type go todo", true}, // --type-add can make any name a type
		{"rg -g '!*.env' KEY", true},
		{"git grep -n password", true},
		{"git grep TODO -- '*.go'", false},
		{"git grep TODO -- '*.go' ':!vendor'", false},
		{"git grep TODO -- ':!*.go'", true},
		{"git grep TODO --", true},
		{"git grep KEY -- .env", false}, // a secret read instead (TestProofsOfHarmlessness)
		{"rg --files", false},
		{"grep -rn 'func ' --include='*.go' src", false},
		{"rg -l TODO -g '*.go'", false},
		{"rg --iglob '*.md' TODO docs", false},
		{"grep -n TODO main.go", false},
		{"cat README.md", false},
		{"find . -name '*.go'", false},
	} {
		_, tags := classifyShell(c.src, ws)
		if got := slices.Contains(tags, "shell.tree"); got != c.tree {
			t.Errorf("%s: shell.tree %v, want %v (tags %v)", c.src, got, c.tree, tags)
		}
	}
}

// TestProgramTextIsNoPath: an awk or sed program, a jq filter and the words
// of find's expression are text, not files the command opens, so a slash in
// them reads no secret; the files these programs do open still do.
func TestProgramTextIsNoPath(t *testing.T) {
	for _, c := range []struct {
		src    string
		secret bool
	}{
		{"awk '/GET/ {print $2}' logs/access.log", false},
		{"awk '/etc/shadow/ {n++} END {print n}' logs/audit.log", false},
		{"sed -n '/\\/root\\//p' logs/app.log", false},
		{"find . -path '*/cart/*.go' -or -name '*_test.go'", false},
		{"find . -name '*.py' -not -path '*/site-packages/*'", false},
		{"jq '.paths[\"/etc/x\"]' data.json", false},
		{"jq --arg p /etc/x '.[$p]' data.json", false},
		{"awk '{print}' /etc/shadow", true},
		{"awk -f prog.awk ~/.ssh/id_rsa", true},
		{"sed -e p ~/.netrc", true},
		{"jq . ~/.aws/credentials.json", true},
		{"jq --rawfile k ~/.ssh/id_rsa -n '$k'", true},
		{"find ~/.ssh -name '*.pub'", true},
		{"find -D tree ~/.ssh -name '*.pub'", true},
		{"find -O3 -L ~/.ssh -name x", true},
		{"find . -files0-from ~/.ssh/id_rsa", true},
		{"find . -exec cat ~/.ssh/id_rsa \\;", true},
	} {
		_, tags := classifyShell(c.src, "/srv/agent")
		if got := slices.Contains(tags, "shell.secrets"); got != c.secret {
			t.Errorf("%s: secret read %v, want %v (tags %v)", c.src, got, c.secret, tags)
		}
	}
}

// TestNestedLoopsStayCheap: loops are walked once per item only within a
// budget per input, so five nested loops of 16 items (a million walks)
// cost no more than a long script; past the budget the variable is
// unknown, and a body that uses it is not read-only.
func TestNestedLoopsStayCheap(t *testing.T) {
	items := strings.Repeat("a.txt ", 16)
	var b strings.Builder
	for i := range 5 {
		fmt.Fprintf(&b, "for v%d in %s; do ", i, items)
	}
	b.WriteString(`cat "$v4"`)
	for range 5 {
		b.WriteString("; done")
	}
	start := time.Now()
	f, _ := ClassifyShell(b.String())
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("five nested loops took %v", d)
	}
	for _, c := range f.Commands {
		if c.ReadOnly && len(c.Args) == 1 && c.Args[0] != "a.txt" {
			t.Errorf("cat %v read-only with a value rein does not know", c.Args)
		}
	}
}
