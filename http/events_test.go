package http_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one event read from /v1/events.
type sseEvent struct{ typ, data string }

// openStream opens /v1/events with a key and sends what it reads on a channel.
func openStream(t *testing.T, e *env, key string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(e.ctx, "GET", e.srv.URL+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.key(key).Secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("open stream for %s: %v %v", key, err, res)
	}
	out := make(chan sseEvent, 100)
	go func() {
		defer res.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "event: "):
				ev.typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.typ != "":
				out <- ev
				ev = sseEvent{}
			}
		}
	}()
	return out
}

// readUntil collects events until one whose data contains marker.
func readUntil(t *testing.T, ch <-chan sseEvent, marker string) []sseEvent {
	t.Helper()
	var got []sseEvent
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %q; read %v", marker, got)
			}
			got = append(got, ev)
			if strings.Contains(ev.data, marker) {
				return got
			}
		case <-timeout:
			t.Fatalf("no event with %q within 5s; read %v", marker, got)
		}
	}
}

// TestEventsOfTenantStarStayThere: checks made with a key of tenant "*"
// are records of tenant "*"; another tenant's stream never shows them or
// their arguments, while deployment-wide changes (a lock of every tenant)
// still reach every tenant.
func TestEventsOfTenantStarStayThere(t *testing.T) {
	e := newEnv(t, globalPolicy)
	globex := openStream(t, e, "globex-approver")
	acme := openStream(t, e, "acme-auditor")
	root := openStream(t, e, "root")
	time.Sleep(50 * time.Millisecond) // the streams are subscribed

	// root checks an action that needs an approval: a decision and an
	// approval.created event, both carrying what root sent.
	e.check("root", map[string]any{"tool": "deploy", "args": map[string]any{"target": "root-only-secret"}})
	wantStatus(t, e.do("POST", "/v1/locks", "root", map[string]any{"tenant": "*", "target": map[string]any{"tool": "marker.global-lock"}, "reason": "global-lock-marker"}), 201)
	e.check("globex-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "globex-marker"}})
	e.check("acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "acme-marker"}})

	for name, seen := range map[string][]sseEvent{
		"globex": readUntil(t, globex, `"tenant":"globex"`),
		"acme":   readUntil(t, acme, `"tenant":"acme"`),
	} {
		lock := false
		for _, ev := range seen {
			if strings.Contains(ev.data, `"tenant":"*"`) && ev.typ != "lock.updated" {
				t.Errorf("the %s stream shows a %s event of tenant *: %s", name, ev.typ, ev.data)
			}
			if strings.Contains(ev.data, "root-only-secret") || strings.Contains(ev.data, `"agent":"root"`) {
				t.Errorf("the %s stream shows root's check: %s %s", name, ev.typ, ev.data)
			}
			lock = lock || ev.typ == "lock.updated" && strings.Contains(ev.data, "global-lock-marker")
		}
		if !lock {
			t.Errorf("the %s stream lacks the lock of every tenant: %v", name, seen)
		}
	}
	// The acme stream stops at acme's own decision, after globex's: it
	// must not have shown globex's either.
	all := readUntil(t, root, `"tenant":"acme"`)
	var sawRoot, sawGlobex bool
	for _, ev := range all {
		sawRoot = sawRoot || strings.Contains(ev.data, "root-only-secret")
		sawGlobex = sawGlobex || strings.Contains(ev.data, `"tenant":"globex"`)
	}
	if !sawRoot || !sawGlobex {
		t.Errorf("the stream of tenant * shows every tenant's events: root's %v, globex's %v", sawRoot, sawGlobex)
	}
}

// TestEventsTenantParameter: ?tenant= names another tenant only for keys of
// tenant "*", which it narrows to that tenant.
func TestEventsTenantParameter(t *testing.T) {
	e := newEnv(t, globalPolicy)
	wantError(t, e.do("GET", "/v1/events?tenant=globex", "acme-auditor", nil), 403, "forbidden")
	wantError(t, e.do("GET", "/v1/events?tenant=Not%20A%20Tenant", "root", nil), 400, "bad_request")
}
