# bench/policy.yaml written in Rego for Open Policy Agent, so that both can be
# measured deciding the same checks (docs/benchmarks.md). Query:
#   POST /v1/data/rein/bench/decision  {"input": {"tool": ..., "args": {...}, "session": ...}}
# answers {"result": {"decision": ..., "rule": ..., "reason": ...}}.
#
# As in rein, every rule that matches is a candidate; the most restrictive
# decision wins (deny > ask > throttle > allow), ties go to the rule written
# first, and a check no rule allows is denied.
#
# OPA keeps no state between queries, so it cannot count: the rate limit of
# web.search (one a day per agent) is written as a throttle, which is what
# rein answers once `rein bench` has spent that day's search before
# measuring. rein also records each decision durably and signs it into its
# audit log; OPA records nothing (its decision log is off by default).
package rein.bench

severity := {"allow": 1, "throttle": 2, "ask": 3, "deny": 4}

matches contains {"order": 1, "decision": "allow", "rule": "files-read", "reason": ""} if {
	input.tool in {"fs.read", "fs.list"}
}

matches contains {"order": 2, "decision": "deny", "rule": "files-delete", "reason": "agents do not delete files"} if {
	input.tool == "fs.delete"
}

matches contains {"order": 3, "decision": "allow", "rule": "http-get-https", "reason": ""} if {
	input.tool == "http.get"
	startswith(input.args.url, "https://")
}

matches contains {"order": 4, "decision": "allow", "rule": "payments-small", "reason": ""} if {
	input.tool == "payments.transfer"
	input.args.amount <= 100
}

matches contains {"order": 5, "decision": "ask", "rule": "payments-large", "reason": "transfers above 1000 need a finance approval"} if {
	input.tool == "payments.transfer"
	input.args.amount > 1000
}

matches contains {"order": 6, "decision": "deny", "rule": "payments-cap", "reason": "transfers need a positive amount of at most 50000"} if {
	input.tool == "payments.transfer"
	not payment_in_range
}

payment_in_range if {
	input.args.amount > 0
	input.args.amount <= 50000
}

matches contains {"order": 7, "decision": "allow", "rule": "email-internal", "reason": ""} if {
	input.tool == "email.send"
	endswith(input.args.to, "@example.com")
}

matches contains {"order": 8, "decision": "ask", "rule": "email-external", "reason": "mail to outside addresses needs an approval"} if {
	input.tool == "email.send"
	not endswith(input.args.to, "@example.com")
}

matches contains {"order": 9, "decision": "allow", "rule": "search", "reason": ""} if {
	input.tool == "web.search"
}

matches contains {"order": 10, "decision": "throttle", "rule": "search-rate", "reason": "rate limit of rule search-rate exceeded"} if {
	input.tool == "web.search"
}

worst := max({severity[m.decision] | some m in matches})

first := min({m.order | some m in matches; severity[m.decision] == worst})

decision := {"decision": m.decision, "rule": m.rule, "reason": m.reason} if {
	some m in matches
	m.order == first
}

default decision := {"decision": "deny", "rule": "", "reason": "no rule allows this action (default: deny)"}
