package serve

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestEveryConfigKeyIsDocumented: every key the config file accepts,
// nested ones included (slack.api_url, oidc.groups_claim, ...), is named in
// the documentation (README.md or docs/*.md) as `key:` in an example or
// as `key` or `section.key` in the text.
func TestEveryConfigKeyIsDocumented(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	var docs strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	text := docs.String()
	var missing []string
	for _, k := range configKeys(reflect.TypeFor[Config](), "") {
		name := k[strings.LastIndexByte(k, '.')+1:]
		if !regexp.MustCompile(`(?m)(^|[\s{,])` + regexp.QuoteMeta(name) + `:|` + "`" + regexp.QuoteMeta(k) + "`").MatchString(text) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		t.Errorf("the config key %s is documented nowhere (README.md, docs/*.md)", k)
	}
}

// configKeys lists the yaml keys of t and of the structs inside it, as
// dotted paths.
func configKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag == "" {
			if f.Anonymous {
				out = append(out, configKeys(f.Type, prefix)...)
			}
			continue
		}
		out = append(out, prefix+tag)
		out = append(out, configKeys(f.Type, prefix+tag+".")...)
	}
	return out
}
