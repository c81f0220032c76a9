package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

// authzenSend posts body with the given Content-Type ("" sends none).
func authzenSend(t *testing.T, url, key, contentType, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// TestAuthZENContentType: the AuthZEN transport binding takes JSON as
// application/json only. A valid request sent as text/plain, as a form, or
// without a Content-Type is refused with 400 and not evaluated
// (certification case C-2-4-3), on every AuthZEN endpoint that takes a
// body; application/json with a charset parameter is accepted; a body over
// the limit is 413.
func TestAuthZENContentType(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	harness.WriteFile(t, pol, todoPolicy)
	s := harness.StartServer(t, t.TempDir(), nil, "--policy", pol)
	agent := harness.AgentKey(t, s, s.AdminKey(), "todo-backend", "todo")

	read := `{"subject": {"type": "user", "id": "morty"}, "action": {"name": "can_read_todos"}, "resource": {"type": "todo", "id": "t-1"}}`
	publish := `{"subject": {"type": "user", "id": "morty"}, "action": {"name": "can_publish_todo"}, "resource": {"type": "todo", "id": "t-1"}`
	code, raw := authzenSend(t, s.URL+"/access/v1/evaluation", agent, "application/json", publish+"}")
	var denied map[string]any
	json.Unmarshal([]byte(raw), &denied)
	ctx, _ := denied["context"].(map[string]any)
	evaluationID, _ := ctx["evaluation_id"].(string)
	if code != 200 || evaluationID == "" {
		t.Fatalf("the requestable denial: %d %v", code, denied)
	}
	request := publish + `, "denial": {"evaluation_id": "` + evaluationID + `"}}`

	endpoints := []struct {
		path, body string
		ok         int
	}{
		{"/access/v1/evaluation", read, 200},
		{"/access/v1/evaluations", `{"evaluations": [` + read + `]}`, 200},
		{"/access/v1/requests", request, 202},
	}
	for _, ep := range endpoints {
		for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonl", "text/json"} {
			code, out := authzenSend(t, s.URL+ep.path, agent, ct, ep.body)
			if code != 400 {
				t.Errorf("%s as %q: %d %s, want 400", ep.path, ct, code, out)
				continue
			}
			if !strings.Contains(out, "Content-Type: application/json") {
				t.Errorf("%s as %q: the refusal must say which Content-Type to send: %s", ep.path, ct, out)
			}
		}
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"} {
			if code, out := authzenSend(t, s.URL+ep.path, agent, ct, ep.body); code != ep.ok {
				t.Errorf("%s as %q: %d %s, want %d", ep.path, ct, code, out, ep.ok)
			}
		}
		// A body over the limit is 413, as on every other endpoint, and
		// says how to fix it.
		big := `{"subject": {"type": "user", "id": "` + strings.Repeat("m", 2<<20) + `"}}`
		if code, out := authzenSend(t, s.URL+ep.path, agent, "application/json", big); code != 413 || !strings.Contains(out, "send a smaller one") {
			t.Errorf("%s with a 2 MiB body: %d %.200s, want 413 saying to send a smaller one", ep.path, code, out)
		}
	}
}
