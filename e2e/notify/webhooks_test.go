package notify

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/e2e/internal/harness"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a local webhook endpoint; fail says how many first attempts
// of each message it answers 500; hold, when set, blocks every request
// until it is closed.
type receiver struct {
	mu    sync.Mutex
	got   []received
	tries map[string]int
	fail  int
	hold  chan struct{}
	srv   *httptest.Server
}

func newReceiver(t *testing.T, fail int, hold chan struct{}) *receiver {
	r := &receiver{tries: map[string]int{}, fail: fail, hold: hold}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.hold != nil {
			select {
			case <-r.hold:
			case <-req.Context().Done():
				return
			}
		}
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		id := req.Header.Get("webhook-id")
		r.tries[id]++
		if r.tries[id] <= r.fail {
			w.WriteHeader(500)
			return
		}
		r.got = append(r.got, received{req.Header.Clone(), body, time.Now()})
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) bodies() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// TestWebhooks: deliveries verify with the Standard Webhooks library, a
// failing receiver is retried until it answers, a Slack target gets text
// and blocks with a link, and a receiver that hangs does not hold up checks.
func TestWebhooks(t *testing.T) {
	secretBytes := make([]byte, 24)
	rand.Read(secretBytes)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(secretBytes)
	ok := newReceiver(t, 0, nil)
	flaky := newReceiver(t, 2, nil)
	slack := newReceiver(t, 0, nil)
	hold := make(chan struct{})
	hanging := newReceiver(t, 0, hold)
	defer func() {
		if hold != nil {
			close(hold)
		}
	}()

	cfg := filepath.Join(t.TempDir(), "rein.yaml")
	harness.WriteFile(t, cfg, fmt.Sprintf(`webhooks:
  - {name: ok, url: %q, secret: %q}
  - {name: flaky, url: %q, secret: %q, backoff: 50ms}
  - {name: slack, url: %q, format: slack, events: [approval.created]}
  - {name: hanging, url: %q, secret: %q, events: [decision], timeout: 30s}
`, ok.srv.URL, secret, flaky.srv.URL, secret, slack.srv.URL, hanging.srv.URL, secret))
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, harness.LocksPolicy)
	data := t.TempDir()
	e := harness.NewApprovalEnv(t, data)
	e.S.Stop()
	e.S = harness.StartServer(t, data, nil, "--policy", pol, "--config", cfg)
	admin := e.S.AdminKey()

	a := e.Check("builder", "deploy", "wh1", `{"svc":"api"}`)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 10*time.Second, "the approval.created webhook arrives", func() string {
		for _, r := range ok.bodies() {
			var m struct {
				Type string
				Data map[string]any
			}
			json.Unmarshal(r.body, &m)
			if m.Type == "approval.created" && m.Data["id"] == a.Approval.ID {
				if err := wh.Verify(r.body, r.header); err != nil {
					t.Fatalf("the Standard Webhooks library rejects the signature: %v", err)
				}
				tampered := append([]byte(nil), r.body...)
				tampered[len(tampered)/2] ^= 1
				if wh.Verify(tampered, r.header) == nil {
					t.Fatal("a tampered body verified")
				}
				return ""
			}
		}
		return fmt.Sprintf("%d deliveries, none for %s", len(ok.bodies()), a.Approval.ID)
	})
	harness.Eventually(t, 10*time.Second, "the flaky receiver gets it on the third attempt", func() string {
		for _, r := range flaky.bodies() {
			if strings.Contains(string(r.body), a.Approval.ID) {
				if err := wh.Verify(r.body, r.header); err != nil {
					t.Fatalf("retried delivery does not verify: %v", err)
				}
				return ""
			}
		}
		return "not yet"
	})
	// The receiver answers before the attempt is written to the delivery
	// log: wait for the log to hold the third attempt.
	var flakyTries []string
	harness.Eventually(t, 10*time.Second, "the delivery log holds the flaky receiver's three attempts", func() string {
		var log []struct {
			Target    string
			Attempt   int
			Status    int
			Delivered bool
			EventType string `json:"event_type"`
		}
		harness.GetJSON(t, e.S.URL+"/v1/webhooks/deliveries?limit=500", admin, &log)
		flakyTries = nil
		for i := len(log) - 1; i >= 0; i-- {
			if l := log[i]; l.Target == "flaky" && l.EventType == "approval.created" {
				flakyTries = append(flakyTries, fmt.Sprintf("%d:%d", l.Attempt, l.Status))
			}
		}
		if len(flakyTries) < 3 {
			return fmt.Sprintf("%d attempts logged", len(flakyTries))
		}
		return ""
	})
	if strings.Join(flakyTries, " ") != "1:500 2:500 3:200" {
		t.Errorf("delivery log for the flaky receiver: %v", flakyTries)
	}
	harness.Eventually(t, 10*time.Second, "the Slack message arrives", func() string {
		for _, r := range slack.bodies() {
			var m struct {
				Text   string
				Blocks []map[string]any
			}
			json.Unmarshal(r.body, &m)
			if strings.Contains(m.Text, "builder") && strings.Contains(m.Text, a.Approval.ID) && len(m.Blocks) >= 2 &&
				strings.Contains(string(r.body), "/approvals/"+a.Approval.ID) && !strings.Contains(string(r.body), "/v1/approvals/") {
				return ""
			}
		}
		return fmt.Sprintf("slack got %d messages", len(slack.bodies()))
	})

	// The hanging receiver holds every decision it is sent; checks go on.
	start := time.Now()
	for i := range 20 {
		if a := e.Check("builder", "fs.read", "wh2", fmt.Sprintf(`{"path":"f%d"}`, i)); a.Decision != "allow" {
			t.Fatalf("check %d: %+v", i, a)
		}
	}
	took := time.Since(start)
	if n := len(hanging.bodies()); n != 0 {
		t.Fatalf("the hanging receiver answered %d requests while held", n)
	}
	// The same 20 checks once the receiver answers at once, for comparison.
	close(hold)
	hold = nil
	start = time.Now()
	for i := range 20 {
		if a := e.Check("builder", "fs.read", "wh3", fmt.Sprintf(`{"path":"f%d"}`, i)); a.Decision != "allow" {
			t.Fatalf("check %d: %+v", i, a)
		}
	}
	t.Logf("20 checks took %s while a webhook receiver hung, %s once it answered", took.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
}
