package http

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein"
)

// openapiYAML is the OpenAPI 3.1 document of the API, kept next to the
// handlers it describes. Tests hold it to the routes the server registers
// and to every answer the end-to-end tests receive.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPIYAML returns the OpenAPI document as it is kept in the repository.
func OpenAPIYAML() []byte { return slices.Clone(openapiYAML) }

// OpenAPIJSON returns the OpenAPI document as JSON, as GET /v1/openapi.json
// serves it.
func OpenAPIJSON() ([]byte, error) { return openapiJSON() }

var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	doc, err := jsonValue(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

// jsonValue checks that a decoded YAML value is JSON: objects with string
// keys only.
func jsonValue(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			y, err := jsonValue(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			t[k] = y
		}
	case []any:
		for i, x := range t {
			y, err := jsonValue(x)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			t[i] = y
		}
	case map[any]any:
		return nil, fmt.Errorf("an object with a key that is not a string")
	}
	return v, nil
}

// getOpenAPI: GET /v1/openapi.json, unauthenticated: the document is the
// same for every caller and holds no secrets.
func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	b, err := OpenAPIJSON()
	if err != nil {
		s.Log.Error("openapi document", "err", err)
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

// Route is one endpoint the server registers: a method and a path pattern
// as http.ServeMux and OpenAPI write them (GET /v1/checks/{id}), and the
// roles that may call it. Roles is nil for endpoints that are open to all
// or authenticate by themselves (hooks, ACS).
type Route struct {
	Method string
	Path   string
	Roles  []rein.Role
}

func (r Route) String() string { return r.Method + " " + r.Path }

// Routes lists every endpoint registered by Handler, in registration order.
func (s *Server) Routes() []Route { return slices.Clone(s.routes) }

// handle registers h on the mux and records the route.
func (s *Server) handle(pattern string, h http.Handler, roles ...rein.Role) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("http: route pattern without a method: " + pattern)
	}
	s.routes = append(s.routes, Route{Method: method, Path: path, Roles: roles})
	s.mux.Handle(pattern, h)
}
