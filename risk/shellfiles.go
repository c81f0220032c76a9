package risk

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The shell's view of files beyond ClassifyPath: paths a command can read a
// secret through (history, device files, /proc views of other processes'
// files), files whose writing arms later execution, and globs or recursive
// reads that could reach either.

// shellPath cleans a path as a command sees it and undoes /proc's views of
// another root (/proc/self/root/etc/shadow is /etc/shadow).
func shellPath(p string) string {
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if rest, ok := strings.CutPrefix(c, "/proc/"); ok {
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) >= 2 && (parts[1] == "root" || parts[1] == "cwd") {
			tail := ""
			if len(parts) == 3 {
				tail = parts[2]
			}
			if parts[1] == "root" {
				return path.Clean("/" + tail)
			}
			return path.Clean("./" + tail)
		}
	}
	return c
}

// secretPath reports a path whose reading can reveal a secret. It is
// ClassifyPath's answer, so that a command's operand and a file tool's
// path are judged alike.
func secretPath(p string) bool { return secretPathIn(p, "") }

// secretPathIn is secretPath with the policy's workspace (ClassifyPath).
func secretPathIn(p, workspace string) bool {
	if p == "" {
		return false
	}
	f, _ := ClassifyPath(p, workspace)
	return f.Secret
}

// secret is secretPathIn in the script's workspace.
func (s *shellScan) secret(p string) bool { return secretPathIn(p, s.workspace) }

// readSecret judges a file a command reads as a file tool's path is
// judged: a known secret is shell.secrets; a path secret only by the
// closed world (unlisted: outside the workspace and not known public, a
// private system place, a hidden name in a home) is shell.unlisted, which
// the sample policy sends to a person as it does an unlisted fs.read. It
// reports whether the path is either.
func (s *shellScan) readSecret(p string) bool {
	if p == "" {
		return false
	}
	f, _ := ClassifyPath(p, s.workspace)
	switch {
	case !f.Secret:
		return false
	case f.Unlisted:
		s.tags["shell.unlisted"] = true
	default:
		s.tags["shell.secrets"] = true
	}
	return true
}

// execConfigPath reports a path whose writing arms later execution
// (ClassifyPath's answer).
func execConfigPath(p string) bool {
	f, _ := ClassifyPath(p, "")
	return f.ExecConfig
}

// execConfig is execConfigPath in the script's workspace.
func (s *shellScan) execConfig(p string) bool {
	f, _ := ClassifyPath(p, s.workspace)
	return f.ExecConfig
}

// globCandidates are names a glob in a read path is tried against: the
// names of secret files and directories and the directories above them.
var globCandidates = func() []string {
	out := []string{"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".env", ".env.local", "key.pem", "server.key",
		"cert.p12", "vault.kdbx", "shadow", "gshadow", "shadow-", "gshadow-", "sudoers", "environ", "credentials",
		"etc", "root", "proc", "self", "1", "home", "var", "run", "secrets", "ssl", "private", "kcore", "mem", "sda",
		"nvme0n1", ".config", "gh", ".git", "config", "dev", "opasswd", "security", ".bash_history", ".zsh_history",
		".viminfo", ".vault-token", ".boto", ".s3cfg", ".my.cnf", ".password-store", "keyrings", "krb5.keytab",
		"hosts.yml", ".composer", "auth.json", ".cargo", "credentials.toml", ".terraform.d", "rclone", "rclone.conf",
		"master.key", "hub", ".gem", ".m2", "settings-security.xml", "prod.env", "kubeconfig", "wallet.dat"}
	for n := range sensitiveNames {
		out = append(out, n)
	}
	for i, n := range out {
		out[i] = strings.ToLower(n)
	}
	return out
}()

const maxGlobVariants = 256

// globCouldReadSecret reports whether a path pattern (with *, ? or [...])
// could match a secret: each pattern component is replaced by every
// candidate name it could match as the shell reads it (globMatch: any
// bracket expression, [!x], [[:alpha:]], [=s=], is any one character) (a leading dot included, since dotglob may be
// set), and the resulting paths are judged. Past maxGlobVariants it says
// yes: what rein cannot enumerate is not harmless.
func globCouldReadSecret(p, workspace string) bool {
	segs := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
	variants := []string{""}
	for i, seg := range segs {
		var next []string
		choices := []string{seg}
		if strings.ContainsAny(seg, "*?[") {
			choices = choices[:0]
			// Case is ignored: macOS and Windows file systems ignore it,
			// and so does bash with nocaseglob.
			pt := globToks(strings.ToLower(seg), true)
			for _, c := range globCandidates {
				if globToksMatch(pt, c) {
					choices = append(choices, c)
				}
			}
			if len(choices) == 0 {
				return false // this component matches no secret name
			}
		}
		for _, v := range variants {
			for _, c := range choices {
				if i == 0 {
					next = append(next, c)
				} else {
					next = append(next, v+"/"+c)
				}
				if len(next) > maxGlobVariants {
					return true
				}
			}
		}
		variants = next
	}
	for _, v := range variants {
		if v == "" {
			v = "/"
		}
		if secretPathIn(v, workspace) {
			return true
		}
	}
	return false
}

// maxGlobChecks bounds the globs judged per input: a hostile script of a
// thousand globs stays cheap, and past the bound every glob read is taken
// as a secret read.
const maxGlobChecks = 64

// globSecret is globCouldReadSecret within the script's budget.
func (s *shellScan) globSecret(p string) bool {
	if s.globChecks >= maxGlobChecks {
		return true
	}
	s.globChecks++
	return globCouldReadSecret(p, s.workspace)
}

// reachesSecrets reports whether a recursive read of a directory could
// reach secrets: /, home directories, /root, /etc, /proc, /var, /run, /dev,
// or a path climbing out of the working directory.
func reachesSecrets(p, workspace string) bool {
	c := shellPath(p)
	switch {
	case c == "/" || c == "~" || strings.HasPrefix(c, "~"), c == ".." || strings.HasPrefix(c, "../"):
		return true
	case strings.HasPrefix(c, "/"):
		for _, d := range []string{"/home", "/root", "/etc", "/proc", "/var", "/run", "/dev", "/Users", "/private", "/mnt", "/media"} {
			if c == d || underAny(c, d) || underAny(d, c) {
				return true
			}
		}
	}
	return secretPathIn(c, workspace)
}

// insideWorkspace reports a path that stays inside the policy's workspace
// as a command sees it: relative (the workspace is the working directory)
// without climbing out, or absolute below the workspace. A path through a
// link (/proc/self/cwd, a possibly-linked ".." step, ~) is not, nor is any
// path when the policy names no workspace.
func (s *shellScan) insideWorkspace(p string) bool {
	if s.workspace == "" || p == "" || strings.HasPrefix(p, "~") || strings.Contains(p, `\`) {
		return false
	}
	c := shellPath(p)
	if c != path.Clean(p) {
		return false // /proc's view of another root or working directory
	}
	f, tags := ClassifyPath(p, s.workspace)
	if f.OutsideWorkspace || f.Secret || slices.ContainsFunc(tags, func(t string) bool { return t != "path" }) {
		return false // path.traversal, path.unresolved, path.network among them
	}
	if strings.HasPrefix(c, "/") {
		return underAny(c, path.Clean(s.workspace))
	}
	return c != ".." && !strings.HasPrefix(c, "../")
}

// systemDirs are the directories whose programs are the system's own.
var systemDirs = set("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin")

// resolvedName reports whether a command name, as written, runs the
// system's program: a literal bare name (shadowing by the script's
// functions and aliases is judged after the walk) or a path in systemDirs.
func resolvedName(w shWord) bool {
	if !w.lit || w.expanded || w.glob || w.text == "" {
		return false
	}
	if !strings.Contains(w.text, "/") {
		return true
	}
	return systemDirs[path.Dir(path.Clean(w.text))]
}

// files fills a command's reads, writes, resolution and read-only verdict
// from its program's table and its redirections, and tags secret reads,
// writes and writes that arm later execution.
func (s *shellScan) files(c *ShellCommand, args []shWord, redirs []*syntax.Redirect) {
	c.Resolved = resolvedName(s.nameWord)
	p := programFor(c.Name)
	var u programUse
	ro := false
	if p != nil {
		u, ro = useOf(p, args)
	}
	ro = ro && c.Resolved
	if recursiveListing(c.Name, args) {
		// ls -R, find, tree and du list every name below their folders. A
		// folder outside the workspace above private places (/, a home,
		// /etc, /root) lists their names, which listing them by name (ls
		// /root) would not do unasked: closed world, a person looks first.
		for _, w := range u.operands {
			if w.lit && !s.insideWorkspace(w.text) && reachesSecrets(w.text, s.workspace) {
				s.tags["shell.unlisted"] = true
				ro = false
			}
		}
	}
	if p != nil && (p.readOnly || u.sub != "" && p.subs[u.sub] != nil && p.subs[u.sub].readOnly) {
		// A read-only program's option may come from a value rein does not
		// know (git diff $OPTS may be --output=…).
		for _, w := range u.expansions {
			s.dyn("expansion rein cannot know where "+c.Name+" takes options", posOf(w))
		}
	}
	if c.Name == "git" && u.sub == "grep" && !pathspecsAfterDashes(args) {
		// git grep searches every tracked file, a committed .env among
		// them, as grep -r searches a folder, unless pathspecs after --
		// narrow it (each judged as a read by its table).
		s.tags["shell.tree"] = true
	}
	if c.Name == "rg" && slices.ContainsFunc(args, func(a shWord) bool { return a.lit && a.text == "--files" }) {
		u.caps &^= capRecurse // rg --files lists names; it reads no file
	}
	reads, writes := u.reads, u.writes
	for _, r := range redirs {
		if r.Word == nil {
			continue
		}
		w := s.word(r.Word)
		read, write := redirectFile(r, w)
		if read {
			reads = append(reads, w)
		}
		if write {
			writes = append(writes, w)
		}
	}
	for _, w := range append(reads[:len(reads):len(reads)], writes...) {
		s.uncOpen(w)
	}
	fromInput := false
	for _, w := range u.operands {
		if w.input {
			fromInput = true
			if p == nil || !inputOperands[p.operands] {
				ro = false // uniq, cp, tee: a name from the input may be written
			}
		}
	}
	for _, w := range reads {
		c.Reads = append(c.Reads, w.text)
		if w.input {
			continue // judged with the stage that prints the names
		}
		if !w.lit {
			ro = false // a file rein cannot name could be any file
			continue
		}
		recursive := u.caps&capRecurse != 0
		inside := s.insideWorkspace(w.text)
		if !w.glob && !recursive && s.readSecret(w.text) {
			ro = false
		} else if s.secret(w.text) || w.glob && s.globSecret(w.text) || recursive && !inside && reachesSecrets(w.text, s.workspace) {
			s.tags["shell.secrets"] = true
			ro = false
		} else if recursive && !u.included && !inside {
			// A recursive read of a folder outside the workspace reads
			// whatever lies below it, and rein cannot see what that is, so
			// it is no plain read, unless --include narrows it to names
			// that are no secret (each include glob is one of the reads
			// judged above). Inside the workspace the folder is the
			// agent's own tree (grep -rn TODO src, rg TODO).
			ro = false
		} else if recursive && !u.included {
			// Inside the workspace it writes nothing, but it reads every
			// file below the folder, those shaped like secrets (.env,
			// *.key) included, which a read by name would not: shell.tree,
			// so that policy can tell it from a plain read (inside rein
			// run the kernel masks such files).
			s.tags["shell.tree"] = true
		}
	}
	for _, w := range writes {
		c.Writes = append(c.Writes, w.text)
		s.wrote(w)
		ro = false
	}
	for name, v := range c.Env {
		if _, ok := envExec(name); ok {
			ro = false
		}
		if localeVar(name) && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-:") != "" {
			ro = false
		}
	}
	c.ReadOnly = ro && !fromInput
	c.inputReadOnly = ro && fromInput
	c.listsNames = ro && s.listsNames(c.Name, args, u)
}

// localeVar reports the variables that choose a locale (locale(7): LANG,
// LANGUAGE and the LC_ categories). LC_ALL=C only changes how text sorts
// and prints; a value with a "/" is a path glibc loads locale files from
// (setlocale(3)), so only a name of letters, digits and "_.@-" (and ":"
// between LANGUAGE's names) keeps a command read-only.
func localeVar(name string) bool {
	return name == "LANG" || name == "LANGUAGE" || strings.HasPrefix(name, "LC_")
}

// inputOperands are the operand roles under which a name from xargs is at
// most read: files read, folders listed, a pattern then files, text.
var inputOperands = map[operandRole]bool{opRead: true, opList: true, opPattern: true, opNone: true, opProgram: true}

// listsNames reports a read-only command that prints, NUL-separated, only
// names of files inside the workspace that no secret's name can match, each
// beginning with a starting point written on its command line (so never an
// option):
//   - find with starting points inside the workspace and an expression of
//     tests joined by "and" only, -print0 its only action, and a -name or
//     -iname whose glob matches no secret's name (find(1));
//   - grep -l or -L with -Z/--null, recursive, narrowed by --include to
//     names that are no secret, with folders inside the workspace named
//     (grep(1): -r without a folder prints bare names).
func (s *shellScan) listsNames(name string, args []shWord, u programUse) bool {
	inside := func(ws []shWord) bool {
		for _, w := range ws {
			if !w.lit || w.glob || strings.HasPrefix(w.text, "-") || !s.insideWorkspace(w.text) {
				return false
			}
		}
		return true
	}
	switch name {
	case "find":
		if !inside(u.operands) {
			return false
		}
		print0, narrowed := false, false
		for i, a := range args {
			switch a.text {
			case "-o", "-or", ",", "!", "-not", "(", ")", "-print", "-printf", "-ls", "-fprint", "-fprint0",
				"-fprintf", "-fls", "-exec", "-execdir", "-ok", "-okdir", "-delete", "-prune", "-quit":
				return false
			case "-print0":
				print0 = true
			case "-name", "-iname":
				if i+1 < len(args) && args[i+1].lit && !s.globSecret(args[i+1].text) && !s.secret(args[i+1].text) &&
					!strings.HasPrefix(args[i+1].text, ".") {
					narrowed = true
				}
			}
		}
		return print0 && narrowed
	case "grep":
		p := programs["grep"]
		if !u.included || u.caps&capRecurse == 0 || !shortOrLong(p, args, 'Z', "null") ||
			!shortOrLong(p, args, 'l', "files-with-matches") && !shortOrLong(p, args, 'L', "files-without-match") {
			return false
		}
		files := u.operands
		if !shortOrLong(p, args, 'e', "regexp") && !shortOrLong(p, args, 'f', "file") && len(files) > 0 {
			files = files[1:]
		}
		return len(files) > 0 && inside(files)
	}
	return false
}

// shortOrLong reports whether a command's arguments set an option, as a
// short letter in a group (stopping at a letter that takes a value) or by
// its long name before "--".
func shortOrLong(p *program, args []shWord, short byte, long string) bool {
	for _, a := range args {
		t := a.text
		if t == "--" {
			return false
		}
		if name, ok := strings.CutPrefix(t, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if name == long {
				return true
			}
			continue
		}
		if !strings.HasPrefix(t, "-") {
			continue
		}
		for j := 1; j < len(t); j++ {
			if t[j] == short {
				return true
			}
			if o, ok := shortOption(p.options(), t[j]); ok && (o.value || o.optValue) {
				break
			}
		}
	}
	return false
}

// uncOpen tags a file a command opens on another host: a UNC path in any
// spelling (uncHost) connects to the host it names and offers the user's
// credentials there, so it is judged as a URL to that host.
func (s *shellScan) uncOpen(w shWord) {
	if !w.lit {
		return
	}
	if host, _ := uncHost(w.text); host != "" {
		s.tags["shell.network"] = true
		s.url("smb://" + host + "/")
	}
}

// useOf reads a command's arguments against its program's table, through a
// subcommand (git log) when the program has them, and says whether that use
// is read-only: a read-only program (and subcommand), no unknown option,
// and no option that writes, runs, connects, loads or changes the system.
func useOf(p *program, args []shWord) (programUse, bool) {
	clean := func(u programUse) bool {
		return len(u.unknown) == 0 && u.caps&^readCaps == 0
	}
	if p.expression != nil {
		return p.expression(p, args)
	}
	if p.subs == nil {
		u := p.use(args)
		return u, p.readOnly && clean(u)
	}
	global, sub, rest := splitSub(p, args)
	u := p.use(global)
	ro := clean(u)
	sp := p.subs[sub.text]
	if sp == nil || !sub.lit || sub.expanded {
		return u, false
	}
	su := sp.use(rest)
	u.expansions = append(u.expansions, su.expansions...)
	u.caps |= su.caps
	u.unknown = append(u.unknown, su.unknown...)
	u.reads = append(u.reads, su.reads...)
	u.writes = append(u.writes, su.writes...)
	u.operands = su.operands
	u.sub = sub.text
	return u, ro && sp.readOnly && clean(su)
}

// splitSub splits a command's arguments into the program's own options, its
// subcommand and the subcommand's arguments (git -C x log -p).
func splitSub(p *program, args []shWord) (global []shWord, sub shWord, rest []shWord) {
	opts := p.options()
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !strings.HasPrefix(t, "-") || !args[i].lit {
			return args[:i], args[i], args[i+1:]
		}
		if t == "--" {
			if i+1 < len(args) {
				return args[:i+1], args[i+1], args[i+2:]
			}
			return args, shWord{}, nil
		}
		if !strings.HasPrefix(t, "--") && len(t) == 2 {
			if o, ok := shortOption(opts, t[1]); ok && o.value {
				i++
			}
		} else if strings.HasPrefix(t, "--") && !strings.Contains(t, "=") {
			if o, ok := longOption(opts, t[2:]); ok && o.value {
				i++
			}
		}
	}
	return args, shWord{}, nil
}

// pathspecsAfterDashes reports a git command given pathspecs after "--"
// that include files (not only :(exclude) or :! ones).
func pathspecsAfterDashes(args []shWord) bool {
	for i, a := range args {
		if a.lit && a.text == "--" {
			included := false
			for _, p := range args[i+1:] {
				switch {
				case !p.lit || p.text == "":
					return false
				case strings.HasPrefix(p.text, ":!") || strings.HasPrefix(p.text, ":^") || strings.HasPrefix(p.text, ":(exclude"):
				default:
					included = true
				}
			}
			return included
		}
	}
	return false
}

// recursiveListing reports a command that lists every name below the
// folders it is given: find, tree and du always, ls with -R.
func recursiveListing(name string, args []shWord) bool {
	switch name {
	case "find", "tree", "du":
		return true
	case "ls":
		for _, a := range args {
			switch {
			case !a.lit:
			case a.text == "--":
				return false
			case a.text == "--recursive":
				return true
			case len(a.text) > 1 && a.text[0] == '-' && a.text[1] != '-' && strings.ContainsRune(a.text, 'R'):
				return true
			}
		}
	}
	return false
}
