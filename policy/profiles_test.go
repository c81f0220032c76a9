package policy

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein"
)

// TestProfileProblems: closed world. Every path that would show a contained
// run what containment hides is refused on its own line, with how to fix it.
func TestProfileProblems(t *testing.T) {
	cases := []struct {
		read, want string
	}{
		{"/", "line 5: profile p: read / is the whole file system"},
		{"/etc", `line 5: profile p: read "/etc" contains /etc/`},
		{"/var", `line 5: profile p: read "/var" contains /var/run`},
		{"/home", `read "/home": home directories`},
		{"/home/ann", `read "/home/ann": home directories`},
		{"/root", `read "/root": root's home`},
		{"/proc", `read "/proc": /proc reaches other processes`},
		{"/proc/self/root", `read "/proc/self/root": /proc`},
		{"/sys/kernel", `read "/sys/kernel"`},
		{"/dev", `read "/dev"`},
		{"/run/docker.sock", `read "/run/docker.sock": /run holds other programs' sockets`},
		{"/var/run", `read "/var/run"`},
		{"/var/lib/rein", `read "/var/lib/rein": rein's own state`},
		{"/var/lib", `read "/var/lib" contains /var/lib/rein`},
		{"/etc/rein/policy", `rein's own configuration`},
		{"/etc/shadow", "password hashes"},
		{"/etc/ssh", "SSH host keys"},
		{"/etc/ssl/private", "TLS private keys"},
		{"/tmp", "a contained run has a private /tmp"},
		{"usr/lib", `read "usr/lib" is relative; name an absolute system path`},
		{"./bin", "is relative"},
		{"/usr/../etc", `not a clean path; write "/etc"`},
		{"/usr/", `not a clean path; write "/usr"`},
		{"/usr/lib/*", "name a literal path"},
	}
	for _, c := range cases {
		src := "version: 1\nprofiles:\n  p:\n    read:\n      - " + c.read + "\n"
		_, err := Compile([]byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("read %s: %v, want %q", c.read, err, c.want)
		}
	}
	for _, ok := range []string{"/usr", "/etc/ssl", "/etc/passwd", "/opt/toolchain", "/usr/local/go", "/var/lib/dpkg", "/srv/docs"} {
		src := "version: 1\nprofiles:\n  p: {read: [" + ok + "]}\n"
		if _, err := Compile([]byte(src)); err != nil {
			t.Errorf("read %s: %v", ok, err)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"version: 1\nprofiles:\n  p:\n    read: [/usr]\n    env:\n      - GOFLAGS\n      - AWS_SECRET_ACCESS_KEY\n", "line 7: profile p: env AWS_SECRET_ACCESS_KEY is shaped like a secret"},
		{"version: 1\nprofiles:\n  p: {read: [/usr], env: [SSH_AUTH_SOCK]}\n", "SSH_AUTH_SOCK is shaped like a secret"},
		{"version: 1\nprofiles:\n  p: {read: [/usr], env: [LD_PRELOAD]}\n", "LD_PRELOAD changes what runs"},
		{"version: 1\nprofiles:\n  p: {read: [/usr], env: [HTTPS_PROXY]}\n", "set by rein run itself"},
		{"version: 1\nprofiles:\n  p: {read: [/usr], env: [\"A B\"]}\n", "not a variable name"},
		{"version: 1\nprofiles:\n  p: {env: [CI]}\n", "line 3: profile p: names no system path to read"},
		{"version: 1\nprofiles:\n  Big Profile: {read: [/usr]}\n", "profile Big Profile: use lower-case letters"},
		{"version: 1\nprofiles:\n  p: {read: [/usr], write: [/srv]}\n", `unknown field "write" in a profile; known fields: description, read, env, limits`},
		{"version: 1\nprofiles:\n  p:\n    read: [/usr]\n    limits: {processes: 8}\n", "line 5: profile p: limits: processes must be from 16 to 1048576, not 8"},
		{"version: 1\nprofiles:\n  p:\n    read: [/usr]\n    limits: {memory: 512}\n", `limits: "memory" is not a limit; the limits are cpu_seconds, file_size_mb, memory_mb, open_files, processes`},
		{"version: 1\nprofiles:\n  p: {read: [/usr], limits: {memory_mb: 0}}\n", "memory_mb must be from 256"},
		{"version: 1\nprofiles:\n  p: {read: [/usr], limits: {cpu_seconds: x}}\n", "cannot unmarshal"},
		{"version: 1\nprofiles:\n  p: {read: [/usr, /usr]}\n", `read "/usr" is listed twice`},
	} {
		if _, err := Compile([]byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
	// The built-in coding profile passes its own rules.
	if ps := rein.CodingProfile.Problems(); ps != nil {
		t.Errorf("the built-in coding profile: %v", ps)
	}
}

// TestProfilesAreVersionedAndTiered: profiles are part of the policy's
// version; the global tier's profile of a name wins over a tenant's, which
// may add others; with none named, the built-in coding profile is in force.
func TestProfilesAreVersionedAndTiered(t *testing.T) {
	a, err := Compile([]byte("version: 1\nprofiles:\n  coding: {read: [/usr]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compile([]byte("version: 1\nprofiles:\n  coding: {read: [/usr, /opt]}\n  docs: {read: [/srv/docs]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Version == b.Version {
		t.Fatal("two profiles sections, one version")
	}
	set := NewSet(a, b)
	if p, ok := set.Profile("coding"); !ok || strings.Join(p.Read, " ") != "/usr" {
		t.Fatalf("the global tier's coding: %+v", p)
	}
	if p, ok := set.Profile("docs"); !ok || p.Read[0] != "/srv/docs" {
		t.Fatalf("the tenant's docs: %+v", p)
	}
	if got := strings.Join(set.ProfileNames(), ","); got != "coding,docs" {
		t.Fatalf("names: %s", got)
	}
	if ps := TierProblems(a, b); len(ps) != 1 || !strings.Contains(ps[0].Message, "profile coding is defined by the global tier") {
		t.Fatalf("tier problems: %v", ps)
	}
	none, _ := Compile([]byte("version: 1\n"))
	for _, s := range []*Set{NewSet(none, nil), nil} {
		if p, ok := s.Profile("coding"); !ok || p.Name != "coding" || len(p.Read) != len(rein.CodingProfile.Read) {
			t.Fatalf("no profiles named: %+v %v", p, ok)
		}
		if _, ok := s.Profile("docs"); ok {
			t.Fatal("a profile no policy names")
		}
	}
	if _, ok := NewSet(a, nil).Profile("docs"); ok {
		t.Fatal("a policy with profiles still has other built-in ones")
	}
}

// TestSampleCodingIsTheBuiltIn: the coding profile the sample policy ships
// is the one rein applies when a policy names none, so that adopting the
// sample changes nothing a run reads.
func TestSampleCodingIsTheBuiltIn(t *testing.T) {
	src, err := os.ReadFile("../examples/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := NewSet(p, nil).Profile("coding")
	if !ok || !sameSet(got.Read, rein.CodingProfile.Read) || !sameSet(got.Env, rein.CodingProfile.Env) || got.Limits == nil || *got.Limits != *rein.CodingProfile.Limits {
		t.Fatalf("the sample's coding profile differs from the built-in:\n%+v\n%+v", got, rein.CodingProfile)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
