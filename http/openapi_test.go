package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein"
	reinhttp "github.com/reinhq/rein/http"
)

// The OpenAPI document (http/openapi.yaml) must be a valid OpenAPI 3.1
// document, list exactly the routes the server registers, with the roles
// the server enforces, and be served at GET /v1/openapi.json.

// TestOpenAPIDocumentIsValid checks the document against the OpenAPI 3.1
// schema and resolves every reference in it.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := libopenapi.NewDocument(reinhttp.OpenAPIYAML())
	if err != nil {
		t.Fatalf("parse openapi.yaml: %v", err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi.yaml is OpenAPI %s, want 3.1", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build the document's model (unresolved references?): %v", err)
	}
	if model.Model.Paths == nil || model.Model.Paths.PathItems.Len() == 0 {
		t.Fatal("openapi.yaml has no paths")
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("openapi.yaml: %s: %s", e.Message, e.Reason)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("  at %s (line %d): %s", f.FieldPath, f.Line, f.Reason)
			}
		}
	}
}

// docOp is what the route tests read of one documented operation.
type docOp struct {
	Roles     []string               `yaml:"x-rein-roles"`
	Security  *[]map[string][]string `yaml:"security"`
	Responses map[string]yaml.Node   `yaml:"responses"`
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documentedOps reads the operations of the document by "METHOD /path".
func documentedOps(t testing.TB, src []byte) map[string]docOp {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("read openapi.yaml: %v", err)
	}
	ops := map[string]docOp{}
	for path, item := range doc.Paths {
		for method, node := range item {
			if !slices.Contains(httpMethods, method) {
				continue
			}
			var op docOp
			if err := node.Decode(&op); err != nil {
				t.Fatalf("openapi.yaml: %s %s: %v", method, path, err)
			}
			ops[strings.ToUpper(method)+" "+path] = op
		}
	}
	return ops
}

// routeProblems compares the registered routes with the documented
// operations: every route documented with the roles it enforces, and
// nothing documented that is not served.
func routeProblems(routes []reinhttp.Route, ops map[string]docOp) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range routes {
		name := r.String()
		seen[name] = true
		op, ok := ops[name]
		if !ok {
			out = append(out, fmt.Sprintf("%s is served but not in openapi.yaml", name))
			continue
		}
		if r.Roles == nil {
			continue
		}
		want := make([]string, len(r.Roles))
		for i, role := range r.Roles {
			want[i] = string(role)
		}
		got := slices.Clone(op.Roles)
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			out = append(out, fmt.Sprintf("%s: openapi.yaml says x-rein-roles %v, the server lets in %v", name, got, want))
		}
	}
	for name := range ops {
		if !seen[name] {
			out = append(out, fmt.Sprintf("%s is in openapi.yaml but the server does not serve it", name))
		}
	}
	sort.Strings(out)
	return out
}

func TestRouteProblems(t *testing.T) {
	ops := map[string]docOp{
		"GET /v1/locks":  {Roles: []string{"auditor", "admin"}},
		"POST /v1/locks": {Roles: []string{"admin"}},
		"GET /healthz":   {},
	}
	locks := reinhttp.Route{Method: "GET", Path: "/v1/locks", Roles: []rein.Role{rein.RoleAdmin, rein.RoleAuditor}}
	post := reinhttp.Route{Method: "POST", Path: "/v1/locks", Roles: []rein.Role{rein.RoleAdmin}}
	health := reinhttp.Route{Method: "GET", Path: "/healthz"}
	for _, tc := range []struct {
		name   string
		routes []reinhttp.Route
		want   []string
	}{
		{"all documented", []reinhttp.Route{locks, post, health}, nil},
		{"new route without an entry", []reinhttp.Route{locks, post, health,
			{Method: "DELETE", Path: "/v1/locks/{id}", Roles: []rein.Role{rein.RoleAdmin}}},
			[]string{"DELETE /v1/locks/{id} is served but not in openapi.yaml"}},
		{"entry without a route", []reinhttp.Route{locks, health},
			[]string{"POST /v1/locks is in openapi.yaml but the server does not serve it"}},
		{"roles differ", []reinhttp.Route{{Method: "GET", Path: "/v1/locks", Roles: []rein.Role{rein.RoleAdmin}}, post, health},
			[]string{"GET /v1/locks: openapi.yaml says x-rein-roles [admin auditor], the server lets in [admin]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := routeProblems(tc.routes, ops); !slices.Equal(got, tc.want) {
				t.Errorf("routeProblems = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOpenAPICoversEveryRoute holds the document to the routes Handler
// registers: a new route without an entry, or an entry whose roles differ
// from the ones enforced, fails here.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	e := newEnv(t, "")
	routes := e.api.Routes()
	if len(routes) < 40 {
		t.Fatalf("the server lists %d routes; Routes() does not see the registrations", len(routes))
	}
	ops := documentedOps(t, reinhttp.OpenAPIYAML())
	for _, p := range routeProblems(routes, ops) {
		t.Error(p)
	}
	// Each operation says who may call it: the roles of an authenticated
	// endpoint, with the answers of a refused key; or no security at all.
	for name, op := range ops {
		public := op.Security != nil && len(*op.Security) == 0
		switch {
		case public && len(op.Roles) > 0:
			t.Errorf("%s: open to all (security: []) but lists x-rein-roles", name)
		case !public && len(op.Roles) == 0:
			t.Errorf("%s: needs a key but lists no x-rein-roles", name)
		}
		for _, r := range op.Roles {
			if !slices.Contains(rein.AllRoles, rein.Role(r)) {
				t.Errorf("%s: x-rein-roles has %q, not a role", name, r)
			}
		}
		if strings.Contains(name, " /v1/") && !public && name != "POST /v1/hooks/claude-code" {
			for _, code := range []string{"401", "403", "500", "503"} {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s: answers %s (like every authenticated endpoint) but does not document it", name, code)
				}
			}
		}
	}
}

// TestOpenAPIServed: GET /v1/openapi.json answers the document as JSON to
// anyone, and it is the document kept in the repository.
func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t, "")
	res, err := http.Get(e.srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json without a key: %d %s", res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	want, err := reinhttp.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Error("the served document is not OpenAPIJSON()")
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(body, &fromJSON); err != nil {
		t.Fatalf("served document is not JSON: %v", err)
	}
	if err := yaml.Unmarshal(reinhttp.OpenAPIYAML(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	// The JSON form says what the YAML says (yaml numbers are ints, JSON's
	// float64: compare through a JSON round trip).
	y, _ := json.Marshal(fromYAML)
	var yj any
	json.Unmarshal(y, &yj)
	if fmt.Sprint(yj) != fmt.Sprint(fromJSON) {
		t.Error("the served JSON differs from openapi.yaml")
	}
	doc, err := libopenapi.NewDocument(body)
	if err != nil {
		t.Fatalf("served document: %v", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("served document: %v", err)
	}
	if n := model.Model.Paths.PathItems.Len(); n != len(documentedPaths(t)) {
		t.Errorf("served document has %d paths, openapi.yaml %d", n, len(documentedPaths(t)))
	}
}

func documentedPaths(t testing.TB) map[string]bool {
	out := map[string]bool{}
	for name := range documentedOps(t, reinhttp.OpenAPIYAML()) {
		_, path, _ := strings.Cut(name, " ")
		out[path] = true
	}
	return out
}

// TestOpenAPINamePatterns: the document's patterns for tenants, key names
// and groups accept exactly what rein accepts.
func TestOpenAPINamePatterns(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Pattern    string `yaml:"pattern"`
				Properties map[string]struct {
					Pattern string `yaml:"pattern"`
					Items   struct {
						Pattern string `yaml:"pattern"`
					} `yaml:"items"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(reinhttp.OpenAPIYAML(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas
	patterns := map[string]string{
		"tenant": s["Tenant"].Pattern,
		"name":   s["KeyRequest"].Properties["name"].Pattern,
		"group":  s["KeyRequest"].Properties["groups"].Items.Pattern,
	}
	for what, p := range patterns {
		if p == "" {
			t.Fatalf("openapi.yaml has no pattern for the key's %s", what)
		}
	}
	for _, v := range []string{"acme", "a", "*", "acme-2.eu_west", "Acme", "-acme", ".x", "a/b", "ops@acme",
		"bot", "bot/sub", "", "x y", "é", "team/oncall", strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("a", 128), strings.Repeat("a", 129)} {
		for what, p := range patterns {
			k := &rein.Key{Name: "n", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}}
			switch what {
			case "tenant":
				k.Tenant = v
			case "name":
				k.Name = v
			case "group":
				k.Groups = []string{v}
			}
			reinOK := rein.ValidateKey(k) == nil
			docOK := regexp.MustCompile(p).MatchString(v)
			if reinOK != docOK {
				t.Errorf("%s %q: rein accepts it: %v, openapi.yaml's pattern %s: %v", what, v, reinOK, p, docOK)
			}
		}
	}
}

// TestOpenAPIHasNoBareKeys: in a YAML flow mapping an unquoted comma ends
// the value, so `{description: Costs, corrected later.}` is a description
// cut short and a key " corrected later." with no value, which a schema
// reads as a stray property. Every key of the document has a value.
func TestOpenAPIHasNoBareKeys(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal(reinhttp.OpenAPIYAML(), &root); err != nil {
		t.Fatal(err)
	}
	for _, p := range bareKeys(&root) {
		t.Errorf("openapi.yaml: %s (quote a value that holds a comma)", p)
	}
}

// bareKeys lists the keys that have no value, each with its line.
func bareKeys(n *yaml.Node) []string {
	var out []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" {
				out = append(out, fmt.Sprintf("line %d: key %q has no value", n.Content[i].Line, n.Content[i].Value))
			}
		}
	}
	for _, c := range n.Content {
		out = append(out, bareKeys(c)...)
	}
	return out
}

func TestBareKeys(t *testing.T) {
	for src, want := range map[string]int{
		"a: {description: Costs, corrected later.}":   1,
		"a: {description: 'Costs, corrected later.'}": 0,
		"a: {b: null, c: ~, d: ''}":                   0,
		"a:\n  b:\n  c: 1\n":                          1,
	} {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(src), &root); err != nil {
			t.Fatal(err)
		}
		if got := bareKeys(&root); len(got) != want {
			t.Errorf("bareKeys(%q) = %q, want %d", src, got, want)
		}
	}
}

// TestOpenAPIAnswersAreClosed: every object the API answers with is closed
// in the document (additionalProperties: false, or unevaluatedProperties:
// false over an allOf), so that a client generated from it, or one that
// validates answers, learns of a field rein adds only from the document.
// Objects without declared properties are free-form on purpose (arguments,
// facts, answers, the document itself).
func TestOpenAPIAnswersAreClosed(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(reinhttp.OpenAPIYAML(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range openAnswers(doc) {
		t.Errorf("openapi.yaml: %s", p)
	}
}

// openAnswers walks the schemas of every documented answer and lists the
// objects with declared properties that accept undeclared ones.
func openAnswers(doc map[string]any) []string {
	get := func(m any, keys ...string) any {
		for _, k := range keys {
			mm, _ := m.(map[string]any)
			m = mm[k]
		}
		return m
	}
	resolve := func(ref string) (any, string) {
		name, ok := strings.CutPrefix(ref, "#/components/")
		if !ok {
			return nil, ref
		}
		return get(doc["components"], strings.Split(name, "/")...), name
	}
	problems := map[string]bool{}
	seen := map[string]bool{}
	var walk func(s any, where string, composed bool)
	walk = func(s any, where string, composed bool) {
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			target, name := resolve(ref)
			key := fmt.Sprint(name, composed)
			if target == nil {
				problems[where+": unresolved "+ref] = true
			}
			if !seen[key] {
				seen[key] = true
				walk(target, name, composed)
			}
			return
		}
		additional, unevaluated := m["additionalProperties"], m["unevaluatedProperties"]
		closed := additional == false || unevaluated == false
		if _, ok := m["properties"]; ok && !closed && !composed {
			problems[where+": an answer's object is open; add additionalProperties: false"] = true
		}
		if composed && additional == false {
			problems[where+": a part of an allOf closes itself and refuses its siblings' fields; close the whole with unevaluatedProperties: false"] = true
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, p := range props {
				walk(p, where+"."+name, false)
			}
		}
		for _, k := range []string{"items", "additionalProperties", "unevaluatedProperties", "not"} {
			walk(m[k], where+"."+k, false)
		}
		for _, k := range []string{"oneOf", "anyOf", "prefixItems"} {
			parts, _ := m[k].([]any)
			for i, p := range parts {
				walk(p, fmt.Sprintf("%s.%s[%d]", where, k, i), false)
			}
		}
		parts, _ := m["allOf"].([]any)
		for i, p := range parts {
			walk(p, fmt.Sprintf("%s.allOf[%d]", where, i), composed || unevaluated == false)
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			responses, _ := get(op, "responses").(map[string]any)
			for code, r := range responses {
				where := strings.ToUpper(method) + " " + path + " " + code
				if ref, ok := get(r, "$ref").(string); ok {
					r, _ = resolve(ref)
				}
				contents, _ := get(r, "content").(map[string]any)
				for _, c := range contents {
					walk(get(c, "schema"), where, false)
				}
			}
		}
	}
	out := make([]string, 0, len(problems))
	for p := range problems {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestOpenAnswers(t *testing.T) {
	doc := func(src string) map[string]any {
		var d map[string]any
		if err := yaml.Unmarshal([]byte(src), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	const head = "paths:\n  /x:\n    get:\n      responses:\n        '200':\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/A'}\n"
	for _, tc := range []struct {
		name, schemas string
		want          int
	}{
		{"closed", "A: {type: object, additionalProperties: false, properties: {a: {type: string}}}", 0},
		{"open", "A: {type: object, properties: {a: {type: string}}}", 1},
		{"open inside", "A: {type: object, additionalProperties: false, properties: {a: {type: object, properties: {b: {}}}}}", 1},
		{"free-form", "A: {type: object, additionalProperties: false, properties: {args: {}, facts: {type: object}}}", 0},
		{"open in a list", "A: {type: array, items: {$ref: '#/components/schemas/B'}}\n    B: {type: object, properties: {b: {}}}", 1},
		{"allOf closed as a whole", "A: {allOf: [{$ref: '#/components/schemas/B'}, {type: object, properties: {c: {}}}], unevaluatedProperties: false}\n    B: {type: object, properties: {b: {}}}", 0},
		{"allOf open", "A: {allOf: [{$ref: '#/components/schemas/B'}, {type: object, properties: {c: {}}}]}\n    B: {type: object, properties: {b: {}}}", 2},
		{"allOf part closed", "A: {allOf: [{$ref: '#/components/schemas/B'}, {type: object, properties: {c: {}}}], unevaluatedProperties: false}\n    B: {type: object, additionalProperties: false, properties: {b: {}}}", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := openAnswers(doc(head + "components:\n  schemas:\n    " + tc.schemas + "\n"))
			if len(got) != tc.want {
				t.Errorf("openAnswers = %q, want %d problems", got, tc.want)
			}
		})
	}
}

// TestOpenAPIPagedListsAlike: every list that takes a cursor documents the
// one answer http/page.go gives, the next page in X-Next-Cursor and Link.
func TestOpenAPIPagedListsAlike(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(reinhttp.OpenAPIYAML(), &doc); err != nil {
		t.Fatalf("read openapi.yaml: %v", err)
	}
	paged := 0
	for path, ops := range doc.Paths {
		for method, node := range ops {
			var op struct {
				Parameters []map[string]any `yaml:"parameters"`
				Responses  map[string]struct {
					Headers map[string]any `yaml:"headers"`
				} `yaml:"responses"`
			}
			if method == "parameters" || node.Decode(&op) != nil {
				continue
			}
			cursor := false
			for _, p := range op.Parameters {
				if p["name"] == "cursor" || p["$ref"] == "#/components/parameters/cursor" {
					cursor = true
				}
			}
			if !cursor {
				continue
			}
			paged++
			h := op.Responses["200"].Headers
			if h["X-Next-Cursor"] == nil || h["Link"] == nil {
				t.Errorf("%s %s takes a cursor but its answer documents no X-Next-Cursor and Link", method, path)
			}
		}
	}
	if paged < 6 {
		t.Errorf("%d paged lists found, want at least 6 (checks, a session's checks, approvals, questions, reviews, proposals)", paged)
	}
}
