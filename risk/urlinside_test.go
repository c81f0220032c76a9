package risk

import (
	"slices"
	"testing"
)

// namesInside are DNS names that resolve to a private, loopback or
// metadata address by their spelling alone: wildcard DNS services in every
// spelling (dotted, dashed, hex, octal, with prefixes, IPv6 with dashes),
// rebinding services, *.localhost, loopback aliases and the metadata names
// of cloud providers.
var namesInside = []string{
	"127.0.0.1.nip.io", "app.127.0.0.1.nip.io", "magic-127-0-0-1.nip.io", "app-127-0-0-1.sslip.io",
	"7f000001.nip.io", "app-7f000001.nip.io", "a9fea9fe.nip.io", "0177.0.0.1.nip.io", "10.0.0.1.xip.io",
	"169-254-169-254.sslip.io", "app.169.254.169.254.sslip.io", "192.168.1.1.traefik.me",
	"--1.sslip.io", "app.--1.sslip.io", "app---1.sslip.io", "fe80--1.sslip.io", "fd00--1.sslip.io",
	"--ffff-7f00-1.sslip.io", "--ffff-a9fe-a9fe.sslip.io",
	"make-1.2.3.4-rebind-127.0.0.1-rr.1u.ms", "make-1-2-3-4-rebind-127-0-0-1-rr.1u.ms", "x.1u.ms",
	"7f000001.c0a80001.rbndr.us", "0a000001.08080808.rbndr.us", "dynamic.rebind.it",
	"s-1.2.3.4-127.0.0.1-1-rr.rebind.network",
	"app.localhost", "APP.LOCALHOST.", "localhost.", "localtest.me", "foo.lvh.me", "x.vcap.me",
	"metadata.google.internal", "METADATA.GOOGLE.INTERNAL.", "metadata", "metadata.goog", "instance-data",
	"instance-data.ec2.internal", "metadata.tencentyun.com", "kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// TestNamesThatResolveInside: each name is private in a URL and in a shell
// command's URL; names that only carry public addresses are not.
func TestNamesThatResolveInside(t *testing.T) {
	for _, h := range namesInside {
		if f, tags := ClassifyURL("https://" + h + "/x"); !f.Private || !slices.Contains(tags, "url.private") {
			t.Errorf("%s: URL private %v, tags %v", h, f.Private, tags)
		}
		f, _ := ClassifyShell("curl -s http://" + h + ":8080/")
		if len(f.URLs) != 1 || !f.URLs[0].Private {
			t.Errorf("curl %s: URL facts %+v", h, f.URLs)
		}
	}
	for _, h := range []string{"1.1.1.1.nip.io", "2a01-4f8-c17-b8f--2.sslip.io", "example.com", "api.github.com",
		"release-2024.example.com"} {
		if f, tags := ClassifyURL("https://" + h + "/"); f.Private {
			t.Errorf("%s: private (tags %v), but it names only public addresses", h, tags)
		}
	}
}
