// Package bench is the load generator behind `rein bench`: a mix of checks
// with the decision each should get, workers that send them over keep-alive
// connections for a fixed time, and latency percentiles from a histogram.
// The same generator drives rein (POST /v1/check) and Open Policy Agent
// (POST /v1/data/...), so that both are measured with the same requests at
// the same concurrency.
package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Item is one kind of check in the mix, with the decision and rule that
// bench/policy.yaml (and bench/policy.rego) give it.
type Item struct {
	Name   string // short label, e.g. "payment-large"
	Tool   string
	Args   string // JSON object; each "{n}" becomes the request's sequence number
	Want   string // allow, deny, ask or throttle
	Rule   string // the deciding rule; "" for the policy's default
	Weight int    // share within the items of the same decision
}

// Decisions are the decision classes of a mix, most permissive first.
var Decisions = []string{"allow", "deny", "ask", "throttle"}

// Items are the checks of the benchmark. Every request carries a unique
// number in its arguments, as real actions differ (another file, another
// invoice), so each ask creates its own approval and no check repeats an
// earlier action of its session.
var Items = []Item{
	{Name: "read-file", Tool: "fs.read", Args: `{"path":"/srv/agent/reports/{n}.csv"}`, Want: "allow", Rule: "files-read", Weight: 3},
	{Name: "get-https", Tool: "http.get", Args: `{"url":"https://api.example.com/orders/{n}"}`, Want: "allow", Rule: "http-get-https", Weight: 2},
	{Name: "pay-small", Tool: "payments.transfer", Args: `{"amount":42,"to":"acme","invoice":"INV-{n}"}`, Want: "allow", Rule: "payments-small", Weight: 1},
	{Name: "mail-internal", Tool: "email.send", Args: `{"to":"ops@example.com","subject":"report {n}"}`, Want: "allow", Rule: "email-internal", Weight: 2},
	{Name: "delete-file", Tool: "fs.delete", Args: `{"path":"/srv/agent/tmp/{n}"}`, Want: "deny", Rule: "files-delete", Weight: 1},
	{Name: "pay-over-cap", Tool: "payments.transfer", Args: `{"amount":90000,"to":"acme","invoice":"INV-{n}"}`, Want: "deny", Rule: "payments-cap", Weight: 1},
	{Name: "deploy", Tool: "deploy", Args: `{"service":"api","version":"{n}"}`, Want: "deny", Rule: "", Weight: 1},
	{Name: "pay-large", Tool: "payments.transfer", Args: `{"amount":5000,"to":"acme","invoice":"INV-{n}"}`, Want: "ask", Rule: "payments-large", Weight: 2},
	{Name: "mail-external", Tool: "email.send", Args: `{"to":"buyer@partner.org","subject":"quote {n}"}`, Want: "ask", Rule: "email-external", Weight: 1},
	{Name: "shell-read", Tool: "shell.exec", Args: `{"command":"grep -n TODO src/{n}.go | head -20"}`, Want: "allow", Rule: "shell-read-only", Weight: 2},
	{Name: "write-workspace", Tool: "fs.write", Args: `{"path":"/srv/agent/out/{n}.txt","content":"line {n}"}`, Want: "allow", Rule: "files-write-workspace", Weight: 2},
	{Name: "get-metadata", Tool: "http.get", Args: `{"url":"http://169.254.169.254/latest/meta-data/{n}"}`, Want: "deny", Rule: "private-addresses", Weight: 1},
	{Name: "shell-destroy", Tool: "shell.exec", Args: `{"command":"rm -rf build/{n}"}`, Want: "ask", Rule: "shell-destructive", Weight: 1},
	{Name: "write-outside", Tool: "fs.write", Args: `{"path":"/var/tmp/out-{n}.txt","content":"line {n}"}`, Want: "ask", Rule: "files-write-elsewhere", Weight: 1},
	{Name: "search", Tool: "web.search", Args: `{"query":"order status {n}"}`, Want: "throttle", Rule: "search-rate", Weight: 1},
}

// DefaultShares is the default share of each decision, in percent.
var DefaultShares = map[string]int{"allow": 70, "deny": 10, "ask": 10, "throttle": 10}

// Mix is a weighted sequence of items: request n is Table[n % len(Table)].
type Mix struct {
	Table  []*Item
	Shares map[string]int
}

// ParseShares reads "allow=70,deny=10,ask=10,throttle=10". Decisions left out
// get no share; the shares need not add up to 100 (they are relative).
func ParseShares(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("mix %q: write DECISION=SHARE, e.g. allow=70,deny=10,ask=10,throttle=10", part)
		}
		k = strings.TrimSpace(k)
		if !slices.Contains(Decisions, k) {
			return nil, fmt.Errorf("mix %q: the decisions are %s", part, strings.Join(Decisions, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("mix: %s is given twice", k)
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 1000 {
			return nil, fmt.Errorf("mix %q: a share is a whole number from 0 to 1000", part)
		}
		out[k] = n
	}
	total := 0
	for _, n := range out {
		total += n
	}
	if total == 0 {
		return nil, fmt.Errorf("mix %q: give at least one decision a share above 0", s)
	}
	return out, nil
}

// NewMix builds the request table for the given shares: each decision gets
// its share of the table, split among its items by weight, and the items
// are interleaved so that every run of consecutive requests, not only the
// whole table, carries the shares (smooth weighted round-robin: each slot
// goes to the item furthest behind its share). A run measures a window of
// the table after its warm-up; a shuffled table made a short run's shares
// drift by chance (3 % of throttles for 10 % asked, in a 2 s run).
func NewMix(items []Item, shares map[string]int) (*Mix, error) {
	// The table has 100 slots per percent of share, enough to honour weights.
	var decisions []*turns // each decision's turn, and within it its items'
	size := 0
	for _, d := range Decisions {
		share := shares[d]
		if share == 0 {
			continue
		}
		var of []*Item
		weights := 0
		for i := range items {
			if items[i].Want == d {
				of = append(of, &items[i])
				weights += items[i].Weight
			}
		}
		if len(of) == 0 {
			return nil, fmt.Errorf("mix: no check in the benchmark gets %s", d)
		}
		total := share * 100
		dec := &turns{n: total}
		given := 0
		for i, it := range of {
			n := total * it.Weight / weights
			if i == len(of)-1 {
				n = total - given
			}
			given += n
			if n > 0 {
				dec.of = append(dec.of, &turns{item: it, n: n})
			}
		}
		decisions = append(decisions, dec)
		size += total
	}
	table := make([]*Item, 0, size)
	for range size {
		table = append(table, next(next(decisions).of).item)
	}
	return &Mix{Table: table, Shares: shares}, nil
}

// turns is one choice of smooth weighted round-robin: n slots of the
// table, a running credit, and (for a decision) the choices within it.
type turns struct {
	item *Item
	n    int
	have int
	of   []*turns
}

// next takes the choice of cs furthest behind its share.
func next(cs []*turns) *turns {
	total := 0
	var best *turns
	for _, c := range cs {
		c.have += c.n
		total += c.n
		if best == nil || c.have > best.have {
			best = c
		}
	}
	best.have -= total
	return best
}

// Pick returns the item of request n.
func (m *Mix) Pick(n uint64) *Item { return m.Table[n%uint64(len(m.Table))] }

// ArgsFor returns the item's arguments for request n.
func (it *Item) ArgsFor(n uint64) string {
	return strings.ReplaceAll(it.Args, "{n}", strconv.FormatUint(n, 10))
}
