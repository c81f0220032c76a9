package audit

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein/canonjson"
)

// A receipt is a C2SP tlog-proof (https://c2sp.org/tlog-proof): one entry,
// its inclusion proof and the signed checkpoint it is proved against, in a
// text anyone can check offline. The entry's canonical bytes travel in the
// proof's "extra" line: they are what a verifier hashes into the leaf, so
// the proof vouches for them and nothing else is needed.

// ReceiptHeader is the first line of every receipt.
const ReceiptHeader = "c2sp.org/tlog-proof@v1"

// Receipt is an entry with its proof of inclusion in a signed checkpoint.
type Receipt struct {
	Entry      []byte      // the entry's canonical bytes, as logged
	Index      int64       // its index in the log
	Proof      []tlog.Hash // RFC 6962 inclusion proof, from the leaf's sibling up
	Checkpoint []byte      // the signed checkpoint, with any cosignatures
}

// Format writes the receipt in the tlog-proof text format.
func (r *Receipt) Format() []byte {
	var b bytes.Buffer
	b.WriteString(ReceiptHeader + "\n")
	if len(r.Entry) > 0 {
		b.WriteString("extra " + base64.StdEncoding.EncodeToString(r.Entry) + "\n")
	}
	b.WriteString("index " + strconv.FormatInt(r.Index, 10) + "\n")
	for _, h := range r.Proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(r.Checkpoint)
	return b.Bytes()
}

// ParseReceipt reads a receipt in the tlog-proof text format. It checks the
// syntax only; VerifyReceipt checks what it proves.
func ParseReceipt(text []byte) (*Receipt, error) {
	head, cp, ok := bytes.Cut(text, []byte("\n\n"))
	if !ok {
		return nil, errors.New("receipt: no blank line before the checkpoint")
	}
	lines := strings.Split(string(head), "\n")
	if lines[0] != ReceiptHeader {
		return nil, fmt.Errorf("receipt: the first line is %q, not %q", lines[0], ReceiptHeader)
	}
	lines = lines[1:]
	r := &Receipt{Checkpoint: cp}
	if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(lines[0], "extra "))
		if err != nil {
			return nil, fmt.Errorf("receipt: the extra line is not base64: %v", err)
		}
		r.Entry, lines = raw, lines[1:]
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
		return nil, errors.New("receipt: no index line")
	}
	n := strings.TrimPrefix(lines[0], "index ")
	index, err := strconv.ParseInt(n, 10, 64)
	if err != nil || index < 0 || strconv.FormatInt(index, 10) != n {
		return nil, fmt.Errorf("receipt: bad index %q", n)
	}
	r.Index = index
	for _, l := range lines[1:] {
		raw, err := base64.StdEncoding.Strict().DecodeString(l)
		if err != nil || len(raw) != tlog.HashSize {
			return nil, fmt.Errorf("receipt: bad proof hash %q", l)
		}
		var h tlog.Hash
		copy(h[:], raw)
		r.Proof = append(r.Proof, h)
	}
	return r, nil
}

// ReceiptOptions say which keys and witnesses a receipt must satisfy.
type ReceiptOptions struct {
	Known  note.Verifiers // the log's keys: one of them must have signed the checkpoint
	Origin string         // when set, the checkpoint must name this log
	Policy *Policy        // when set, its logs are known too and its quorum must have cosigned
}

// VerifiedReceipt is what a receipt proves once verified.
type VerifiedReceipt struct {
	Index      int64
	Entry      []byte
	Checkpoint Checkpoint
	Witnesses  []string // the policy's witnesses that cosigned, by name
}

// VerifyReceipt checks a receipt offline, in the order of tlog-proof's
// verification: the leaf hash of the entry, the checkpoint's signature by a
// known log key, the witnesses' cosignatures against the policy, and the
// inclusion proof that binds the leaf to the signed root. It also checks
// that the entry is canonical and names the receipt's index, so that a
// receipt cannot vouch for an entry at a place it does not claim.
func VerifyReceipt(r *Receipt, opt ReceiptOptions) (*VerifiedReceipt, error) {
	if len(r.Entry) == 0 {
		return nil, errors.New("the receipt carries no entry (no extra line)")
	}
	if !canonjson.IsCanonical(r.Entry) {
		return nil, errors.New("the receipt's entry is not in canonical (RFC 8785) form: it was changed")
	}
	at, err := entryIndex(r.Entry)
	if err != nil {
		return nil, fmt.Errorf("the receipt's entry: %v", err)
	}
	if at != r.Index {
		return nil, fmt.Errorf("the receipt is for index %d but its entry is the one at index %d", r.Index, at)
	}
	leaf := tlog.RecordHash(r.Entry)
	known := opt.Known
	if opt.Policy != nil {
		known = opt.Policy.LogVerifiers(known)
	}
	if known == nil {
		return nil, errors.New("no log key to verify the checkpoint with: give a verifier key or a policy with a log line")
	}
	c, _, err := Open(r.Checkpoint, known)
	if err != nil {
		return nil, fmt.Errorf("the receipt's checkpoint does not verify with the log's keys: %v", err)
	}
	if opt.Origin != "" && c.Origin != opt.Origin {
		return nil, fmt.Errorf("the receipt's checkpoint is for the log %q, not %q", c.Origin, opt.Origin)
	}
	out := &VerifiedReceipt{Index: r.Index, Entry: r.Entry, Checkpoint: c}
	if opt.Policy != nil {
		if out.Witnesses, err = opt.Policy.Check(r.Checkpoint); err != nil {
			return nil, err
		}
	}
	if r.Index >= c.Size {
		return nil, fmt.Errorf("the receipt's index %d is not in the checkpoint's tree of %d entries", r.Index, c.Size)
	}
	if err := tlog.CheckRecord(r.Proof, c.Size, c.Root, r.Index, leaf); err != nil {
		return nil, fmt.Errorf("the inclusion proof does not bind entry %d to the checkpoint at size %d: %v", r.Index, c.Size, err)
	}
	return out, nil
}
