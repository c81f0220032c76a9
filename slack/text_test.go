package slack

import "testing"

func TestTextAndCode(t *testing.T) {
	cases := []struct{ in, text, code string }{
		{"plain", "plain", "`plain`"},
		{"<!channel> & <@U024BE7LH>", "&lt;!channel&gt; &amp; &lt;@U024BE7LH&gt;", "`&lt;!channel&gt; &amp; &lt;@U024BE7LH&gt;`"},
		{"<https://evil.example|Click>", "&lt;https://evil.example|Click&gt;", "`&lt;https://evil.example|Click&gt;`"},
		{"@here @Channel @everyone @group @hereby", "@\u2060here @\u2060Channel @\u2060everyone @\u2060group @hereby", "`@\u2060here @\u2060Channel @\u2060everyone @\u2060group @hereby`"},
		{"x` *bold* `y", "x` *bold* `y", "`x\u02cb *bold* \u02cby`"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Code(c.in); got != c.code {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.code)
		}
	}
}
