package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"
)

const limitsPolicy = `version: 1
default: deny
rules:
  - {id: mail, when: 'tool == "email.send"', decision: allow}
  - {id: mail-rate, when: 'tool == "email.send"', limit: {rate: 3, per: 2s, by: [agent]}}
  - {id: no-spam, when: 'tool == "email.send" && has(args.spam) && args.spam', decision: deny}
  - {id: bulk, when: 'tool == "bulk.send"', decision: allow}
  - {id: bulk-rate, when: 'tool == "bulk.send"', limit: {rate: 3, per: 1h, by: [agent]}}
`

// TestThrottle: N allowed, then throttle with a sane retry_after_ms and a
// Retry-After header; denied checks spend no token; after waiting, allowed
// again; the rate is per agent; concurrent checks never overspend.
func TestThrottle(t *testing.T) {
	e := harness.NewApprovalEnv(t, t.TempDir())
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, limitsPolicy)
	e.S.Stop()
	e.S = harness.StartServer(t, e.S.Data, nil, "--policy", pol)
	sendTool := func(tool, who, args string) (string, int64, string) {
		code, body := harness.HTTPDo(t, "POST", e.S.URL+"/v1/check", e.Keys[who], []byte(`{"tool":"`+tool+`","args":`+args+`}`), "application/json")
		if code != 200 {
			t.Fatalf("check: %d %s", code, body)
		}
		var a struct {
			Decision     string
			RetryAfterMS *int64 `json:"retry_after_ms"`
		}
		json.Unmarshal(body, &a)
		ms := int64(-1)
		if a.RetryAfterMS != nil {
			ms = *a.RetryAfterMS
		}
		return a.Decision, ms, string(body)
	}
	send := func(who, args string) (string, int64, string) { return sendTool("email.send", who, args) }
	for range 5 { // denied for another reason: spends nothing
		if d, _, b := send("builder", `{"spam":true}`); d != "deny" {
			t.Fatalf("spam: %s", b)
		}
	}
	for i := range 3 {
		if d, _, b := send("builder", `{"to":"a"}`); d != "allow" {
			t.Fatalf("mail %d: %s", i, b)
		}
	}
	d, ms, b := send("builder", `{"to":"a"}`)
	if d != "throttle" || ms <= 0 || ms > 2000 {
		t.Fatalf("the 4th mail: %s; want throttle with retry_after_ms in (0, 2000]", b)
	}
	hdr := retryAfterHeader(t, e.S.URL, e.Keys["builder"])
	if n, err := strconv.Atoi(hdr); err != nil || n < 1 || n > 2 {
		t.Errorf("Retry-After header %q; want 1 or 2 seconds", hdr)
	}
	if d, _, b := send("builder2", `{"to":"a"}`); d != "allow" {
		t.Fatalf("another agent is throttled by builder's rate: %s", b)
	}
	time.Sleep(time.Duration(ms)*time.Millisecond + 100*time.Millisecond)
	if d, _, b := send("builder", `{"to":"a"}`); d != "allow" {
		t.Fatalf("after waiting retry_after_ms: %s", b)
	}

	// 20 concurrent checks of one agent on a rate of 3 per hour: exactly 3 allowed.
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, _, _ := sendTool("bulk.send", "selfish", fmt.Sprintf(`{"to":"c%d"}`, i))
			mu.Lock()
			counts[d]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts["allow"] != 3 || counts["throttle"] != 17 {
		t.Fatalf("20 concurrent mails on a rate of 3: %v", counts)
	}
}

func retryAfterHeader(t *testing.T, url, key string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/check", strings.NewReader(`{"tool":"email.send","args":{"to":"z"}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := harness.HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return res.Header.Get("Retry-After")
}
