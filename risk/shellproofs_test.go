package risk

import (
	"strings"
	"testing"
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
