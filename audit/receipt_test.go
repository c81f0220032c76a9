package audit_test

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/reinhq/rein/audit"
)

// thirdPartyVerify checks a receipt the way a party without rein's code
// does: it splits the text by the tlog-proof spec, opens the checkpoint
// with transparency-dev/formats and checks the inclusion proof with
// transparency-dev/merkle.
func thirdPartyVerify(text []byte, origin, vkey string) error {
	head, cp, _ := bytes.Cut(text, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(lines[1], "extra ") || !strings.HasPrefix(lines[2], "index ") {
		return strconv.ErrSyntax
	}
	entry, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(lines[1], "extra "))
	if err != nil {
		return err
	}
	index, err := strconv.ParseUint(strings.TrimPrefix(lines[2], "index "), 10, 64)
	if err != nil {
		return err
	}
	var hashes [][]byte
	for _, l := range lines[3:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil {
			return err
		}
		hashes = append(hashes, h)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return err
	}
	c, _, _, err := log.ParseCheckpoint(cp, origin, v)
	if err != nil {
		return err
	}
	return proof.VerifyInclusion(rfc6962.DefaultHasher, index, c.Size, rfc6962.DefaultHasher.HashLeaf(entry), hashes, c.Hash)
}

func TestReceiptVerifiesHereAndWithThirdPartyCode(t *testing.T) {
	l := newTestLog(t, "rein/dep_receipts")
	l.add(t, 37, "main")
	signed := l.checkpoint(t)
	for _, index := range []int64{0, 1, 17, 31, 32, 36} {
		text := l.receipt(t, index, signed).Format()
		r, err := audit.ParseReceipt(text)
		if err != nil {
			t.Fatalf("index %d: parse: %v", index, err)
		}
		got, err := audit.VerifyReceipt(r, audit.ReceiptOptions{Known: l.known(t), Origin: l.origin})
		if err != nil || got.Index != index || !bytes.Equal(got.Entry, l.entries[index]) || got.Checkpoint.Size != 37 {
			t.Fatalf("index %d: verify: %+v, %v", index, got, err)
		}
		if err := thirdPartyVerify(text, l.origin, l.vkey); err != nil {
			t.Fatalf("index %d: transparency-dev code rejects rein's receipt: %v", index, err)
		}
	}
}

// TestReceiptRejectsTampering changes each part of a receipt in turn; both
// rein's verifier and the third-party one must refuse every change.
func TestReceiptRejectsTampering(t *testing.T) {
	l := newTestLog(t, "rein/dep_receipts")
	l.add(t, 20, "main")
	signed := l.checkpoint(t)
	other := newTestLog(t, "rein/dep_receipts")
	other.add(t, 20, "main")
	good := l.receipt(t, 5, signed)
	cases := map[string]func(r *audit.Receipt){
		"entry changed, still canonical": func(r *audit.Receipt) {
			r.Entry = bytes.Replace(r.Entry, []byte(`"allow"`), []byte(`"allox"`), 1)
		},
		"another entry":         func(r *audit.Receipt) { r.Entry = l.entries[6] },
		"index moved":           func(r *audit.Receipt) { r.Index = 6 },
		"proof hash changed":    func(r *audit.Receipt) { r.Proof[1][0] ^= 1 },
		"proof cut short":       func(r *audit.Receipt) { r.Proof = r.Proof[:len(r.Proof)-1] },
		"checkpoint of another": func(r *audit.Receipt) { r.Checkpoint = other.checkpoint(t) },
		"checkpoint root changed": func(r *audit.Receipt) {
			r.Checkpoint = bytes.Replace(r.Checkpoint, []byte("\n20\n"), []byte("\n21\n"), 1)
		},
	}
	for name, change := range cases {
		r := *good
		r.Entry = bytes.Clone(good.Entry)
		r.Proof = append(r.Proof[:0:0], good.Proof...)
		change(&r)
		text := r.Format()
		parsed, err := audit.ParseReceipt(text)
		if err == nil {
			_, err = audit.VerifyReceipt(parsed, audit.ReceiptOptions{Known: l.known(t), Origin: l.origin})
		}
		if err == nil {
			t.Errorf("%s: rein's verifier accepted the receipt", name)
		}
		if thirdPartyVerify(text, l.origin, l.vkey) == nil {
			t.Errorf("%s: the third-party verifier accepted the receipt", name)
		}
	}
}

func TestParseReceiptRejectsBadSyntax(t *testing.T) {
	l := newTestLog(t, "rein/dep_receipts")
	l.add(t, 3, "main")
	good := string(l.receipt(t, 1, l.checkpoint(t)).Format())
	for name, text := range map[string]string{
		"no header":      strings.Replace(good, "c2sp.org/tlog-proof@v1\n", "", 1),
		"other version":  strings.Replace(good, "@v1", "@v2", 1),
		"leading zero":   strings.Replace(good, "index 1\n", "index 01\n", 1),
		"negative index": strings.Replace(good, "index 1\n", "index -1\n", 1),
		"no index":       strings.Replace(good, "index 1\n", "", 1),
		"bad hash":       strings.Replace(good, "index 1\n", "index 1\nAAAA\n", 1),
		"no checkpoint":  strings.SplitN(good, "\n\n", 2)[0],
	} {
		if _, err := audit.ParseReceipt([]byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
