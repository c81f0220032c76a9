package examples

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/internal/dnstest"
	"github.com/reinhq/rein/pipeline"
)

func TestMain(m *testing.M) {
	dns, err := dnstest.Start(dnstest.Internet)
	if err != nil {
		fmt.Fprintln(os.Stderr, "DNS server:", err)
		os.Exit(1)
	}
	lookup, err := egress.DNSResolver(dns.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "resolver:", err)
		os.Exit(1)
	}
	pipeline.UseResolver(lookup)
	code := m.Run()
	dns.Close()
	os.Exit(code)
}

// TestSamplePolicyResolvesNames: the sample policy looks up the names of
// its web tools and judges every address: a public-looking name that
// leads inside (directly, through a CNAME chain, or with one private
// address among public ones) is refused; a name that does not resolve
// (no such name, a failing or silent server) asks, since rein cannot tell
// where it leads; a public name runs.
func TestSamplePolicyResolvesNames(t *testing.T) {
	set := samplePolicy(t)
	tools := []string{"http.get", "web.fetch", "WebFetch", "fetch", "fetch.fetch", "mcp__fetch__fetch"}
	decide := func(tool, host string) *pipeline.Simulation {
		args, _ := json.Marshal(map[string]string{"url": "https://" + host + "/v1/data"})
		sim, err := pipeline.Simulate(set, "default", &rein.CheckRequest{Tool: tool, Agent: "agent", Args: args}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return sim
	}
	for _, host := range dnstest.Inside {
		for _, tool := range tools {
			if sim := decide(tool, host); sim.Decision != rein.Deny || sim.Rule != "private-addresses" {
				t.Errorf("%s %s: %s by %q (risk %v), want deny by private-addresses", tool, host, sim.Decision, sim.Rule, sim.Risk)
			}
		}
	}
	for _, host := range dnstest.Unresolved {
		for _, tool := range tools[:2] { // a silent server costs the 2 s limit each
			if sim := decide(tool, host); sim.Decision != rein.Ask || !contains(sim.Risk, "url.unresolved") {
				t.Errorf("%s %s: %s by %q (risk %v), want ask with url.unresolved", tool, host, sim.Decision, sim.Rule, sim.Risk)
			}
		}
	}
	for _, tool := range []string{"http.get", "web.fetch"} {
		if sim := decide(tool, "api.public-cdn.com"); sim.Decision != rein.Allow {
			t.Errorf("%s of a public name: %s by %q (risk %v), want allow", tool, sim.Decision, sim.Rule, sim.Risk)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
