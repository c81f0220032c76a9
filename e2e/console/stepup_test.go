package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	"github.com/reinhq/rein/internal/testidp"
)

const stepUpPolicy = `version: 1
default: deny
rules:
  - id: pay
    when: 'tool == "pay"'
    decision: ask
    reason: "payments need finance, confirmed with a passkey"
    approval: {approvers: ["group:finance"], quorum: 1, ttl: 15m, grant_ttl: 10m, step_up: true}
`

// TestStepUpWithPasskeyInChromium: in Chromium with a virtual authenticator
// (DevTools protocol), an approver signs in with the company's identity
// provider from the approval's link, is refused an approval that needs
// step-up until she has a passkey, adds one on the Passkeys page, and then
// approves with it: the waiting agent gets allow, and the audit log has
// the passkey and the vote confirmed with it. Her captured confirmation is
// refused on another approval, and tampered with.
func TestStepUpWithPasskeyInChromium(t *testing.T) {
	// Not side by side with the others: its agent waits on one request
	// with the suite's 15 s client timeout while the browser signs in and
	// adds a passkey, which under the parallel browser tests took longer.
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	// WebAuthn needs a host name, not an IP address: the browser and the
	// links use localhost.
	base := "http://localhost:" + port
	idp := testidp.Start(t, []string{base + "/sign-in/oidc/callback"}, idpPeople...)
	pol := filepath.Join(dir, "policy.yaml")
	harness.WriteFile(t, pol, stepUpPolicy)
	cfg := filepath.Join(dir, "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf(`base_url: %s
oidc:
  issuer: %s
  client_id: %s
  scopes: [openid, email, groups]
  label: Example SSO
  tenant: acme
  groups:
    finance-approvers: {roles: [approver], groups: [finance]}
`, base, idp.Issuer, idp.ClientID))
	s := harness.StartServer(t, filepath.Join(dir, "data"), []string{"REIN_OIDC_CLIENT_SECRET=" + idp.ClientSecret},
		"--policy", pol, "--config", cfg, "--listen", addr)
	s.URL = base
	e := &harness.ApprovalEnv{T: t, S: s, Keys: map[string]string{}}
	code, body := harness.HTTPDo(t, "POST", s.URL+"/v1/keys", s.AdminKey(), []byte(`{"name":"builder","tenant":"acme","roles":["agent"]}`), "application/json")
	if code != 201 {
		t.Fatalf("create key: %d %s", code, body)
	}
	var created struct{ Key string }
	json.Unmarshal(body, &created)
	e.Keys["builder"] = created.Key

	var id string
	waited := make(chan map[string]any, 1)
	ce := &harness.ConsoleEnv{T: t, S: s, Keys: map[string]string{}}
	ce.RunBrowser("stepup.mjs", map[string]harness.StepFunc{
		"ask": func(string) string {
			a := e.Check("builder", "pay", "s1", `{"to":"ACME Ltd","amount":120}`)
			if a.Approval == nil {
				return "FAIL: no approval"
			}
			id = a.Approval.ID
			go func() { _, m := e.Wait("builder", id, 60000); waited <- m }()
			return id
		},
		"votes": func(string) string {
			var got struct{ Votes []any }
			harness.GetJSON(t, s.URL+"/v1/approvals/"+id, s.AdminKey(), &got)
			return fmt.Sprint(len(got.Votes))
		},
		"waited": func(string) string {
			select {
			case m := <-waited:
				return fmt.Sprint(m["decision"])
			case <-time.After(15 * time.Second):
				return "FAIL: the waiting agent was not woken"
			}
		},
		// replay: the browser's confirmed vote (its body, session cookie
		// and CSRF token) sent again for another approval, and tampered.
		"replay": func(arg string) string {
			var cap struct {
				Body   json.RawMessage `json:"body"`
				Cookie string          `json:"cookie"`
				CSRF   string          `json:"csrf"`
			}
			if err := json.Unmarshal([]byte(arg), &cap); err != nil {
				return "FAIL: " + err.Error()
			}
			other := e.Check("builder", "pay", "s2", `{"to":"Other Ltd","amount":999}`)
			if other.Approval == nil {
				return "FAIL: no second approval"
			}
			post := func(approval string, body []byte) (int, string) {
				req, _ := http.NewRequest("POST", s.URL+"/v1/approvals/"+approval+"/votes", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Cookie", cap.Cookie)
				req.Header.Set("X-Rein-CSRF", cap.CSRF)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return 0, err.Error()
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				return res.StatusCode, string(b)
			}
			if code, b := post(other.Approval.ID, cap.Body); code != http.StatusForbidden || !strings.Contains(b, "passkey confirmation is not valid") {
				return fmt.Sprintf("FAIL: the confirmation on another approval: %d %s", code, b)
			}
			if code, b := post(other.Approval.ID, []byte(`{"vote":"approve"}`)); code != http.StatusForbidden || !strings.Contains(b, "step-up") {
				return fmt.Sprintf("FAIL: a vote without confirmation: %d %s", code, b)
			}
			var v map[string]any
			json.Unmarshal(cap.Body, &v)
			su := v["step_up"].(map[string]any)
			su["ceremony"] = strings.ToUpper(su["ceremony"].(string)[:4]) + su["ceremony"].(string)[4:]
			tampered, _ := json.Marshal(v)
			if code, b := post(other.Approval.ID, tampered); code != http.StatusForbidden {
				return fmt.Sprintf("FAIL: a tampered ceremony: %d %s", code, b)
			}
			var got struct{ Votes []any }
			harness.GetJSON(t, s.URL+"/v1/approvals/"+other.Approval.ID, s.AdminKey(), &got)
			if len(got.Votes) != 0 {
				return fmt.Sprintf("FAIL: the other approval has votes: %v", got.Votes)
			}
			return "ok"
		},
		"audit": func(string) string {
			code, body := harness.HTTPDo(t, "GET", s.URL+"/v1/audit/entries?start=0&limit=10000", s.AdminKey(), nil, "")
			if code != 200 {
				return fmt.Sprintf("FAIL: audit %d", code)
			}
			var added, voted bool
			for _, line := range strings.Split(string(body), "\n") {
				added = added || strings.Contains(line, `"passkey.added"`) && strings.Contains(line, `"carol@example.com"`)
				voted = voted || strings.Contains(line, `"approval.vote"`) && strings.Contains(line, `"step_up":"passkey"`) && strings.Contains(line, `"carol@example.com"`)
			}
			if !added || !voted {
				return fmt.Sprintf("FAIL: audit: passkey added %v, vote confirmed with a passkey %v", added, voted)
			}
			return "ok"
		},
		"taps": func(arg string) string {
			t.Logf("from the link to decided, signed in with a passkey: %s (taps, ms)", arg)
			return "ok"
		},
	})
}
