package policy

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Lint finds rules that compile but cannot do what their author meant:
// rules whose condition is constantly false (they never match), and rules
// that a broader enforced deny always overrides (they can never decide).
// It detects the common shapes: constant conditions after constant folding,
// and deny rules whose whole condition is a test on the tool name.
func Lint(p *Policy) []Problem {
	var out []Problem
	constant := map[*Rule]constVal{}
	for _, r := range p.Rules {
		constant[r] = constantValue(r.whenAST)
		if v := constant[r]; v.known && !v.value {
			out = append(out, Problem{Rule: r.ID, Line: r.Line, Message: "unreachable: its condition is always false"})
		}
	}
	for _, r := range p.Rules {
		if r.Shadow || r.Decision == "" || r.Decision == "deny" {
			continue
		}
		if v := constant[r]; v.known && !v.value {
			continue
		}
		for _, d := range p.Rules {
			if d.Shadow || d.Decision != "deny" || d == r {
				continue
			}
			if covers(d, constant[d], r) {
				out = append(out, Problem{Rule: r.ID, Line: r.Line,
					Message: fmt.Sprintf("shadowed: rule %s (line %d) denies every check this rule matches, so its %s never applies", d.ID, d.Line, r.Decision)})
				break
			}
		}
	}
	return out
}

type constVal struct{ known, value bool }

// constantValue folds constants in a condition and reports its value if it
// does not depend on the check.
func constantValue(a *cel.Ast) constVal {
	e, err := env()
	if err != nil || a == nil {
		return constVal{}
	}
	folder, err := cel.NewConstantFoldingOptimizer()
	if err != nil {
		return constVal{}
	}
	opt, err := cel.NewStaticOptimizer(folder)
	if err != nil {
		return constVal{}
	}
	folded, iss := opt.Optimize(e, a)
	if iss != nil && iss.Err() != nil {
		return constVal{}
	}
	x := folded.NativeRep().Expr()
	if x.Kind() != ast.LiteralKind {
		return constVal{}
	}
	b, ok := x.AsLiteral().(types.Bool)
	return constVal{known: ok, value: bool(b)}
}

// covers reports whether deny rule d matches every check rule r matches.
func covers(d *Rule, dConst constVal, r *Rule) bool {
	if dConst.known && dConst.value {
		return true
	}
	if d.tool == nil || !d.tool.only || r.tool == nil {
		return false
	}
	if r.tool.names != nil {
		for _, n := range r.tool.names {
			if !d.tool.match(n) {
				return false
			}
		}
		return true
	}
	return d.tool.prefixOnly && r.tool.prefix != "" && len(r.tool.prefix) >= len(d.tool.prefix) &&
		r.tool.prefix[:len(d.tool.prefix)] == d.tool.prefix
}
