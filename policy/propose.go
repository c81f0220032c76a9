package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Exact names one action exactly: a tenant, an agent identity (its key
// name; its sub-agents "name/..." too), a tool and the arguments, compared
// in full. The tenant matters in the global tier, which decides every
// tenant's checks: another tenant may have a key of the same name.
type Exact struct {
	Tenant string
	Agent  string
	Tool   string
	Args   map[string]any
}

// Condition is the CEL condition true for exactly this action: the agent or
// one of its sub-agents, the tool, and arguments equal to Args, key by key
// and with no other key.
func (x Exact) Condition() (string, error) {
	parts := []string{
		"tenant == " + celString(x.Tenant),
		fmt.Sprintf("(agent == %s || agent.startsWith(%s))", celString(x.Agent), celString(x.Agent+"/")),
		"tool == " + celString(x.Tool),
		fmt.Sprintf("size(args) == %d", len(x.Args)),
	}
	keys := make([]string, 0, len(x.Args))
	for k := range x.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lit, err := celLiteral(x.Args[k])
		if err != nil {
			return "", fmt.Errorf("argument %q: %w", k, err)
		}
		parts = append(parts, fmt.Sprintf("args[%s] == %s", celString(k), lit))
	}
	return strings.Join(parts, " && "), nil
}

// celLiteral writes an argument value as a CEL literal that equals it:
// strings, integers and doubles as rein reads them (rein.ParseArgs),
// booleans, null, lists and maps, recursively.
func celLiteral(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(t), nil
	case string:
		return celString(t), nil
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64) + floatSuffix(t), nil
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return "", err
		}
		return celLiteral(f)
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case []any:
		items := make([]string, len(t))
		for i, e := range t {
			s, err := celLiteral(e)
			if err != nil {
				return "", err
			}
			items[i] = s
		}
		return "[" + strings.Join(items, ", ") + "]", nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make([]string, len(keys))
		for i, k := range keys {
			s, err := celLiteral(t[k])
			if err != nil {
				return "", err
			}
			items[i] = celString(k) + ": " + s
		}
		return "{" + strings.Join(items, ", ") + "}", nil
	}
	return "", fmt.Errorf("a %T cannot be written as a CEL literal", v)
}

// floatSuffix makes a whole number a double literal ("150" -> "150.0").
func floatSuffix(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if strings.ContainsAny(s, ".eE") || strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
		return ""
	}
	return ".0"
}

// celString is a CEL string literal of s: a JSON string is one (the
// escapes coincide for what JSON writes).
func celString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ProposeAllow returns src changed so that the exact action x is allowed:
// each rule named in asking (the rules that ask for it today) keeps asking
// for everything else (its when gets "&& !(exact)"), and a new rule ruleID
// allows the action. Comments and the order of the file are kept. The
// result is not compiled here; the caller compiles it and decides the action
// with it.
func ProposeAllow(src []byte, asking []string, x Exact, ruleID, description string) ([]byte, error) {
	cond, err := x.Condition()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("the policy cannot be read: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the policy is not a YAML mapping")
	}
	top := doc.Content[0]
	rules := mapValue(top, "rules")
	if rules == nil {
		rules = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "rules"}, rules)
	}
	if rules.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("rules is not a list")
	}
	found := map[string]bool{}
	for _, r := range rules.Content {
		if r.Kind != yaml.MappingNode {
			continue
		}
		id := mapValue(r, "id")
		if id == nil {
			continue
		}
		if id.Value == ruleID {
			return nil, fmt.Errorf("the policy already has a rule %q", ruleID)
		}
		if !contains(asking, id.Value) {
			continue
		}
		when := mapValue(r, "when")
		if when == nil || when.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("rule %q has no when to narrow", id.Value)
		}
		when.Value = "(" + when.Value + ") && !(" + cond + ")"
		when.Style = yaml.SingleQuotedStyle
		if strings.Contains(when.Value, "\n") {
			when.Style = yaml.LiteralStyle
		}
		found[id.Value] = true
	}
	for _, id := range asking {
		if !found[id] {
			return nil, fmt.Errorf("rule %q is not in this policy tier", id)
		}
	}
	str := func(v string, style yaml.Style) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: style}
	}
	rule := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		str("id", 0), str(ruleID, 0),
		str("description", 0), str(description, yaml.DoubleQuotedStyle),
		str("when", 0), str(cond, yaml.SingleQuotedStyle),
		str("decision", 0), str("allow", 0),
	}}
	rules.Content = append(rules.Content, rule)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	enc.Close()
	return out.Bytes(), nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// LineDiff shows how b differs from a, line by line: removed lines with
// "-", added ones with "+", two lines of context around each change and
// "@@" between distant changes.
func LineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	type op struct {
		kind byte
		line string
	}
	var ops []op
	for _, l := range x[:pre] {
		ops = append(ops, op{' ', l})
	}
	if len(mx)*len(my) > 4_000_000 { // too large to align: all out, all in
		for _, l := range mx {
			ops = append(ops, op{'-', l})
		}
		for _, l := range my {
			ops = append(ops, op{'+', l})
		}
	} else {
		// Longest common subsequence of the middle lines.
		n, m := len(mx), len(my)
		lcs := make([][]int, n+1)
		for i := range lcs {
			lcs[i] = make([]int, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				ops = append(ops, op{' ', mx[i]})
				i, j = i+1, j+1
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', mx[i]})
				i++
			default:
				ops = append(ops, op{'+', my[j]})
				j++
			}
		}
	}
	for _, l := range x[len(x)-suf:] {
		ops = append(ops, op{' ', l})
	}
	const context = 2
	keep := make([]bool, len(ops))
	for i, o := range ops {
		if o.kind != ' ' {
			for k := max(0, i-context); k <= min(len(ops)-1, i+context); k++ {
				keep[k] = true
			}
		}
	}
	var out strings.Builder
	out.WriteString("--- current\n+++ proposed\n")
	gap := true
	for i, o := range ops {
		if !keep[i] {
			gap = true
			continue
		}
		if gap {
			out.WriteString("@@\n")
			gap = false
		}
		out.WriteByte(o.kind)
		out.WriteString(o.line)
		out.WriteByte('\n')
	}
	return out.String()
}
