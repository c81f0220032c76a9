package rein

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// ArgChanges lists how the arguments to differ from from, path by path
// (keys and indexes joined by dots, as risk facts name them), in path order:
// what an approver must see first about an edited action. Arguments that
// are not JSON objects compare as one value at the empty path.
func ArgChanges(from, to json.RawMessage) []ArgChange {
	var a, b any
	if json.Unmarshal(from, &a) != nil || json.Unmarshal(to, &b) != nil {
		if bytes.Equal(from, to) {
			return nil
		}
		return []ArgChange{{From: from, To: to}}
	}
	var out []ArgChange
	diffArgs("", a, b, &out)
	slices.SortFunc(out, func(x, y ArgChange) int { return strings.Compare(x.Path, y.Path) })
	return out
}

func diffArgs(at string, a, b any, out *[]ArgChange) {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			for k, v := range x {
				if w, ok := y[k]; ok {
					diffArgs(join(k), v, w, out)
				} else {
					*out = append(*out, ArgChange{Path: join(k), From: mustJSON(v)})
				}
			}
			for k, w := range y {
				if _, ok := x[k]; !ok {
					*out = append(*out, ArgChange{Path: join(k), To: mustJSON(w)})
				}
			}
			return
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			for i := range x {
				diffArgs(join(strconv.Itoa(i)), x[i], y[i], out)
			}
			return
		}
	}
	fa, fb := mustJSON(a), mustJSON(b)
	if !bytes.Equal(fa, fb) {
		*out = append(*out, ArgChange{Path: at, From: fa, To: fb})
	}
}

// mustJSON is the canonical JSON of a decoded value (which always encodes).
func mustJSON(v any) json.RawMessage {
	b, err := Canonical(v)
	if err != nil {
		b, _ = json.Marshal(v)
	}
	return b
}
