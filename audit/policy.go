package audit

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// Policy is a C2SP transparency log trust policy
// (https://c2sp.org/tlog-policy): the logs a verifier accepts, the
// witnesses it knows, and the quorum of them that must have cosigned a
// checkpoint before the verifier believes it. Witness cosignatures are
// C2SP tlog-cosignature signatures (cosignature/v1, Ed25519 or ML-DSA-44),
// verified by the transparency-dev/formats implementation.
type Policy struct {
	Logs      []*PolicyLog
	Witnesses []*PolicyWitness
	quorum    *quorum // nil: "quorum none"
}

// PolicyLog is a log line: the log's verifier key, whose name is its origin.
type PolicyLog struct {
	VKey     string
	URL      string
	Verifier note.Verifier
}

// PolicyWitness is a witness line: a name local to the policy, the
// witness's cosigning key, and where it takes add-checkpoint requests.
type PolicyWitness struct {
	Name     string
	VKey     string
	URL      string // the tlog-witness submission prefix, optional
	Verifier note.Verifier
}

// quorum is a witness (w set) or a group of k members.
type quorum struct {
	name    string
	w       *PolicyWitness
	k       int
	members []*quorum
}

// policyKeywords cannot name a witness or a group (tlog-policy, Syntax).
var policyKeywords = map[string]bool{"log": true, "witness": true, "group": true, "quorum": true,
	"any": true, "all": true, "none": true}

// ParsePolicy reads a policy file. It follows the tlog-policy rules: names
// are defined before use, each member appears once in a group, 1 <= k <= n,
// no two logs or witnesses share a public key, exactly one quorum line.
func ParsePolicy(text []byte) (*Policy, error) {
	p := &Policy{}
	names := map[string]*quorum{}
	keys := map[string]string{} // public key material -> the line that has it
	quorums := 0
	for i, raw := range strings.Split(string(text), "\n") {
		lineNo := i + 1
		for _, c := range []byte(raw) {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return nil, fmt.Errorf("policy line %d: control character 0x%02x", lineNo, c)
			}
		}
		f := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("policy line %d: %s", lineNo, fmt.Sprintf(format, args...))
		}
		dupKey := func(vkey string) error {
			k, err := keyMaterial(vkey)
			if err != nil {
				return bad("%v", err)
			}
			if prev, ok := keys[k]; ok {
				return bad("the same public key as %s", prev)
			}
			keys[k] = fmt.Sprintf("line %d", lineNo)
			return nil
		}
		switch f[0] {
		case "log":
			if len(f) < 2 || len(f) > 3 {
				return nil, bad("want: log <vkey> [<url>]")
			}
			v, err := note.NewVerifier(f[1])
			if err != nil {
				return nil, bad("log key: %v", err)
			}
			if err := dupKey(f[1]); err != nil {
				return nil, err
			}
			l := &PolicyLog{VKey: f[1], Verifier: v}
			if len(f) == 3 {
				l.URL = f[2]
			}
			p.Logs = append(p.Logs, l)
		case "witness":
			if len(f) < 3 || len(f) > 4 {
				return nil, bad("want: witness <name> <vkey> [<url>]")
			}
			if err := newName(names, f[1]); err != nil {
				return nil, bad("%v", err)
			}
			v, err := fnote.NewVerifierForCosignatureV1(f[2])
			if err != nil {
				return nil, bad("witness %s: key: %v", f[1], err)
			}
			if err := dupKey(f[2]); err != nil {
				return nil, err
			}
			w := &PolicyWitness{Name: f[1], VKey: f[2], Verifier: v}
			if len(f) == 4 {
				w.URL = f[3]
			}
			p.Witnesses = append(p.Witnesses, w)
			names[w.Name] = &quorum{name: w.Name, w: w}
		case "group":
			if len(f) < 4 {
				return nil, bad("want: group <name> all|any|<k> <name>...")
			}
			if err := newName(names, f[1]); err != nil {
				return nil, bad("%v", err)
			}
			g := &quorum{name: f[1]}
			seen := map[string]bool{}
			for _, m := range f[3:] {
				q, ok := names[m]
				if !ok {
					return nil, bad("group %s: %q is not defined on an earlier line", f[1], m)
				}
				if seen[m] {
					return nil, bad("group %s lists %q twice", f[1], m)
				}
				seen[m] = true
				g.members = append(g.members, q)
			}
			switch n := len(g.members); f[2] {
			case "all":
				g.k = n
			case "any":
				g.k = 1
			default:
				k, err := strconv.Atoi(f[2])
				if err != nil || strconv.Itoa(k) != f[2] || k < 1 || k > n {
					return nil, bad("group %s: the threshold %q must be all, any or a number from 1 to %d", f[1], f[2], n)
				}
				g.k = k
			}
			names[g.name] = g
		case "quorum":
			if len(f) != 2 {
				return nil, bad("want: quorum <name>")
			}
			quorums++
			if f[1] == "none" {
				p.quorum = nil
				continue
			}
			q, ok := names[f[1]]
			if !ok {
				return nil, bad("quorum %q is not defined on an earlier line", f[1])
			}
			p.quorum = q
		default:
			return nil, bad("unknown keyword %q", f[0])
		}
	}
	if quorums != 1 {
		return nil, fmt.Errorf("a policy has exactly one quorum line; this one has %d", quorums)
	}
	return p, nil
}

func newName(names map[string]*quorum, name string) error {
	if policyKeywords[name] {
		return fmt.Errorf("%q is a keyword, not a name", name)
	}
	if _, ok := names[name]; ok {
		return fmt.Errorf("%q is defined twice", name)
	}
	return nil
}

// keyMaterial is a vkey's public key without its name, hash or type byte:
// two vkeys wrapping it are duplicates (tlog-policy, Public keys).
func keyMaterial(vkey string) (string, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return "", fmt.Errorf("malformed verifier key %q", vkey)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < 2 {
		return "", fmt.Errorf("malformed verifier key %q", vkey)
	}
	return string(raw[1:]), nil
}

// HasQuorum reports whether the policy requires any cosignature.
func (p *Policy) HasQuorum() bool { return p.quorum != nil }

// LogVerifiers returns the policy's log keys together with known (which
// may be nil).
func (p *Policy) LogVerifiers(known note.Verifiers) note.Verifiers {
	if len(p.Logs) == 0 {
		return known
	}
	return verifierUnion{logs: p.Logs, rest: known}
}

type verifierUnion struct {
	logs []*PolicyLog
	rest note.Verifiers
}

func (u verifierUnion) Verifier(name string, hash uint32) (note.Verifier, error) {
	for _, l := range u.logs {
		if l.Verifier.Name() == name && l.Verifier.KeyHash() == hash {
			return l.Verifier, nil
		}
	}
	if u.rest != nil {
		return u.rest.Verifier(name, hash)
	}
	return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
}

// Cosigners returns the names of the policy's witnesses whose cosignature
// on the signed checkpoint verifies.
func (p *Policy) Cosigners(signed []byte) []string {
	var out []string
	for _, w := range p.Witnesses {
		if Cosigned(signed, w) {
			out = append(out, w.Name)
		}
	}
	return out
}

// Cosigned reports whether the witness's cosignature on the signed
// checkpoint verifies.
func Cosigned(signed []byte, w *PolicyWitness) bool {
	n, err := note.Open(signed, note.VerifierList(w.Verifier))
	return err == nil && len(n.Sigs) == 1
}

// Check enforces the policy on a signed checkpoint: when the policy lists
// logs, one of them signed it under its own origin; and the quorum of
// witnesses cosigned it. It returns the witnesses that did.
func (p *Policy) Check(signed []byte) ([]string, error) {
	if len(p.Logs) > 0 {
		ok := false
		for _, l := range p.Logs {
			c, _, err := Open(signed, note.VerifierList(l.Verifier))
			if err == nil && c.Origin == l.Verifier.Name() {
				ok = true
				break
			}
		}
		if !ok {
			return nil, errors.New("the checkpoint is not signed by any log of the policy under that log's origin")
		}
	}
	cosigned := p.Cosigners(signed)
	if p.quorum != nil && !p.quorum.satisfied(cosigned) {
		have := "none of its witnesses"
		if len(cosigned) > 0 {
			have = "only " + strings.Join(cosigned, ", ")
		}
		return cosigned, fmt.Errorf("the checkpoint lacks the policy's quorum %q of witness cosignatures: %s cosigned it", p.quorum.name, have)
	}
	return cosigned, nil
}

func (q *quorum) satisfied(cosigned []string) bool {
	if q.w != nil {
		return slices.Contains(cosigned, q.w.Name)
	}
	n := 0
	for _, m := range q.members {
		if m.satisfied(cosigned) {
			n++
		}
	}
	return n >= q.k
}

// AddCosignatures adds a witness's answer to add-checkpoint (its
// cosignature lines) to the signed checkpoint, after checking that the
// cosignature verifies with the witness's key. An earlier cosignature by
// the same key is replaced.
func AddCosignatures(signed, answer []byte, w *PolicyWitness) ([]byte, error) {
	text, sigs, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return nil, errors.New("the checkpoint is not a signed note")
	}
	prefix := []byte("— " + w.Verifier.Name() + " ")
	var keep [][]byte
	for _, l := range bytes.SplitAfter(sigs, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if bytes.HasPrefix(l, prefix) && sameKey(l, w.Verifier.KeyHash()) {
			continue
		}
		keep = append(keep, l)
	}
	for _, l := range bytes.SplitAfter(answer, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if !bytes.HasSuffix(l, []byte("\n")) {
			l = append(slices.Clip(l), '\n')
		}
		keep = append(keep, l)
	}
	out := append(append(slices.Clip(text), "\n\n"...), bytes.Join(keep, nil)...)
	if !Cosigned(out, w) {
		return nil, fmt.Errorf("witness %s answered with no cosignature that verifies with its key", w.Name)
	}
	return out, nil
}

// sameKey reports whether a signature line's key hash is hash.
func sameKey(line []byte, hash uint32) bool {
	f := bytes.Fields(line)
	if len(f) < 3 {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(string(f[len(f)-1]))
	if err != nil || len(raw) < 4 {
		return false
	}
	return uint32(raw[0])<<24|uint32(raw[1])<<16|uint32(raw[2])<<8|uint32(raw[3]) == hash
}
