package rein

import (
	"fmt"
	"path"
	"strings"
)

// Profile is what a contained run (rein run) may touch beyond its workspace
// and its private home and temp directories: the system paths it may read
// (closed world: nothing else outside the workspace is even visible) and the
// environment variables that pass through. Profiles are policy: the policy
// in force names them (containment.md), so the policy's author decides, not
// the machine the agent runs on.
type Profile struct {
	Name string `json:"name"`
	// Read are absolute system paths (directories or files) visible read
	// only. Missing ones are skipped.
	Read []string `json:"read"`
	// Env are the variables kept from the caller's environment, besides
	// PATH, TERM, LANG and LC_* (never one shaped like a secret).
	Env []string `json:"env"`
	// Limits bound the resources of the contained processes (nil: none
	// beyond the machine's).
	Limits *Limits `json:"limits,omitempty"`
}

// Limits are resource limits of a contained run, applied to its command
// and everything it starts (setrlimit before the command runs; each is
// the soft and hard limit, never above what rein run itself may use). 0
// leaves one as it is.
type Limits struct {
	// Processes the run's user may have at once (RLIMIT_NPROC, counted in
	// the sandbox's own user namespace, threads included).
	Processes int64 `json:"processes,omitempty"`
	// OpenFiles per process (RLIMIT_NOFILE).
	OpenFiles int64 `json:"open_files,omitempty"`
	// MemoryMB is each process's address space in MiB (RLIMIT_AS).
	MemoryMB int64 `json:"memory_mb,omitempty"`
	// CPUSeconds of processor time per process (RLIMIT_CPU).
	CPUSeconds int64 `json:"cpu_seconds,omitempty"`
	// FileSizeMB is the largest file a process may write, in MiB (RLIMIT_FSIZE).
	FileSizeMB int64 `json:"file_size_mb,omitempty"`
}

// LimitBounds are the least and the most each limit may be set to, by
// its name in a policy's profiles section: less than the least would stop
// any toolchain from starting.
var LimitBounds = map[string][2]int64{
	"processes":    {16, 1 << 20},
	"open_files":   {64, 1 << 20},
	"memory_mb":    {256, 1 << 24},
	"cpu_seconds":  {10, 1 << 31},
	"file_size_mb": {1, 1 << 24},
}

// CodingProfile is the profile for building, testing and searching code:
// what toolchains read (containment.md, "Boundaries"), never /etc
// wholesale, never a home directory. It is in force under the name
// "coding" when the policy in force names no profiles at all.
var CodingProfile = Profile{
	Name: "coding",
	Read: []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/pki",
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/os-release", "/etc/debian_version",
		"/etc/hosts", "/etc/localtime", "/etc/timezone", "/usr/share/zoneinfo", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/alternatives", "/etc/mime.types", "/etc/gitconfig", "/etc/inputrc", "/etc/profile",
		"/opt",
		"/usr/local/go",
	},
	Env: []string{"GOFLAGS", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "NODE_OPTIONS", "CI", "COLORTERM", "TZ", "EDITOR"},
	// Room for a parallel build and an agent CLI, none for a fork bomb or
	// a process that eats the machine's memory: 2,048 processes and
	// threads, 32 GiB of address space each (V8 and Java reserve much
	// more than they use), four hours of processor time each, files of at
	// most 16 GiB.
	Limits: &Limits{Processes: 2048, OpenFiles: 65536, MemoryMB: 32768, CPUSeconds: 14400, FileSizeMB: 16384},
}

// unreadable are the system paths no profile may make readable, each with
// why (containment.md: closed world, never /etc wholesale, never a home
// directory). A profile path is refused when it is one of them, lies below
// one, or contains one (so `/`, `/etc` and `/var` are refused too) unless
// parentOK: then the file's own permissions keep it from ordinary users
// and its parent may be named.
var unreadable = []struct {
	path, why string
	parentOK  bool
}{
	{"/home", "home directories hold people's keys, tokens and shell history", false},
	{"/root", "root's home directory holds keys and tokens", false},
	{"/Users", "home directories hold people's keys, tokens and shell history", false},
	{"/proc", "/proc reaches other processes (their environment, memory, open files)", false},
	{"/sys", "/sys exposes the kernel's and devices' controls", false},
	{"/dev", "/dev holds devices; a contained run gets its own minimal /dev", false},
	{"/run", "/run holds other programs' sockets (docker.sock, ssh-agent, D-Bus)", false},
	{"/var/run", "/var/run holds other programs' sockets (docker.sock, ssh-agent, D-Bus)", false},
	{"/tmp", "the shared /tmp holds other programs' files; a contained run has a private /tmp", false},
	{"/var/tmp", "the shared /var/tmp holds other programs' files; a contained run has a private temp", false},
	{"/var/lib/rein", "rein's own state (its database and keys)", false},
	{"/etc/rein", "rein's own configuration (policy, notifier secrets)", false},
	{"/var/lib/docker", "container images and volumes hold other programs' secrets", false},
	{"/var/mail", "people's mail", false},
	{"/var/spool", "people's mail and queued jobs", false},
	{"/var/log", "logs of the whole system", false},
	{"/var/backups", "copies of /etc/shadow and other secrets", false},
	{"/etc/shadow", "password hashes", false},
	{"/etc/shadow-", "password hashes", false},
	{"/etc/gshadow", "password hashes", false},
	{"/etc/gshadow-", "password hashes", false},
	{"/etc/sudoers", "who may become root", false},
	{"/etc/sudoers.d", "who may become root", false},
	{"/etc/ssh", "the machine's SSH host keys", false},
	{"/etc/ssl/private", "the machine's TLS private keys", true}, // mode 0700: /etc/ssl stays nameable
	{"/etc/krb5.keytab", "the machine's Kerberos keys", false},
	{"/etc/security", "PAM and login secrets", false},
	{"/etc/NetworkManager/system-connections", "Wi-Fi and VPN passwords", false},
	{"/etc/wireguard", "VPN private keys", false},
	{"/etc/openvpn", "VPN keys", false},
	{"/etc/docker", "the Docker daemon's credentials and TLS keys", false},
	{"/etc/kubernetes", "cluster credentials", false},
	{"/etc/letsencrypt", "TLS private keys", false},
	{"/etc/netrc", "stored passwords", false},
}

var envNameRE = lazyRE(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// ProfileNameRE is what a profile's name looks like (compiled on first
// use).
var ProfileNameRE = lazyRE(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// CheckProfileRead says why a profile may not make path p readable, or
// nil. The message says how to fix it.
func CheckProfileRead(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("an empty path; name an absolute system path such as /usr")
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is relative; name an absolute system path such as /usr (the workspace is always readable)", p)
	case strings.ContainsAny(p, "*?[\\\x00\n"):
		return fmt.Errorf("%q: name a literal path; patterns are not expanded", p)
	case path.Clean(p) != p:
		return fmt.Errorf("%q is not a clean path; write %q", p, path.Clean(p))
	case p == "/":
		return fmt.Errorf("/ is the whole file system: a profile names the system paths toolchains need, e.g. /usr, /lib, /etc/ssl")
	}
	for _, u := range unreadable {
		if p == u.path || strings.HasPrefix(p, u.path+"/") {
			return fmt.Errorf("%q: %s, so no profile reads it", p, u.why)
		}
	}
	for _, u := range unreadable {
		if !u.parentOK && strings.HasPrefix(u.path, p+"/") {
			return fmt.Errorf("%q contains %s (%s): name the paths below it that toolchains need instead (e.g. %s)", p, u.path, u.why, example(p))
		}
	}
	return nil
}

// example suggests narrower paths for a refused directory.
func example(dir string) string {
	switch dir {
	case "/etc":
		return "/etc/ssl, /etc/passwd, /etc/os-release"
	case "/var":
		return "/var/lib/dpkg"
	}
	return dir + "/<what the tool needs>"
}

// CheckProfileEnv says why a profile may not pass variable name into a
// contained run, or nil.
func CheckProfileEnv(name string) error {
	switch {
	case !envNameRE().MatchString(name):
		return fmt.Errorf("%q is not a variable name (letters, digits and _, not starting with a digit)", name)
	case SecretShapedEnv(name):
		return fmt.Errorf("%s is shaped like a secret (or reaches one), and secrets never pass into a contained run; an agent CLI's own credential is handled by rein run", name)
	case name == "PATH" || name == "HOME" || name == "TMPDIR" || strings.HasSuffix(name, "_PROXY") || strings.HasSuffix(name, "_proxy"):
		return fmt.Errorf("%s is set by rein run itself; remove it from the profile", name)
	case strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "REIN_"):
		return fmt.Errorf("%s changes what runs or reaches rein; it never passes into a contained run", name)
	}
	return nil
}

// Problems lists what is wrong with the profile, each message saying how
// to fix it; nil when it is sound.
func (p Profile) Problems() []string {
	var out []string
	if !ProfileNameRE().MatchString(p.Name) {
		out = append(out, fmt.Sprintf("profile name %q: use lower-case letters, digits, '.', '_' and '-' (at most 64)", p.Name))
	}
	for _, r := range p.Read {
		if err := CheckProfileRead(r); err != nil {
			out = append(out, "read "+err.Error())
		}
	}
	for _, e := range p.Env {
		if err := CheckProfileEnv(e); err != nil {
			out = append(out, "env "+err.Error())
		}
	}
	return out
}

// SecretShapedEnv reports whether an environment variable's name says it
// holds a secret, or reaches something that does (an agent socket, a
// cluster config); such a variable never passes into a contained run.
func SecretShapedEnv(name string) bool {
	n := strings.ToUpper(name)
	if n == "GOPRIVATE" { // a list of module path patterns, not a secret
		return false
	}
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "SESSION", "COOKIE", "PRIVATE"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	switch n {
	case "SSH_AUTH_SOCK", "DOCKER_HOST", "KUBECONFIG", "REIN_SERVER", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS":
		return true
	}
	return false
}
