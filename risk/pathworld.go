package risk

import (
	"slices"
	"strings"
)

// The closed world of paths: the tables of paths_data.go name what is known
// to be dangerous, and this file says where what is not on them is still
// not harmless — the system's and a home's private places unless known
// public or inert, files shaped like secrets unless they are templates,
// ".." after a component that may be a link, names that reach another
// host, and writes into hidden or package folders unless known inert.

// closedRoots are the directories whose contents are private to the host
// (configuration, state, logs, other processes, devices, root's home): a
// read strictly below one is a secret unless publicPaths names it. The
// directory itself is not (listing /etc reveals names only). Sources: the
// Filesystem Hierarchy Standard 3.0 (/etc host-specific configuration,
// /var variable data, /run run-time data, /boot, /root), proc(5), sysfs(5),
// devices.txt (Linux), Apple's File System Programming Guide (/private,
// /Library), Microsoft's "Windows directory" and "ProgramData" docs.
var closedRoots = []string{"/etc", "/var", "/run", "/proc", "/sys", "/dev", "/boot", "/root", "/private",
	"/library", "?:/windows", "?:/programdata"}

// hiddenHomeDirs are the folders of a home that hold per-application state
// although their names do not start with a dot: macOS hides ~/Library (its
// Containers and Group Containers are the application sandboxes), Windows
// hides AppData, snapd keeps each snap's private home in ~/snap/NAME and
// Flatpak each application's in ~/.var/app/ID (Apple File System
// Programming Guide; Microsoft "Roaming User Profiles"; snapcraft.io "Data
// locations"; docs.flatpak.org "Sandbox Permissions").
var hiddenHomeDirs = set("library", "appdata", "snap")

// publicPaths are places under a closed root (or, when the policy names a
// workspace, anywhere outside it) whose reading reveals nothing private:
// files the distribution ships the same everywhere or that every user may
// read by design. Sources: FHS 3.0 (/usr "shareable, read-only data",
// /usr/share, /usr/include, /usr/lib, /bin, /lib), os-release(5),
// lsb_release(1), hostname(5), hosts(5), resolv.conf(5), nsswitch.conf(5),
// services(5), protocols(5), shells(5), timezone and localtime
// (tzset(3)), passwd(5) and group(5) (world-readable; password hashes live
// in shadow(5)), sshd_config(5) (server settings, no keys), proc(5)
// (cpuinfo, meminfo, version, loadavg, uptime, stat, filesystems; a
// process's own status), sysfs(5) (CPU topology, cgroup limits runtimes
// read), null(4), random(4), tty(4) and fd(4) (a process's own streams).
var publicPaths = []string{
	"/usr/share/**", "/usr/include/**", "/usr/lib/**", "/usr/lib64/**", "/usr/lib32/**", "/usr/libexec/**",
	"/usr/bin/**", "/usr/sbin/**", "/usr/src/**", "/usr/local/share/**", "/usr/local/include/**",
	"/usr/local/lib/**", "/usr/local/bin/**", "/bin/**", "/sbin/**", "/lib/**", "/lib64/**", "/lib32/**",
	"/etc/os-release", "/etc/lsb-release", "/etc/debian_version", "/etc/alpine-release", "/etc/redhat-release",
	"/etc/fedora-release", "/etc/system-release", "/etc/arch-release", "/etc/issue", "/etc/issue.net",
	"/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/services",
	"/etc/protocols", "/etc/networks", "/etc/shells", "/etc/timezone", "/etc/localtime", "/etc/passwd",
	"/etc/group", "/etc/ssh/sshd_config", "/etc/ssh/ssh_config", "/etc/mime.types", "/etc/inputrc",
	"/etc/ld.so.conf", "/etc/ld.so.conf.d/**",
	"/proc/cpuinfo", "/proc/meminfo", "/proc/version", "/proc/loadavg", "/proc/uptime", "/proc/stat",
	"/proc/filesystems", "/proc/self/status", "/proc/self/stat", "/proc/self/statm", "/proc/self/limits",
	"/sys/devices/system/cpu/**", "/sys/fs/cgroup/**",
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/stdin",
	"/dev/stdout", "/dev/stderr", "/dev/fd/*",
}

// inertHomePaths are hidden files of a home whose reading reveals no
// credential: ignore lists (git-config(1) core.excludesFile), EditorConfig
// (editorconfig.org), readline's inputrc (readline(3)), the settings of
// tmux, nano, vim and less (their manuals: key bindings and display),
// hushlogin (login(1)), and the XDG user directories (xdg-user-dirs).
var inertHomePaths = []string{"~/.gitignore", "~/.gitignore_global", "~/.config/git/ignore", "~/.editorconfig",
	"~/.inputrc", "~/.tmux.conf", "~/.config/tmux/tmux.conf", "~/.nanorc", "~/.vimrc", "~/.hushlogin",
	"~/.selected_editor", "~/.config/user-dirs.dirs", "~/.config/user-dirs.locale"}

// linkedPaths are components that are symbolic links on common systems, so
// that ".." after them (or after anything below them) leaves for another
// place than lexical cleaning says. Only the component ".." climbs out of
// matters: below a link, a real folder's parent is where cleaning puts it. Sources: FHS 3.0 and systemd's
// file-hierarchy(7) (/var/run and /var/lock link into /run; merged /usr:
// /bin, /sbin, /lib* link into /usr), proc(5) (/proc/self,
// /proc/thread-self, /proc/net, /proc/mounts, /proc/PID/{cwd,root,exe},
// /proc/PID/fd/N, /proc/PID/map_files, /proc/PID/ns), fd(4) and udev
// (/dev/fd, /dev/std*, /dev/disk/by-*, /dev/block, /dev/char), sysfs(5)
// (/sys/class, /sys/block, /sys/bus/*/devices link into /sys/devices),
// /etc/mtab (mount(8)), /etc/alternatives (update-alternatives(1)),
// /etc/localtime and /etc/resolv.conf (systemd-resolved(8), timedatectl(1)),
// Apple (macOS: /etc, /tmp and /var link into /private), and OSTree
// (ostree.readthedocs.io "Adapting existing distributions": /home, /opt,
// /srv, /mnt, /root, /media and /usr/local link into /var or /run).
var linkedPaths = []string{"/var/run", "/var/lock", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
	"/proc/self", "/proc/thread-self", "/proc/net", "/proc/mounts", "/proc/*/cwd", "/proc/*/root", "/proc/*/exe",
	"/proc/*/fd/*", "/proc/*/map_files/*", "/proc/*/ns/*", "/proc/*/task/*/cwd", "/proc/*/task/*/root",
	"/proc/*/task/*/exe", "/proc/*/task/*/fd/*", "/dev/fd", "/dev/fd/*", "/dev/stdin", "/dev/stdout",
	"/dev/stderr", "/dev/disk/*/*", "/dev/block/*", "/dev/char/*", "/dev/mapper/*", "/sys/class/*/*",
	"/sys/block/*", "/sys/bus/*/devices/*", "/sys/dev/*/*", "/etc/mtab", "/etc/alternatives/*",
	"/etc/localtime", "/etc/resolv.conf", "/etc", "/tmp", "/var", "/home", "/opt", "/srv", "/mnt", "/root",
	"/media", "/usr/local"}

// templateExts are the last (or second-last) extensions of files that show
// the shape of a secret file without its values: .env.example, .env.sample,
// .env.template, .env.dist, secrets.example.yaml (the dotenv, Symfony
// (.env.dist) and twelve-factor conventions).
var templateExts = set("example", "examples", "sample", "template", "tmpl", "tpl", "dist", "defaults", "schema")

// sourceExts are the extensions of programming languages' source files:
// credentials.go, kubeconfig.py or secrets_test.go are code that handles
// secrets (grpc's credentials package, a client library), not a store of
// them, so a name pattern that matches anywhere (credentials.*) does not
// make them secret. Shell scripts and text files are not among them: they
// often carry the values themselves.
var sourceExts = set("go", "py", "pyi", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "rb", "rs", "java", "kt", "kts",
	"scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "fs", "swift", "m", "mm", "php", "lua", "dart", "ex", "exs",
	"erl", "hs", "ml", "clj", "groovy", "vue", "svelte", "zig", "nim", "jl", "r")

// IsSourceCode reports a file name with a programming language's
// extension (any case): code, never a secret by a name pattern.
func IsSourceCode(base string) bool {
	i := strings.LastIndexByte(base, '.')
	return i > 0 && sourceExts[strings.ToLower(base[i+1:])]
}

// isTemplate reports a file name shaped like a secret file's template.
func isTemplate(base string) bool {
	parts := strings.Split(base, ".")
	if len(parts) < 2 {
		return false
	}
	n := len(parts)
	return templateExts[parts[n-1]] || n >= 3 && templateExts[parts[n-2]]
}

// inertWrites are hidden files and folders of a project whose writing arms
// nothing: what tools read as lists of names, versions or formatting
// (git's gitignore(5) and gitmailmap(5), .dockerignore (docs.docker.com,
// ".dockerignore files"), .npmignore, .prettierignore, .eslintignore,
// EditorConfig, Prettier's JSON/YAML/TOML configuration (prettier.io
// "Configuration File"; its .js forms run code and are not listed),
// markdownlint's, version pins read as a string (nvm .nvmrc,
// .node-version, pyenv .python-version, rbenv .ruby-version)), dotenv
// templates that nothing loads (.env.example and its kin), VS Code's
// extension recommendations, and the issue, pull-request and
// code-owner files of GitHub and GitLab (docs.github.com "Configuring
// issue templates", "About code owners"; docs.gitlab.com "Description
// templates").
var inertWrites = []string{"**/.gitignore", "**/.gitkeep", "**/.keep", "**/.mailmap", "**/.dockerignore",
	"**/.npmignore", "**/.prettierignore", "**/.eslintignore", "**/.stylelintignore", "**/.editorconfig",
	"**/.prettierrc", "**/.prettierrc.json", "**/.prettierrc.yaml", "**/.prettierrc.yml", "**/.prettierrc.toml",
	"**/.markdownlint.json", "**/.markdownlint.yaml", "**/.markdownlint.yml", "**/.nvmrc", "**/.node-version",
	"**/.python-version", "**/.ruby-version", "**/.vscode/extensions.json", "**/.env.example", "**/.env.sample",
	"**/.env.template", "**/.env.dist",
	"**/.github/issue_template/**", "**/.github/issue_template.md", "**/.github/pull_request_template.md",
	"**/.github/pull_request_template/**", "**/.github/codeowners", "**/.github/funding.yml",
	"**/.github/*.md", "**/.gitlab/issue_templates/**", "**/.gitlab/merge_request_templates/**",
	"**/.gitlab/codeowners"}

// packageDirs are folders whose contents a package manager or a language
// loads as code without anyone reading them: npm's node_modules (npm
// "folders"), Bower's and jspm's, Go's and Composer's vendor (go help
// mod vendor; getcomposer.org autoload), Python's site-packages,
// dist-packages and __pypackages__ (the site module; PEP 582).
var packageDirs = set("node_modules", "bower_components", "jspm_packages", "vendor", "site-packages",
	"dist-packages", "__pypackages__")

// segPatterns is a table of path patterns split into lower-case segments.
type segPatterns [][]string

func compilePatterns(ps []string) segPatterns {
	out := make(segPatterns, len(ps))
	for i, p := range ps {
		out[i] = strings.Split(strings.ToLower(p), "/")
	}
	return out
}

// match reports whether a plain path (lower case, split at "/") matches
// one of the patterns.
func (ps segPatterns) match(segs []string) bool {
	for _, p := range ps {
		if matchSegments(p, segs) {
			return true
		}
	}
	return false
}

var (
	publicPatterns = compilePatterns(append(slices.Clone(publicPaths), func() []string {
		var out []string // macOS: /etc is /private/etc
		for _, p := range publicPaths {
			if strings.HasPrefix(p, "/etc/") {
				out = append(out, "/private"+p)
			}
		}
		return out
	}()...))
	closedPatterns = compilePatterns(closedRoots)
	inertHome      = compilePatterns(inertHomePaths)
	linkedPatterns = compilePatterns(linkedPaths)
	inertWriteSegs = compilePatterns(inertWrites)
)

// closedSecret reports whether a plain candidate path (lower case, split
// at "/") is private by the closed world: strictly below a closed root and
// not public, or a hidden file or folder of a home not known inert.
func closedSecret(segs []string) bool {
	if len(segs) >= 2 && segs[0] == "~" {
		first := segs[1]
		if len(first) > 1 && first[0] == '.' && first != ".." || hiddenHomeDirs[first] {
			return !inertHome.match(segs)
		}
		return false
	}
	for _, root := range closedPatterns {
		if len(segs) > len(root) && matchSegments(root, segs[:len(root)]) {
			return !publicPatterns.match(segs)
		}
	}
	return false
}

// publicPath reports whether a plain absolute path is known public, or is
// a folder on the way to public places, a closed root or a home (/, /usr,
// /etc, ~): reading such a folder lists names, never a file's contents.
func publicPath(clean string) bool {
	segs := strings.Split(strings.ToLower(clean), "/")
	if publicPatterns.match(segs) || clean == "/" || clean == "~" || closedPatterns.match(segs) {
		return true
	}
	for _, h := range homePrefixes {
		if len(h) == len(segs) && homeMatch(h, segs) || len(h) == len(segs)+1 && h[len(h)-1] == "*" &&
			homeMatch(h[:len(segs)], segs) {
			return true // /home, /home/u, /Users
		}
	}
	for _, p := range publicPatterns {
		if len(p) > len(segs) && matchSegments(p[:len(segs)], segs) {
			return true
		}
	}
	return false
}

// execClosed reports whether writing a plain path (lower case, split at
// "/") may arm later execution by the closed world: a hidden file or
// folder on the way (the repository's .git, an editor's or agent's
// settings, a tool's start-up file) or a package folder, unless the path is
// known inert.
func execClosed(segs []string) bool {
	hidden := false
	for _, s := range segs {
		if len(s) > 1 && s[0] == '.' && s != ".." && s != "~" || packageDirs[s] {
			hidden = true
			break
		}
	}
	return hidden && !inertWriteSegs.match(segs)
}

// throughLink reports whether a path (slashes only) climbs with ".." out of
// a component that may be a symbolic link, where lexical cleaning cannot
// say where it ends.
func throughLink(p string) bool {
	if !strings.HasPrefix(p, "/") || !strings.Contains(p, "..") {
		return false
	}
	var stack []string
	stack = append(stack, "")
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			if linkedPatterns.match(stack) {
				return true
			}
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		default:
			stack = append(stack, strings.ToLower(seg))
		}
	}
	return false
}

// shortNameGlob returns the long names a name in the 8.3 short-name form
// (GIT~1, PROGRA~1, CREDEN~1.JSO) may stand for, as a brace glob, when it
// has that form. Windows keeps the first valid characters of the long name
// (up to six; a leading dot and spaces are dropped) and the first three of
// its extension (Microsoft, "Naming Files, Paths, and Namespaces", Short vs.
// Long Names; git's is_ntfs_dotgit, CVE-2019-1353): GIT~1 is .git,
// GITHUB~1 .github, CREDEN~1.JSO credentials.json. A last name without an
// extension is read as the hidden name it most often is, not as any name
// with that stem, where a git revision such as master~1 stands; a long
// name without a dot that needs a short name (credentials_backup) is the
// case this leaves out.
func shortNameGlob(seg string, last bool) (string, bool) {
	base, ext, _ := strings.Cut(seg, ".")
	i := strings.LastIndexByte(base, '~')
	if i < 1 || i == len(base)-1 || len(base) > 8 || len(ext) > 3 || strings.ContainsAny(seg, "*?[{}") ||
		strings.Trim(base[i+1:], "0123456789") != "" {
		return "", false
	}
	stem, cut := base[:i], base[:i]
	if len(stem) >= 6 {
		cut += "*"
	}
	var alts []string
	switch {
	case ext != "":
		alts = append(alts, "."+cut+"."+ext+"*", cut+"."+ext+"*")
	case !last && len(stem) >= 6:
		alts = append(alts, "."+cut, cut)
	default:
		alts = append(alts, "."+stem) // no extension: a hidden name (.git, .ssh, .github)
	}
	if len(alts) == 1 {
		return alts[0], true // a brace group of one is literal
	}
	return "{" + strings.Join(alts, ",") + "}", true
}

// uncHost returns the host a UNC path names, in any spelling: \\host\share,
// //host/share, \\?\UNC\host\share, \\.\UNC\host\share, and WebDAV's
// \\host@SSL@443\share (Microsoft, "File path formats on Windows systems";
// "UNC path" in [MS-DTYP] 2.2.57). device is true for the other paths of
// the \\.\ and \\?\ namespaces that are not a drive (\\.\PhysicalDrive0,
// \\?\GLOBALROOT\Device\HarddiskVolumeShadowCopy1\…, \\.\pipe\…): raw
// disks, shadow copies and other processes' pipes.
func uncHost(p string) (host string, device bool) {
	p = strings.ReplaceAll(p, `\`, "/")
	if !strings.HasPrefix(p, "//") || strings.HasPrefix(p, "///") {
		return "", false
	}
	parts := strings.Split(p[2:], "/")
	first := parts[0]
	if first == "?" || first == "." {
		if len(parts) < 2 || drivePath.MatchString(parts[1]) || parts[1] == "" {
			return "", false
		}
		if strings.EqualFold(parts[1], "UNC") {
			if len(parts) < 3 || parts[2] == "" {
				return "", true
			}
			first = parts[2]
		} else {
			return "", true
		}
	}
	if first == "" {
		return "", false
	}
	if h, _, ok := strings.Cut(first, "@"); ok { // host@SSL@443, host@8080
		first = h
	}
	return first, false
}
