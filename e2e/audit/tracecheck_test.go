package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// An external trace checker reads only the exported bundle. It knows
// nothing of rein's code: it turns the entries into a trace (one event per
// entry, keyed by check, approval and lock) and applies four rules to it.
// The test stages an honest run and four dishonest ones and shows that the
// checker flags exactly the dishonest runs, from the bundle alone.

const tracePolicy = `version: 1
default: deny
rules:
  - {id: reads, when: 'tool == "fs.read"', decision: allow}
  - {id: pay, when: 'tool == "pay"', decision: ask, approval: {approvers: ["group:finance"], grant_ttl: 2s}}
`

// traceEvent is one audit entry as the checker sees it.
type traceEvent struct {
	Index   int64          `json:"index"`
	TS      time.Time      `json:"ts"`
	Kind    string         `json:"kind"`
	Actor   string         `json:"actor"`
	Subject string         `json:"subject"`
	Data    map[string]any `json:"data"`
}

// checkTrace applies the checker's rules and returns findings per check id.
func checkTrace(events []traceEvent) map[string][]string {
	checks := map[string]traceEvent{}
	grantEnds := map[string]time.Time{} // approval -> grant window end
	var locks []traceEvent
	results := map[string][]traceEvent{}
	for _, e := range events {
		switch e.Kind {
		case "check":
			checks[e.Subject] = e
		case "approval.resolved":
			if s, _ := e.Data["grant_expires_at"].(string); s != "" {
				end, _ := time.Parse(time.RFC3339Nano, s)
				grantEnds[e.Subject] = end
			}
		case "lock.created":
			locks = append(locks, e)
		case "check.result":
			results[e.Subject] = append(results[e.Subject], e)
		}
	}
	findings := map[string][]string{}
	flag := func(id, what string) { findings[id] = append(findings[id], what) }
	for id, rs := range results {
		c := checks[id]
		// Rule 1: what ran is what was allowed.
		for _, r := range rs {
			if ex, _ := r.Data["executed_args_hash"].(string); ex != "" && ex != r.Data["allowed_args_hash"] {
				flag(id, "ran-different-action")
			}
		}
		// Rule 2: one allow, one run.
		if len(rs) > 1 {
			flag(id, "grant-reused")
		}
		// Rule 3: a run needs an allow; one reported past the grant window of
		// the approval the check waited on ran after expiry.
		if d := c.Data["decision"]; d != "allow" && d != "modify" {
			flag(id, "ran-without-allow")
			if apr, _ := c.Data["approval_id"].(string); apr != "" {
				if end, ok := grantEnds[apr]; ok && rs[0].TS.After(end) {
					flag(id, "ran-after-expiry")
				}
			}
		}
		// Rule 4: a lock on the agent between the allow and the run.
		agent, _ := c.Data["agent"].(string)
		for _, l := range locks {
			target, _ := l.Data["target"].(map[string]any)
			a, _ := target["agent"].(string)
			if (a == "" || a == agent || strings.HasPrefix(agent, a+"/")) && l.TS.After(c.TS) && rs[len(rs)-1].TS.After(l.TS) {
				flag(id, "ran-after-lock")
			}
		}
	}
	return findings
}

func TestTraceCheckerCatchesFromTheBundleAlone(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, tracePolicy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	admin := s.AdminKey()
	agent := harness.AgentKey(t, s, admin, "builder", "acme")
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", admin, []byte(`{"name":"fin","tenant":"acme","roles":["approver"],"groups":["finance"]}`), "application/json")
	if code != 201 {
		t.Fatalf("approver key: %d %s", code, body)
	}
	var created struct{ Key string }
	json.Unmarshal(body, &created)
	fin := created.Key

	check := func(tool, args string) map[string]any {
		t.Helper()
		code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/check", agent, []byte(fmt.Sprintf(`{"tool":%q,"args":%s,"session":"trace"}`, tool, args)), "application/json")
		var a map[string]any
		if json.Unmarshal(body, &a) != nil || code != 200 {
			t.Fatalf("check: %d %s", code, body)
		}
		return a
	}
	vote := func(id, body string) {
		t.Helper()
		if code, out := harness.HTTPDo(t, "POST", s.URL+"/v1/approvals/"+id+"/votes", fin, []byte(body), "application/json"); code != 200 {
			t.Fatalf("vote: %d %s", code, out)
		}
	}
	result := func(id, args string) {
		t.Helper()
		code, out := harness.HTTPDo(t, "POST", s.URL+"/v1/checks/"+id+"/result", agent, []byte(`{"status":"succeeded","args":`+args+`}`), "application/json")
		if code != 204 && code != 409 {
			t.Fatalf("result: %d %s", code, out)
		}
	}
	approvalOf := func(a map[string]any) string { return a["approval"].(map[string]any)["id"].(string) }

	// Honest: allowed, ran as allowed.
	honest := check("fs.read", `{"path":"README.md"}`)
	result(honest["id"].(string), `{"path":"README.md"}`)

	// Edited away: the approver changed the payee; the agent ran the original.
	ask := check("pay", `{"amount":100,"to":"mallory"}`)
	vote(approvalOf(ask), `{"vote":"edit","args":{"amount":100,"to":"acme-supplies"}}`)
	edited := check("pay", `{"amount":100,"to":"mallory"}`)
	if edited["decision"] != "allow" {
		t.Fatalf("the edited grant: %v", edited)
	}
	result(edited["id"].(string), `{"amount":100,"to":"mallory"}`)

	// Grant reused: one allow, run twice.
	ask = check("pay", `{"amount":20,"to":"acme"}`)
	vote(approvalOf(ask), `{"vote":"approve"}`)
	reused := check("pay", `{"amount":20,"to":"acme"}`)
	result(reused["id"].(string), `{"amount":20,"to":"acme"}`)
	result(reused["id"].(string), `{"amount":20,"to":"acme"}`)

	// After expiry: approved, never re-submitted, run once the grant window closed.
	expired := check("pay", `{"amount":30,"to":"acme"}`)
	vote(approvalOf(expired), `{"vote":"approve"}`)
	time.Sleep(2500 * time.Millisecond)
	result(expired["id"].(string), `{"amount":30,"to":"acme"}`)

	// After a lock: allowed, then the agent was stopped, then it ran.
	locked := check("fs.read", `{"path":"plan.txt"}`)
	if code, out := harness.HTTPDo(t, "POST", s.URL+"/v1/locks", admin, []byte(`{"tenant":"acme","target":{"agent":"builder"},"reason":"incident"}`), "application/json"); code != 201 {
		t.Fatalf("lock: %d %s", code, out)
	}
	result(locked["id"].(string), `{"path":"plan.txt"}`)

	harness.SealedCheckpoint(t, s, admin, harness.AuditSize(t, s, admin))
	bundle := filepath.Join(t.TempDir(), "bundle")
	if r := harness.Rein(t, s.ClientEnv(admin), "audit", "export", "--out", bundle); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	f, err := os.Open(filepath.Join(bundle, "entries.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []traceEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e traceEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bundle line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	findings := checkTrace(events)
	want := map[string][]string{
		edited["id"].(string):  {"ran-different-action"},
		reused["id"].(string):  {"grant-reused"},
		expired["id"].(string): {"ran-without-allow", "ran-after-expiry"},
		locked["id"].(string):  {"ran-after-lock"},
	}
	for id, w := range want {
		got := findings[id]
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("check %s: the checker found %v, want %v", id, got, w)
		}
	}
	if got := findings[honest["id"].(string)]; len(got) > 0 {
		t.Errorf("the honest run was flagged: %v", got)
	}
	if len(findings) != len(want) {
		t.Errorf("findings for %d checks, want %d: %v", len(findings), len(want), findings)
	}
}
