package risk

import (
	"maps"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The constructs of bash whose effect depends on values rein does not
// follow: arithmetic (which evaluates variables' values as expressions, so
// x='a[$(cmd)]'; $((x)) runs cmd), subscripts, prompt and escape
// transformations, indirection, namerefs, coproc, and assignments to the
// variables that change what runs. Each is recorded in facts.shell.dynamic
// with shell.dynamic, or tagged shell.env_exec. Sources: bash(1),
// "ARITHMETIC EVALUATION" (variables are evaluated as expressions),
// "Arrays" (subscripts are arithmetic), "Parameter transformation" (@P
// expands like a prompt, running $(…)), "PARAMETERS" (namerefs,
// indirection), "SHELL BUILTIN COMMANDS" (let, declare -i/-n, test -v).

// setVar notes that the script sets a variable (an assignment, a prefix
// assignment, env, export, declare, read, printf -v, for): a name that
// changes what runs makes the script shell.env_exec, and one the shell runs
// or expands as code (PROMPT_COMMAND, PS4, BASH_ENV) also shell.dynamic.
func (s *shellScan) setVar(name, value string, lit bool, at syntax.Pos) {
	if s.numeric != nil {
		delete(s.numeric, name)
	}
	if lit && isNumber(value) {
		if s.numeric == nil {
			s.numeric = map[string]bool{}
		}
		s.numeric[name] = true
	}
	r, ok := envExec(name)
	if !ok {
		return
	}
	s.tags["shell.env_exec"] = true
	if r.hook {
		s.dyn("assignment to "+name, at)
	}
}

// export records a variable the script exports: every later command gets it.
func (s *shellScan) export(name, value string) {
	if s.exported == nil {
		s.exported = map[string]string{}
	}
	s.exported[name] = value
}

// decl reads declare, typeset, local, export, readonly and nameref: their
// assignments, the variables they export (-x, export), namerefs (-n) and
// integer variables (-i, whose values are arithmetic), and the forms that
// print every variable (export -p, declare -x alone), a read of the
// environment.
func (s *shellScan) decl(d *syntax.DeclClause) {
	variant := "declare"
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	flags := ""
	named := 0
	for _, a := range d.Args {
		if a.Name == nil && a.Naked && a.Value != nil {
			w := s.word(a.Value)
			if !w.lit {
				s.dyn(variant+" with arguments rein cannot read", a.Pos())
				continue
			}
			if strings.HasPrefix(w.text, "-") {
				flags += w.text[1:]
				continue
			}
			if strings.HasPrefix(w.text, "+") {
				continue
			}
			// declare "$x" or declare 'a=b' given as one word. The
			// builtin parses the word itself: a subscript in it is
			// evaluated (declare 'a[$(id)]=1' runs id), and so is a
			// compound value of an array (declare -a 'a=([0]=$(id))').
			name, v, _ := strings.Cut(w.text, "=")
			if strings.Contains(name, "[") {
				s.dyn(variant+" of a quoted subscripted name", a.Pos())
			}
			if strings.HasPrefix(v, "(") {
				s.dyn(variant+" of a quoted compound value", a.Pos())
			}
			named++
			s.setVar(name, v, true, a.Pos())
			continue
		}
		if a.Name != nil {
			named++
		}
	}
	exports := variant == "export" || strings.Contains(flags, "x")
	for _, a := range d.Args {
		if a.Name == nil {
			continue
		}
		if strings.ContainsAny(flags, "aA") && a.Value != nil {
			// declare -a a='([0]=$(id))': a quoted value of an array is
			// parsed as a compound assignment, its subscripts evaluated.
			if w := s.word(a.Value); !w.lit || strings.HasPrefix(strings.TrimSpace(w.text), "(") || strings.Contains(w.text, "[") {
				s.dyn(variant+" -"+flags+" with a value rein does not read as a list", a.Pos())
			}
		}
		if strings.Contains(flags, "i") {
			if s.integers == nil {
				s.integers = map[string]bool{}
			}
			s.integers[a.Name.Value] = true
		}
	}
	if variant == "nameref" || strings.Contains(flags, "n") {
		s.dyn(variant+" -n (nameref)", d.Pos())
	}
	for _, a := range d.Args {
		if a.Name == nil {
			continue
		}
		s.assign(a)
		if strings.Contains(flags, "i") && a.Value != nil {
			if w := s.word(a.Value); !w.lit || !isNumber(w.text) && !s.numericName(w.text) {
				s.dyn(variant+" -i on a value rein does not know", a.Pos())
			}
		}
		if exports {
			v := ""
			if a.Value != nil {
				v = s.word(a.Value).text
			} else if x, ok := s.vars[a.Name.Value]; ok {
				v = x
			}
			s.export(a.Name.Value, v)
		}
	}
	if named == 0 && !strings.ContainsAny(flags, "fF") && variant != "local" {
		s.tags["shell.secrets"] = true // prints variables, the environment's secrets included
	}
}

// arithSafe reports whether evaluating an arithmetic expression only sees
// numbers rein knows: literals, and variables assigned numbers in the
// script. Assignments inside it (i=0, i++) make their variable numeric.
func (s *shellScan) arithSafe(e syntax.ArithmExpr) bool {
	switch e := e.(type) {
	case nil:
		return true
	case *syntax.BinaryArithm:
		if arithAssign[e.Op] {
			ok := s.arithSafe(e.Y)
			name := arithName(e.X)
			if name == "" {
				return false
			}
			if e.Op != syntax.Assgn {
				ok = ok && s.numericName(name)
			}
			if ok {
				if s.numeric == nil {
					s.numeric = map[string]bool{}
				}
				s.numeric[name] = true
			}
			return ok
		}
		return s.arithSafe(e.X) && s.arithSafe(e.Y)
	case *syntax.UnaryArithm:
		return s.arithSafe(e.X)
	case *syntax.ParenArithm:
		return s.arithSafe(e.X)
	case *syntax.Word:
		return s.arithWord(e)
	}
	return false
}

// arithWord judges one operand of an arithmetic expression.
func (s *shellScan) arithWord(w *syntax.Word) bool {
	if w == nil {
		return true
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if !isNumber(v) && !s.numericName(v) {
				return false
			}
		case *syntax.ParamExp:
			if p.Param == nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Excl || p.Names != 0 {
				return false
			}
			if p.Length {
				continue // ${#x} is a number
			}
			if p.Index != nil {
				return false
			}
			if !s.numericName(p.Param.Value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// arithAssign are the assignment operators of bash arithmetic.
var arithAssign = map[syntax.BinAritOperator]bool{syntax.Assgn: true, syntax.AddAssgn: true, syntax.SubAssgn: true,
	syntax.MulAssgn: true, syntax.QuoAssgn: true, syntax.RemAssgn: true, syntax.AndAssgn: true, syntax.OrAssgn: true,
	syntax.XorAssgn: true, syntax.ShlAssgn: true, syntax.ShrAssgn: true, syntax.AndBoolAssgn: true,
	syntax.OrBoolAssgn: true, syntax.XorBoolAssgn: true, syntax.PowAssgn: true}

// arithName is the variable an arithmetic assignment sets.
func arithName(x syntax.ArithmExpr) string {
	if w, ok := x.(*syntax.Word); ok && len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && syntax.ValidName(l.Value) {
			return l.Value
		}
	}
	return ""
}

// numericSpecial are the shell's parameters that always hold numbers.
var numericSpecial = set("#", "?", "$", "!", "RANDOM", "LINENO", "SECONDS", "BASHPID", "PPID", "UID", "EUID",
	"EPOCHSECONDS", "SRANDOM", "COLUMNS", "LINES", "SHLVL", "OPTIND")

func (s *shellScan) numericName(name string) bool {
	if numericSpecial[name] || s.numeric[name] {
		return true
	}
	v, ok := s.vars[name]
	return ok && isNumber(v)
}

// isNumber reports an integer as bash's arithmetic reads it (decimal, 0x
// hex, octal, base#digits), or the empty string (which is 0).
func isNumber(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	v = strings.TrimLeft(v, "+-")
	if base, digits, ok := strings.Cut(v, "#"); ok {
		if _, err := strconv.Atoi(base); err != nil || digits == "" {
			return false
		}
		for _, c := range digits {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '@' || c == '_') {
				return false
			}
		}
		return true
	}
	_, err := strconv.ParseInt(v, 0, 64)
	return err == nil
}

// paramExp judges a ${…} expansion: subscripts and substring offsets are
// arithmetic; ${!x} and the @P, @E, @A, @K transformations are not modelled.
func (s *shellScan) paramExp(p *syntax.ParamExp) {
	if p.Excl && p.Names == 0 && p.Index == nil {
		s.dyn("indirection ${!name}", p.Pos())
	}
	if p.Index != nil {
		if w, ok := p.Index.(*syntax.Word); !ok || (w.Lit() != "@" && w.Lit() != "*") {
			if !s.arithSafe(p.Index) {
				s.dyn("array subscript rein does not know", p.Pos())
			}
		}
	}
	if p.Slice != nil && (!s.arithSafe(p.Slice.Offset) || !s.arithSafe(p.Slice.Length)) {
		s.dyn("substring offset rein does not know", p.Pos())
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps {
		op := ""
		if p.Exp.Word != nil {
			op = p.Exp.Word.Lit()
		}
		switch op {
		case "Q", "U", "u", "L", "a", "k":
		default:
			s.dyn("transformation ${name@"+op+"}", p.Pos())
		}
	}
	if p.NestedParam != nil || p.Flags != nil {
		s.dyn("nested expansion", p.Pos())
	}
}

// binaryTest judges [[ a -eq b ]] and its siblings, whose operands bash
// evaluates as arithmetic.
func (s *shellScan) binaryTest(b *syntax.BinaryTest) {
	switch b.Op {
	case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
		for _, x := range []syntax.TestExpr{b.X, b.Y} {
			w, ok := x.(*syntax.Word)
			if !ok || !s.arithWordOrKnown(w) {
				s.dyn("[[ "+b.Op.String()+" ]] on a value rein does not know", b.Pos())
				return
			}
		}
	}
}

// arithWordOrKnown: a [[ ]] operand is safe when it is arithmetic-safe as
// written or its value, once expanded, is a number.
func (s *shellScan) arithWordOrKnown(w *syntax.Word) bool {
	if s.arithWord(w) {
		return true
	}
	x := s.word(w)
	return x.lit && isNumber(x.text)
}

// mergeEnv returns the union of two environments (b wins), nil when both
// are empty; the maps it is given are not changed.
func mergeEnv(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// withEnv returns env with name set, copying it so that the caller's map
// is left as it was.
func withEnv(env map[string]string, name, value string) map[string]string {
	out := make(map[string]string, len(env)+1)
	maps.Copy(out, env)
	out[name] = value
	return out
}

// shadowed clears Resolved and ReadOnly for commands whose name the script
// defines as a function or alias (anywhere: rein does not follow the order
// in which definitions and calls run).
func (s *shellScan) shadowed() {
	if len(s.funcs) == 0 {
		return
	}
	for i := range s.cmds {
		if s.funcs[s.cmds[i].Name] {
			s.cmds[i].Resolved, s.cmds[i].ReadOnly = false, false
		}
	}
}

// envAssigns returns the NAME=value words env reads before the command it
// runs.
func envAssigns(args []shWord) []shWord {
	var out []shWord
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++
		case a == "--":
			return out
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "=") && syntax.ValidName(a[:strings.IndexByte(a, '=')]):
			out = append(out, args[i])
		default:
			return out
		}
	}
	return out
}

// builtin judges the builtins that assign variables by name (read, printf
// -v, mapfile, getopts: a name with a subscript is arithmetic), run code
// later (trap, mapfile -C), change which program a name runs (hash -p,
// enable) or evaluate a subscript (unset, test -v).
func (s *shellScan) builtin(name string, args []shWord, depth int) {
	ops := operands(args)
	subscript := func(v string, at shWord) {
		if strings.Contains(v, "[") {
			s.dyn(name+" of a subscripted name", posOf(at))
		}
	}
	switch name {
	case "trap":
		rest := skipOptions(args, "")
		if len(rest) < 2 || rest[0].text == "-" || rest[0].text == "" && rest[0].lit {
			return // trap -p, trap - SIG, trap '' SIG: nothing runs
		}
		s.dyn("trap", posOf(rest[0]))
		s.inline(rest[0], depth)
	case "hash":
		if hasShort(args, "p") {
			s.dyn("hash -p", posOf(args[0]))
			if s.funcs == nil {
				s.funcs = map[string]bool{}
			}
			for _, o := range ops {
				s.funcs[o] = true
			}
		}
	case "enable":
		if len(args) > 0 {
			s.dyn("enable", posOf(args[0]))
		}
	case "read", "mapfile", "readarray", "getopts":
		if name != "getopts" && hasShort(args, "C") {
			s.dyn(name+" -C", posOf(args[0]))
		}
		rest := skipOptions(args, "adinNptuCcs")
		if name == "getopts" {
			if len(rest) < 2 {
				return
			}
			rest = rest[1:2]
		}
		for _, a := range rest {
			if !a.lit {
				s.dyn(name+" into a name rein cannot read", posOf(a))
				continue
			}
			subscript(a.text, a)
			s.setVar(a.text, "", false, posOf(a))
			delete(s.vars, a.text)
		}
		if name != "getopts" {
			for i, a := range args {
				if a.text == "-a" && i+1 < len(args) {
					s.setVar(args[i+1].text, "", false, posOf(args[i+1]))
				}
			}
		}
	case "printf":
		if v, ok := optionValue(args, "v", ""); ok {
			if !v.lit {
				s.dyn("printf -v into a name rein cannot read", posOf(v))
				return
			}
			subscript(v.text, v)
			s.setVar(v.text, "", false, posOf(v))
			delete(s.vars, v.text)
		}
	case "unset":
		for _, a := range args {
			subscript(a.text, a)
		}
	case "test", "[":
		for i, a := range args {
			if (a.text == "-v" || a.text == "-R") && i+1 < len(args) {
				subscript(args[i+1].text, args[i+1])
				if !args[i+1].lit {
					s.dyn(name+" -v of a name rein cannot read", posOf(args[i+1]))
				}
			}
		}
	}
}
