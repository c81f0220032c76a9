package risk

import "strings"

// Program texts that awk and sed run, proven harmless or not. A program
// given as the first operand (not by -f, -e or another option, whose
// capabilities say what they do) is read; the use is read-only only when
// the text is literal, every option is known and harmless, and the text
// can neither run a command, write or read a file rein does not see, nor
// reach the environment. What rein cannot parse is not proven.

// programTextUse reads a command's options with the program's table and
// proves its program text with safe.
func programTextUse(safe func(string) bool) func(p *program, args []shWord) (programUse, bool) {
	return func(p *program, args []shWord) (programUse, bool) {
		u := p.use(args)
		// The program's own capabilities (awk runs code) are what the
		// text may do; the options' are judged apart.
		optCaps := u.optCaps
		// With -e/-f (or --expression, --file, --exec, --include) the
		// text comes from an option: patternGiven left every operand as a
		// file. Those options carry capExec, so such a use is not proven.
		if optCaps&^readCaps != 0 || len(u.unknown) > 0 || len(u.operands) == 0 {
			return u, false
		}
		text := u.operands[0]
		if !text.lit || text.expanded || !safe(text.text) {
			return u, false
		}
		u.caps = optCaps
		return u, true
	}
}

// awkForbidden are the words and characters of an awk program that run
// commands, redirect output or input, read the environment or change which
// files awk reads (POSIX awk: system(), getline, "|", ">", ENVIRON, ARGV
// and ARGC; gawk: PROCINFO, SYMTAB, FUNCTAB, "@" for @load, @include and
// indirect calls; GTFOBins awk). Matched anywhere in the text, strings
// and comparisons included: ">=" and "||" make a program unproven, which
// is what closed-world means.
var awkForbidden = []string{"system", "getline", "ENVIRON", "PROCINFO", "SYMTAB", "FUNCTAB", "ARGV", "ARGC",
	"|", ">", "@"}

// awkTextSafe reports an awk program text that only reads its input and
// prints to standard output.
func awkTextSafe(text string) bool {
	for _, w := range awkForbidden {
		if strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// sedScriptSafe reports a sed script whose every command only edits the
// pattern and hold spaces or prints (sed(1) GNU sed, "sed scripts"):
// addresses (N, $, first~step, /regex/ and \cregexc with I and M, ranges
// with ",", "+N" and "~N", "!"), blocks, p P d D n N g G h H x = l q Q z F,
// labels and branches (: b t T), a i c with their text, s with the flags
// g p N i I m M, and y. The commands that run (e, the s flag e), write (w,
// W, the s flag w) or read files (r, R), and anything else, are not.
func sedScriptSafe(s string) bool {
	i, n := 0, len(s)
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	// delimited reads up to an unescaped delim on the same line.
	delimited := func(delim byte) bool {
		for i < n {
			switch c := s[i]; {
			case c == '\\':
				i += 2
			case c == '\n':
				return false
			case c == delim:
				i++
				return true
			default:
				i++
			}
		}
		return false
	}
	address := func() bool {
		switch {
		case i < n && isDigit(s[i]):
			for i < n && (isDigit(s[i]) || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < n && s[i] == '\\':
			d := s[i+1]
			i += 2
			if d == '\n' || d == '\\' || !delimited(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for {
		for i < n && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= n {
			return true
		}
		if !address() {
			return false
		}
		if i < n && s[i] == ',' {
			i++
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
				for i < n && isDigit(s[i]) {
					i++
				}
			} else if !address() {
				return false
			}
		}
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= n {
			return false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
			continue
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=', 'z', 'F':
		case 'l', 'q', 'Q':
			for i < n && (s[i] == ' ' || isDigit(s[i])) {
				i++
			}
		case ':', 'b', 't', 'T':
			for i < n && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c':
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 's', 'y':
			if i >= n || s[i] == '\\' || s[i] == '\n' {
				return false
			}
			d := s[i]
			i++
			// Two delimited parts: the pattern, then the replacement
			// (or y's second set); each call reads one.
			if !delimited(d) {
				return false
			}
			if !delimited(d) {
				return false
			}
			for c == 's' && i < n {
				f := s[i]
				if f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || isDigit(f) {
					i++
					continue
				}
				break // e and w (and anything else) end the flags: judged below
			}
		default:
			return false // e, r, R, w, W, v and anything rein does not know
		}
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
			return false
		}
	}
}

// jqUse reads jq's command line (jq(1) 1.7, "INVOKING JQ"): flags, --arg
// and --argjson (a name and a value), --slurpfile and --rawfile (a name and
// a file it reads), -f/--from-file (the filter is a file: not proven),
// --args and --jsonargs (the operands after the filter are values, not
// files), then the filter and the files it reads. -L (a module search
// path) and any option not named are unknown. The filter is proven by
// jqFilterSafe.
func jqUse(_ *program, args []shWord) (programUse, bool) {
	var u programUse
	var ops []shWord
	positionalArgs := false
	filterGiven := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.lit {
			u.unknown = append(u.unknown, t)
			ops = append(ops, a)
			continue
		}
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case t == "-" || !strings.HasPrefix(t, "-"):
			ops = append(ops, a)
		case t == "--arg" || t == "--argjson":
			i += 2
		case t == "--slurpfile" || t == "--rawfile":
			if i+2 < len(args) {
				u.reads = append(u.reads, args[i+2])
				u.caps |= capRead
			}
			i += 2
		case t == "--args" || t == "--jsonargs":
			positionalArgs = true
		case t == "-f" || t == "--from-file":
			u.unknown = append(u.unknown, t) // the filter is in a file rein does not read
			filterGiven = true
			i++
		case t == "--indent":
			i++
		case jqFlags[t]:
		case !strings.HasPrefix(t, "--") && strings.Trim(t[1:], "nRscrjaSCMe") == "":
			// grouped short flags (-rc)
		default:
			u.unknown = append(u.unknown, t)
		}
	}
	u.operands = ops
	if !filterGiven && len(ops) > 0 {
		filter := ops[0]
		ops = ops[1:]
		if !filter.lit || filter.expanded || !jqFilterSafe(filter.text) {
			u.unknown = append(u.unknown, filter.text)
		}
	}
	if !positionalArgs {
		u.reads = append(u.reads, ops...)
	}
	return u, len(u.unknown) == 0
}

// jqFlags are jq's options without a value (jq(1) 1.7).
var jqFlags = set("--null-input", "--raw-input", "--slurp", "--compact-output", "--raw-output", "--raw-output0",
	"--join-output", "--ascii-output", "--unbuffered", "--sort-keys", "--color-output", "--monochrome-output",
	"--tab", "--stream", "--stream-errors", "--seq", "--exit-status", "-h", "--help", "-V", "--version",
	"--build-configuration")

// jqForbidden are the names of a jq filter that reach past its input (jq(1)
// 1.7): env and $ENV (the environment, where tokens live), import and
// include (modules loaded from a search path), and the builtins that list
// where modules are searched.
var jqForbidden = set("env", "ENV", "import", "include", "modulemeta", "get_search_list", "get_prog_origin",
	"get_jq_origin")

// jqFilterSafe reports a jq filter that only transforms its input: no
// forbidden name anywhere (strings included, since "\(env)" interpolates),
// except as a field after a single "." (.env is a key of the input).
func jqFilterSafe(text string) bool {
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(text); {
		if !isWord(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isWord(text[j]) {
			j++
		}
		field := i > 0 && text[i-1] == '.' && (i < 2 || text[i-2] != '.')
		if jqForbidden[text[i:j]] && !field {
			return false
		}
		i = j
	}
	return true
}
