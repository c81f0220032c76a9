package risk

import "strings"

// envExecRule names environment variables (by exact name, prefix or suffix)
// whose value changes which program runs, which code or library a program
// loads, or which configuration (able to name commands) it reads. Setting
// one for a command, whatever the value, makes the command shell.env_exec:
// `LD_PRELOAD=/tmp/x.so ls` is not ls.
type envExecRule struct {
	name, prefix, suffix string
	// hook: the shell itself runs or expands the value as code (not only the
	// programs it starts), so the assignment is also shell.dynamic.
	hook   bool
	source string
}

// envExecRules is the table behind shell.env_exec.
var envExecRules = []envExecRule{
	// The shell itself: bash(1), "Shell Variables" and "INVOCATION"; dash(1),
	// "ENV"; GTFOBins (env, bash) for PROMPT_COMMAND and BASH_ENV.
	{name: "PATH", source: "bash(1): command search"},
	{name: "IFS", source: "bash(1): word splitting"},
	{name: "CDPATH", source: "bash(1): cd search path"},
	{name: "EXECIGNORE", source: "bash(1): names command search skips"},
	{name: "BASH_LOADABLES_PATH", source: "bash(1): where enable -f finds builtins (shared objects)"},
	{name: "GLOBIGNORE", source: "bash(1): pathname expansion"},
	{name: "BASH_ENV", hook: true, source: "bash(1) INVOCATION: sourced by non-interactive bash"},
	{name: "ENV", hook: true, source: "sh(1p), dash(1): sourced by interactive sh"},
	{name: "SHELLOPTS", source: "bash(1): options at start-up (xtrace, …)"},
	{name: "BASHOPTS", source: "bash(1): shopt options at start-up"},
	{name: "PROMPT_COMMAND", hook: true, source: "bash(1): run before each prompt"},
	{name: "PS0", hook: true, source: "bash(1) PROMPTING: expanded, $(…) runs"},
	{name: "PS1", hook: true, source: "bash(1) PROMPTING"},
	{name: "PS2", hook: true, source: "bash(1) PROMPTING"},
	{name: "PS4", hook: true, source: "bash(1): expanded before each command under xtrace"},
	{name: "HISTFILE", source: "bash(1): history written on exit"},
	{prefix: "BASH_FUNC_", source: "bash(1): exported functions"},
	{name: "SHELL", source: "programs that start $SHELL (vim :sh, less !, man)"},
	{name: "ZDOTDIR", source: "zsh(1) STARTUP/SHUTDOWN FILES"},
	{name: "HOME", source: "every program's ~ configuration (.gitconfig, .npmrc, …)"},
	{prefix: "XDG_", source: "XDG Base Directory Specification: configuration and data directories"},
	// The dynamic linker: ld.so(8) ENVIRONMENT; dyld(1) on macOS; glibc
	// iconv(3) modules (GCONV_PATH) and tunables.
	{prefix: "LD_", source: "ld.so(8): LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT"},
	{prefix: "DYLD_", source: "dyld(1): DYLD_INSERT_LIBRARIES"},
	{name: "GCONV_PATH", source: "iconv_open(3): gconv modules are shared objects"},
	{name: "GLIBC_TUNABLES", source: "ld.so(8): tunables"},
	{name: "LOCPATH", source: "locale(7)"},
	{name: "NLSPATH", source: "catopen(3)"},
	{name: "OPENSSL_CONF", source: "config(5ssl): engines load libraries"},
	{name: "OPENSSL_ENGINES", source: "openssl-engine(1)"},
	// Git: git(1) ENVIRONMENT VARIABLES, git-config(1) ENVIRONMENT
	// (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_GLOBAL), GTFOBins (git).
	{prefix: "GIT_", source: "git(1) ENVIRONMENT VARIABLES: GIT_DIR, GIT_CONFIG_*, GIT_EXTERNAL_DIFF, GIT_SSH*, GIT_PAGER, GIT_EDITOR, GIT_EXEC_PATH, GIT_ASKPASS"},
	// Pagers, editors, viewers: less(1) INPUT PREPROCESSOR, man(1), GTFOBins
	// (less, man, more: "!" runs a shell).
	{name: "PAGER", source: "man(1), git(1): the pager is a command"},
	{suffix: "_PAGER", source: "git, psql, systemctl, …: the pager is a command"},
	{name: "MANPAGER", source: "man(1)"},
	{name: "MANOPT", source: "man(1)"},
	{name: "BROWSER", source: "man(1), xdg-open"},
	{name: "EDITOR", source: "git(1), crontab(1), …: the editor is a command"},
	{name: "VISUAL", source: "git(1), crontab(1)"},
	{suffix: "_EDITOR", source: "GIT_EDITOR, SVN_EDITOR, …"},
	{prefix: "LESS", source: "less(1): LESSOPEN, LESSCLOSE, LESSKEY, LESSEDIT"},
	{name: "SSH_ASKPASS", source: "ssh(1): askpass program"},
	{name: "SUDO_ASKPASS", source: "sudo(8)"},
	{name: "SSH_AUTH_SOCK", source: "ssh(1): which agent signs"},
	// Interpreters: python(1) ENVIRONMENT, perlrun(1) ENVIRONMENT, ruby(1),
	// node(1), Java's JAVA_TOOL_OPTIONS (JVMTI), lua(1), php.ini(5).
	{prefix: "PYTHON", source: "python(1): PYTHONSTARTUP, PYTHONPATH, PYTHONHOME, PYTHONWARNINGS"},
	{prefix: "PERL", source: "perlrun(1): PERL5OPT, PERL5LIB, PERL5DB, PERLLIB"},
	{prefix: "RUBY", source: "ruby(1): RUBYOPT, RUBYLIB"},
	{name: "NODE_OPTIONS", source: "node(1): --require"},
	{name: "NODE_PATH", source: "node(1)"},
	{name: "NODE_REPL_EXTERNAL_MODULE", source: "node(1)"},
	{name: "JAVA_TOOL_OPTIONS", source: "JVM TI: -javaagent"},
	{name: "_JAVA_OPTIONS", source: "HotSpot"},
	{name: "JDK_JAVA_OPTIONS", source: "java(1)"},
	{name: "CLASSPATH", source: "java(1)"},
	{prefix: "LUA_", source: "lua(1): LUA_INIT runs code"},
	{name: "PHPRC", source: "php(1): auto_prepend_file"},
	{name: "PHP_INI_SCAN_DIR", source: "php(1)"},
	{name: "TCLLIBPATH", source: "tclsh(1)"},
	{name: "R_PROFILE", source: "R: Startup"},
	{name: "R_PROFILE_USER", source: "R: Startup"},
	// Build tools and package managers: their configuration names commands
	// (go(1) GOFLAGS -toolexec; cgo flags; make(1) MAKEFLAGS, MAKEFILES;
	// npm-config script-shell; pip; cargo; compilers).
	{name: "GOFLAGS", source: "go help environment: -toolexec"},
	{name: "GOENV", source: "go help environment"},
	{name: "GOTOOLCHAIN", source: "go help toolchain: downloads and runs another go"},
	{prefix: "CGO_", suffix: "FLAGS", source: "cgo: flags reach the C compiler (-fplugin)"},
	{name: "CC", source: "make(1), go: the compiler is a command"},
	{name: "CXX", source: "make(1), go"},
	{name: "CPP", source: "make(1)"},
	{name: "LD", source: "make(1)"},
	{name: "AR", source: "make(1)"},
	{name: "MAKEFLAGS", source: "make(1)"},
	{name: "MAKEFILES", source: "make(1): extra makefiles are read"},
	{name: "MAKE", source: "make(1)"},
	{prefix: "NPM_CONFIG_", source: "npm-config(7): script-shell, prefix, registry"},
	{prefix: "npm_config_", source: "npm-config(7)"},
	{prefix: "YARN_", source: "yarn config"},
	{prefix: "PIP_", source: "pip configuration: index-url, config-file"},
	{prefix: "CARGO_", source: "cargo: CARGO_BUILD_RUSTC_WRAPPER, CARGO_TARGET_*_RUNNER"},
	{name: "RUSTC", source: "cargo"},
	{name: "RUSTC_WRAPPER", source: "cargo"},
	{name: "RUSTFLAGS", source: "cargo: -C linker="},
	// Clients whose configuration runs programs (credential_process, exec
	// plugins, credential helpers) or points them elsewhere.
	{prefix: "AWS_", source: "aws cli: AWS_CONFIG_FILE credential_process"},
	{name: "KUBECONFIG", source: "kubectl: exec credential plugins"},
	{prefix: "DOCKER_", source: "docker(1): DOCKER_CONFIG credHelpers, DOCKER_HOST"},
	{name: "CURL_HOME", source: "curl(1): .curlrc"},
	{name: "WGETRC", source: "wget(1)"},
	{name: "GNUPGHOME", source: "gpg(1)"},
	{name: "TMPDIR", source: "programs create and run files there (mktemp, compilers)"},
	{name: "RIPGREP_CONFIG_PATH", source: "rg(1) CONFIGURATION FILES: flags such as --pre=COMMAND"},
}

// envExec returns the rule that makes setting name shell.env_exec, if any.
func envExec(name string) (envExecRule, bool) {
	for _, r := range envExecRules {
		switch {
		case r.name != "":
			if name == r.name {
				return r, true
			}
		case r.prefix != "" && r.suffix != "":
			if strings.HasPrefix(name, r.prefix) && strings.HasSuffix(name, r.suffix) {
				return r, true
			}
		case r.prefix != "":
			if strings.HasPrefix(name, r.prefix) {
				return r, true
			}
		case r.suffix != "":
			if strings.HasSuffix(name, r.suffix) {
				return r, true
			}
		}
	}
	return envExecRule{}, false
}
