package policy

import "testing"

// TestStepUp: approval: {step_up: true} on a rule, or in the policy's
// defaults, reaches the approval; with several ask rules, any one that
// needs step-up makes the approval need it.
func TestStepUp(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want bool
	}{
		{"rule", header + "rules:\n- {id: pay, when: 'true', decision: ask, approval: {step_up: true}}\n", true},
		{"not asked", header + "rules:\n- {id: pay, when: 'true', decision: ask}\n", false},
		{"policy default", header + "approval: {step_up: true}\nrules:\n- {id: pay, when: 'true', decision: ask}\n", true},
		{"rule turns the default off", header + "approval: {step_up: true}\nrules:\n- {id: pay, when: 'true', decision: ask, approval: {step_up: false}}\n", false},
		{"one of two rules", header + "rules:\n- {id: a, when: 'true', decision: ask}\n- {id: b, when: 'true', decision: ask, approval: {step_up: true, approvers: ['group:finance']}}\n", true},
	}
	for _, c := range cases {
		res := decide(NewSet(mustCompile(t, c.src), nil), &Input{Tool: "pay"})
		if res.Approval == nil {
			t.Fatalf("%s: no approval: %+v", c.name, res)
		}
		if res.Approval.StepUp != c.want {
			t.Errorf("%s: step_up %v, want %v", c.name, res.Approval.StepUp, c.want)
		}
	}
	if _, err := Compile([]byte(header + "rules:\n- {id: a, when: 'true', decision: ask, approval: {step_up: yes-please}}\n")); err == nil {
		t.Error("step_up: yes-please accepted")
	}
	if _, err := Compile([]byte(header + "rules:\n- {id: a, when: 'true', decision: ask, approval: {step_up: true, approvers: [client]}}\n")); err == nil {
		t.Error("step_up with the client as approver accepted")
	}
}
