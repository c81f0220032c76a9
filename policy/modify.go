package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// checkArgPath validates a dotted path into args ("headers.Authorization",
// "recipients.0"): non-empty segments separated by dots.
func checkArgPath(path string) error {
	if path == "" {
		return errors.New("empty path")
	}
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			return errors.New("empty segment; write paths like headers.Authorization")
		}
	}
	return nil
}

// apply removes then sets paths in args, which it changes in place.
func (m *ModifySpec) apply(args map[string]any) error {
	for _, p := range m.Remove {
		remove(args, strings.Split(p, "."))
	}
	for _, p := range keys(m.Set) {
		if err := set(args, strings.Split(p, "."), deepCopy(m.Set[p])); err != nil {
			return fmt.Errorf("set %s: %w", p, err)
		}
	}
	return nil
}

// remove deletes the value at path; a path that does not exist is already removed.
func remove(v any, path []string) {
	for len(path) > 1 {
		next, ok := child(v, path[0])
		if !ok {
			return
		}
		v, path = next, path[1:]
	}
	switch c := v.(type) {
	case map[string]any:
		delete(c, path[0])
	case []any:
		// Removing from a list would shift what other paths point at; blank it instead.
		if i, err := strconv.Atoi(path[0]); err == nil && i >= 0 && i < len(c) {
			c[i] = nil
		}
	}
}

// set stores val at path, creating objects on the way; it fails when the way
// passes through a value that is not an object (or a list with that index).
func set(v any, path []string, val any) error {
	for len(path) > 1 {
		next, ok := child(v, path[0])
		if !ok {
			m, isMap := v.(map[string]any)
			if !isMap {
				return fmt.Errorf("%q is not inside an object", path[0])
			}
			if old, exists := m[path[0]]; exists && old != nil {
				return fmt.Errorf("%q holds a %s, not an object", path[0], jsonKind(old))
			}
			next = map[string]any{}
			m[path[0]] = next
		}
		v, path = next, path[1:]
	}
	switch c := v.(type) {
	case map[string]any:
		c[path[0]] = val
		return nil
	case []any:
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(c) {
			return fmt.Errorf("index %q is outside the list", path[0])
		}
		c[i] = val
		return nil
	}
	return fmt.Errorf("cannot set %q on a %T", path[0], v)
}

func child(v any, seg string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		x, ok := c[seg]
		if ok {
			switch x.(type) {
			case map[string]any, []any:
				return x, true
			}
			return nil, false
		}
	case []any:
		i, err := strconv.Atoi(seg)
		if err == nil && i >= 0 && i < len(c) {
			switch c[i].(type) {
			case map[string]any, []any:
				return c[i], true
			}
		}
	}
	return nil, false
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case []any:
		return "list"
	}
	return "value"
}
