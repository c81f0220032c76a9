package risk

import (
	"encoding/base64"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ShellCommand is one simple command found in a script, named after its
// wrappers are unwrapped (sudo rm -> rm) and with paths reduced to the base
// name (/bin/rm -> rm).
type ShellCommand struct {
	Name      string          `json:"name"`
	Args      []string        `json:"args"`
	Redirects []ShellRedirect `json:"redirects"`
	// Env holds the variables set for the command: its prefix assignments
	// (X=1 cmd), env's (env X=1 cmd), and those exported earlier in the
	// script. Values rein cannot know are kept as written.
	Env map[string]string `json:"env"`
	// Reads and Writes are the files the command opens, from its program's
	// table (options and operands) and its redirections.
	Reads  []string `json:"reads"`
	Writes []string `json:"writes"`
	// Resolved: the name is the system's program — a bare name no function
	// or alias of the script shadows, or a path in /bin, /usr/bin,
	// /usr/local/bin, /sbin or /usr/sbin — not ./ls or /tmp/x/cat.
	Resolved bool `json:"resolved"`
	// ReadOnly: a resolved program that rein's table knows as read-only,
	// used only with options the table knows as harmless, reading no
	// secret, writing nothing and run with no variable that changes what
	// runs (programs.go).
	ReadOnly bool `json:"read_only"`

	// inputReadOnly: the command is read-only but for the names xargs -0
	// gives it; the pipeline makes it ReadOnly when the stage before lists
	// names (listsNames).
	inputReadOnly bool
	// listsNames: a read-only command that prints, NUL-separated, only the
	// names of files inside the workspace that no secret's name matches
	// (find … -name '*.go' -print0, grep -rlZ --include=*.go x src).
	listsNames bool
}

// ShellDynamic is one construct whose effect rein does not model exactly
// (facts.shell.dynamic): what it is and where (line:column).
type ShellDynamic struct {
	Construct string `json:"construct"`
	At        string `json:"at"`
}

// ShellRedirect is one redirection of a command: Op as written (">", ">>",
// "<", "<<", ...) and its target (a file, a descriptor, a here-doc's word).
type ShellRedirect struct {
	Op     string `json:"op"`
	Target string `json:"target"`
}

// ShellFacts is what rein reads from one script (risk.md, Shell): its
// commands, plus the URLs and SQL statements its commands carry.
type ShellFacts struct {
	Commands []ShellCommand
	URLs     []URLFact
	SQL      []SQLStatement
	// Dynamic lists the constructs behind shell.dynamic.
	Dynamic []ShellDynamic
	// Writes are the files the script writes, whether or not a command is
	// attached to the redirection (> file, { …; } > file).
	Writes []string
}

// Limits that keep a hostile script's classification cheap. Past them, rein
// stops looking and says so with shell.dynamic.
const (
	maxShellDepth    = 8    // nested sh -c / eval / re-parsed expansions
	maxShellParses   = 64   // scripts parsed for one input
	maxShellCommands = 1000 // commands kept in the facts
	maxBraceWords    = 64   // words one brace expansion may produce
)

// ClassifyShell parses a script (bash dialect) and derives its commands and
// tags. It never runs anything: expansions rein cannot know make the command
// shell.dynamic, and a script that does not parse is shell.parse_error.
func ClassifyShell(script string) (ShellFacts, []string) {
	return classifyShell(script, "")
}

// classifyShell is ClassifyShell with the policy's workspace, so that a
// command's operands are judged as a file tool's paths are (ClassifyPath):
// relative paths as under the workspace, and anything outside it secret
// unless known public.
func classifyShell(script, workspace string) (ShellFacts, []string) {
	s := &shellScan{workspace: workspace, tags: map[string]bool{"shell": true}, vars: map[string]string{},
		byCall: map[*syntax.CallExpr][]scanned{}, fetched: map[string]bool{}, memo: map[syntax.Node]bool{}}
	s.script(script, 0)
	s.judgeRuns()
	s.shadowed()
	f := ShellFacts{Commands: make([]ShellCommand, 0, len(s.cmds)), URLs: s.urls, SQL: s.sql,
		Dynamic: s.dynamic, Writes: s.writes}
	f.Commands = append(f.Commands, s.cmds...)
	return f, sortedTags(s.tags)
}

// scanned is a command as the scan saw it: the fact, and the literal text
// it reads on standard input (a here-doc or here-string), if any.
type scanned struct {
	cmd      ShellCommand
	idx      int // its place in shellScan.cmds, -1 past maxShellCommands
	stdin    string
	hasStdin bool       // a here-doc, here-string or < redirect feeds it
	hdoc     syntax.Pos // where a here-doc or here-string feeds it, if one does
	hdocLit  bool       // … and its text is known
}

type shellScan struct {
	workspace string // the policy's workspace ("": none)
	tags      map[string]bool
	cmds      []ShellCommand
	urls      []URLFact
	sql       []SQLStatement
	vars      map[string]string // variables assigned literal values so far
	parses    int
	byCall    map[*syntax.CallExpr][]scanned
	collect   []scanned
	fetched   map[string]bool // files written by a download
	runs      []*syntax.Word  // words whose substitutions get run as code
	memo      map[syntax.Node]bool

	dynamic   []ShellDynamic
	nameWord  shWord // the name of the command being unwrapped, as written
	writes    []string
	funcs     map[string]bool   // functions and aliases the script defines
	exported  map[string]string // variables exported so far
	cmdEnv    map[string]string // the environment of the command being judged
	numeric   map[string]bool   // variables known to hold numbers
	loopGlobs map[string]bool   // loop variables that hold a name a glob matched
	loopWalks int               // loop bodies walked so far (maxLoopWalks)
	integers  map[string]bool   // variables declared -i: assignments to them are arithmetic
	// uncertain are the variables assigned where the assignment may not
	// reach the rest of the script: in a subshell, a pipeline's stage, a
	// branch, a loop, a function body, the background. Their value is
	// never taken as known (uncertainAssigns).
	uncertain  map[string]bool
	globChecks int // globs judged so far (maxGlobChecks)
}

// dyn records a construct rein does not model exactly.
func (s *shellScan) dyn(construct string, at syntax.Pos) {
	s.tags["shell.dynamic"] = true
	if len(s.dynamic) < maxShellCommands {
		pos := ""
		if at.IsValid() {
			pos = at.String()
		}
		s.dynamic = append(s.dynamic, ShellDynamic{Construct: construct, At: pos})
	}
}

// shWord is one argument: its value when rein can know it, else its source.
type shWord struct {
	text     string
	lit      bool // the value is known without running anything
	glob     bool // holds an unquoted *, ? or [
	expanded bool // a variable or $(echo …) was substituted into it
	splits   bool // … outside quotes, where the shell splits it into words
	node     *syntax.Word
	// input: the names xargs -0 appends from its standard input, each one
	// exact (no splitting on blanks or quotes); unknown until the stage
	// before it is proven to print only names inside the workspace.
	input bool
}

func (s *shellScan) script(src string, depth int) {
	if depth > maxShellDepth || s.parses >= maxShellParses {
		s.dyn("nesting past the limit", syntax.Pos{})
		return
	}
	s.parses++
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		s.tags["shell.parse_error"] = true
		return
	}
	if !strings.Contains(src, "=") {
		s.walk(f, depth) // no assignment anywhere: nothing is uncertain
		return
	}
	for name := range uncertainAssigns(f) {
		if s.uncertain == nil {
			s.uncertain = map[string]bool{}
		}
		s.uncertain[name] = true
	}
	s.walk(f, depth)
}

// uncertainAssigns returns the variables a script assigns inside a
// construct whose assignments may not reach what follows it (bash(1),
// "COMMAND EXECUTION ENVIRONMENT"): a subshell, a stage of a pipeline, the
// sides of && and ||, an if, case, while, until or for, a function body (it
// runs only when called), a command or process substitution, a coprocess,
// a command run in the background. X='rm -rf ~'; (X=ls); $X runs rm: a
// value assigned there is not the value after it, so rein takes none.
func uncertainAssigns(f *syntax.File) map[string]bool {
	var out map[string]bool
	var buf [64]bool
	open := buf[:0] // for each node entered, whether it opened such a construct
	inside := 0
	var maybe map[*syntax.Stmt]bool // the right sides of && and ||
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			if open[len(open)-1] {
				inside--
			}
			open = open[:len(open)-1]
			return true
		}
		opens := false
		switch n := n.(type) {
		case *syntax.Subshell, *syntax.IfClause, *syntax.CaseClause, *syntax.WhileClause,
			*syntax.ForClause, *syntax.FuncDecl, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.CoprocClause:
			opens = true
		case *syntax.BinaryCmd:
			// Every stage of a pipeline runs in a subshell; of && and ||
			// only the right side may not run.
			opens = n.Op == syntax.Pipe || n.Op == syntax.PipeAll
			if !opens {
				if maybe == nil {
					maybe = map[*syntax.Stmt]bool{}
				}
				maybe[n.Y] = true
			}
		case *syntax.Stmt:
			opens = n.Background || n.Coprocess || maybe[n]
		case *syntax.Assign:
			if inside > 0 && n.Name != nil {
				if out == nil {
					out = map[string]bool{}
				}
				out[n.Name.Value] = true
			}
		}
		if opens {
			inside++
		}
		open = append(open, opens)
		return true
	})
	return out
}

// walk visits every statement in node, wherever it hides, then judges the
// pipelines once every command in them is known.
func (s *shellScan) walk(node syntax.Node, depth int) {
	var pipes []*syntax.BinaryCmd
	inner := map[*syntax.BinaryCmd]bool{}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			s.redirects(n.Redirs)
			if ce, ok := n.Cmd.(*syntax.CallExpr); ok {
				s.call(ce, n.Redirs, depth)
			}
		case *syntax.DeclClause:
			s.decl(n)
		case *syntax.FuncDecl:
			if s.funcs == nil {
				s.funcs = map[string]bool{}
			}
			if n.Name != nil {
				s.funcs[n.Name.Value] = true
			}
			for _, w := range n.Names {
				s.funcs[w.Value] = true
			}
		case *syntax.ForClause:
			if it, ok := n.Loop.(*syntax.WordIter); ok && it.Name != nil {
				if s.loop(it, n.Do, depth) {
					return false
				}
				s.setVar(it.Name.Value, "", false, it.Name.Pos())
			}
		case *syntax.ArithmExp:
			if !s.arithSafe(n.X) {
				s.dyn("arithmetic on a value rein does not know", n.Pos())
			}
		case *syntax.ArithmCmd:
			if !s.arithSafe(n.X) {
				s.dyn("arithmetic on a value rein does not know", n.Pos())
			}
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				if !s.arithSafe(x) {
					s.dyn("let on a value rein does not know", n.Pos())
				}
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
				if !s.arithSafe(x) {
					s.dyn("arithmetic on a value rein does not know", n.Pos())
				}
			}
		case *syntax.ParamExp:
			s.paramExp(n)
		case *syntax.Assign:
			if n.Index != nil && !s.arithSafe(n.Index) {
				s.dyn("array subscript rein does not know", n.Pos())
			}
		case *syntax.BinaryTest:
			s.binaryTest(n)
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				if w, ok := n.X.(*syntax.Word); !ok || !s.word(w).lit || strings.Contains(s.word(w).text, "[") {
					s.dyn("[[ -v ]] with a subscript", n.Pos())
				}
			}
		case *syntax.CoprocClause:
			s.dyn("coproc", n.Pos())
		case *syntax.BinaryCmd:
			if n.Op != syntax.Pipe && n.Op != syntax.PipeAll {
				break
			}
			if !inner[n] {
				pipes = append(pipes, n)
			}
			for _, st := range []*syntax.Stmt{n.X, n.Y} {
				if b, ok := st.Cmd.(*syntax.BinaryCmd); ok {
					inner[b] = true
				}
			}
		}
		return true
	})
	for _, p := range pipes {
		s.pipeline(p, depth)
	}
}

// maxLoopItems bounds the items of a for loop rein judges one by one, and
// maxLoopWalks the loop bodies walked for one input, nested loops included
// (16 items in each of five nested loops would be a million walks).
const (
	maxLoopItems = 16
	maxLoopWalks = 64
)

// loop judges a for loop over literal items (for f in a b *.go) by walking
// its body once for each item, the variable holding it: the body's
// commands are judged with every value the variable takes. An item that is
// a glob stands for each name it matches, so the variable's expansions are
// judged as that glob (a read of "$f" for f in .*; is a read of .*). A list
// rein cannot know, longer than maxLoopItems, or past maxLoopWalks for the
// input, is left to the walk, the variable unknown.
func (s *shellScan) loop(it *syntax.WordIter, body []*syntax.Stmt, depth int) bool {
	if len(it.Items) == 0 && !it.InPos.IsValid() {
		return false // for f; do …: the positional parameters
	}
	var items []shWord
	for _, w := range it.Items {
		for _, bw := range braceWords(w) {
			x := s.word(bw)
			if !x.lit || x.expanded {
				return false
			}
			items = append(items, x)
		}
	}
	if len(items) > maxLoopItems || s.loopWalks+len(items) > maxLoopWalks {
		return false
	}
	s.loopWalks += len(items)
	name := it.Name.Value
	if s.loopGlobs == nil {
		s.loopGlobs = map[string]bool{}
	}
	for _, x := range items {
		s.setVar(name, x.text, true, it.Name.Pos())
		s.vars[name] = x.text
		s.loopGlobs[name] = x.glob
		for _, st := range body {
			s.walk(st, depth)
		}
	}
	delete(s.vars, name)
	delete(s.loopGlobs, name)
	s.setVar(name, "", false, it.Name.Pos())
	return true
}

func (s *shellScan) assign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	if a.Value == nil || a.Array != nil || a.Index != nil || a.Append {
		if s.integers[a.Name.Value] && a.Append {
			s.dyn("+= to an integer variable", a.Pos())
		}
		delete(s.vars, a.Name.Value)
		s.setVar(a.Name.Value, "", false, a.Pos())
		if _, ok := envExec(a.Name.Value); ok && a.Value != nil {
			s.export(a.Name.Value, printNode(a.Value))
		}
		return
	}
	w := s.word(a.Value)
	if s.integers[a.Name.Value] && (!w.lit || !isNumber(w.text) && !s.numericName(w.text)) {
		// n='a[$(id)]' after declare -i n: the value is evaluated as
		// arithmetic, its subscripts run.
		s.dyn("assignment to an integer variable of a value rein does not know", a.Pos())
	}
	if w.lit && !w.glob && !s.uncertain[a.Name.Value] {
		s.vars[a.Name.Value] = w.text
	} else {
		delete(s.vars, a.Name.Value)
	}
	s.setVar(a.Name.Value, w.text, w.lit, a.Pos())
	// A variable the environment already holds (PATH, HOME, or one
	// exported earlier) reaches every later command when assigned.
	if _, ok := s.exported[a.Name.Value]; ok {
		s.export(a.Name.Value, w.text)
	} else if _, ok := envExec(a.Name.Value); ok {
		s.export(a.Name.Value, w.text)
	}
}

// call judges one simple command and remembers what it found for the
// pipeline it may be part of.
func (s *shellScan) call(ce *syntax.CallExpr, redirs []*syntax.Redirect, depth int) {
	if len(ce.Args) == 0 {
		for _, a := range ce.Assigns {
			s.assign(a)
		}
		return
	}
	// Prefix assignments (X=1 cmd) set the command's environment; they
	// join what the script exported so far and what an enclosing command
	// passes on (FOO=1 sh -c '…').
	outerEnv := s.cmdEnv
	s.cmdEnv = mergeEnv(s.exported, outerEnv)
	for _, a := range ce.Assigns {
		if a.Name == nil {
			continue
		}
		v := ""
		lit := true
		if a.Value != nil {
			w := s.word(a.Value)
			v, lit = w.text, w.lit
		}
		s.setVar(a.Name.Value, v, lit, a.Pos())
		s.cmdEnv = withEnv(s.cmdEnv, a.Name.Value, v)
	}
	defer func() { s.cmdEnv = outerEnv }()
	outer := s.collect
	s.collect = nil
	defer func() {
		s.byCall[ce] = s.collect
		s.collect = append(outer, s.collect...)
	}()
	var words []shWord
	for _, w := range ce.Args {
		for _, bw := range braceWords(w) {
			x := s.word(bw)
			if !x.splits || !x.lit {
				words = append(words, x)
				continue
			}
			// A substituted value outside quotes splits into words ($IFS,
			// CMD="rm -rf /"); quotes and ; inside the value stay literal.
			for _, f := range strings.Fields(x.text) {
				words = append(words, shWord{text: f, lit: true, expanded: true, splits: true, node: x.node})
			}
		}
	}
	if len(words) == 0 {
		return // every word expanded to nothing
	}
	if isInterpreter(words[0].text) || !words[0].lit || isEvalLike(words[0].text) {
		for _, w := range ce.Args {
			s.runsSubst(w)
		}
	}
	s.command(words, redirs, depth)
}

// word reads a word's value where it is knowable: literals, quotes, escapes,
// $'…', variables assigned literal values earlier in the script, and
// $(echo …).
func (s *shellScan) word(w *syntax.Word) shWord {
	out := shWord{lit: true, node: w}
	var text strings.Builder
	bracket := false // an unquoted "[" was seen
	// expansion writes the value of $X or $(echo …) when rein knows it.
	expansion := func(p syntax.WordPart, quoted bool) {
		v, ok := "", false
		switch p := p.(type) {
		case *syntax.ParamExp:
			v, ok = s.param(p)
			if ok && s.loopGlobs[p.Param.Value] {
				out.glob = true // a name the loop's pattern matched
			}
		case *syntax.CmdSubst:
			v, ok = s.echoed(p)
		case *syntax.ArithmExp:
			if n, known := arithLiteral(p.X, 0); known {
				v, ok = strconv.FormatInt(n, 10), true
			}
		}
		if !ok {
			out.lit = false
			text.WriteString(printNode(p))
			return
		}
		out.expanded = true
		out.splits = out.splits || !quoted
		text.WriteString(v)
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v, g := unescapeBare(p.Value)
			out.glob = out.glob || g
			bracket = bracket || strings.Contains(p.Value, "[")
			text.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				text.WriteString(ansiC(p.Value))
			} else {
				text.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					text.WriteString(unescapeDouble(lit.Value))
				} else {
					expansion(q, true)
				}
			}
		default:
			expansion(p, false)
		}
	}
	out.text = text.String()
	// An unquoted "[" opens a bracket expression that a "]" written in
	// quotes or after an escape can close (.[!"x"]nv, .[!x\]]nv): bash(1),
	// "Pattern Matching". The word is a glob when a "]" follows anywhere.
	if bracket && !out.glob {
		if i := strings.IndexByte(out.text, '['); i >= 0 && strings.IndexByte(out.text[i:], ']') > 0 {
			out.glob = true
		}
	}
	return out
}

// arithLiteral evaluates arithmetic on decimal literals only (bash(1),
// ARITHMETIC EVALUATION: + - * / % and unary + -, parentheses, 64-bit
// wrapping): $((1+2)) is the word 3. Anything else (a variable, another
// base, another operator, division by zero) is not known.
func arithLiteral(e syntax.ArithmExpr, depth int) (int64, bool) {
	if depth > 32 {
		return 0, false
	}
	switch e := e.(type) {
	case *syntax.Word:
		lit := e.Lit()
		if lit == "" || len(lit) > 18 || lit != "0" && lit[0] == '0' || strings.Trim(lit, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(lit, 10, 64)
		return n, err == nil
	case *syntax.ParenArithm:
		return arithLiteral(e.X, depth+1)
	case *syntax.UnaryArithm:
		x, ok := arithLiteral(e.X, depth+1)
		switch {
		case !ok || e.Post:
			return 0, false
		case e.Op == syntax.Minus:
			return -x, true
		case e.Op == syntax.Plus:
			return x, true
		}
	case *syntax.BinaryArithm:
		x, ok1 := arithLiteral(e.X, depth+1)
		y, ok2 := arithLiteral(e.Y, depth+1)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case syntax.Add:
			return x + y, true
		case syntax.Sub:
			return x - y, true
		case syntax.Mul:
			return x * y, true
		case syntax.Quo, syntax.Rem:
			if y == 0 || x == math.MinInt64 && y == -1 {
				return 0, false
			}
			if e.Op == syntax.Quo {
				return x / y, true
			}
			return x % y, true
		}
	}
	return 0, false
}

// echoed is the output of $(echo …) or $(printf …) with literal arguments,
// without its trailing newlines, as the shell substitutes it.
func (s *shellScan) echoed(c *syntax.CmdSubst) (string, bool) {
	if len(c.Stmts) != 1 || len(c.Stmts[0].Redirs) > 0 {
		return "", false
	}
	ce, ok := c.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || len(ce.Assigns) > 0 || !literalArgs(c.Stmts[0]) {
		return "", false
	}
	name := ce.Args[0].Lit()
	if name != "echo" && name != "printf" {
		return "", false
	}
	args := make([]string, 0, len(ce.Args)-1)
	for _, w := range ce.Args[1:] {
		args = append(args, s.word(w).text)
	}
	return strings.TrimRight(echoText(name, args), "\n"), true
}

// param resolves a plain $NAME or ${NAME}: $IFS is a space, $HOME is ~, and
// variables the script assigned literal values earlier are those values.
func (s *shellScan) param(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Index != nil ||
		p.Excl || p.Length || p.Width || p.NestedParam != nil {
		return "", false
	}
	switch name := p.Param.Value; name {
	case "IFS":
		return " ", true
	case "HOME":
		return "~", true
	default:
		v, ok := s.vars[name]
		return v, ok
	}
}

// braceWords expands {a,b} and {1..3} in a word, as bash does before
// running a command; past maxBraceWords it keeps the word as written.
func braceWords(w *syntax.Word) []*syntax.Word {
	c := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(c) {
		return []*syntax.Word{w}
	}
	var out []*syntax.Word
	for x, err := range expand.BracesSeq(nil, c) {
		if err != nil || len(out) >= maxBraceWords {
			return []*syntax.Word{w}
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return []*syntax.Word{w}
	}
	return out
}

// Commands that run another command given as their arguments.
var (
	shells       = set("sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "rbash")
	interpreters = set("python", "perl", "ruby", "node", "nodejs", "php", "lua", "bun", "deno", "tclsh",
		"osascript", "pwsh", "powershell", "Rscript", "julia")
	// argsWith are each wrapper's options that take a value.
	argsWith = map[string]string{
		"sudo":     "ughpCDrtUT",
		"doas":     "uC",
		"pkexec":   "",
		"nice":     "n",
		"ionice":   "cnpP",
		"stdbuf":   "ioe",
		"timeout":  "sk",
		"chrt":     "",
		"taskset":  "",
		"xargs":    "adEILnPs",
		"exec":     "a",
		"flock":    "wE",
		"watch":    "nq",
		"setsid":   "",
		"nohup":    "",
		"time":     "fo",
		"command":  "",
		"builtin":  "",
		"strace":   "eoOpPsSuUX",
		"ltrace":   "eoOpPsSuUX",
		"unshare":  "",
		"firejail": "",
		"parallel": "jS",
	}
	networkCommands = set("curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp",
		"rsync", "ftp", "tftp", "lftp", "aria2c", "http", "https", "xh", "dig", "nslookup", "host", "ping",
		"mail", "sendmail", "mutt", "s3cmd", "rclone", "gsutil", "azcopy")
	fetchCommands = set("curl", "wget", "aria2c", "http", "https", "xh", "fetch", "lwp-request", "GET")
	decoders      = set("base64", "base32", "basenc", "xxd", "uudecode", "openssl", "gzip", "gunzip", "zcat",
		"bzip2", "bunzip2", "xz", "unxz")
	destroyers = set("shred", "wipefs", "truncate", "blkdiscard", "srm", "mkswap", "mke2fs",
		"shutdown", "reboot", "halt", "poweroff")
	privilegers = set("sudo", "doas", "su", "pkexec", "runuser")
	// writers write to their operands.
	writers = set("tee", "touch", "mkdir", "rm", "rmdir", "truncate", "chmod", "chown", "chgrp", "shred",
		"ln", "cp", "mv", "install", "sed", "dd", "rsync")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// command unwraps wrappers (sudo, env, xargs, sh -c, …) and judges the
// command they run.
func (s *shellScan) command(ws []shWord, redirs []*syntax.Redirect, depth int) {
	if depth > maxShellDepth {
		s.dyn("nesting past the limit", syntax.Pos{})
		return
	}
	for len(ws) > 0 {
		name := ws[0]
		s.nameWord = name
		if !name.lit || name.expanded || name.glob {
			s.dyn("command name from an expansion", posOf(name)) // the command's name comes from an expansion
		}
		if !name.lit {
			s.leaf(name.text, ws[1:], redirs, depth)
			return
		}
		base := path.Base(name.text)
		if strings.HasSuffix(name.text, "/") {
			base = name.text
		}
		args := ws[1:]
		switch {
		case privilegers[base]:
			s.tags["shell.privileged"] = true
			if base == "su" {
				if c, ok := optionValue(args, "c", "--command"); ok {
					s.inline(c, depth)
					return
				}
				s.leaf(base, args, redirs, depth)
				return
			}
			ws = skipOptions(args, argsWith[base])
			if base == "runuser" || base == "pkexec" {
				ws = skipUser(ws)
			}
			if len(ws) == 0 {
				s.leaf(base, args, redirs, depth)
				return
			}
		case base == "env":
			if dir, ok := envChdir(args); ok && !(dir.lit && s.insideWorkspace(dir.text)) {
				// The command runs in another folder: its relative paths
				// name files rein cannot place (env -C / cat etc/shadow).
				s.dyn("env -C into a folder outside the workspace", posOf(dir))
			}
			for _, a := range envAssigns(args) {
				k, v, _ := strings.Cut(a.text, "=")
				s.setVar(k, v, a.lit, posOf(a))
				s.cmdEnv = withEnv(s.cmdEnv, k, v)
			}
			rest, script, ok := envCommand(args)
			if ok {
				s.inline(script, depth)
				return
			}
			if len(rest) == 0 {
				s.tags["shell.secrets"] = true // env alone prints every variable
				s.leaf(base, args, redirs, depth)
				return
			}
			ws = rest
		case base == "busybox" || base == "toybox":
			ws = args
		case base == "timeout" || base == "chrt" || base == "taskset" || base == "flock":
			rest := skipOptions(args, argsWith[base])
			if base == "flock" && len(rest) > 0 {
				s.wroteFile(rest[0]) // the lock file is created if missing
			}
			if base == "flock" {
				if c, ok := optionValue(args, "c", "--command"); ok {
					s.inline(c, depth)
					return
				}
			}
			if len(rest) > 0 {
				rest = rest[1:] // the duration, priority, mask or lock file
			}
			ws = rest
		case base == "watch":
			rest := skipOptions(args, argsWith[base])
			s.inline(joinWords(rest), depth)
			return
		case base == "xargs" || base == "parallel":
			rest := skipOptions(args, argsWith[base])
			exact := base == "xargs" && len(rest) > 0 && xargsExact(args[:len(args)-len(rest)])
			if len(rest) == 0 {
				rest = []shWord{{text: "echo", lit: true}}
			}
			// The command gets more arguments from its input (`ls -a |
			// xargs cat` reads .env): words rein cannot know, unless
			// parallel's ::: lists them. rest is a copy, so appending leaves
			// args as they were.
			fromInput := true
			if base == "parallel" {
				for i, w := range rest {
					if w.text == ":::" || w.text == "::::" {
						// ::: lists the arguments (each one is given to the
						// command); :::: names files that hold them.
						cmd := append([]shWord(nil), rest[:i]...)
						fromInput = false
						for _, a := range rest[i:] {
							switch {
							case a.text == "::::" || a.text == "::::+":
								fromInput = true
							case a.text != ":::" && a.text != ":::+":
								cmd = append(cmd, a)
							}
						}
						rest = cmd
						break
					}
				}
			}
			if fromInput {
				rest = append(rest[:len(rest):len(rest)], shWord{text: "{input}", input: exact})
			}
			ws = rest
		case argsWith[base] != "" || base == "nohup" || base == "setsid" || base == "command" || base == "builtin" ||
			base == "unshare" || base == "firejail":
			s.wrapperWrites(base, args, depth)
			if base == "command" && hasShort(args, "vV") {
				s.leaf(base, args, redirs, depth) // command -v only looks the name up
				return
			}
			ws = skipOptions(args, argsWith[base])
			if len(ws) == 0 {
				s.leaf(base, args, redirs, depth)
				return
			}
		case shells[base]:
			if c, ok := shellScript(args); ok {
				s.inline(c, depth)
				return
			}
			s.leaf(base, args, redirs, depth)
			return
		case base == "eval":
			s.inline(joinWords(args), depth)
			return
		case base == "source" || base == ".":
			if len(args) == 0 || !args[0].lit {
				s.dyn("source of an unknown file", syntax.Pos{})
			}
			s.leaf(base, args, redirs, depth)
			return
		case base == "trap" || base == "hash" || base == "enable" || base == "read" || base == "mapfile" ||
			base == "readarray" || base == "getopts" || base == "unset" || base == "printf" || base == "test" || base == "[":
			s.builtin(base, args, depth)
			s.nameWord = name
			s.leaf(base, args, redirs, depth)
			return
		case base == "alias":
			for _, a := range args {
				if k, _, ok := strings.Cut(a.text, "="); ok {
					if s.funcs == nil {
						s.funcs = map[string]bool{}
					}
					s.funcs[k] = true
				}
			}
			for _, a := range args {
				if _, v, ok := strings.Cut(a.text, "="); ok {
					s.inline(shWord{text: v, lit: a.lit}, depth)
				}
			}
			return
		case base == "find":
			s.find(args, redirs, depth)
			return
		case base == "ssh":
			s.leaf(base, args, redirs, depth)
			if remote := sshRemote(args); len(remote) > 0 {
				s.inline(joinWords(remote), depth)
			}
			return
		case base == "git":
			s.git(args, depth)
			s.nameWord = name // scripts git runs (-c alias.x='!…') named their own commands
			s.leaf(base, args, redirs, depth)
			return
		default:
			s.leaf(base, args, redirs, depth)
			return
		}
	}
}

// xargsExact reports xargs options (the words before the command) under
// which every name it reads from its input reaches the command exactly as
// printed: -0/--null (items end at NUL, no blanks or quotes split or join
// them), and otherwise only -r, -t, -x and the limits -n, -P, -L, -s
// (xargs(1) GNU findutils). -I/-i (the name is placed inside other words),
// -a (names from a file), -d, -E, -e and any other option are not.
func xargsExact(own []shWord) bool {
	null := false
	for i := 0; i < len(own); i++ {
		t := own[i].text
		if !own[i].lit {
			return false
		}
		if strings.HasPrefix(t, "--") {
			name, _, hasVal := strings.Cut(t[2:], "=")
			switch name {
			case "null":
				null = true
			case "no-run-if-empty", "verbose", "exit":
			case "max-args", "max-procs", "max-lines", "max-chars":
				if !hasVal {
					i++
				}
			default:
				return false
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case '0':
				null = true
			case 'r', 't', 'x':
			case 'n', 'P', 'L', 's':
				if j == len(t)-1 {
					i++
				}
				j = len(t)
			default:
				return false
			}
		}
	}
	return null
}

// wrapperOutputs are the options of wrappers that write a file of their
// own while the wrapped command runs: strace(1) and ltrace(1) -o/--output
// (a value starting with "|" or "!" is a command the output is piped to),
// GNU time(1) -o/--output.
var wrapperOutputs = map[string]struct{ short, long string }{
	"strace": {"o", "--output"},
	"ltrace": {"o", "--output"},
	"time":   {"o", "--output"},
}

// wrapperWrites judges what a wrapper itself writes or runs through its
// options, before the command it wraps is judged.
func (s *shellScan) wrapperWrites(base string, args []shWord, depth int) {
	o, ok := wrapperOutputs[base]
	if !ok {
		return
	}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !args[i].lit || !strings.HasPrefix(t, "-") || t == "--" {
			break // the wrapped command starts here
		}
		var v shWord
		found := false
		switch {
		case t == "-"+o.short || t == o.long || len(t) > 3 && strings.HasPrefix(o.long, t):
			if i+1 < len(args) {
				v, found = args[i+1], true
			}
		case strings.HasPrefix(t, "-"+o.short) && !strings.HasPrefix(t, "--"):
			v, found = shWord{text: t[2:], lit: true, node: args[i].node}, true
		case strings.HasPrefix(t, "--") && strings.Contains(t, "="):
			name, val, _ := strings.Cut(t, "=")
			if len(name) > 3 && strings.HasPrefix(o.long, name) {
				v, found = shWord{text: val, lit: args[i].lit, node: args[i].node}, true
			}
		}
		if !found {
			continue
		}
		if strings.HasPrefix(v.text, "|") || strings.HasPrefix(v.text, "!") {
			s.inline(shWord{text: v.text[1:], lit: v.lit, node: v.node}, depth)
			continue
		}
		s.wroteFile(v)
	}
}

// wroteFile records a file a command writes through an option: a write of
// the script (facts.shell.writes) judged as a redirection's target is.
func (s *shellScan) wroteFile(w shWord) {
	if !w.lit {
		s.dyn("a file rein cannot name is written", posOf(w))
	}
	if !harmlessTarget(w.text) {
		s.writes = append(s.writes, w.text)
		s.wrote(w)
	}
}

// envChdir returns the folder env -C/--chdir (or a unique prefix of
// --chdir, --c to --chdi) runs its command in (env(1) GNU coreutils).
func envChdir(args []shWord) (shWord, bool) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--" || !strings.HasPrefix(t, "-"):
			return shWord{}, false
		case t == "-C" || len(t) > 2 && strings.HasPrefix("--chdir", t):
			if i+1 < len(args) {
				return args[i+1], true
			}
		case strings.HasPrefix(t, "--") && strings.Contains(t, "="):
			name, v, _ := strings.Cut(t, "=")
			if len(name) > 2 && strings.HasPrefix("--chdir", name) {
				return shWord{text: v, lit: args[i].lit, node: args[i].node}, true
			}
		case !strings.HasPrefix(t, "--") && strings.Contains(t, "C"):
			// -iC DIR, -CDIR: C takes the rest of the group or the next word.
			j := strings.IndexByte(t, 'C')
			if strings.ContainsAny(t[1:j], "uS") {
				continue // the letters before it take values: -uC is -u C
			}
			if j+1 < len(t) {
				return shWord{text: t[j+1:], lit: args[i].lit, node: args[i].node}, true
			}
			if i+1 < len(args) {
				return args[i+1], true
			}
		case t == "-u" || t == "-S" || t == "--unset" || t == "--split-string":
			i++
		}
	}
	return shWord{}, false
}

// inline parses text that a wrapper runs as a script (sh -c, eval, su -c).
func (s *shellScan) inline(w shWord, depth int) {
	if w.expanded {
		s.dyn("script from an expansion", posOf(w)) // eval "$X": the script came from an expansion
	}
	if !w.lit {
		s.dyn("script rein cannot read", posOf(w))
		s.runsSubst(w.node)
		return
	}
	s.script(w.text, depth+1)
}

// leaf records a command rein has unwrapped to the end and tags what it does.
func (s *shellScan) leaf(name string, args []shWord, redirs []*syntax.Redirect, depth int) {
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 && !strings.ContainsAny(name, "$`") {
		base = name[i+1:]
	}
	c := scanned{cmd: ShellCommand{Name: base, Args: make([]string, len(args)), Redirects: []ShellRedirect{}}}
	for i, a := range args {
		c.cmd.Args[i] = a.text
	}
	for _, r := range redirs {
		target := ""
		if r.Word != nil {
			target = s.word(r.Word).text
		}
		c.cmd.Redirects = append(c.cmd.Redirects, ShellRedirect{Op: r.Op.String(), Target: target})
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			c.hasStdin = true
			c.hdoc = r.Pos()
			if r.Hdoc != nil {
				if w := s.word(r.Hdoc); w.lit {
					c.stdin, c.hdocLit = w.text, true
				}
			} else {
				c.hdocLit = true
			}
		case syntax.WordHdoc:
			c.hasStdin = true
			c.hdoc = r.Pos()
			c.stdin = target
			c.hdocLit = s.word(r.Word).lit
		case syntax.RdrIn, syntax.RdrInOut:
			c.hasStdin = true
		}
	}
	c.cmd.Env = s.cmdEnv
	s.files(&c.cmd, args, redirs)
	c.idx = -1
	if len(s.cmds) < maxShellCommands {
		c.idx = len(s.cmds)
		s.cmds = append(s.cmds, c.cmd)
	}
	s.collect = append(s.collect, c)
	s.judge(base, args, c, depth)
}

// judge tags one unwrapped command by what it does.
func (s *shellScan) judge(name string, args []shWord, c scanned, depth int) {
	ops := operands(args)
	if networkCommands[name] {
		s.tags["shell.network"] = true
		for _, a := range args {
			if strings.Contains(a.text, "://") {
				s.url(a.text)
			}
		}
	}
	if strings.HasPrefix(name, "mkfs") || destroyers[name] {
		s.tags["shell.destructive"] = true
	}
	switch name {
	case "rm":
		if hasShort(args, "rRf") || hasLong(args, "--recursive", "--force") {
			s.tags["shell.destructive"] = true
		}
	case "dd":
		for _, a := range args {
			if strings.HasPrefix(a.text, "of=") {
				s.tags["shell.destructive"] = true
			}
		}
	case "chmod", "chown", "chgrp":
		if hasShort(args, "R") || hasLong(args, "--recursive") {
			for _, o := range ops {
				if isRootLike(o) {
					s.tags["shell.destructive"] = true
				}
			}
		}
	case "curl":
		if hasShort(args, "dFT") || hasLong(args, "--data", "--data-binary", "--data-raw", "--data-urlencode",
			"--data-ascii", "--form", "--form-string", "--upload-file", "--json") || sendsMethod(args, "X", "--request") {
			s.tags["egress"] = true
		}
		if f, ok := optionValue(args, "o", "--output"); ok {
			s.fetched[path.Clean(f.text)] = true
		}
	case "wget":
		if hasLong(args, "--post-data", "--post-file", "--body-data", "--body-file") || sendsMethod(args, "", "--method") {
			s.tags["egress"] = true
		}
		if f, ok := optionValue(args, "O", "--output-document"); ok {
			s.fetched[path.Clean(f.text)] = true
		}
	case "scp", "rsync":
		if len(ops) > 1 && isRemote(ops[len(ops)-1]) {
			s.tags["egress"] = true
		}
	case "nc", "ncat", "netcat", "socat", "telnet", "ssh":
		if c.hasStdin || hasShort(args, "ec") && name != "ssh" {
			s.tags["egress"] = true
		}
	case "mail", "sendmail", "mutt":
		s.tags["egress"] = true
	case "aws", "gsutil", "rclone", "azcopy", "s3cmd":
		s.tags["shell.network"] = true
		for _, o := range ops[min(1, len(ops)):] {
			if isRemote(o) || strings.Contains(o, "://") {
				s.tags["egress"] = true
			}
		}
		if name == "aws" && len(ops) > 1 && ops[0] == "s3" && (ops[1] == "rm" || ops[1] == "rb") &&
			hasLong(args, "--recursive", "--force") {
			s.tags["shell.destructive"] = true
		}
		if name == "aws" && len(ops) > 1 && ops[0] == "configure" && (ops[1] == "export-credentials" || ops[1] == "get") {
			s.tags["shell.secrets"] = true
		}
	case "kubectl":
		if len(ops) > 0 && ops[0] == "delete" {
			s.tags["shell.destructive"] = true
		}
	case "terraform", "tofu":
		if len(ops) > 0 && (ops[0] == "destroy" || ops[0] == "apply" && hasLong(args, "-destroy", "--destroy")) {
			s.tags["shell.destructive"] = true
		}
	case "docker", "podman":
		if len(ops) > 1 && (ops[0] == "system" || ops[0] == "volume" || ops[0] == "image") && ops[1] == "prune" {
			s.tags["shell.destructive"] = true
		}
	case "printenv":
		s.tags["shell.secrets"] = true
	case "set", "export", "declare":
		if len(args) == 0 || len(args) == 1 && args[0].text == "-p" {
			s.tags["shell.secrets"] = true
		}
	case "security":
		if len(ops) > 0 && (strings.HasPrefix(ops[0], "find-") && strings.HasSuffix(ops[0], "password") ||
			ops[0] == "dump-keychain" || ops[0] == "export") {
			s.tags["shell.secrets"] = true
		}
	case "gpg":
		if hasLong(args, "--export-secret-keys", "--export-secret-subkeys") {
			s.tags["shell.secrets"] = true
		}
	case "gh", "gcloud":
		joined := " " + strings.Join(ops, " ") + " "
		if strings.Contains(joined, " auth token ") || strings.Contains(joined, " print-access-token ") ||
			strings.Contains(joined, " print-identity-token ") {
			s.tags["shell.secrets"] = true
		}
	case "psql", "mysql", "mariadb", "sqlite3", "duckdb", "clickhouse-client", "sqlcmd":
		s.sqlArgs(name, args)
	case "awk", "gawk", "mawk", "nawk":
		for _, o := range ops[:min(1, len(ops))] {
			if strings.Contains(o, "system(") || strings.Contains(o, "| getline") || strings.Contains(o, "|&") {
				s.dyn("awk program running commands", syntax.Pos{})
			}
		}
	}
	if (shells[name] || interpreters[interpreterName(name)]) && c.hdoc.IsValid() && readsCodeText(name, c.cmd.Args) {
		if !shells[name] {
			s.dyn("here-doc or here-string fed to "+name, c.hdoc) // code in a language rein does not read
		} else if !c.hdocLit {
			s.dyn("here-doc with expansions fed to "+name, c.hdoc)
		}
	}
	if shells[name] || interpreters[interpreterName(name)] {
		if inlineCode(name, args) {
			s.dyn("interpreter code on the command line", syntax.Pos{}) // code rein does not read
		}
		if len(ops) > 0 && s.fetched[path.Clean(ops[0])] {
			s.tags["shell.pipe_to_shell"] = true // runs a file it just downloaded
		}
		if shells[name] && readsCodeText(name, c.cmd.Args) && c.stdin != "" {
			s.script(c.stdin, depth+1)
		}
	}
	if s.fetched[path.Clean(name)] {
		s.tags["shell.pipe_to_shell"] = true
	}
	// Writes under system directories or into key and start-up files, and
	// reads of secrets.
	targets := writeTargets(name, args, ops)
	for _, t := range targets {
		if underAny(t, "/etc", "/usr", "/boot") {
			s.tags["shell.privileged"] = true
		}
		if f, _ := ClassifyPath(t, s.workspace); f.ExecConfig {
			s.tags["shell.exec_config"] = true // planting keys or start-up code
		}
	}
	texts := programTexts(name, args)
	for i, a := range args {
		if i > 0 && (name == "ssh" || name == "scp" || name == "sftp") && (args[i-1].text == "-i" || args[i-1].text == "-F") {
			continue // the key or config ssh uses, not a read of it
		}
		if texts[i] {
			continue // a program text or a find test, not a file it opens
		}
		v := a.text
		if strings.HasPrefix(v, "-") {
			if _, after, ok := strings.Cut(v, "="); ok {
				v = after
			} else {
				continue
			}
		}
		if looksLikePath(v) && !slices.Contains(targets, v) && !changesOnlyMetadata[path.Base(name)] && !strings.HasPrefix(path.Base(name), "mkfs") {
			s.readSecret(v)
		}
	}
}

// programTexts marks the arguments of a command that are text its program
// reads as code or patterns, not files it opens: awk's and sed's program
// text (the first operand when no -f or -e gives it), jq's filter, and the
// words of find's expression (-path '*/x/*', -regex '.*/etc/.*'). The files
// these programs do open are judged from their table (files), so such a
// word is not also judged as a path: awk '/GET/ {print}' reads no /GET/.
func programTexts(name string, args []shWord) map[int]bool {
	out := map[int]bool{}
	switch p := programFor(name); {
	case name == "find":
		expr := false
		for i, a := range args {
			t := a.text
			if i > 0 && args[i-1].text == "-files0-from" {
				continue // a file find reads: judged as a read
			}
			if !expr && (t == "-D" || i > 0 && args[i-1].text == "-D" || strings.HasPrefix(t, "-O") && len(t) > 2) {
				continue // find's options before the starting points (-D debugopts, -O3)
			}
			expr = expr || a.lit && (strings.HasPrefix(t, "-") && t != "-" && !(t == "-H" || t == "-L" || t == "-P") ||
				t == "(" || t == "!")
			if expr && a.lit {
				out[i] = true
			}
		}
	case p != nil && (p.operands == opProgram || name == "jq"):
		if name == "jq" {
			for i := range args {
				if i > 0 && jqNamed[args[i-1].text] || i > 1 && (args[i-2].text == "--arg" || args[i-2].text == "--argjson") {
					out[i] = true // a variable's name, or a value that is text
				}
			}
			for i, a := range args {
				if a.lit && !strings.HasPrefix(a.text, "-") && !(i > 0 && (jqValued[args[i-1].text] || jqNamed[args[i-1].text])) &&
					!(i > 1 && jqNamed[args[i-2].text]) {
					out[i] = true // the filter
					break
				}
			}
			break
		}
		u := p.use(args)
		if len(u.operands) == 0 || u.optCaps&capExec != 0 {
			break // -e or -f gave the program: every operand is a file
		}
		for i := range args {
			if args[i].node == u.operands[0].node && args[i].text == u.operands[0].text {
				out[i] = true
				break
			}
		}
	}
	return out
}

// jqValued are jq's options followed by one value, jqNamed those followed
// by a name and a value (jq(1) 1.7).
var (
	jqValued = set("-f", "--from-file", "--indent", "-L")
	jqNamed  = set("--arg", "--argjson", "--slurpfile", "--rawfile")
)

// changesOnlyMetadata are programs that act on files without reading their
// contents (names, modes, owners, links, whole devices), so a secret path
// among their operands is not a secret read; what they destroy or write is
// judged as such elsewhere. Source: each program's manual (coreutils,
// util-linux).
var changesOnlyMetadata = set("chmod", "chown", "chgrp", "touch", "rm", "rmdir", "mkdir", "ln", "unlink", "wipefs", "truncate", "shred", "mkswap", "blkdiscard")

// redirects tags the redirections of a statement: overwriting system files
// is destructive, writing under /etc, /usr or /boot privileged, and reading
// or writing keys and credentials touches secrets.
func (s *shellScan) redirects(rs []*syntax.Redirect) {
	for _, r := range rs {
		if r.Word == nil {
			continue
		}
		w := s.word(r.Word)
		read, write := redirectFile(r, w)
		if c := path.Clean(w.text); strings.HasPrefix(c, "/dev/tcp/") || strings.HasPrefix(c, "/dev/udp/") {
			s.tags["shell.network"] = true // bash opens a connection (bash(1), REDIRECTION)
			if write {
				s.tags["egress"] = true
			}
		}
		if read || write {
			s.uncOpen(w)
		}
		if write {
			s.writes = append(s.writes, w.text)
			s.wrote(w)
		}
		if read && w.lit && w.glob && s.globSecret(w.text) {
			s.tags["shell.secrets"] = true
		}
		if read && w.lit {
			s.readSecret(w.text)
		}
		if !w.lit || !looksLikePath(w.text) {
			continue
		}
		t := cleanShellPath(w.text)
		f, _ := ClassifyPath(w.text, s.workspace)
		if f.ExecConfig && write {
			s.tags["shell.exec_config"] = true
		}
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob, syntax.DplOut:
			if isSystemPath(t) {
				s.tags["shell.destructive"] = true
			}
			fallthrough
		case syntax.AppOut, syntax.AppAll, syntax.AppClob, syntax.AppAllClob, syntax.RdrInOut:
			if underAny(t, "/etc", "/usr", "/boot") {
				s.tags["shell.privileged"] = true
			}
		}
	}
}

// redirectFile reports whether a redirection reads or writes a file (not a
// descriptor, a here-doc or a harmless device): >, >>, >|, &>, &>>, <>,
// and >& onto a name (bash's >&word is &>word when word is not a number).
func redirectFile(r *syntax.Redirect, w shWord) (read, write bool) {
	switch r.Op {
	case syntax.RdrIn:
		return true, false
	case syntax.RdrInOut:
		read, write = true, true
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob,
		syntax.AppAll, syntax.AppAllClob:
		write = true
	case syntax.DplOut:
		write = !w.lit || strings.Trim(w.text, "0123456789") != "" && w.text != "-"
	default:
		return false, false
	}
	if w.lit && harmlessTarget(w.text) {
		write = false
	}
	return read, write
}

// harmlessTarget reports a write target that keeps nothing: /dev/null and
// the process's own streams.
func harmlessTarget(t string) bool {
	c := path.Clean(t)
	return c == "/dev/null" || c == "/dev/stdout" || c == "/dev/stderr" || c == "/dev/tty" ||
		strings.HasPrefix(c, "/dev/fd/")
}

// wrote tags a file the script writes: shell.write always, and
// shell.exec_config when the file arms later execution.
func (s *shellScan) wrote(w shWord) {
	s.tags["shell.write"] = true
	if w.lit && s.execConfig(w.text) {
		s.tags["shell.exec_config"] = true
	}
}

// pipeline judges what flows between the stages of a | b | c: downloads or
// decoded text into an interpreter, input sent out over the network, and
// literal text (echo, printf, here-docs, base64) piped into a shell, which
// rein parses as the script it is.
func (s *shellScan) pipeline(b *syntax.BinaryCmd, depth int) {
	var stages []*syntax.Stmt
	var flat func(st *syntax.Stmt)
	flat = func(st *syntax.Stmt) {
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			flat(b.X)
			flat(b.Y)
			return
		}
		stages = append(stages, st)
	}
	flat(b.X)
	flat(b.Y)
	fetched := false
	payload, known := "", false
	var before []scanned // the commands of the stage before
	for i, st := range stages {
		var cmds []scanned
		syntax.Walk(st, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok {
				cmds = append(cmds, s.byCall[ce]...)
			}
			return true
		})
		nextKnown := false
		for _, c := range cmds {
			name, args := c.cmd.Name, c.cmd.Args
			// xargs -0 fed names the stage before lists, each inside the
			// workspace and no secret's: the command reads only those.
			if c.cmd.inputReadOnly && c.idx >= 0 && len(before) == 1 && before[0].cmd.listsNames && before[0].cmd.ReadOnly {
				s.cmds[c.idx].ReadOnly = true
			}
			if i > 0 {
				if (shells[name] || interpreters[interpreterName(name)]) && readsCodeText(name, args) {
					if fetched {
						s.tags["shell.pipe_to_shell"] = true
					}
					if known && shells[name] {
						s.script(payload, depth+1)
					} else if known {
						s.dyn("literal code piped into "+name, st.Pos()) // a language rein does not read
					}
				}
				switch name {
				case "nc", "ncat", "netcat", "socat", "telnet", "ssh":
					s.tags["egress"] = true
				case "curl":
					for _, a := range args {
						if a == "@-" || strings.HasSuffix(a, "=@-") || a == "-" {
							s.tags["egress"] = true
						}
					}
				}
			}
			if fetcher(c.cmd) || name == "nc" || name == "ncat" || name == "netcat" {
				fetched = true
			}
			// Literal text that flows on: echo/printf output, a here-doc,
			// or the same decoded by base64 -d.
			switch {
			case (name == "echo" || name == "printf") && len(cmds) == 1:
				payload, nextKnown = echoText(name, args), literalArgs(st)
			case name == "cat" && len(cmds) == 1 && c.stdin != "" && len(operands(wordsOf(args))) == 0:
				payload, nextKnown = c.stdin, true
			case name == "base64" && decodes(name, wordsOf(args)) && known:
				if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload)); err == nil {
					payload, nextKnown = string(d), true
				}
			}
		}
		known = nextKnown
		before = cmds
	}
}

// fetches reports whether a $(…) or <(…) downloads or decodes something:
// whether any command inside it, however deeply nested, is a download or a
// decoder. It runs after the walk, when every command is known, and
// remembers each substitution's answer, so nested substitutions cost one
// visit each.
func (s *shellScan) fetches(n syntax.Node) bool {
	if v, ok := s.memo[n]; ok {
		return v
	}
	found := false
	syntax.Walk(n, func(x syntax.Node) bool {
		if found {
			return false
		}
		switch x := x.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			if x != n {
				found = s.fetches(x)
				return false
			}
		case *syntax.CallExpr:
			for _, c := range s.byCall[x] {
				found = found || fetcher(c.cmd)
			}
		}
		return true
	})
	s.memo[n] = found
	return found
}

// fetcher reports a download or a decoder.
func fetcher(c ShellCommand) bool {
	return fetchCommands[c.Name] || decoders[c.Name] && decodes(c.Name, wordsOf(c.Args))
}

// runsSubst notes a word whose substitutions an interpreter, eval or a
// dynamic command name runs; if one of them downloads or decodes, the
// script pipes fetched code into a shell (judged after the walk).
func (s *shellScan) runsSubst(w *syntax.Word) {
	if w != nil {
		s.runs = append(s.runs, w)
	}
}

// judgeRuns tags pipe_to_shell for the noted words, once the walk is done.
func (s *shellScan) judgeRuns() {
	for _, w := range s.runs {
		syntax.Walk(w, func(x syntax.Node) bool {
			switch x.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
				if s.fetches(x) {
					s.tags["shell.pipe_to_shell"] = true
				}
				return false
			}
			return true
		})
	}
}

func (s *shellScan) url(raw string) {
	f, ts := ClassifyURL(raw)
	s.urls = append(s.urls, f)
	for _, t := range ts {
		s.tags[t] = true
	}
}

// sqlArgs classifies the SQL a database client is given on its command line
// (psql -c, mysql -e, sqlite3 DB "SQL").
func (s *shellScan) sqlArgs(name string, args []shWord) {
	var text []shWord
	switch name {
	case "psql", "clickhouse-client":
		if v, ok := optionValue(args, "c", "--command"); ok {
			text = append(text, v)
		}
		if v, ok := optionValue(args, "", "--query"); ok {
			text = append(text, v)
		}
	case "mysql", "mariadb":
		if v, ok := optionValue(args, "e", "--execute"); ok {
			text = append(text, v)
		}
	case "sqlcmd":
		if v, ok := optionValue(args, "Q", ""); ok {
			text = append(text, v)
		}
		if v, ok := optionValue(args, "q", ""); ok {
			text = append(text, v)
		}
	case "sqlite3", "duckdb":
		if ops := operands(args); len(ops) > 1 {
			text = append(text, shWord{text: ops[1], lit: true})
		}
	}
	for _, t := range text {
		if !t.lit {
			s.dyn("SQL from an expansion", posOf(t))
			continue
		}
		stmts, tags := ClassifySQL(t.text)
		s.sql = append(s.sql, stmts...)
		for _, tag := range tags {
			s.tags[tag] = true
			if tag == "sql.destructive" {
				s.tags["shell.destructive"] = true
			}
		}
	}
}

// find handles -delete and the commands -exec, -execdir, -ok and -okdir run.
func (s *shellScan) find(args []shWord, redirs []*syntax.Redirect, depth int) {
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-delete":
			s.tags["shell.destructive"] = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			if j > i+1 {
				nw := s.nameWord
				s.command(args[i+1:j], nil, depth+1)
				s.nameWord = nw
			}
			i = j
		}
	}
	s.leaf("find", args, redirs, depth)
}

// git judges force pushes, hard resets, forced cleans and commands hidden in
// -c options (aliases starting with "!", core.sshCommand, pagers, editors).
func (s *shellScan) git(args []shWord, depth int) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].text, "-") {
		switch a := args[i].text; {
		case a == "-c" && i+1 < len(args):
			if k, v, ok := strings.Cut(args[i+1].text, "="); ok {
				k = strings.ToLower(k)
				switch {
				case strings.HasPrefix(k, "alias.") && strings.HasPrefix(v, "!"):
					s.inline(shWord{text: v[1:], lit: args[i+1].lit}, depth)
				case strings.HasSuffix(k, "command") || strings.HasSuffix(k, "pager") || strings.HasSuffix(k, "editor") ||
					k == "core.fsmonitor" || strings.HasPrefix(k, "credential.") && strings.HasSuffix(k, "helper"):
					s.inline(shWord{text: strings.TrimPrefix(v, "!"), lit: args[i+1].lit}, depth)
				}
			}
			i += 2
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i += 2
		default:
			i++
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].text, args[i+1:]
	switch sub {
	case "push":
		s.tags["shell.network"] = true
		s.tags["egress"] = true
		if hasShort(rest, "fd") || hasLong(rest, "--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune") {
			s.tags["shell.destructive"] = true
		}
		for _, o := range operands(rest) {
			if strings.HasPrefix(o, "+") || strings.HasPrefix(o, ":") {
				s.tags["shell.destructive"] = true
			}
		}
	case "reset":
		if hasLong(rest, "--hard", "--merge", "--keep") {
			s.tags["shell.destructive"] = true
		}
	case "clean":
		if hasShort(rest, "f") || hasLong(rest, "--force") {
			s.tags["shell.destructive"] = true
		}
	case "branch":
		if hasShort(rest, "D") || hasLong(rest, "--delete") && hasLong(rest, "--force") {
			s.tags["shell.destructive"] = true
		}
	case "clone", "fetch", "pull", "ls-remote", "submodule":
		s.tags["shell.network"] = true
	}
}

// ---- argument helpers ----

// skipOptions drops leading options (and the values of those in withValue)
// and "--"; it returns the words from the wrapped command on.
func skipOptions(ws []shWord, withValue string) []shWord {
	for len(ws) > 0 {
		a := ws[0].text
		if a == "--" {
			return ws[1:]
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return ws
		}
		ws = ws[1:]
		if strings.HasPrefix(a, "--") {
			continue // long options take their value after '='
		}
		// A short group: the first letter that takes a value consumes the
		// rest of the group, or the next word.
		for i := 1; i < len(a); i++ {
			if strings.IndexByte(withValue, a[i]) >= 0 {
				if i == len(a)-1 && len(ws) > 0 {
					ws = ws[1:]
				}
				break
			}
		}
	}
	return ws
}

// skipUser drops runuser's and pkexec's "-u user" / "--user user".
func skipUser(ws []shWord) []shWord {
	for len(ws) > 1 && (ws[0].text == "-u" || ws[0].text == "--user" || ws[0].text == "-l") {
		ws = ws[2:]
	}
	return skipOptions(ws, "")
}

// envCommand reads env's options and assignments; it returns the wrapped
// command, or a script when env -S (split string) is used.
func envCommand(args []shWord) (rest []shWord, script shWord, isScript bool) {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "-S" || a == "--split-string":
			if i+1 < len(args) {
				joined := make([]string, 0, len(args)-i-1)
				for _, w := range args[i+1:] {
					joined = append(joined, w.text)
				}
				return nil, shWord{text: strings.Join(joined, " "), lit: allLiteral(args[i+1:])}, true
			}
		case strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "--split-string="):
			v := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string="), "-S")
			joined := []string{v}
			for _, w := range args[i+1:] {
				joined = append(joined, w.text)
			}
			return nil, shWord{text: strings.Join(joined, " "), lit: allLiteral(args[i:])}, true
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++
		case a == "--":
			return args[i+1:], shWord{}, false
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "=") && syntax.ValidName(a[:strings.IndexByte(a, '=')]):
		default:
			return args[i:], shWord{}, false
		}
	}
	return nil, shWord{}, false
}

var optionGroup = regexp.MustCompile(`^([-+][A-Za-z]+|--[a-z-]+)$`)

// shellScript finds the script a shell runs with -c (also in groups: -lc, -xec).
func shellScript(args []shWord) (shWord, bool) {
	for i, a := range args {
		t := a.text
		if t == "--" || !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
			return shWord{}, false
		}
		if !strings.HasPrefix(t, "--") && strings.Contains(t[1:], "c") {
			// The script is the first operand after the options.
			// Anything that is not plainly an option group is the script.
			for j := i + 1; j < len(args); j++ {
				b := args[j]
				if !optionGroup.MatchString(b.text) {
					return b, true
				}
				if b.text == "-o" || b.text == "+o" || b.text == "-O" || b.text == "+O" {
					j++
				}
			}
			return shWord{text: "", lit: true}, true
		}
		if t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file" {
			continue
		}
	}
	return shWord{}, false
}

// optionValue returns the value of a short option (-c VALUE, -cVALUE) or a
// long one (--command VALUE, --command=VALUE).
func optionValue(args []shWord, short, long string) (shWord, bool) {
	for i, a := range args {
		t := a.text
		switch {
		case long != "" && t == long && i+1 < len(args):
			return args[i+1], true
		case long != "" && strings.HasPrefix(t, long+"="):
			return shWord{text: t[len(long)+1:], lit: a.lit}, true
		case short != "" && t == "-"+short && i+1 < len(args):
			return args[i+1], true
		case short != "" && len(t) > 2 && strings.HasPrefix(t, "-"+short) && !strings.HasPrefix(t, "--"):
			return shWord{text: t[2:], lit: a.lit}, true
		}
	}
	return shWord{}, false
}

// sshRemote returns the remote command of an ssh invocation.
func sshRemote(args []shWord) []shWord {
	rest := skipOptions(args, "BbcDEeFIiJLlmOoPpQRSWw")
	if len(rest) > 1 {
		return rest[1:]
	}
	return nil
}

func hasShort(args []shWord, letters string) bool {
	for _, a := range args {
		t := a.text
		if t == "--" {
			return false
		}
		if len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsAny(t[1:], letters) {
			return true
		}
	}
	return false
}

func hasLong(args []shWord, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a.text == n || strings.HasPrefix(a.text, n+"=") {
				return true
			}
		}
	}
	return false
}

// sendsMethod reports a POST, PUT or PATCH given with -X / --request.
func sendsMethod(args []shWord, short, long string) bool {
	v, ok := optionValue(args, short, long)
	if !ok {
		return false
	}
	switch strings.ToUpper(v.text) {
	case "POST", "PUT", "PATCH":
		return true
	}
	return false
}

func operands(args []shWord) []string {
	var out []string
	dash := false
	for _, a := range args {
		if !dash && a.text == "--" {
			dash = true
			continue
		}
		if dash || !strings.HasPrefix(a.text, "-") || a.text == "-" {
			out = append(out, a.text)
		}
	}
	return out
}

func wordsOf(texts []string) []shWord {
	out := make([]shWord, len(texts))
	for i, t := range texts {
		out[i] = shWord{text: t, lit: true}
	}
	return out
}

// joinWords joins words into the one script that eval, watch or ssh runs.
func joinWords(ws []shWord) shWord {
	out := shWord{lit: true}
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
		out.lit = out.lit && w.lit
		out.expanded = out.expanded || w.expanded
		if !w.lit && out.node == nil {
			out.node = w.node
		}
	}
	out.text = strings.Join(texts, " ")
	return out
}

func allLiteral(ws []shWord) bool {
	for _, w := range ws {
		if !w.lit {
			return false
		}
	}
	return true
}

func isEvalLike(name string) bool {
	b := path.Base(name)
	return b == "eval" || b == "source" || b == "."
}

func isInterpreter(name string) bool {
	b := path.Base(name)
	return shells[b] || interpreters[interpreterName(b)] || privilegers[b]
}

// interpreterName drops a version suffix: python3.12 -> python.
func interpreterName(name string) string {
	return strings.TrimRight(name, "0123456789.")
}

// inlineCode reports code given on an interpreter's command line (python -c,
// perl -e, node -e, php -r), which rein does not read.
func inlineCode(name string, args []shWord) bool {
	if shells[name] {
		return false
	}
	switch interpreterName(name) {
	case "python":
		return hasShort(args, "c")
	case "php":
		return hasShort(args, "rB")
	case "pwsh", "powershell":
		return hasShort(args, "cCeE") || hasLong(args, "-Command", "-EncodedCommand")
	default:
		return hasShort(args, "eEp") || hasLong(args, "--eval", "--print")
	}
}

// readsCodeText reports whether an interpreter reads its program from
// standard input: no script operand, or "-" or /dev/stdin, or a shell's -s.
func readsCodeText(name string, args []string) bool {
	ws := wordsOf(args)
	if shells[name] && hasShort(ws, "s") {
		return true
	}
	if shells[name] {
		if _, ok := shellScript(ws); ok {
			return false
		}
	}
	if inlineCode(name, ws) {
		return false
	}
	ops := operands(ws)
	return len(ops) == 0 || ops[0] == "-" || ops[0] == "/dev/stdin"
}

// decodes reports whether base64 and friends are run to decode.
func decodes(name string, args []shWord) bool {
	switch name {
	case "xxd":
		return hasShort(args, "r")
	case "openssl":
		return hasShort(args, "d") || hasLong(args, "-d", "-base64", "-a")
	case "gunzip", "zcat", "bunzip2", "unxz", "uudecode":
		return true
	case "gzip", "bzip2", "xz":
		return hasShort(args, "d") || hasLong(args, "--decompress")
	}
	return hasShort(args, "dD") || hasLong(args, "--decode")
}

// echoText is what echo or printf would print, for literal arguments.
func echoText(name string, args []string) string {
	ops := args
	escapes := name == "printf"
	for len(ops) > 0 && name == "echo" && strings.HasPrefix(ops[0], "-") && strings.Trim(ops[0], "-neE") == "" {
		escapes = escapes || strings.Contains(ops[0], "e")
		ops = ops[1:]
	}
	text := strings.Join(ops, " ")
	if escapes {
		text = ansiC(text)
	}
	return text
}

// literalArgs reports whether every word of a statement's command is literal.
func literalArgs(st *syntax.Stmt) bool {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	for _, w := range ce.Args {
		if w.Lit() == "" {
			for _, p := range w.Parts {
				switch p.(type) {
				case *syntax.Lit, *syntax.SglQuoted:
				case *syntax.DblQuoted:
					for _, q := range p.(*syntax.DblQuoted).Parts {
						if _, ok := q.(*syntax.Lit); !ok {
							return false
						}
					}
				default:
					return false
				}
			}
		}
	}
	return true
}

// writeTargets are the files a command writes to.
func writeTargets(name string, args []shWord, ops []string) []string {
	if !writers[name] {
		return nil
	}
	switch name {
	case "dd":
		var out []string
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.text, "of="); ok {
				out = append(out, cleanShellPath(v))
			}
		}
		return out
	case "cp", "mv", "install", "ln", "rsync":
		if len(ops) > 1 {
			return []string{cleanShellPath(ops[len(ops)-1])}
		}
		return nil
	case "sed":
		if !hasShort(args, "i") && !hasLong(args, "--in-place") {
			return nil
		}
	}
	out := make([]string, 0, len(ops))
	for _, o := range ops {
		out = append(out, cleanShellPath(o))
	}
	return out
}

func cleanShellPath(p string) string {
	if p == "" {
		return p
	}
	return path.Clean(p)
}

func underAny(p string, roots ...string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// isSystemPath reports paths whose overwriting breaks the machine.
func isSystemPath(p string) bool {
	switch {
	case p == "/dev/null" || p == "/dev/zero" || p == "/dev/tty" || p == "/dev/stdout" || p == "/dev/stderr" ||
		p == "/dev/stdin" || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/dev/shm/") ||
		strings.HasPrefix(p, "/dev/pts/"):
		return false
	}
	return p == "/" || underAny(p, "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
		"/dev", "/sys", "/proc", "/var/lib", "/root")
}

// isRootLike reports / and the home directory in their common spellings.
func isRootLike(p string) bool {
	switch p {
	case "/", "/*", "~", "~/", "~/*", "/home", "/home/*", "/root":
		return true
	}
	return false
}

var remoteRe = regexp.MustCompile(`^([A-Za-z0-9._-]+@)?[A-Za-z0-9._-]+:|^[a-z0-9]+://`)

// isRemote reports an scp/rsync style remote operand (host:path, user@host:path, rsync://…).
func isRemote(op string) bool {
	return !strings.HasPrefix(op, "/") && !strings.HasPrefix(op, ".") && remoteRe.MatchString(op)
}

func looksLikePath(v string) bool {
	return strings.ContainsAny(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") ||
		sensitiveNames[v] || strings.HasPrefix(v, "id_")
}

// ---- quoting ----

// unescapeBare removes the backslashes of an unquoted literal (\rm -> rm) and
// reports whether it holds an unescaped glob character.
func unescapeBare(v string) (string, bool) {
	glob := false
	if !strings.ContainsAny(v, `\*?[`) {
		return v, false
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case c == '*' || c == '?' || c == '[' && strings.IndexByte(v[i+1:], ']') >= 0:
			glob = true // a lone [ (the test command) matches nothing
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), glob
}

// unescapeDouble removes the backslashes that escape $ ` " \ inside "…".
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes the escapes of $'…' (and of echo -e and printf).
func ansiC(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := v[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(v) && j-i-1 < max && strings.IndexByte("0123456789abcdefABCDEF", v[j]) >= 0 {
				j++
			}
			if n, err := strconv.ParseUint(v[i+1:j], 16, 32); err == nil {
				if e == 'x' {
					b.WriteByte(byte(n))
				} else {
					b.WriteRune(rune(n))
				}
				i = j - 1
			} else {
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}

func quoteShell(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return q
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	_ = syntax.NewPrinter(syntax.Minify(true)).Print(&b, n)
	return b.String()
}

func sortedTags(tags map[string]bool) []string {
	out := make([]string, 0, len(tags))
	for t := range tags {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// posOf is where a word was written, when rein knows.
func posOf(w shWord) syntax.Pos {
	if w.node != nil {
		return w.node.Pos()
	}
	return syntax.Pos{}
}

// fact is a shell command as the policy sees it (facts.shell.commands).
func (c ShellCommand) fact() map[string]any {
	args := make([]any, len(c.Args))
	for i, x := range c.Args {
		args[i] = x
	}
	redirects := make([]any, len(c.Redirects))
	for i, r := range c.Redirects {
		redirects[i] = map[string]any{"op": r.Op, "target": r.Target}
	}
	env := make(map[string]any, len(c.Env))
	for k, v := range c.Env {
		env[k] = v
	}
	reads := make([]any, len(c.Reads))
	for i, x := range c.Reads {
		reads[i] = x
	}
	writes := make([]any, len(c.Writes))
	for i, x := range c.Writes {
		writes[i] = x
	}
	return map[string]any{"name": c.Name, "args": args, "redirects": redirects, "env": env, "reads": reads,
		"writes": writes, "resolved": c.Resolved, "read_only": c.ReadOnly}
}

// dynamicFacts are the constructs behind shell.dynamic (facts.shell.dynamic).
func (f ShellFacts) dynamicFacts() []any {
	out := make([]any, len(f.Dynamic))
	for i, d := range f.Dynamic {
		out[i] = map[string]any{"construct": d.Construct, "at": d.At}
	}
	return out
}

// scriptsAt returns the script held by args[name]: a string as it is, and a
// list of strings as the one command it is when run as an argv (each element
// quoted, then joined), never as several scripts. A list with anything but
// strings is quoted as its JSON-like text, which rein reads as arguments.
func scriptsAt(args map[string]any, name string) []string {
	switch v := args[name].(type) {
	case string:
		return []string{v}
	case []any:
		if len(v) == 0 {
			return nil
		}
		words := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				s = fmt.Sprint(x)
			}
			words[i] = quoteShell(s)
		}
		return []string{strings.Join(words, " ")}
	}
	return nil
}
