package risk

import (
	"strings"
	"sync"
)

// capability is what an option, or a program's operands, can do.
type capability uint16

const (
	capRead    capability = 1 << iota // reads the file it names
	capWrite                          // creates or changes the file it names
	capExec                           // runs a command, code or a script
	capNet                            // opens a network connection
	capLib                            // loads a library, plugin or module
	capSystem                         // changes the system (the clock, …)
	capRecurse                        // reads directory operands recursively
	capConfig                         // reads configuration that can name commands
	// capPathspec: the value names files the program reads and prints, as
	// a glob it matches itself (grep --include=*.pem) or after a ":"
	// (git log -L1,9:.env).
	capPathspec
)

// readCaps are the capabilities a read-only use may have.
const readCaps = capRead | capRecurse | capPathspec

// operandRole says what a program does with its operands.
type operandRole uint8

const (
	opNone    operandRole = iota // text, names, revisions: no file is opened
	opRead                       // every operand is a file it reads
	opList                       // directories it lists (names only)
	opPattern                    // the first operand is a pattern (unless -e/-f), the rest files it reads
	opWrite                      // every operand is a file it writes (tee, touch)
	opCopy                       // the last operand is written, the others read (cp, mv)
	opCommand                    // the operands are a command it runs (xargs, timeout, nice, env)
	opProgram                    // the first operand is a program text (awk, sed), the rest files it reads
	opDate                       // +FORMAT prints; any other operand sets the clock
	opInOut                      // the first operand is read, the second written (uniq, sort -o)
	opGitDiff                    // paths that may lie outside the repository (git diff --no-index), or revisions
	opGitRevs                    // revisions; REV:PATH prints a file as the repository holds it
)

// program is what rein knows about one program: its options (optionSpec
// syntax below) and operands, and whether it only reads when no option
// outside opts is used. Options not in opts are unknown: a program used with
// one is never read-only.
type program struct {
	opts     string
	operands operandRole
	readOnly bool
	numeric  bool // accepts -NUM (head -20)
	// exactLong: long options are taken only as spelled, as the program's
	// parser does (ripgrep's takes no abbreviations), so --pre is never
	// read as --pretty.
	exactLong bool
	caps      capability
	subs      map[string]*program // git's subcommands
	source    string
	// expression reads what getopt options do not say (find's
	// expression, awk's and sed's program text) and says whether the use
	// is read-only.
	expression func(p *program, args []shWord) (programUse, bool)

	once   sync.Once
	parsed []optionSpec
}

// optionSpec is one option: its short letter, long name, whether it takes a
// value (required, or optional after '=') and what it does.
type optionSpec struct {
	short    byte
	long     string
	word     string // a single-dash option of several letters (zip -TT)
	value    bool
	optValue bool
	caps     capability
}

// options parses the program's spec once. The syntax, one option per
// space-separated token: `x` a short option, `--name` a long one, `x|--name`
// both, `-name` a single-dash option of several letters; a trailing `=` takes a value, `?` an optional `=value`; `:rwxnlsRc`
// its capabilities (read, write, exec, network, library, system, recursive,
// config, pathspec: `g`).
func (p *program) options() []optionSpec {
	p.once.Do(func() {
		for _, tok := range strings.Fields(p.opts) {
			var o optionSpec
			name, caps, _ := strings.Cut(tok, ":")
			for _, c := range caps {
				o.caps |= map[rune]capability{'r': capRead, 'w': capWrite, 'x': capExec, 'n': capNet, 'l': capLib,
					's': capSystem, 'R': capRecurse, 'c': capConfig, 'g': capPathspec}[c]
			}
			switch {
			case strings.HasSuffix(name, "="):
				o.value, name = true, strings.TrimSuffix(name, "=")
			case strings.HasSuffix(name, "?"):
				o.optValue, name = true, strings.TrimSuffix(name, "?")
			}
			for part := range strings.SplitSeq(name, "|") {
				if strings.HasPrefix(part, "--") {
					o.long = part[2:]
				} else if strings.HasPrefix(part, "-") {
					o.word = part[1:]
				} else if part != "" {
					o.short = part[0]
				}
			}
			p.parsed = append(p.parsed, o)
		}
	})
	return p.parsed
}

// dangerous reports a program with an option that writes, runs, connects,
// loads, changes the system or reads commands from a configuration.
func (p *program) dangerous() bool {
	for _, o := range p.options() {
		if o.caps&^readCaps != 0 {
			return true
		}
	}
	return false
}

// programUse is how one command uses its program: what its options and
// operands do.
type programUse struct {
	caps     capability
	optCaps  capability // the options' own capabilities (caps less the program's)
	unknown  []string   // options rein does not know for this program
	reads    []shWord
	writes   []shWord
	operands []shWord
	sub      string // git's subcommand
	// included is true when a recursive read is narrowed to file-name
	// globs (grep --include=*.go): only files those match are read.
	included bool
	// expansions are words rein cannot know in an option's place of a
	// program with options that write, run or change the system.
	expansions []shWord
}

// use reads a command's arguments against the program's table as getopt_long
// would: short options grouped (-abc) with values attached (-oFILE) or next,
// long options with '=' or a separate value, and unique prefixes of long
// options (--outp= is --output=); options may follow operands until "--".
// A word whose value rein does not know, in an option's place, is unknown.
func (p *program) use(args []shWord) programUse {
	u := programUse{caps: p.caps}
	opts := p.options()
	var ops []shWord
	patternGiven := false
	addValue := func(o optionSpec, v shWord) {
		u.caps |= o.caps
		u.optCaps |= o.caps
		if o.long == "directories" && (!v.lit || v.text != "" && strings.HasPrefix("recurse", v.text)) {
			u.caps |= capRecurse // grep -d recurse (or -d rec, or -d "$X") is grep -r
		}
		if o.caps&capWrite != 0 {
			u.writes = append(u.writes, v)
		}
		if o.long == "include" || p.caps&capRecurse != 0 && (o.long == "glob" || o.long == "iglob") && v.lit && !strings.HasPrefix(v.text, "!") {
			u.included = true // grep --include=*.go, rg -g '*.go': only files those globs match are read
		}
		if o.caps&capPathspec != 0 {
			u.reads = append(u.reads, pathspecReads(v)...)
		} else if o.caps&(capRead|capConfig) != 0 {
			u.reads = append(u.reads, v)
		}
		if (p.operands == opPattern || p.operands == opProgram) && (o.short == 'e' || o.short == 'f' || o.long == "regexp" || o.long == "file" || o.long == "expression") {
			patternGiven = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case a.input:
			ops = append(ops, a) // names from xargs -0, never options
			continue
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
			continue
		case !a.lit && !strings.HasPrefix(t, "-"):
			// An expansion rein cannot know may become an option.
			u.unknown = append(u.unknown, t)
			if p.dangerous() {
				u.expansions = append(u.expansions, a)
			}
			ops = append(ops, a)
			continue
		case !strings.HasPrefix(t, "-") || t == "-":
			ops = append(ops, a)
			continue
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			o, ok := longOption(opts, name)
			if ok && p.exactLong && o.long != name {
				ok = false
			}
			if !ok {
				u.unknown = append(u.unknown, t)
				continue
			}
			switch {
			case hasVal:
				addValue(o, shWord{text: val, lit: a.lit})
			case o.value && i+1 < len(args):
				i++
				addValue(o, args[i])
			default:
				u.caps |= o.caps
				u.optCaps |= o.caps
			}
			continue
		}
		if p.numeric && strings.Trim(t[1:], "0123456789") == "" {
			continue // head -20
		}
		if o, ok := wordOption(opts, t[1:]); ok {
			if o.value && i+1 < len(args) {
				i++
				addValue(o, args[i])
			} else {
				u.caps |= o.caps
				u.optCaps |= o.caps
			}
			continue
		}
		// A group of short options.
		for j := 1; j < len(t); j++ {
			o, ok := shortOption(opts, t[j])
			if !ok {
				u.unknown = append(u.unknown, "-"+t[j:j+1])
				continue
			}
			if o.optValue {
				if j+1 < len(t) {
					addValue(o, shWord{text: t[j+1:], lit: a.lit}) // git status -uno
				} else {
					u.caps |= o.caps
					u.optCaps |= o.caps
				}
				break
			}
			if !o.value {
				u.caps |= o.caps
				u.optCaps |= o.caps
				if o.short == 'e' || o.short == 'f' {
					patternGiven = patternGiven || p.operands == opPattern || p.operands == opProgram
				}
				continue
			}
			if j+1 < len(t) {
				addValue(o, shWord{text: t[j+1:], lit: a.lit})
			} else if i+1 < len(args) {
				i++
				addValue(o, args[i])
			}
			break
		}
	}
	u.operands = ops
	switch p.operands {
	case opRead:
		u.reads = append(u.reads, ops...)
	case opPattern, opProgram:
		if !patternGiven && len(ops) > 0 {
			ops = ops[1:]
		}
		u.reads = append(u.reads, ops...)
		if p.operands == opPattern && u.caps&capRecurse != 0 && len(ops) == 0 {
			u.reads = append(u.reads, shWord{text: ".", lit: true})
		}
	case opWrite:
		u.writes = append(u.writes, ops...)
		if len(ops) > 0 {
			u.caps |= capWrite
		}
	case opCopy:
		if len(ops) > 1 {
			u.reads = append(u.reads, ops[:len(ops)-1]...)
			u.writes = append(u.writes, ops[len(ops)-1])
			u.caps |= capWrite
		}
	case opInOut:
		if len(ops) > 0 {
			u.reads = append(u.reads, ops[0])
		}
		if len(ops) > 1 {
			u.writes = append(u.writes, ops[1])
			u.caps |= capWrite
		}
	case opCommand:
		if len(ops) > 0 {
			u.caps |= capExec
		}
	case opDate:
		for _, o := range ops {
			if !strings.HasPrefix(o.text, "+") {
				u.caps |= capSystem
			}
		}
	case opGitDiff, opGitRevs:
		// Any operand can be a path or a pathspec (git decides by what
		// exists), and a revision can name a file (HEAD:.env, :0:.env).
		for _, o := range ops {
			u.reads = append(u.reads, pathspecReads(o)...)
		}
	}
	return u
}

// pathspecReads are the files a word can name when a program reads it as a
// pathspec or a revision: the word without pathspec magic (":(icase)",
// ":(glob)", ":!", ":/", gitglossary(7) "pathspec"; the glob tests ignore
// case, as --icase-pathspecs does), and every part after a ":" (HEAD:.env,
// :0:.env and :1:.env to :3:.env for the index stages, gitrevisions(7);
// -L1,9:.env and -L:func:.env, git-log(1)). Each is a glob: git and grep
// match pathspecs and --include patterns themselves, whatever the shell's
// quotes.
func pathspecReads(w shWord) []shWord {
	var out []shWord
	seen := map[string]bool{}
	add := func(t string) {
		if t == "" || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, shWord{text: t, lit: w.lit, node: w.node, glob: hasGlob(t)})
	}
	t := w.text
	if rest, ok := strings.CutPrefix(t, ":"); ok {
		if strings.HasPrefix(rest, "(") {
			if end := strings.IndexByte(rest, ')'); end >= 0 {
				rest = rest[end+1:]
			}
		} else {
			rest = strings.TrimLeft(rest, "/!^")
			rest = strings.TrimPrefix(rest, ":")
		}
		add(rest)
	}
	add(t)
	for i := 0; i < len(t); i++ {
		if t[i] == ':' {
			add(t[i+1:])
		}
	}
	return out
}

// longOption finds a long option by its name or, as getopt_long and git's
// parse-options accept, by a prefix of it. A prefix of several options is
// ambiguous (the program refuses it); rein then takes all of their
// capabilities, so an ambiguity never reads as harmless.
func longOption(opts []optionSpec, name string) (optionSpec, bool) {
	var found optionSpec
	n := 0
	for _, o := range opts {
		if o.long == "" {
			continue
		}
		if o.long == name {
			return o, true
		}
		if strings.HasPrefix(o.long, name) && name != "" {
			if n == 0 {
				found = o
			} else {
				found.caps |= o.caps
				found.value = found.value || o.value
			}
			n++
		}
	}
	return found, n > 0
}

func wordOption(opts []optionSpec, w string) (optionSpec, bool) {
	for _, o := range opts {
		if o.word != "" && o.word == w {
			return o, true
		}
	}
	return optionSpec{}, false
}

func shortOption(opts []optionSpec, c byte) (optionSpec, bool) {
	for _, o := range opts {
		if o.short == c {
			return o, true
		}
	}
	return optionSpec{}, false
}

// Option tables. Sources: the programs' manual pages (GNU coreutils, GNU
// grep, git-diff(1), git-log(1), git-show(1), git-status(1), git(1)) for
// which options exist and take values, and GTFOBins
// (https://gtfobins.github.io, functions shell, command, reverse-shell,
// file-read, file-write, upload, download, library-load) for which of them
// read or write files, run commands or load libraries: date -f, wc
// --files0-from, git diff --no-index, git -c/--exec-path, tar
// --to-command/--checkpoint-action, rsync -e, ssh -o ProxyCommand, zip -TT,
// sort --compress-program, man -P, vim -c, less and more "!", awk system(),
// sed e/w, xargs, env, timeout, nice.
var (
	// --stdin is left out on purpose (so unknown, never read-only): git log
	// then reads revisions and pathspecs from standard input
	// (git-rev-list(1)), which rein does not see (printf -- '--\n.env\n' |
	// git log -p --stdin prints .env's history).
	gitDiffOpts = "p|--patch u s|--no-patch U=|--unified= --output=:w --output-indicator-new= --output-indicator-old= " +
		"--output-indicator-context= --raw --patch-with-raw t --indent-heuristic --no-indent-heuristic --minimal " +
		"--patience --histogram --anchored= --diff-algorithm= --stat? --compact-summary --numstat --shortstat " +
		"X|--dirstat? --cumulative --dirstat-by-file? --summary --patch-with-stat z --name-only --name-status " +
		"--submodule? --color? --no-color --color-moved? --no-color-moved --color-moved-ws= --no-color-moved-ws " +
		"--word-diff? --word-diff-regex= --color-words? --no-renames --rename-empty --no-rename-empty --check " +
		"--ws-error-highlight= --full-index --binary --abbrev? B|--break-rewrites? M|--find-renames? " +
		"C|--find-copies? --find-copies-harder D|--irreversible-delete l= --diff-filter= S= G= --find-object= " +
		"--pickaxe-all --pickaxe-regex O=:r --skip-to= --rotate-to= R --relative? --no-relative a|--text " +
		"--ignore-cr-at-eol --ignore-space-at-eol b|--ignore-space-change w|--ignore-all-space " +
		"--ignore-blank-lines I|--ignore-matching-lines= --inter-hunk-context= W|--function-context --exit-code " +
		"--quiet --ext-diff:x --no-ext-diff --textconv --no-textconv --ignore-submodules? --src-prefix= " +
		"--dst-prefix= --no-prefix --default-prefix --line-prefix= --ita-invisible-in-index --ita-visible-in-index " +
		"--cached --staged --merge-base --no-index 1|--base 2|--ours 3|--theirs 0 c --cc m " +
		"--combined-all-paths --dd --remerge-diff --diff-merges= --no-diff-merges --first-parent --expand-tabs? " +
		"--no-expand-tabs --notes? --no-notes --show-notes-by-default --show-signature --abbrev-commit " +
		"--no-abbrev-commit --oneline --encoding= --pretty? --format= --date= --relative-date --follow " +
		"--no-walk? --do-walk --mailmap --no-mailmap --use-mailmap --no-use-mailmap --decorate? --no-decorate " +
		"--decorate-refs= --decorate-refs-exclude= --clear-decorations --source --log-size L=:g n|--max-count= " +
		"--skip= --since= --after= --since-as-filter= --until= --before= --author= --committer= --grep-reflog= " +
		"--grep= --all-match --invert-grep i|--regexp-ignore-case --basic-regexp E|--extended-regexp " +
		"F|--fixed-strings P|--perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents= " +
		"--no-min-parents --no-max-parents --exclude-first-parent-only --not --all --branches? --tags? --remotes? " +
		"--glob= --exclude= --exclude-hidden= --reflog --alternate-refs --single-worktree --ignore-missing " +
		"--bisect --cherry-mark --cherry-pick --left-only --right-only --cherry g|--walk-reflogs " +
		"--merge --boundary --simplify-by-decoration --show-pulls --full-history --dense --sparse " +
		"--simplify-merges --ancestry-path? --date-order --author-date-order --topo-order --reverse " +
		"--objects --objects-edge --unpacked --graph --show-linear-break? --parents --children --left-right " +
		"--show-linear-break --count --reflog --name-only --numstat --ignore-space-change --histogram " +
		"--show-origin --no-standard-notes --standard-notes --summary"
	gitStatusOpts = "s|--short b|--branch --show-stash --porcelain? --long v|--verbose u|--untracked-files? " +
		"--ignore-submodules? --ignored? z --column? --no-column --ahead-behind --no-ahead-behind --renames " +
		"--no-renames --find-renames? --no-optional-locks"
	gitGrepOpts = "--cached --no-exclude-standard --exclude-standard --recurse-submodules a|--text --no-textconv " +
		"i|--ignore-case I --max-depth= r|--recursive --no-recursive w|--word-regexp --no-word-regexp " +
		"v|--invert-match h H --full-name E|--extended-regexp G|--basic-regexp P|--perl-regexp F|--fixed-strings " +
		"n|--line-number --column l|--files-with-matches --name-only L|--files-without-match z|--null " +
		"o|--only-matching c|--count --color? --no-color --break --heading p|--show-function C|--context= " +
		"A|--after-context= B|--before-context= W|--function-context m|--max-count= --threads= f=:r e= --and " +
		"--or --not --all-match q|--quiet"
	// git's own options before the subcommand (git(1) OPTIONS): -c, -C,
	// --git-dir, --work-tree, --exec-path, --config-env and --namespace make
	// git read another repository's or the caller's configuration, which can
	// name commands (core.fsmonitor, core.pager, diff.external).
	gitGlobalOpts = "c=:x C=:c --git-dir=:c --work-tree=:c --exec-path?:x --config-env=:x --namespace= " +
		"--super-prefix= p|--paginate P|--no-pager --no-replace-objects --no-lazy-fetch --no-optional-locks " +
		"--no-advice --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --bare " +
		"--list-cmds=:c --attr-source= --html-path --man-path --info-path --version --help"
)

// programs is the capability table. readOnly programs name every option
// they have (so an option missing here is unknown, never harmless); the
// others name the options that matter for what they write, read or run.
var programs = map[string]*program{
	"ls": {readOnly: true, operands: opList, source: "ls(1) GNU coreutils",
		opts: "a|--all A|--almost-all --author b|--escape --block-size= B|--ignore-backups c C --color? d|--directory " +
			"D|--dired f F|--classify? --file-type --format= --full-time g --group-directories-first G|--no-group " +
			"h|--human-readable --si H|--dereference-command-line --dereference-command-line-symlink-to-dir " +
			"--hide= --hyperlink? --indicator-style= i|--inode I|--ignore= k|--kibibytes l L|--dereference m " +
			"n|--numeric-uid-gid N|--literal o p q|--hide-control-chars --show-control-chars Q|--quote-name " +
			"--quoting-style= r|--reverse R|--recursive s|--size S --sort= --time= --time-style= t T|--tabsize= " +
			"u U v w|--width= x X Z|--context --zero 1 --help --version"},
	"cat": {readOnly: true, operands: opRead, source: "cat(1) GNU coreutils; GTFOBins cat (file-read)",
		opts: "A|--show-all b|--number-nonblank e E|--show-ends n|--number s|--squeeze-blank t T|--show-tabs u " +
			"v|--show-nonprinting --help --version"},
	"head": {readOnly: true, operands: opRead, numeric: true, source: "head(1) GNU coreutils; GTFOBins head (file-read)",
		opts: "c|--bytes= n|--lines= q|--quiet --silent v|--verbose z|--zero-terminated --help --version"},
	"tail": {readOnly: true, operands: opRead, numeric: true, source: "tail(1) GNU coreutils; GTFOBins tail (file-read)",
		opts: "c|--bytes= f|--follow? F n|--lines= --max-unchanged-stats= --pid= q|--quiet --silent --retry " +
			"s|--sleep-interval= v|--verbose z|--zero-terminated --debug --help --version"},
	"grep": {readOnly: true, operands: opPattern, numeric: true, source: "grep(1) GNU grep; GTFOBins grep (file-read)",
		opts: "E|--extended-regexp F|--fixed-strings G|--basic-regexp P|--perl-regexp e|--regexp= f|--file=:r " +
			"i|--ignore-case y --no-ignore-case v|--invert-match w|--word-regexp x|--line-regexp c|--count " +
			"--color? --colour? L|--files-without-match l|--files-with-matches m|--max-count= o|--only-matching " +
			"q|--quiet --silent s|--no-messages b|--byte-offset H|--with-filename h|--no-filename --label= " +
			"n|--line-number T|--initial-tab Z|--null A|--after-context= B|--before-context= C|--context= " +
			"--group-separator= --no-group-separator a|--text --binary-files= D|--devices= d|--directories= " +
			"--exclude= --exclude-from=:r --exclude-dir= I --include=:g r|--recursive:R R|--dereference-recursive:R " +
			"--line-buffered U|--binary z|--null-data --help V|--version"},
	"wc": {readOnly: true, operands: opRead, source: "wc(1) GNU coreutils; GTFOBins wc (file-read: --files0-from)",
		opts: "c|--bytes m|--chars l|--lines L|--max-line-length w|--words --files0-from=:r --total= --debug --help --version"},
	"echo": {readOnly: true, operands: opNone, source: "bash(1) echo builtin", opts: "n e E"},
	// read assigns the words of a line of its input to the names given;
	// rein judges those names as assignments (a name that changes what runs
	// is shell.env_exec).
	"read": {readOnly: true, operands: opNone, source: "bash(1) read builtin",
		opts: "a= d= e E i= n= N= p= r s t= u="},
	"printf": {readOnly: true, operands: opNone, source: "bash(1) printf builtin (-v assigns a variable)", opts: "v=:x"},
	"pwd":    {readOnly: true, operands: opNone, source: "bash(1) pwd builtin", opts: "L P --help --version"},
	"whoami": {readOnly: true, operands: opNone, source: "whoami(1) GNU coreutils", opts: "--help --version"},
	"true":   {readOnly: true, operands: opNone, source: "bash(1)"},
	"false":  {readOnly: true, operands: opNone, source: "bash(1)"},
	"date": {readOnly: true, operands: opDate, source: "date(1) GNU coreutils; GTFOBins date (file-read: -f)",
		opts: "d|--date= --debug f|--file=:r I|--iso-8601? --resolution R|--rfc-email --rfc-3339= r|--reference= " +
			"s|--set=:s u|--utc --universal --help --version"},
	// --files0-from is left out on purpose (so unknown): sort prints the
	// lines of the files the list names, which rein does not see (wc and
	// du print only counts and sizes of them).
	"sort": {readOnly: true, operands: opRead, source: "sort(1) GNU coreutils; GTFOBins sort (file-read)",
		opts: "b|--ignore-leading-blanks d|--dictionary-order f|--ignore-case g|--general-numeric-sort " +
			"i|--ignore-nonprinting M|--month-sort h|--human-numeric-sort n|--numeric-sort R|--random-sort " +
			"--random-source=:r r|--reverse V|--version-sort --sort= --batch-size= c --check? C " +
			"--compress-program=:x --debug k|--key= m|--merge o|--output=:w s|--stable " +
			"S|--buffer-size= t|--field-separator= T|--temporary-directory= --parallel= u|--unique " +
			"z|--zero-terminated --help --version"},
	"uniq": {readOnly: true, operands: opInOut, source: "uniq(1) GNU coreutils (the second operand is written)",
		opts: "c|--count d|--repeated D --all-repeated? f|--skip-fields= --group? i|--ignore-case " +
			"s|--skip-chars= u|--unique z|--zero-terminated w|--check-chars= --help --version"},
	"diff": {readOnly: true, operands: opRead, source: "diff(1) GNU diffutils; GTFOBins diff (file-read)",
		opts: "q|--brief s|--report-identical-files c C= u U= e|--ed n|--rcs y|--side-by-side W|--width= " +
			"l|--paginate:x t|--expand-tabs T|--initial-tab r|--recursive:R N|--new-file --unidirectional-new-file " +
			"i|--ignore-case w|--ignore-all-space b|--ignore-space-change B|--ignore-blank-lines " +
			"I|--ignore-matching-lines= a|--text --strip-trailing-cr d|--minimal --color? p|--show-c-function " +
			"F|--show-function-line= --label= x|--exclude= X|--exclude-from=:r S|--starting-file= " +
			"--from-file=:r --to-file=:r --normal --unified? --context? --help v|--version"},
	// Text filters and lookups that only read their operands (or none) and
	// print: every option they have is named, so any other is unknown.
	"cut": {readOnly: true, operands: opRead, source: "cut(1) GNU coreutils",
		opts: "b|--bytes= c|--characters= d|--delimiter= f|--fields= n --complement s|--only-delimited " +
			"--output-delimiter= z|--zero-terminated --help --version"},
	"tr": {readOnly: true, operands: opNone, source: "tr(1) GNU coreutils (operands are character sets)",
		opts: "c C|--complement d|--delete s|--squeeze-repeats t|--truncate-set1 --help --version"},
	"du": {readOnly: true, operands: opList, source: "du(1) GNU coreutils (sizes and names, not contents)",
		opts: "0|--null a|--all --apparent-size B|--block-size= b|--bytes c|--total D|--dereference-args " +
			"d|--max-depth= --files0-from=:r H h|--human-readable --inodes k L|--dereference l|--count-links m " +
			"P|--no-dereference S|--separate-dirs --si s|--summarize t|--threshold= --time? --time-style= " +
			"X|--exclude-from=:r --exclude= x|--one-file-system --help --version"},
	"nl": {readOnly: true, operands: opRead, source: "nl(1) GNU coreutils",
		opts: "b|--body-numbering= d|--section-delimiter= f|--footer-numbering= h|--header-numbering= " +
			"i|--line-increment= l|--join-blank-lines= n|--number-format= p|--no-renumber s|--number-separator= " +
			"v|--starting-line-number= w|--number-width= --help --version"},
	"comm": {readOnly: true, operands: opRead, source: "comm(1) GNU coreutils",
		opts: "1 2 3 --check-order --nocheck-order --output-delimiter= --total z|--zero-terminated --help --version"},
	"paste": {readOnly: true, operands: opRead, source: "paste(1) GNU coreutils",
		opts: "d|--delimiters= s|--serial z|--zero-terminated --help --version"},
	"rev":  {readOnly: true, operands: opRead, source: "rev(1) util-linux", opts: "0|--zero h|--help V|--version"},
	"fold": {readOnly: true, operands: opRead, source: "fold(1) GNU coreutils", opts: "b|--bytes s|--spaces w|--width= --help --version"},
	"tac":  {readOnly: true, operands: opRead, source: "tac(1) GNU coreutils", opts: "b|--before r|--regex s|--separator= --help --version"},
	"expand": {readOnly: true, operands: opRead, source: "expand(1) GNU coreutils",
		opts: "i|--initial t|--tabs= --help --version"},
	"seq": {readOnly: true, operands: opNone, source: "seq(1) GNU coreutils",
		opts: "f|--format= s|--separator= w|--equal-width --help --version"},
	"basename": {readOnly: true, operands: opNone, source: "basename(1) GNU coreutils",
		opts: "a|--multiple s|--suffix= z|--zero --help --version"},
	"dirname": {readOnly: true, operands: opNone, source: "dirname(1) GNU coreutils", opts: "z|--zero --help --version"},
	"uname": {readOnly: true, operands: opNone, source: "uname(1) GNU coreutils",
		opts: "a|--all s|--kernel-name n|--nodename r|--kernel-release v|--kernel-version m|--machine " +
			"p|--processor i|--hardware-platform o|--operating-system --help --version"},
	// Checksums of the files named; -c (read a list of files to check) is
	// left out on purpose: the files it reads are not on the command line.
	"sha256sum": {readOnly: true, operands: opRead, source: "sha256sum(1) GNU coreutils (without -c)",
		opts: "b|--binary --tag t|--text z|--zero --help --version"},
	"sha1sum": {readOnly: true, operands: opRead, source: "sha1sum(1) GNU coreutils (without -c)",
		opts: "b|--binary --tag t|--text z|--zero --help --version"},
	"md5sum": {readOnly: true, operands: opRead, source: "md5sum(1) GNU coreutils (without -c)",
		opts: "b|--binary --tag t|--text z|--zero --help --version"},
	"realpath": {readOnly: true, operands: opList, source: "realpath(1) GNU coreutils (names, not contents)",
		opts: "e|--canonicalize-existing m|--canonicalize-missing L|--logical P|--physical q|--quiet " +
			"--relative-to= --relative-base= s|--strip|--no-symlinks z|--zero --help --version"},
	"stat": {readOnly: true, operands: opList, source: "stat(1) GNU coreutils (metadata, not contents)",
		opts: "L|--dereference f|--file-system c|--format= --printf= t|--terse --cached= --help --version"},

	// ripgrep searches recursively by default. Left out on purpose (so
	// unknown, never read-only): --pre and --pre-glob (run a program on
	// each file), -z/--search-zip (runs decompressors), -L/--follow
	// (leaves the tree through links), and --hidden, -./-u/--unrestricted
	// and --no-ignore* (read the hidden and ignored files it skips).
	// -g/--glob and --iglob override every ignore rule, so their globs are
	// reads judged as such (rg -g '.env' x reads .env).
	"rg": {readOnly: true, operands: opPattern, caps: capRecurse, exactLong: true, source: "rg(1) ripgrep 14",
		opts: "--pre=:x --pre-glob= z|--search-zip:x e|--regexp= f|--file=:r i|--ignore-case S|--smart-case s|--case-sensitive F|--fixed-strings " +
			"w|--word-regexp x|--line-regexp v|--invert-match c|--count --count-matches l|--files-with-matches " +
			"--files-without-match --files n|--line-number N|--no-line-number H|--with-filename I|--no-filename " +
			"o|--only-matching A|--after-context= B|--before-context= C|--context= --context-separator= " +
			"--no-context-separator m|--max-count= t|--type= T|--type-not= --type-list --type-add= " +
			"g|--glob=:g --iglob=:g --glob-case-insensitive j|--threads= --sort= --sortr= --json --vimgrep " +
			"--heading --no-heading p|--pretty --color= --colors= 0|--null r|--replace= P|--pcre2 " +
			"d|--max-depth= --max-filesize= U|--multiline --multiline-dotall a|--text --binary --trim " +
			"M|--max-columns= --max-columns-preview --column b|--byte-offset --stats q|--quiet --debug --trace " +
			"--no-messages --no-config --passthru --crlf --engine= --no-unicode --line-buffered --block-buffered " +
			"--null-data --path-separator= --one-file-system --dfa-size-limit= --regex-size-limit= " +
			"E|--encoding= --field-context-separator= --field-match-separator= --include-zero --no-require-git " +
			"--no-ignore-messages h|--help V|--version"},
	"jq": {readOnly: true, operands: opProgram, source: "jq(1) jq 1.7 manual (INVOKING JQ; env, $ENV, import, include, -L)",
		expression: jqUse},

	// tree lists names (and sizes, modes, dates). Left out on purpose
	// (unknown): -R with -H (writes 00Tree.html into every folder) and
	// --fromfile (reads a listing from a file); -o writes its output.
	"tree": {readOnly: true, operands: opList, source: "tree(1) 2.x",
		opts: "a d l f x L= R P= I= --gitignore --gitfile= --ignore-case --matchdirs --metafirst --prune --info " +
			"--infofile= --noreport --charset= --filelimit= o=:w q N Q p u g s h --si --du D --timefmt= F --inodes " +
			"--device v t c U r --dirsfirst --filesfirst --sort= i A S n C X J --help --version"},
	// file reads each file's first bytes. Left out on purpose (unknown):
	// -z and -Z (look inside compressed files with external programs), -C
	// (writes a compiled magic file), -m (reads magic files) and -f (reads
	// the names of the files to test from a list). -s reads block devices
	// named: those are judged as reads like any other.
	"file": {readOnly: true, operands: opRead, source: "file(1) 5.x",
		opts: "b|--brief i|--mime --mime-type --mime-encoding L|--dereference h|--no-dereference k|--keep-going " +
			"s|--special-files N|--no-pad 0|--print0 p|--preserve-date r|--raw E e|--exclude= --exclude-quiet= " +
			"F|--separator= P|--parameter= S|--no-sandbox --extension --apple l|--list v|--version --help"},
	"column": {readOnly: true, operands: opRead, source: "column(1) util-linux",
		opts: "t|--table s|--separator= o|--output-separator= c|--output-width= x|--fillrows N|--table-columns= " +
			"R|--table-right= H|--table-hide= T|--table-truncate= W|--table-wrap= E|--table-noextreme= " +
			"e|--table-header-repeat n|--table-name= O|--table-order= r|--tree= i|--tree-id= p|--tree-parent= " +
			"J|--json d|--table-noheadings m|--table-maxout l|--table-columns-limit= L|--keep-empty-lines " +
			"h|--help V|--version"},

	"git": {operands: opNone, source: "git(1)", opts: gitGlobalOpts, subs: map[string]*program{
		"status": {readOnly: true, operands: opNone, opts: gitStatusOpts, source: "git-status(1)"},
		"log":    {readOnly: true, operands: opGitRevs, numeric: true, opts: gitDiffOpts, source: "git-log(1), diff options"},
		"show":   {readOnly: true, operands: opGitRevs, numeric: true, opts: gitDiffOpts, source: "git-show(1), diff options"},
		"diff":   {readOnly: true, operands: opGitDiff, opts: gitDiffOpts, source: "git-diff(1): paths outside the repository are read (--no-index)"},
		// git grep searches tracked files (and revisions: HEAD:.env is a
		// read of .env). Left out on purpose (unknown): --no-index and
		// --untracked (files git does not track, the workspace's .env among
		// them), -O/--open-files-in-pager (runs a pager) and --textconv
		// (runs the filters .gitattributes names). The pattern is judged
		// as a pathspec too, which only errs toward a secret read.
		"grep": {readOnly: true, operands: opGitRevs, numeric: true, opts: gitGrepOpts, source: "git-grep(1)"},
	}},

	// Programs that are never read-only: what their options and operands do.
	"find": {operands: opNone, source: "find(1) GNU findutils; GTFOBins find (shell: -exec; file-write: -fprintf)",
		expression: findUse},
	"tar": {operands: opNone, caps: capRead, source: "tar(1) GNU tar; GTFOBins tar (shell: --to-command, --checkpoint-action, -I; file-write, file-read)",
		opts: "f|--file=:rw C|--directory= I|--use-compress-program=:x --to-command=:x --checkpoint-action=:x " +
			"--rsh-command=:x --info-script=:x F|--new-volume-script=:x T|--files-from=:r X|--exclude-from=:r " +
			"c|--create x|--extract|--get t|--list v z j J a --checkpoint? --transform= --exclude="},
	"rsync": {operands: opCopy, caps: capNet, source: "rsync(1); GTFOBins rsync (shell: -e)",
		opts: "e|--rsh=:x --rsync-path=:x --files-from=:r --exclude-from=:r --include-from=:r --password-file=:r " +
			"--log-file=:w --write-batch=:w --only-write-batch=:w --read-batch=:r a v r z n|--dry-run --delete"},
	"ssh": {operands: opCommand, caps: capNet, source: "ssh(1); GTFOBins ssh (shell: -o ProxyCommand, LocalCommand; file-read: -F)",
		opts: "o=:x F=:c i= E=:w S=:x J=:x l= p= L= R= D= W= w= b= c= e= m= O= Q= B= I=:l 4 6 A a C f G g K k M N n q s T t V v X x Y y"},
	"scp": {operands: opCopy, caps: capNet, source: "scp(1); GTFOBins scp (shell: -S)",
		opts: "S=:x o=:x F=:c i= J=:x P= l= c= D=:x X= 3 4 6 A B C O p q R r T v"},
	"curl": {operands: opNone, caps: capNet, source: "curl(1); GTFOBins curl (upload, download, file-read, file-write)",
		opts: "o|--output=:w O|--remote-name --output-dir=:w K|--config=:c T|--upload-file=:r c|--cookie-jar=:w " +
			"D|--dump-header=:w --trace=:w --trace-ascii=:w --stderr=:w --libcurl=:w --engine=:l --netrc-file=:r " +
			"E|--cert=:r --key=:r --cacert=:r b|--cookie= d|--data= --data-binary= --data-raw= --data-urlencode= " +
			"F|--form= --json= H|--header= X|--request= u|--user= s|--silent S|--show-error f|--fail L|--location " +
			"I|--head v|--verbose"},
	"wget": {operands: opNone, caps: capNet, source: "wget(1); GTFOBins wget (upload, download, file-read: -i, file-write: -O)",
		opts: "O|--output-document=:w o|--output-file=:w a|--append-output=:w i|--input-file=:r --post-file=:r " +
			"--body-file=:r --use-askpass=:x e|--execute=:x P|--directory-prefix=:w --config=:c q|--quiet"},
	"less": {operands: opRead, caps: capExec, source: "less(1); GTFOBins less (shell: !, file-write: s, LESSOPEN)",
		opts: "o|--log-file=:w O|--LOG-FILE=:w k|--lesskey-file=:c"},
	"more": {operands: opRead, caps: capExec, source: "more(1); GTFOBins more (shell: !)"},
	"man": {operands: opNone, caps: capExec, source: "man(1); GTFOBins man (shell: pager !, -P)",
		opts: "P|--pager=:x H|--html?:x l|--local-file C|--config-file=:c"},
	"vim": {operands: opRead, caps: capExec | capWrite, source: "vim(1); GTFOBins vim (shell: -c ':!sh', :py, library-load)",
		opts: "c=:x S=:x --cmd=:x u=:x U=:x"},
	"vi":   {operands: opRead, caps: capExec | capWrite, source: "vi(1); GTFOBins vi", opts: "c=:x"},
	"nano": {operands: opRead, caps: capExec | capWrite, source: "nano(1); GTFOBins nano (shell: ^R^X)"},
	"awk": {operands: opProgram, caps: capExec, source: "awk(1); GTFOBins awk (shell: system(), file-write, file-read)",
		opts:       "f|--file=:rx v|--assign= F|--field-separator= E|--exec=:rx i|--include=:rx l|--load=:l S|--sandbox",
		expression: programTextUse(awkTextSafe)},
	"sed": {operands: opProgram, source: "sed(1) GNU sed; GTFOBins sed (shell: e command, file-write: w)",
		opts: "e|--expression=:x f|--file=:rx i|--in-place?:w n|--quiet --silent E r|--regexp-extended s|--separate " +
			"z|--null-data --debug --posix --sandbox u|--unbuffered l|--line-length=",
		expression: programTextUse(sedScriptSafe)},
	"xargs": {operands: opCommand, source: "xargs(1); GTFOBins xargs (shell)",
		opts: "a|--arg-file=:r d|--delimiter= E= e|--eof? I= i|--replace? L= l|--max-lines? n|--max-args= " +
			"P|--max-procs= p|--interactive --process-slot-var= r|--no-run-if-empty s|--max-chars= t|--verbose x|--exit 0|--null"},
	"zip": {operands: opNone, caps: capWrite | capRead, source: "zip(1); GTFOBins zip (shell: -T -TT)",
		opts: "T|--test -TT=:x --unzip-command=:x r q"},
	"env":     {operands: opCommand, source: "env(1) GNU coreutils; GTFOBins env (shell)", opts: "i|--ignore-environment 0|--null u|--unset= C|--chdir= S|--split-string=:x v|--debug"},
	"timeout": {operands: opCommand, source: "timeout(1); GTFOBins timeout (shell)", opts: "s|--signal= k|--kill-after= --foreground --preserve-status v|--verbose"},
	"nice":    {operands: opCommand, source: "nice(1); GTFOBins nice (shell)", opts: "n|--adjustment="},
	"tee":     {operands: opWrite, source: "tee(1); GTFOBins tee (file-write)", opts: "a|--append i|--ignore-interrupts p --output-error?"},
	"cp":      {operands: opCopy, source: "cp(1); GTFOBins cp (file-write, file-read)", opts: "t|--target-directory=:w S|--suffix= r R a f i n p v"},
	"mv":      {operands: opCopy, source: "mv(1); GTFOBins mv (file-write)", opts: "t|--target-directory=:w S|--suffix= f i n v"},
	"docker": {operands: opNone, caps: capExec | capNet, source: "docker(1); GTFOBins docker (shell: run -v /:/mnt)",
		opts: "c|--context= H|--host=:n --config=:c l|--log-level= D|--debug"},
	"kubectl": {operands: opNone, caps: capExec | capNet, source: "kubectl; GTFOBins kubectl (file-read, exec)",
		opts: "--kubeconfig=:c --context= n|--namespace= s|--server=:n --token="},
	"npm":    {operands: opNone, caps: capExec | capNet, source: "npm(1): install and run-script run package scripts; GTFOBins npm"},
	"pip":    {operands: opNone, caps: capExec | capNet, source: "pip: install runs setup.py; GTFOBins pip"},
	"python": {operands: opRead, caps: capExec, source: "python(1); GTFOBins python", opts: "c=:x m=:x"},
	"node":   {operands: opRead, caps: capExec, source: "node(1); GTFOBins node", opts: "e|--eval=:x p|--print=:x r|--require=:lx --import=:lx"},
	"perl":   {operands: opRead, caps: capExec, source: "perlrun(1); GTFOBins perl", opts: "e=:x E=:x M=:l m=:l I=:l"},
	"ruby":   {operands: opRead, caps: capExec, source: "ruby(1); GTFOBins ruby", opts: "e=:x r=:l I=:l"},
	"make":   {operands: opNone, caps: capExec, source: "make(1): recipes are shell commands; GTFOBins make (shell: --eval)", opts: "f|--file=:rx C|--directory= E|--eval=:x j|--jobs?"},
}

// findPrimaries are the primaries of find's expression that only test
// names and metadata, or print to standard output, with the number of
// arguments each takes (find(1) GNU findutils, "TESTS", "POSITIONAL
// OPTIONS", "GLOBAL OPTIONS", "ACTIONS": -print, -print0, -printf, -ls,
// -prune, -quit). Every other primary is unknown; the ones that run
// (-exec, -execdir, -ok, -okdir), delete (-delete) or write (-fprint,
// -fprint0, -fprintf, -fls) are named as such.
var findPrimaries = map[string]int{
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1,
	"-iregex": 1, "-regextype": 1, "-lname": 1, "-ilname": 1, "-type": 1, "-xtype": 1, "-size": 1,
	"-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1, "-used": 1, "-newer": 1,
	"-anewer": 1, "-cnewer": 1, "-samefile": 1, "-perm": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1,
	"-links": 1, "-inum": 1, "-fstype": 1, "-maxdepth": 1, "-mindepth": 1, "-context": 1,
	"-nouser": 0, "-nogroup": 0, "-empty": 0, "-readable": 0, "-writable": 0, "-executable": 0,
	"-depth": 0, "-d": 0, "-mount": 0, "-xdev": 0, "-follow": 0, "-noleaf": 0, "-daystart": 0,
	"-ignore_readdir_race": 0, "-noignore_readdir_race": 0, "-warn": 0, "-nowarn": 0, "-true": 0, "-false": 0,
	"-print": 0, "-print0": 0, "-printf": 1, "-ls": 0, "-prune": 0, "-quit": 0, "-not": 0, "-a": 0,
	"-and": 0, "-o": 0, "-or": 0, "(": 0, ")": 0, "!": 0, ",": 0,
}

// findUse reads find's arguments: options -H, -L, -P, -D and -O, the
// starting points (folders it lists, names only, as ls -R does), then the
// expression, each primary checked against findPrimaries. GNU find's
// -newerXY tests take one argument too.
func findUse(_ *program, args []shWord) (programUse, bool) {
	var u programUse
	i := 0
	for ; i < len(args) && args[i].lit; i++ {
		t := args[i].text
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") && len(t) > 2 {
			continue
		}
		if t == "-D" && i+1 < len(args) {
			i++
			continue
		}
		break
	}
	for ; i < len(args); i++ {
		t := args[i].text
		if args[i].lit && (strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")" || t == ",") {
			break
		}
		if !args[i].lit {
			u.unknown = append(u.unknown, t)
		}
		u.operands = append(u.operands, args[i])
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			u.unknown = append(u.unknown, a.text)
			continue
		}
		switch t := a.text; {
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			u.caps |= capExec
			for i+1 < len(args) && args[i+1].text != ";" && args[i+1].text != "+" {
				i++
			}
			i++
		case t == "-delete":
			u.caps |= capWrite
		case t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf":
			u.caps |= capWrite
			if i+1 < len(args) {
				i++
				u.writes = append(u.writes, args[i])
			}
			if t == "-fprintf" {
				i++
			}
		case t == "-files0-from":
			if i+1 < len(args) {
				i++
				u.reads = append(u.reads, args[i])
				u.caps |= capRead
			}
		case strings.HasPrefix(t, "-newer") && len(t) == 8:
			i++ // -newerXY REF
		default:
			n, ok := findPrimaries[t]
			if !ok {
				u.unknown = append(u.unknown, t)
				continue
			}
			for k := 0; k < n && i+1 < len(args); k++ {
				i++
				if !args[i].lit {
					u.unknown = append(u.unknown, args[i].text)
				}
			}
		}
	}
	return u, len(u.unknown) == 0 && u.caps&^readCaps == 0
}

// programFor returns the table entry for a command name, with interpreter
// version suffixes dropped (python3.12, pip3).
func programFor(name string) *program {
	if p, ok := programs[name]; ok {
		return p
	}
	if p, ok := programs[interpreterName(name)]; ok {
		return p
	}
	return nil
}
