# bench/policy.yaml written in Rego for Open Policy Agent, so that both can be
# measured deciding the same checks (docs/benchmarks.md). Query:
#   POST /v1/data/rein/bench/decision  {"input": {"tool": ..., "args": {...}, "session": ...}}
# answers {"result": {"decision": ..., "rule": ..., "reason": ...}}.
#
# As in rein, every rule that matches is a candidate; the most restrictive
# decision wins (deny > ask > throttle > allow), ties go to the rule written
# first, and a check no rule allows is denied.
#
# rein analyses the arguments of the tools bench/policy.yaml names (a shell
# command parsed, a URL's host read, a path placed against the workspace);
# the rules below do comparable string work on the same arguments: the
# command split into its commands and words, each program looked up in a
# list of read-only ones; the URL's host taken apart and matched against
# private ranges; the path tested against the workspace. rein's analysis is
# deeper (quoting, wrappers, sh -c, every spelling of an address), so rein
# does more work per check here, not less.
#
# rein reads the session's state for the rule session-denials; OPA has no
# session, so the rule looks the session up in data (empty here), as a
# deployment that pushes session state into OPA would.
#
# OPA keeps no state between queries, so it cannot count: the rate limit of
# web.search (one a day per agent) is written as a throttle, which is what
# rein answers once `rein bench` has spent that day's search before
# measuring. rein also records each decision durably and signs it into its
# audit log; OPA records nothing (its decision log is off by default).
package rein.bench

severity := {"allow": 1, "throttle": 2, "ask": 3, "deny": 4}

workspace := "/srv/agent/"

# Programs that only read (a subset of rein's table, docs/risk.md).
read_only_programs := {"cat", "grep", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "ls", "rg", "jq", "du", "diff", "stat"}

private_ranges := ["0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"]

# The commands of a command line (split at |, ||, &&, ;) and their words.
shell_commands := [words |
	some part in regex.split(`\|\||&&|[|;]`, input.args.command)
	words := [w | some w in split(trim_space(part), " "); w != ""]
]

shell_read_only if {
	input.tool == "shell.exec"
	not regex.match("[<>$`(){}*?~]", input.args.command)
	every words in shell_commands {
		words[0] in read_only_programs
	}
}

shell_destructive if {
	input.tool == "shell.exec"
	some words in shell_commands
	words[0] == "rm"
	some w in words
	regex.match(`^-[a-zA-Z]*[rRf]`, w)
}

path_outside if not startswith(input.args.path, workspace)

path_outside if contains(input.args.path, "..")

url_host := lower(m[0][1]) if {
	startswith(input.tool, "http.")
	m := regex.find_all_string_submatch_n(`^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]*)`, input.args.url, 1)
}

url_private if url_host == "localhost"

url_private if {
	regex.match(`^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$`, url_host)
	some r in private_ranges
	net.cidr_contains(r, url_host)
}

matches contains {"order": 1, "decision": "allow", "rule": "files-read", "reason": ""} if {
	input.tool in {"fs.read", "fs.list"}
}

matches contains {"order": 2, "decision": "allow", "rule": "files-write-workspace", "reason": ""} if {
	input.tool == "fs.write"
	not path_outside
}

matches contains {"order": 3, "decision": "ask", "rule": "files-write-elsewhere", "reason": "writing outside the workspace needs an approval"} if {
	input.tool == "fs.write"
	path_outside
}

matches contains {"order": 4, "decision": "allow", "rule": "shell-read-only", "reason": ""} if {
	shell_read_only
}

matches contains {"order": 5, "decision": "ask", "rule": "shell-destructive", "reason": "destructive shell commands need an on-call approval"} if {
	shell_destructive
}

matches contains {"order": 6, "decision": "deny", "rule": "private-addresses", "reason": "internal and metadata addresses are off limits"} if {
	url_private
}

matches contains {"order": 7, "decision": "deny", "rule": "session-denials", "reason": "this session has been denied too often"} if {
	data.sessions[input.session].denials >= 1000000
}

matches contains {"order": 8, "decision": "deny", "rule": "files-delete", "reason": "agents do not delete files"} if {
	input.tool == "fs.delete"
}

matches contains {"order": 9, "decision": "allow", "rule": "http-get-https", "reason": ""} if {
	input.tool == "http.get"
	startswith(input.args.url, "https://")
}

matches contains {"order": 10, "decision": "allow", "rule": "payments-small", "reason": ""} if {
	input.tool == "payments.transfer"
	input.args.amount <= 100
}

matches contains {"order": 11, "decision": "ask", "rule": "payments-large", "reason": "transfers above 1000 need a finance approval"} if {
	input.tool == "payments.transfer"
	input.args.amount > 1000
}

matches contains {"order": 12, "decision": "deny", "rule": "payments-cap", "reason": "transfers need a positive amount of at most 50000"} if {
	input.tool == "payments.transfer"
	not payment_in_range
}

payment_in_range if {
	input.args.amount > 0
	input.args.amount <= 50000
}

matches contains {"order": 13, "decision": "allow", "rule": "email-internal", "reason": ""} if {
	input.tool == "email.send"
	endswith(input.args.to, "@example.com")
}

matches contains {"order": 14, "decision": "ask", "rule": "email-external", "reason": "mail to outside addresses needs an approval"} if {
	input.tool == "email.send"
	not endswith(input.args.to, "@example.com")
}

matches contains {"order": 15, "decision": "allow", "rule": "search", "reason": ""} if {
	input.tool == "web.search"
}

matches contains {"order": 16, "decision": "throttle", "rule": "search-rate", "reason": "rate limit of rule search-rate exceeded"} if {
	input.tool == "web.search"
}

worst := max({severity[m.decision] | some m in matches})

first := min({m.order | some m in matches; severity[m.decision] == worst})

decision := {"decision": m.decision, "rule": m.rule, "reason": m.reason} if {
	some m in matches
	m.order == first
}

default decision := {"decision": "deny", "rule": "", "reason": "no rule allows this action (default: deny)"}
