package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"
)

// HTTPClient is the client of HTTPDo.
var HTTPClient = &http.Client{Timeout: 15 * time.Second}

// HTTPDo sends one request, and checks the answer against the OpenAPI document; key may be empty (no Authorization header).
func HTTPDo(t testing.TB, method, url, key string, body []byte, contentType string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := HTTPClient
	if ms, err := strconv.Atoi(req.URL.Query().Get("timeout_ms")); err == nil && ms > 0 {
		// A long-poll (a wait) answers after up to timeout_ms: the client
		// waits that long and its usual margin, or a slow machine turns a
		// wait the server would answer into a client error.
		c := *HTTPClient
		c.Timeout += time.Duration(ms) * time.Millisecond
		client = &c
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	CheckAPIResponse(t, req, resp, b)
	return resp.StatusCode, b
}

// apiValidator checks answers against the API's OpenAPI document
// (http/openapi.yaml), loaded once per run. Strict: a field the document
// does not declare is a mismatch too.
var apiValidator = sync.OnceValues(func() (validator.Validator, error) {
	src, err := os.ReadFile(filepath.Join(ModuleRoot, "http", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(src)
	if err != nil {
		return nil, err
	}
	ignore := []string{"$.headers.*"}
	for _, f := range FreeForm {
		ignore = append(ignore, "$.body**."+f+".**", "$.body**."+f+"[**")
	}
	v, errs := validator.NewValidator(doc, config.WithStrictMode(), config.WithStrictIgnorePaths(ignore...),
		config.WithFormatAssertions(), config.WithBodyDecoder("application/x-ndjson", ndjsonDecoder))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return v, nil
})

// FreeForm names the fields whose content belongs to the caller, the
// policy or the tool (arguments, facts, answers and forms, audit data):
// their schema says what they are, and strict checking stops at them.
var FreeForm = []string{"args", "approved_args", "facts", "labels", "answer", "schema", "data", "payload",
	"policy_data", "parameter_overrides", "updatedInput",
	"options"} // WebAuthn's options, as the WebAuthn specification defines them

// ndjsonDecoder reads newline-delimited JSON as the array of its lines,
// as the document describes GET /v1/audit/entries.
var ndjsonDecoder = content.DecoderFunc(func(in *content.DecodeInput) (any, error) {
	out := []any{}
	sc := bufio.NewScanner(in.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %v", len(out)+1, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
})

// laxValidator checks answers whose whole body is free-form (the OpenAPI
// document itself) without strict mode.
var laxValidator = sync.OnceValues(func() (validator.Validator, error) {
	src, err := os.ReadFile(filepath.Join(ModuleRoot, "http", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(src)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return v, nil
})

// apiChecked counts the answers checked; apiCovered counts them by
// operation and status (REIN_E2E_OPENAPI_COVERAGE=1 prints them).
var (
	apiChecked atomic.Int64
	apiCovered sync.Map
)

// apiTemplate turns a request path back into the document's path template,
// replacing ids (apr_..., chk_...) by {id}.
func apiTemplate(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 3 && parts[1] == "v1" &&
		slices.Contains([]string{"checks", "approvals", "questions", "sessions", "locks", "keys"}, parts[2]) {
		parts[3] = "{id}"
	}
	return strings.Join(parts, "/")
}

// apiValidatorMu serialises validations: the validator's caches are not
// documented as safe for concurrent use.
var apiValidatorMu sync.Mutex

// CheckAPIResponse fails the test when an answer of the API does not match
// the OpenAPI document: a status code it does not list for the operation,
// a body that does not match the schema, or an operation that is not
// documented at all. Console pages (outside /v1/) are not API answers.
func CheckAPIResponse(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	p := req.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/"), p == "/acs", p == "/healthz", p == "/readyz", p == "/metrics":
	default:
		return
	}
	load := apiValidator
	if p == "/v1/openapi.json" {
		load = laxValidator
	}
	v, err := load()
	if err != nil {
		t.Errorf("load the OpenAPI document: %v", err)
		return
	}
	copied := *resp
	copied.Body = io.NopCloser(bytes.NewReader(body))
	apiValidatorMu.Lock()
	ok, errs := v.ValidateHttpResponse(req, &copied)
	apiValidatorMu.Unlock()
	apiChecked.Add(1)
	c, _ := apiCovered.LoadOrStore(fmt.Sprintf("%s %s %d", req.Method, apiTemplate(p), resp.StatusCode), new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	if ok {
		return
	}
	what := fmt.Sprintf("%s %s answered %d %s", req.Method, p, resp.StatusCode, truncate(body, 600))
	for _, e := range errs {
		if e.IsPathMissingError() || e.IsOperationMissingError() {
			// Not an operation of the API: the server must say so in the
			// API's error shape, 404 (no such endpoint) or 405.
			var eb struct {
				Error struct{ Code string } `json:"error"`
			}
			if (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) &&
				json.Unmarshal(body, &eb) == nil && eb.Error.Code != "" {
				return
			}
			t.Errorf("OpenAPI: %s: the operation is not in http/openapi.yaml", what)
			return
		}
	}
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    at %s: %s", f.FieldPath, f.Reason)
		}
	}
	t.Errorf("OpenAPI: %s; it does not match http/openapi.yaml:%s", what, b.String())
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// GetJSON fetches url and decodes a 200 answer into v.
func GetJSON(t testing.TB, url, key string, v any) {
	t.Helper()
	code, body := HTTPDo(t, "GET", url, key, nil, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", url, body, err)
	}
}
