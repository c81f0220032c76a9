package risk

import (
	"strings"
	"testing"
)

func TestScanArgs(t *testing.T) {
	cases := []struct {
		args map[string]any
		tags string // comma-joined tags
		kind string // the first secret's arg=kind, when one is expected
	}{
		{map[string]any{"key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn..."}, "secrets", "key=private_key"},
		{map[string]any{"body": "-----BEGIN RSA PRIVATE KEY-----"}, "secrets", "body=private_key"},
		{map[string]any{"env": map[string]any{"AWS": "AKIAIOSFODNN7EXAMPLE"}}, "secrets", "env.AWS=aws_access_key"},
		{map[string]any{"t": "ghp_" + strings.Repeat("a1B2", 9)}, "secrets", "t=github_token"},
		{map[string]any{"t": "github_pat_" + strings.Repeat("x", 30)}, "secrets", "t=github_token"},
		{map[string]any{"hook": "xoxb-123456789012-abcdefghijkl"}, "secrets", "hook=slack_token"},
		{map[string]any{"msg": "use sk-ant-api03-" + strings.Repeat("Zz9", 10)}, "secrets", "msg=anthropic_key"},
		{map[string]any{"k": "sk-proj-" + strings.Repeat("Ab3", 10)}, "secrets", "k=openai_key"},
		{map[string]any{"k": "AIza" + strings.Repeat("B", 35)}, "secrets", "k=google_api_key"},
		{map[string]any{"h": []any{"x", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}}, "secrets", "h.1=jwt"},
		{map[string]any{"api_token": "q8Zr2LmX0vTn5Kp"}, "secrets", "api_token=named_api_token"},
		{map[string]any{"dbPassword": "Tr0ub4dor&3xyz"}, "secrets", "dbPassword=named_dbpassword"},
		{map[string]any{"headers": map[string]any{"Authorization": "Bearer abc.def"}}, "secrets", "headers.Authorization=authorization"},
		// Credential headers in any spelling and any scheme (RFC 9110, 5.1 and 11.1).
		{map[string]any{"headers": map[string]any{"authorization": "bearer abc.def"}}, "secrets", "headers.authorization=authorization"},
		{map[string]any{"headers": map[string]any{"AUTHORIZATION": "Token abcdef"}}, "secrets", "headers.AUTHORIZATION=authorization"},
		{map[string]any{"headers": map[string]any{"Authorization": "Basic x"}}, "secrets", "headers.Authorization=authorization"},
		{map[string]any{"headers": map[string]any{"Proxy-Authorization": "Bearer abc.def"}}, "secrets", "headers.Proxy-Authorization=authorization"},
		{map[string]any{"headers": map[string]any{"Cookie": "session=abc123"}}, "secrets", "headers.Cookie=cookie"},
		{map[string]any{"headers": map[string]any{"cookie": "sid=1"}}, "secrets", "headers.cookie=cookie"},
		{map[string]any{"headers": map[string]any{" Authorization ": "Bearer abc.def"}}, "secrets", "headers. Authorization =authorization"},
		// Ordinary values.
		{map[string]any{"token_count": "aaaaaaaaaa"}, "", ""},
		{map[string]any{"password_hint": "my dog's name"}, "", ""},
		{map[string]any{"text": "the skeleton key-value store"}, "", ""},
		{map[string]any{"author": "Ada Lovelace"}, "", ""},
		// Money.
		{map[string]any{"amount": int64(120)}, "money", ""},
		{map[string]any{"order": map[string]any{"total": 99.5}}, "money", ""},
		{map[string]any{"unit_price": "12.40"}, "money", ""},
		{map[string]any{"price_id": "price_abc"}, "", ""},
		{map[string]any{"count": int64(3)}, "", ""},
	}
	for _, c := range cases {
		found, tags := ScanArgs(c.args)
		if strings.Join(tags, ",") != c.tags {
			t.Errorf("%v: tags %v, want %q", c.args, tags, c.tags)
		}
		if c.kind != "" && (len(found) == 0 || found[0].Arg+"="+found[0].Kind != c.kind) {
			t.Errorf("%v: found %+v, want %s", c.args, found, c.kind)
		}
	}
}

// TestScanArgsDeep: values nested past the walk's limit are not silently
// passed as clean.
func TestScanArgsDeep(t *testing.T) {
	var v any = "plain"
	for range maxSecretDepth + 5 {
		v = map[string]any{"x": v}
	}
	if _, tags := ScanArgs(map[string]any{"deep": v}); strings.Join(tags, ",") != "secrets" {
		t.Errorf("tags %v", tags)
	}
}

// FuzzScanArgs: any string value, under any name, scans without a panic and
// never puts the value in the facts.
func FuzzScanArgs(f *testing.F) {
	f.Add("token", "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	f.Add("amount", "12.5")
	f.Add("x", "-----BEGIN PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, key, value string) {
		found, _ := ScanArgs(map[string]any{key: value, "list": []any{value}})
		for _, s := range found {
			if len(value) > 3 && strings.Contains(s.Kind, value) {
				t.Fatalf("the value leaked into a fact: %+v", s)
			}
		}
	})
}
