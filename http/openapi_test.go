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
