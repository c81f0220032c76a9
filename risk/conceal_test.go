package risk

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConceal: every credential ScanArgs finds is replaced by its typed
// redaction, whole for a value that is one by its name, in place for one
// recognised by its shape; Reveal restores exactly the request's values.
func TestConceal(t *testing.T) {
	const gh = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
	const aws = "AKIAABCDEFGHIJKLMNOP"
	for _, tc := range []struct {
		name, args string
		secrets    []string // values that must be gone
		kept       []string // text that must stay readable
		kinds      []string
	}{
		{"bearer header", `{"url":"https://api.example.com","headers":{"Authorization":"Bearer s3cr3t-v4lue"}}`,
			[]string{"s3cr3t-v4lue"}, []string{"https://api.example.com"}, []string{"authorization"}},
		{"cookie any case", `{"headers":{"cOOkie":"sid=abc123456"}}`, []string{"sid=abc123456"}, nil, []string{"cookie"}},
		{"token inside a command", `{"command":"curl -H 'X-Token: ` + gh + `' https://x.test"}`,
			[]string{gh}, []string{"curl -H 'X-Token: ", "' https://x.test"}, []string{"github_token"}},
		{"named password", `{"db":{"password":"Zq8#kL2!pW9x"}}`, []string{"Zq8#kL2!pW9x"}, nil, []string{"named_password"}},
		{"list of keys", `{"keys":["` + aws + `","plain"]}`, []string{aws}, []string{"plain"}, []string{"aws_access_key"}},
		{"named password, short", `{"db":{"pass":"short"}}`, []string{"short"}, nil, []string{"named_pass"}},
		{"nothing secret", `{"command":"ls -la","password_file":"short","author":"jane","token_type":"bearer"}`, nil, []string{"ls -la", "short", "jane", "bearer"}, nil},
	} {
		args := decode(t, tc.args)
		facts, _ := ScanArgs(decode(t, tc.args))
		out, found := Conceal(args)
		b, _ := json.Marshal(out)
		for _, s := range tc.secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: %q still in %s", tc.name, s, b)
			}
		}
		for _, s := range tc.kept {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s: %q no longer readable in %s", tc.name, s, b)
			}
		}
		if len(found) != len(tc.kinds) || len(facts) != len(tc.kinds) {
			t.Errorf("%s: concealed %+v, scan found %+v, want kinds %v", tc.name, found, facts, tc.kinds)
			continue
		}
		for i, c := range found {
			if c.Kind != tc.kinds[i] || !strings.Contains(string(b), "["+c.Kind+" sha256:") || facts[i].Arg != c.Arg {
				t.Errorf("%s: concealed %+v, scan %+v in %s", tc.name, c, facts[i], b)
			}
		}
		again, more := Conceal(decode(t, string(b)))
		if b2, _ := json.Marshal(again); string(b2) != string(b) || len(more) != 0 {
			t.Errorf("%s: concealing twice: %s, %+v", tc.name, b2, more)
		}
		back, err := Reveal(out, found)
		if err != nil {
			t.Fatalf("%s: reveal: %v", tc.name, err)
		}
		got, _ := json.Marshal(back)
		want, _ := json.Marshal(decode(t, tc.args))
		if string(got) != string(want) {
			t.Errorf("%s: revealed %s, want %s", tc.name, got, want)
		}
	}
}

// TestRevealOnlyWhereConcealed: an edit that moves a redaction to another
// argument (a bearer into a URL, say) or invents one cannot be revealed.
func TestRevealOnlyWhereConcealed(t *testing.T) {
	_, found := Conceal(decode(t, `{"url":"https://api.example.com","headers":{"Authorization":"Bearer s3cr3t-v4lue"}}`))
	m := found[0].Marker
	for _, edited := range []string{
		`{"url":"https://evil.test/?t=` + m + `","headers":{}}`,
		`{"url":"https://api.example.com","headers":{"Authorization":"Bearer x"},"body":"` + m + `"}`,
		`{"url":"https://api.example.com","headers":{"Authorization":"` + Marker("authorization", "other") + `"}}`,
	} {
		if out, err := Reveal(decode(t, edited), found); err == nil {
			b, _ := json.Marshal(out)
			t.Errorf("revealed a moved or unknown redaction: %s", b)
		}
	}
	ok, err := Reveal(decode(t, `{"url":"https://api.example.com/v2","headers":{"Authorization":"`+m+`"}}`), found)
	if err != nil || ok["headers"].(map[string]any)["Authorization"] != "Bearer s3cr3t-v4lue" {
		t.Fatalf("an edit that kept the redaction in place: %v %v", ok, err)
	}
}

func FuzzConcealReveal(f *testing.F) {
	f.Add(`{"headers":{"Authorization":"Bearer abc"},"command":"echo ghp_0123456789abcdefghijABCDEFGHIJ0123456789"}`)
	f.Fuzz(func(t *testing.T, s string) {
		var args map[string]any
		if json.Unmarshal([]byte(s), &args) != nil || args == nil {
			return
		}
		want, _ := json.Marshal(args)
		out, found := Conceal(args)
		if HasMarker(string(want)) {
			return // the request itself holds redaction-shaped text
		}
		back, err := Reveal(out, found)
		if err != nil {
			t.Fatalf("reveal of %s: %v", want, err)
		}
		got, _ := json.Marshal(back)
		if string(got) != string(want) {
			t.Fatalf("round trip: %s -> %s", want, got)
		}
	})
}

// TestURLPasswordsAreSecrets: the password of a URL's userinfo
// (https://user:pass@host, postgres://app:pass@db/prod) is a credential,
// in an argument of its own or inside a command line: tagged, and
// concealed where it stands so the rest of the URL stays readable; a
// variable in its place is not a secret.
func TestURLPasswordsAreSecrets(t *testing.T) {
	const pw = "Zq8-vR3x-Lm9w-Tk2p"
	for _, tc := range []struct{ arg, want string }{
		{"https://app:" + pw + "@x.example.com/", "https://app:" + Marker("url_password", pw) + "@x.example.com/"},
		{"psql postgres://app:" + pw + "@db.internal/prod -c 'select 1'", "psql postgres://app:" + Marker("url_password", pw) + "@db.internal/prod -c 'select 1'"},
		{"git clone https://:" + pw + "@git.example.com/r.git", "git clone https://:" + Marker("url_password", pw) + "@git.example.com/r.git"},
	} {
		facts, tags := ScanArgs(map[string]any{"x": tc.arg})
		if len(facts) != 1 || facts[0].Kind != "url_password" || !slices.Contains(tags, "secrets") {
			t.Errorf("%s: facts %+v tags %v", tc.arg, facts, tags)
		}
		args, found := Conceal(map[string]any{"x": tc.arg})
		if args["x"] != tc.want || len(found) != 1 {
			t.Errorf("%s: concealed as %v (%d found), want %s", tc.arg, args["x"], len(found), tc.want)
			continue
		}
		back, err := Reveal(args, found)
		if err != nil || back["x"] != tc.arg {
			t.Errorf("%s: revealed as %v: %v", tc.arg, back["x"], err)
		}
	}
	for _, s := range []string{"https://app:$PASS@x.example.com/", "ssh://git@github.com:22/r.git", "https://x.example.com:8443/a@b", "mailto:a@example.com"} {
		if facts, _ := ScanArgs(map[string]any{"x": s}); len(facts) != 0 {
			t.Errorf("%s: %+v, want no secret", s, facts)
		}
	}
}

// TestQuoteSplitTokensAreSecrets: shell quoting can split a token so that
// its shape is not in the text as written (gh""p_…, gh\p_…, 'AKIA'QW…),
// though the command runs with it whole. Such a value is tagged and
// concealed whole.
func TestQuoteSplitTokensAreSecrets(t *testing.T) {
	const tok = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	for _, cmd := range []string{
		`curl -H "Authorization: Bearer gh""p_` + tok + `" https://api.example.com/x`,
		`curl -H Authorization:\ Bearer\ gh\p_` + tok + ` https://api.example.com/x`,
		`AWS_ACCESS_KEY_ID='AKIA'QWERTYUIOPASDFGH aws s3 ls`,
		`echo ghp_` + tok + ` gh''p_` + tok[1:] + `Z`,
	} {
		facts, tags := ScanArgs(map[string]any{"command": cmd})
		if len(facts) == 0 || !slices.Contains(tags, "secrets") {
			t.Errorf("%s: facts %+v tags %v", cmd, facts, tags)
		}
		args, found := Conceal(map[string]any{"command": cmd})
		text := args["command"].(string)
		if strings.Contains(text, tok[4:]) || strings.Contains(text, "QWERTYUIOPASDFGH") || len(found) == 0 {
			t.Errorf("%s: concealed as %s", cmd, text)
			continue
		}
		back, err := Reveal(args, found)
		if err != nil || back["command"] != cmd {
			t.Errorf("%s: revealed as %v: %v", cmd, back["command"], err)
		}
	}
	for _, s := range []string{`grep -r "TODO" src`, `echo 'it''s fine'`, `printf "%s\n" a b`} {
		if facts, _ := ScanArgs(map[string]any{"command": s}); len(facts) != 0 {
			t.Errorf("%s: %+v, want no secret", s, facts)
		}
	}
}
