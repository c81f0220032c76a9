package policy

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"

	"github.com/reinhq/rein/risk"
)

var (
	envOnce sync.Once
	envVal  *cel.Env
	envErr  error
)

// env is the CEL environment of policy.md: the variables of a check, the
// strings extension, glob and cidr_contains.
func env() (*cel.Env, error) {
	envOnce.Do(func() {
		envVal, envErr = cel.NewEnv(
			cel.Variable("tool", cel.StringType),
			cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("agent", cel.StringType),
			cel.Variable("tenant", cel.StringType),
			cel.Variable("intent", cel.StringType),
			cel.Variable("labels", cel.MapType(cel.StringType, cel.StringType)),
			cel.Variable("risk", cel.ListType(cel.StringType)),
			cel.Variable("facts", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("session", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("sandbox", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("cost", cel.DoubleType),
			cel.Variable("now", cel.TimestampType),
			ext.Strings(),
			cel.CrossTypeNumericComparisons(true),
			cel.Function("glob",
				cel.Overload("glob_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
					cel.BinaryBinding(func(p, s ref.Val) ref.Val {
						return types.Bool(risk.Glob(string(p.(types.String)), string(s.(types.String))))
					}))),
			cel.Function("cidr_contains",
				cel.Overload("cidr_contains_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
					cel.BinaryBinding(cidrContains))),
		)
	})
	return envVal, envErr
}

func cidrContains(c, i ref.Val) ref.Val {
	prefix, err := netip.ParsePrefix(string(c.(types.String)))
	if err != nil {
		return types.NewErr("cidr_contains: bad CIDR %q", string(c.(types.String)))
	}
	ip, err := netip.ParseAddr(string(i.(types.String)))
	if err != nil {
		return types.NewErr("cidr_contains: bad IP address %q", string(i.(types.String)))
	}
	return types.Bool(prefix.Masked().Contains(ip.Unmap()))
}

func program(expr string, want *cel.Type) (cel.Program, *cel.Ast, error) {
	e, err := env()
	if err != nil {
		return nil, nil, err
	}
	checked, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, nil, fmt.Errorf("%s", strings.ReplaceAll(iss.Err().Error(), "\n", " "))
	}
	if out := checked.OutputType(); !out.IsExactType(want) && !out.IsExactType(cel.DynType) {
		return nil, nil, fmt.Errorf("must give a %s, not a %s", want, out)
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if !boundedCost(e, checked) {
		opts = append(opts, cel.CostLimit(DefaultCostLimit))
	}
	prg, err := e.Program(checked, opts...)
	if err != nil {
		return nil, nil, err
	}
	return prg, checked, nil
}

// MaxInputSize bounds every string, list and map in args and facts: they
// come from a request body of at most 1 MiB (or are derived from it).
const MaxInputSize = 1 << 20

// sizeBounds are the largest sizes of the other variables, as the check's
// validation enforces them (labels, names) or rein produces them (risk tags).
var sizeBounds = map[string][2]uint64{ // variable -> {size, size of an element}
	"tool": {256, 0}, "agent": {256, 0}, "tenant": {64, 0}, "intent": {8192, 0},
	"labels": {64, 1024}, "risk": {256, 128}, "session": {16, 256}, "sandbox": {8, 256},
}

// boundedCost reports whether a condition provably stays under the cost
// limit for any input within MaxInputSize. Such conditions skip runtime cost
// tracking, which would double their evaluation time; the others (typically
// comprehensions over arguments) are tracked and stopped at the limit.
func boundedCost(e *cel.Env, a *cel.Ast) bool {
	est, err := e.EstimateCost(a, inputBounds{})
	return err == nil && est.Max <= DefaultCostLimit
}

type inputBounds struct{}

func (inputBounds) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	if b, ok := sizeBounds[path[0]]; ok {
		if len(path) == 1 {
			return &cost.SizeEstimate{Max: b[0]}
		}
		if b[1] > 0 {
			return &cost.SizeEstimate{Max: b[1]}
		}
	}
	return &cost.SizeEstimate{Max: MaxInputSize}
}

func (inputBounds) EstimateCallCost(function, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	return nil
}

func compileWhen(expr string) (cel.Program, *toolCond, *cel.Ast, error) {
	prg, a, err := program(expr, cel.BoolType)
	if err != nil {
		return nil, nil, nil, err
	}
	return prg, toolCondition(a.NativeRep().Expr()), a, nil
}

func compileReason(expr string) (cel.Program, error) {
	prg, _, err := program(expr, cel.StringType)
	return prg, err
}

// toolCond is a test on the tool name that a condition implies, taken from
// its top-level conjuncts of the forms tool == "x", tool.startsWith("x"),
// tool.endsWith("x"), glob("p", tool), tool in [...] and disjunctions of
// these. CEL's && is false as soon as one side is false, whatever errors the
// others raise, so skipping a rule whose tool test fails gives exactly the
// answer full evaluation would.
type toolCond struct {
	match func(string) bool
	// names, when non-nil, lists every tool name the condition can match.
	names []string
	// prefix, when set, is a prefix every matching tool name has.
	prefix string
	// prefixOnly is true when the test is exactly "starts with prefix".
	prefixOnly bool
	// only is true when the whole condition is this tool test.
	only bool
}

func toolCondition(e ast.Expr) *toolCond {
	cs := conjuncts(e)
	var tests []*toolCond
	for _, c := range cs {
		if t := toolTest(c); t != nil {
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		return nil
	}
	out := &toolCond{only: len(tests) == len(cs)}
	for _, t := range tests {
		if len(t.prefix) > len(out.prefix) {
			out.prefix = t.prefix
		}
		if t.names != nil && out.names == nil {
			out.names = t.names
		}
	}
	if len(tests) == 1 {
		out.match, out.prefixOnly = tests[0].match, tests[0].prefixOnly
	} else {
		out.match = func(tool string) bool {
			for _, t := range tests {
				if !t.match(tool) {
					return false
				}
			}
			return true
		}
	}
	if out.names != nil {
		var keep []string
		for _, n := range out.names {
			if out.match(n) {
				keep = append(keep, n)
			}
		}
		out.names = append([]string{}, keep...)
	}
	return out
}

func conjuncts(e ast.Expr) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == "_&&_" {
		var out []ast.Expr
		for _, a := range e.AsCall().Args() {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []ast.Expr{e}
}

func isTool(e ast.Expr) bool { return e.Kind() == ast.IdentKind && e.AsIdent() == "tool" }

func stringLit(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

func exactTool(name string) *toolCond {
	return &toolCond{match: func(t string) bool { return t == name }, names: []string{name}, prefix: name}
}

func toolTest(e ast.Expr) *toolCond {
	if e.Kind() != ast.CallKind {
		return nil
	}
	call := e.AsCall()
	args := call.Args()
	switch call.FunctionName() {
	case "_==_":
		if len(args) == 2 {
			if s, ok := stringLit(args[1]); ok && isTool(args[0]) {
				return exactTool(s)
			}
			if s, ok := stringLit(args[0]); ok && isTool(args[1]) {
				return exactTool(s)
			}
		}
	case "startsWith", "endsWith":
		if call.IsMemberFunction() && isTool(call.Target()) && len(args) == 1 {
			if s, ok := stringLit(args[0]); ok {
				if call.FunctionName() == "startsWith" {
					return &toolCond{match: func(t string) bool { return strings.HasPrefix(t, s) }, prefix: s, prefixOnly: true}
				}
				return &toolCond{match: func(t string) bool { return strings.HasSuffix(t, s) }}
			}
		}
	case "glob":
		if !call.IsMemberFunction() && len(args) == 2 && isTool(args[1]) {
			if p, ok := stringLit(args[0]); ok {
				lit := p
				if i := strings.IndexAny(p, `*?\`); i >= 0 {
					lit = p[:i]
				}
				return &toolCond{match: func(t string) bool { return risk.Glob(p, t) }, prefix: lit, prefixOnly: p == lit+"*"}
			}
		}
	case "@in":
		if len(args) == 2 && isTool(args[0]) && args[1].Kind() == ast.ListKind {
			set := map[string]bool{}
			var names []string
			for _, el := range args[1].AsList().Elements() {
				s, ok := stringLit(el)
				if !ok {
					return nil
				}
				set[s] = true
				names = append(names, s)
			}
			return &toolCond{match: func(t string) bool { return set[t] }, names: append([]string{}, names...), prefix: commonPrefix(names)}
		}
	case "_||_":
		var any []*toolCond
		var names []string
		allNamed := true
		for _, a := range args {
			t := toolTest(a)
			if t == nil {
				return nil // one side is not about the tool: no conclusion
			}
			any = append(any, t)
			allNamed = allNamed && t.names != nil
			names = append(names, t.names...)
		}
		c := &toolCond{match: func(t string) bool {
			for _, f := range any {
				if f.match(t) {
					return true
				}
			}
			return false
		}}
		if allNamed {
			c.names, c.prefix = names, commonPrefix(names)
		}
		return c
	}
	return nil
}

func commonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// Input is everything a condition may look at (policy.md, CEL environment).
type Input struct {
	Tool    string
	Args    map[string]any
	Agent   string
	Tenant  string
	Intent  string
	Labels  map[string]string
	Risk    []string
	Facts   map[string]any
	Session map[string]any
	// Sandbox is the containment the check's session runs in
	// (containment.md): {"contained", "profile", "fs", "net"}; set by rein
	// from the session, never by the client. Nil reads as not contained.
	Sandbox map[string]any
	Cost    float64
	Now     time.Time
}

// Uncontained is the sandbox variable of a check outside containment.
func Uncontained() map[string]any {
	return map[string]any{"contained": false, "profile": "", "fs": "host", "net": "host"}
}

// activation resolves the CEL variables of one check. Values are converted
// to CEL once per check and shared by every rule.
type activation struct {
	tool, agent, tenant, intent types.String
	args, labels, risk, facts   ref.Val
	session, sandbox            ref.Val
	cost                        types.Double
	now                         types.Timestamp
}

func newActivation(in *Input) *activation {
	adapt := types.DefaultTypeAdapter
	orEmpty := func(m map[string]any) map[string]any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	labels := in.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	riskTags := in.Risk
	if riskTags == nil {
		riskTags = []string{}
	}
	return &activation{
		tool: types.String(in.Tool), agent: types.String(in.Agent), tenant: types.String(in.Tenant),
		intent:  types.String(in.Intent),
		args:    adapt.NativeToValue(orEmpty(in.Args)),
		labels:  adapt.NativeToValue(labels),
		risk:    adapt.NativeToValue(riskTags),
		facts:   adapt.NativeToValue(orEmpty(in.Facts)),
		session: adapt.NativeToValue(orEmpty(in.Session)),
		sandbox: sandboxOf(in.Sandbox),
		cost:    types.Double(in.Cost),
		now:     types.Timestamp{Time: in.Now},
	}
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "tool":
		return a.tool, true
	case "args":
		return a.args, true
	case "agent":
		return a.agent, true
	case "tenant":
		return a.tenant, true
	case "intent":
		return a.intent, true
	case "labels":
		return a.labels, true
	case "risk":
		return a.risk, true
	case "facts":
		return a.facts, true
	case "session":
		return a.session, true
	case "sandbox":
		return a.sandbox, true
	case "cost":
		return a.cost, true
	case "now":
		return a.now, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// uncontained is the sandbox variable of every check outside containment,
// converted once.
var uncontained = types.DefaultTypeAdapter.NativeToValue(Uncontained())

func sandboxOf(m map[string]any) ref.Val {
	if m == nil {
		return uncontained
	}
	return types.DefaultTypeAdapter.NativeToValue(m)
}
