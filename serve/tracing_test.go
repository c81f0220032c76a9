package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TestTracesReachAnOTLPReceiver: with --otlp-endpoint, a check becomes an
// execute_tool span with rein's decision, decoded on loopback by the
// OpenTelemetry Collector's own OTLP decoder.
func TestTracesReachAnOTLPReceiver(t *testing.T) {
	var mu sync.Mutex
	spans := map[string]map[string]any{} // span name -> attributes
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if r.URL.Path != "/v1/traces" || req.UnmarshalProto(body) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		rs := req.Traces().ResourceSpans()
		mu.Lock()
		for i := 0; i < rs.Len(); i++ {
			if svc, _ := rs.At(i).Resource().Attributes().Get("service.name"); svc.Str() != "rein" {
				continue
			}
			ss := rs.At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					s := ss.At(j).Spans().At(k)
					spans[s.Name()] = s.Attributes().AsRaw()
				}
			}
		}
		mu.Unlock()
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	}))
	defer receiver.Close()

	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, []byte("version: 1\nrules:\n  - {id: reads, when: 'tool == \"fs.read\"', decision: allow}\n"), 0o600)
	t.Setenv("REIN_ADMIN_KEY", "rein_admin_tracing_test_key_0001")
	srv, err := Start(context.Background(), Config{Data: filepath.Join(dir, "data"), Listen: "127.0.0.1:0", Policy: pol,
		OTLPEndpoint: receiver.URL}, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/v1/check", bytes.NewReader([]byte(`{"tool":"fs.read","args":{"path":"a"},"session":"s1"}`)))
	req.Header.Set("Authorization", "Bearer rein_admin_tracing_test_key_0001")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ ID, Decision string }
	json.NewDecoder(res.Body).Decode(&answer)
	res.Body.Close()
	srv.Shutdown(context.Background()) // flushes the last spans
	mu.Lock()
	defer mu.Unlock()
	got := spans["execute_tool fs.read"]
	if got == nil {
		t.Fatalf("no execute_tool span among %v", spans)
	}
	if got["gen_ai.tool.name"] != "fs.read" || got["rein.decision"] != answer.Decision || got["rein.check.id"] != answer.ID ||
		got["gen_ai.conversation.id"] != "s1" || got["gen_ai.operation.name"] != "execute_tool" {
		t.Fatalf("span attributes: %v (answer %+v)", got, answer)
	}
}
