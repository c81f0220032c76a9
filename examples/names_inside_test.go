package examples

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/pipeline"
)

// TestSamplePolicyRefusesNamesInside: names that resolve to a private,
// loopback or metadata address by their spelling (wildcard DNS in every
// spelling, rebinding services, *.localhost, metadata names) are refused as
// a web tool's URL and never run unasked in a command.
func TestSamplePolicyRefusesNamesInside(t *testing.T) {
	set := samplePolicy(t)
	for _, h := range []string{"127.0.0.1.nip.io", "app-7f000001.nip.io", "169-254-169-254.sslip.io", "--1.sslip.io",
		"fe80--1.sslip.io", "make-1-2-3-4-rebind-127-0-0-1-rr.1u.ms", "7f000001.c0a80001.rbndr.us", "app.localhost",
		"foo.lvh.me", "metadata.google.internal", "instance-data.ec2.internal", "kubernetes.default.svc"} {
		for _, tool := range []string{"http.get", "web.fetch"} {
			args, _ := json.Marshal(map[string]string{"url": "https://" + h + "/latest"})
			sim, err := pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: tool, Agent: "agent", Args: args}, nil, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if sim.Decision != rein.Deny {
				t.Errorf("%s %s: %s by %q (risk %v), want deny", tool, h, sim.Decision, sim.Rule, sim.Risk)
			}
		}
		if sim := bashDecision(t, set, "curl -s https://"+h+"/latest"); sim.Decision == rein.Allow {
			t.Errorf("curl %s: allowed by %q", h, sim.Rule)
		}
	}
}
