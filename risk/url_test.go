package risk

import "testing"

func TestClassifyURL(t *testing.T) {
	cases := []struct {
		raw     string
		ip      string
		private bool
		tags    []string // must be present
		absent  []string // must not be present
	}{
		{"https://example.com/x", "", false, []string{"url"}, []string{"url.private", "url.parse_error", "url.non_http"}},
		{"http://127.0.0.1/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://2130706433/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://0x7f.1/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://0x7f000001/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://0177.0.0.1/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://017700000001/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://127.1/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://127.0.0.1./", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://[::ffff:127.0.0.1]/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://[::ffff:7f00:1]/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://[::127.0.0.1]/", "127.0.0.1", true, []string{"url.private"}, nil},
		{"http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254", true, []string{"url.metadata", "url.private"}, nil},
		{"http://[::1]:8080/", "::1", true, []string{"url.private"}, nil},
		{"http://[fe80::1%25eth0]/", "fe80::1", true, []string{"url.private"}, nil},
		{"http://[fd12:3456::1]/", "fd12:3456::1", true, []string{"url.private"}, nil},
		{"http://169.254.169.254/latest/meta-data", "169.254.169.254", true, []string{"url.metadata", "url.private"}, nil},
		{"http://0xa9fea9fe/", "169.254.169.254", true, []string{"url.metadata", "url.private"}, nil},
		{"http://[fd00:ec2::254]/", "fd00:ec2::254", true, []string{"url.metadata", "url.private"}, nil},
		{"http://metadata.google.internal/computeMetadata/v1/", "", true, []string{"url.metadata", "url.private"}, nil},
		{"http://METADATA.GOOGLE.INTERNAL./", "", true, []string{"url.metadata"}, nil},
		{"http://good.com@10.0.0.1/", "10.0.0.1", true, []string{"url.private"}, nil},
		{"http://10.0.0.1#@good.com/", "10.0.0.1", true, []string{"url.private"}, nil},
		{"http://user:pass@192.168.1.10:8080/", "192.168.1.10", true, []string{"url.private"}, nil},
		{"http://172.31.255.255/", "172.31.255.255", true, []string{"url.private"}, nil},
		{"http://172.32.0.1/", "172.32.0.1", false, nil, []string{"url.private"}},
		{"http://100.64.0.1/", "100.64.0.1", true, []string{"url.private"}, nil},
		{"http://0.0.0.0:8000/", "0.0.0.0", true, []string{"url.private"}, nil},
		{"http://0/", "0.0.0.0", true, []string{"url.private"}, nil},
		{"http://localhost:3000/", "", true, []string{"url.private"}, nil},
		{"http://api.localhost/", "", true, []string{"url.private"}, nil},
		{"http://8.8.8.8/", "8.8.8.8", false, nil, []string{"url.private"}},
		{"http://1.2.3.4.5/", "", false, nil, []string{"url.private"}},
		{"http://256.1.1.1/", "", false, nil, []string{"url.private"}},
		{"file:///etc/passwd", "", false, []string{"url.non_http"}, []string{"url.parse_error"}},
		{"http:///nohost", "", false, []string{"url.parse_error"}, nil},
		{"ftp://files.example.com/a", "", false, []string{"url.non_http"}, nil},
		{"gopher://127.0.0.1:6379/_FLUSHALL", "127.0.0.1", true, []string{"url.non_http", "url.private"}, nil},
		{"not a url", "", false, []string{"url.parse_error"}, nil},
		{"http://[::1/", "", false, []string{"url.parse_error"}, nil},
		{"http://example.com:99999/", "", false, []string{"url.parse_error"}, nil},
		{"", "", false, []string{"url.parse_error"}, nil},
	}
	for _, c := range cases {
		f, tags := ClassifyURL(c.raw)
		if f.IP != c.ip || f.Private != c.private {
			t.Errorf("%q: ip %q private %v, want %q %v", c.raw, f.IP, f.Private, c.ip, c.private)
		}
		checkTags(t, c.raw, tags, c.tags, c.absent)
	}
}

func FuzzClassifyURL(f *testing.F) {
	for _, s := range []string{"http://0x7f.1/", "http://[::ffff:127.0.0.1]/", "http://a@b:1/", "%", "http://[", "http://0x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fact, tags := ClassifyURL(raw)
		if len(tags) == 0 || tags[0] != "url" {
			t.Fatalf("tags %v", tags)
		}
		if fact.IP != "" && !fact.Private {
			if a, ok := ParseHostIP(fact.IP); ok && IsPrivate(a) {
				t.Fatalf("%q: private address %s not marked private", raw, fact.IP)
			}
		}
	})
}
