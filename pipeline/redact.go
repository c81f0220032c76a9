package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/risk"
)

// How a check's arguments are kept in its audit entry, chosen per tool.
const (
	ArgsRedactSecrets = "redact_secrets" // values, with every secrets-tagged value replaced by its hash (default)
	ArgsValues        = "values"         // values as sent, secrets included
	ArgsHashes        = "hashes"         // only args_hash, the hash of the canonical arguments
)

// ArgsRule chooses how the arguments of the tools matching a glob are
// kept in the audit log; the first matching rule wins.
type ArgsRule struct {
	Tool  string `yaml:"tool"`
	Store string `yaml:"store"`
}

func (p *Pipeline) argsMode(tool string) string {
	for _, r := range p.AuditArgs {
		if risk.Glob(r.Tool, tool) {
			return r.Store
		}
	}
	return ArgsRedactSecrets
}

// hashOf is "sha256:" + the hex SHA-256 of b.
func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// auditArgs returns the arguments as the audit entry keeps them, and the
// argument paths whose values were replaced by their hash.
func (p *Pipeline) auditArgs(c *check, args json.RawMessage) (map[string]any, bool) {
	switch p.argsMode(c.input.Tool) {
	case ArgsValues:
		return map[string]any{"args": args}, true
	case ArgsHashes:
		return map[string]any{"args_hash": hashOf(args)}, true
	}
	secret := map[string]bool{}
	list, _ := c.assessment.Facts["secrets"].([]any)
	for _, f := range list {
		if m, ok := f.(map[string]any); ok {
			if at, ok := m["arg"].(string); ok {
				secret[at] = true
			}
		}
	}
	if len(secret) == 0 {
		return map[string]any{"args": args}, true
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return map[string]any{"args_hash": hashOf(args)}, false // cannot redact: keep only the hash
	}
	var redacted []string
	v = redactAt("", v, secret, &redacted)
	return map[string]any{"args": v, "args_redacted": redacted}, true
}

// redactAt replaces the values at the secret paths (as risk.ScanArgs names
// them: keys and indexes joined by dots) with the hash of their JSON.
func redactAt(at string, v any, secret map[string]bool, out *[]string) any {
	if at != "" && secret[at] {
		b, _ := rein.Canonical(v)
		*out = append(*out, at)
		return hashOf(b)
	}
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactAt(join(k), e, secret, out)
		}
	case []any:
		for i, e := range x {
			x[i] = redactAt(join(strconv.Itoa(i)), e, secret, out)
		}
	}
	return v
}

// Secrets in what rein keeps and sends. A value risk analysis tags as a
// credential is kept in records (checks, approvals, reviews), events,
// webhooks, messages and audit entries only as its typed redaction
// ("[authorization sha256:…]"), unless the tool's audit_args keeps values.
// The agent still gets exactly the arguments it must run: it sent the
// secrets itself, and they are put back from its request (Reveal) where they
// were taken from, never from storage.

// keeps reports whether the tool's arguments are kept with their secrets
// (audit_args: values, the policy author's explicit choice).
func (p *Pipeline) keeps(tool string) bool { return p.argsMode(tool) == ArgsValues }

// conceal returns args (canonical JSON) with every credential replaced by
// its typed redaction, and what was replaced. Arguments that are not an
// object, or cannot be read, are kept as their hash alone.
func (p *Pipeline) conceal(tool string, args json.RawMessage) (json.RawMessage, []risk.Concealed) {
	if len(args) == 0 || p.keeps(tool) {
		return args, nil
	}
	m, err := rein.ParseArgs(args)
	if err != nil {
		return json.RawMessage(strconv.Quote("[unreadable " + hashOf(args) + "]")), []risk.Concealed{{Kind: "unreadable"}}
	}
	m, found := risk.Conceal(m)
	if len(found) == 0 {
		return args, nil
	}
	out, err := rein.Canonical(m)
	if err != nil {
		return json.RawMessage(strconv.Quote("[unreadable " + hashOf(args) + "]")), found
	}
	return out, found
}

// concealed is conceal without what was replaced.
func (p *Pipeline) concealed(tool string, args json.RawMessage) json.RawMessage {
	out, _ := p.conceal(tool, args)
	return out
}

// reveal puts the secrets of request (the agent's own arguments) back into
// kept (arguments as rein keeps them: an approval's, or an approver's edit of
// them), each only where it was taken from. A redaction it cannot put back
// is an error: those arguments cannot be run.
func (p *Pipeline) reveal(tool string, kept, request json.RawMessage) (json.RawMessage, error) {
	if len(kept) == 0 || !bytes.Contains(kept, []byte(" sha256:")) {
		return kept, nil
	}
	m, err := rein.ParseArgs(kept)
	if err != nil {
		return nil, err
	}
	var found []risk.Concealed
	if req, err := rein.ParseArgs(request); err == nil {
		_, found = risk.Conceal(req)
	}
	if m, err = risk.Reveal(m, found); err != nil {
		return nil, err
	}
	return rein.Canonical(m)
}

// kept is the check record as rein keeps it: its arguments concealed, and
// the hash of the arguments to run, which results are compared with.
func (p *Pipeline) kept(rec *rein.CheckRecord) *rein.CheckRecord {
	k := *rec
	if string(rec.Args) == string(rec.Check.Args) && !holdsSecrets(rec.Facts) {
		return &k // the analysis found no credential in the arguments: nothing to conceal
	}
	k.Check.Args = p.concealed(rec.Check.Tool, rec.Check.Args)
	k.Args = p.concealed(rec.Check.Tool, rec.Args)
	k.Facts = p.concealedFacts(rec.Check.Tool, rec.Check.Args, rec.Facts)
	if string(k.Args) != string(rec.Args) {
		k.RunArgsHash = rein.ArgsHash(rec.Args)
	}
	return &k
}

// concealedFacts returns a copy of facts (what risk analysis derived from
// args: a shell command's words and environment, URLs, SQL) in which every
// credential concealed in args stands as the same typed redaction, so that
// a token kept redacted in the arguments is not kept in clear in the facts.
// Facts that cannot be copied are kept as their hash alone.
func (p *Pipeline) concealedFacts(tool string, args json.RawMessage, facts map[string]any) map[string]any {
	if len(facts) == 0 || p.keeps(tool) {
		return facts
	}
	m, err := rein.ParseArgs(args)
	if err != nil {
		return facts
	}
	_, found := risk.Conceal(m)
	if len(found) == 0 {
		return facts
	}
	b, err := json.Marshal(facts)
	if err != nil {
		return map[string]any{"unreadable": "[facts " + hashOf(nil) + "]"}
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]any{"unreadable": "[facts " + hashOf(b) + "]"}
	}
	var secrets []struct{ text, marker string }
	for _, c := range found {
		var text string
		if json.Unmarshal(c.Value, &text) != nil || text == "" {
			continue
		}
		secrets = append(secrets, struct{ text, marker string }{text, c.Marker})
		// A shell word's value ('pw', "pw") stands in the facts unquoted.
		if u := shellUnquoter.Replace(text); u != text && u != "" {
			secrets = append(secrets, struct{ text, marker string }{u, c.Marker})
		}
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			for _, s := range secrets {
				x = replaceSecret(x, s.text, s.marker)
			}
			return risk.ConcealShapes(x) // a token the arguments hold split by quoting is whole here
		}
		return v
	}
	walk(out)
	return out
}

var shellUnquoter = strings.NewReplacer(`"`, "", `'`, "", `\`, "")

// replaceSecret replaces secret in s by marker. A short secret (a typed
// password: "x", "hunter2") is replaced only where a word ends with it, not
// at the start of a longer word (the x of xargs): facts hold it as a word
// or the end of one (an environment value, -phunter2).
func replaceSecret(s, secret, marker string) string {
	if len(secret) >= 8 {
		return strings.ReplaceAll(s, secret, marker)
	}
	var b strings.Builder
	last := 0
	for from := 0; from <= len(s); {
		i := strings.Index(s[from:], secret)
		if i < 0 {
			break
		}
		i += from
		end := i + len(secret)
		if end < len(s) && isWordByte(s[end]) && isWordByte(secret[len(secret)-1]) {
			from = i + 1 // the start of a longer word
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(marker)
		last, from = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// holdsSecrets reports whether a check's facts name a credential in its
// arguments (risk.ScanArgs, which Conceal follows).
func holdsSecrets(facts map[string]any) bool {
	switch list := facts["secrets"].(type) {
	case []any:
		return len(list) > 0
	case []risk.SecretFact:
		return len(list) > 0
	case nil:
		return false
	}
	return true // an unexpected shape: conceal to be sure
}

// answered is a kept record as its agent is answered: the arguments it sent
// and the arguments to run, with its secrets put back from request.
func (p *Pipeline) answered(kept *rein.CheckRecord, request json.RawMessage) (*rein.CheckRecord, error) {
	out := *kept
	run, err := p.reveal(kept.Check.Tool, kept.Args, request)
	if err != nil {
		return nil, rein.Errorf(rein.ECodeConflict, "check %s's arguments cannot be given back: %v", kept.ID, err)
	}
	out.Check.Args, out.Args = request, run
	return &out, nil
}

// keepSecrets redacts the secrets of a new approval's arguments before it is
// stored, and keeps the agent's own arguments in this process's memory only
// (secretVault) so that the agent's wait can use the grant; its revision's
// hash is of the arguments as approvers see them.
func (p *Pipeline) keepSecrets(a *rein.Approval) {
	plain := a.Args
	kept, found := p.conceal(a.Tool, plain)
	if len(found) > 0 {
		a.Args = kept
		p.secrets.put(a.ID, plain, a.ExpiresAt.Add(secretsKeptAfterExpiry))
	}
	a.ArgsHash = rein.ArgsHash(a.Args)
}

// requestArgs are the agent's own arguments of approval a: as stored, or,
// when their secrets are redacted, from this process's memory (false when
// it has none: the server restarted, or another replica asked).
func (p *Pipeline) requestArgs(a *rein.Approval) (json.RawMessage, bool) {
	if !bytes.Contains(a.Args, []byte(" sha256:")) {
		return a.Args, true
	}
	plain, ok := p.secrets.get(a.ID)
	if !ok || string(p.concealed(a.Tool, plain)) != string(a.Args) {
		return nil, false
	}
	return plain, true
}

// How long after an approval's expiry its agent's arguments stay in memory:
// long enough for the longest grant window a rule permits in practice.
const (
	secretsKeptAfterExpiry = 24 * time.Hour
	secretsKeptAtMost      = 100_000 // approvals; beyond, the agent re-sends its check
)

// secretVault holds the arguments, secrets included, of pending and granted
// approvals whose stored arguments are redacted. It lives in memory only and
// is never written anywhere.
type secretVault struct {
	mu sync.Mutex
	m  map[string]vaulted
}

type vaulted struct {
	args  json.RawMessage
	until time.Time
}

func (v *secretVault) put(id string, args json.RawMessage, until time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]vaulted{}
	}
	if len(v.m) >= secretsKeptAtMost {
		v.sweepLocked(time.Now())
		if len(v.m) >= secretsKeptAtMost {
			return
		}
	}
	v.m[id] = vaulted{args, until}
}

func (v *secretVault) get(id string) (json.RawMessage, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.m[id]
	if !ok || time.Now().After(e.until) {
		return nil, false
	}
	return e.args, true
}

func (v *secretVault) forget(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, id)
}

func (v *secretVault) sweep(now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sweepLocked(now)
}

func (v *secretVault) sweepLocked(now time.Time) {
	for id, e := range v.m {
		if now.After(e.until) {
			delete(v.m, id)
		}
	}
}

// RedactStoredSecrets is the name of the one-time rewrite that redacts the
// secrets of records kept before rein redacted them.
const RedactStoredSecrets = "redact-stored-secrets"

// ConcealRecord is the rewrite of one stored record (a check's, an
// approval's or a review's, by table) that conceals the secrets of its
// arguments, or nil when it holds none. It changes only the arguments and
// keeps every other field of the record as stored.
func (p *Pipeline) ConcealRecord(table string, record []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(record, &m) != nil {
		return nil
	}
	tool := func(raw json.RawMessage) string {
		var t string
		json.Unmarshal(raw, &t)
		return t
	}
	changed := false
	conceal := func(obj map[string]json.RawMessage, field, tool string) {
		v, ok := obj[field]
		if !ok || len(v) == 0 || v[0] != '{' {
			return
		}
		if out := p.concealed(tool, v); string(out) != string(v) {
			obj[field], changed = out, true
		}
	}
	switch table {
	case "checks":
		var in map[string]json.RawMessage
		if json.Unmarshal(m["check"], &in) != nil {
			return nil
		}
		t := tool(in["tool"])
		run := m["args"]
		conceal(in, "args", t)
		conceal(m, "args", t)
		if _, ok := m["args_hash"]; changed && !ok && len(run) > 0 { // what results compare with
			m["args_hash"], _ = json.Marshal(rein.ArgsHash(run))
		}
		if changed {
			m["check"], _ = json.Marshal(in)
		}
	case "approvals":
		t := tool(m["tool"])
		conceal(m, "args", t)
		conceal(m, "approved_args", t)
		var votes []map[string]json.RawMessage
		if json.Unmarshal(m["votes"], &votes) == nil {
			before := changed
			changed = false
			for _, v := range votes {
				conceal(v, "args", t)
			}
			if changed {
				m["votes"], _ = json.Marshal(votes)
			}
			changed = changed || before
		}
		if changed { // the revision's hash is of the arguments as shown
			args := m["approved_args"]
			if len(args) == 0 || string(args) == "null" {
				args = m["args"]
			}
			m["args_hash"], _ = json.Marshal(rein.ArgsHash(args))
		}
	case "reviews":
		conceal(m, "args", tool(m["tool"]))
	default:
		return nil
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}
