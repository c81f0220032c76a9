// Package audit is rein's transparency log, built on golang.org/x/mod's
// sumdb/tlog (RFC 6962 Merkle tree, proofs) and sumdb/note (Ed25519 signed
// notes): checkpoints in the C2SP tlog-checkpoint format, an in-memory tree
// for verifiers, the offline verification of an exported bundle, receipts
// (C2SP tlog-proof), witness policies and cosignatures (C2SP tlog-policy,
// tlog-cosignature, the tlog-witness request), the OTLP and OCSF renderings
// of entries, and the sealer that hashes new entries and signs checkpoints
// through a store. Nothing here does I/O of its own.
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
)

// Checkpoint is a C2SP tlog-checkpoint: the log's origin, its size, and the
// root hash of the tree of its first Size entries.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// Body is the checkpoint's text, the body of the signed note.
func (c Checkpoint) Body() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
}

// ParseCheckpoint reads a checkpoint body. Extension lines after the root
// are allowed by the format and ignored.
func ParseCheckpoint(body string) (Checkpoint, error) {
	lines := strings.SplitN(body, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, errors.New("checkpoint: want origin, size and root hash lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint: bad size %q", lines[1])
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(raw) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("checkpoint: bad root hash %q", lines[2])
	}
	c := Checkpoint{Origin: lines[0], Size: size}
	copy(c.Root[:], raw)
	return c, nil
}

// Sign signs a checkpoint as a note, with every signer given.
func Sign(c Checkpoint, signers ...note.Signer) ([]byte, error) {
	return note.Sign(&note.Note{Text: c.Body()}, signers...)
}

// Open verifies a signed checkpoint with the known keys and parses it. At
// least one known key must have signed it; signatures by unknown keys are
// allowed (a checkpoint may be cosigned).
func Open(signed []byte, known note.Verifiers) (Checkpoint, *note.Note, error) {
	n, err := note.Open(signed, known)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	c, err := ParseCheckpoint(n.Text)
	return c, n, err
}

// Verifiers builds the known keys from note verifier key strings.
func Verifiers(vkeys ...string) (note.Verifiers, error) {
	var vs []note.Verifier
	for _, k := range vkeys {
		v, err := note.NewVerifier(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("verifier key %q: %w", k, err)
		}
		vs = append(vs, v)
	}
	return note.VerifierList(vs...), nil
}

// SplitNotes splits a file of signed notes separated by blank lines. A
// signed note itself has exactly one blank line (between text and
// signatures), so notes are split at a blank line that follows a
// signature line.
func SplitNotes(text []byte) [][]byte {
	var out [][]byte
	var cur []byte
	inSigs := false
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		blank := len(bytes.TrimRight(line, "\r\n")) == 0
		switch {
		case blank && inSigs:
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur, inSigs = nil, false
			continue
		case blank && len(cur) > 0:
			inSigs = true
		case blank:
			continue
		}
		cur = append(cur, line...)
	}
	if len(bytes.TrimSpace(cur)) > 0 {
		out = append(out, cur)
	}
	return out
}

// Tree is a Merkle tree held in memory as tlog's stored hashes: what a
// verifier rebuilds from a bundle's leaves.
type Tree struct {
	hashes []tlog.Hash
	size   int64
}

// Size is the number of leaves.
func (t *Tree) Size() int64 { return t.size }

// AppendLeaf adds the next leaf by its leaf hash.
func (t *Tree) AppendLeaf(leaf tlog.Hash) error {
	hs, err := tlog.StoredHashesForRecordHash(t.size, leaf, t)
	if err != nil {
		return err
	}
	t.hashes = append(t.hashes, hs...)
	t.size++
	return nil
}

// ReadHashes implements tlog.HashReader.
func (t *Tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("stored hash %d is not in a tree of %d leaves", x, t.size)
		}
		out[i] = t.hashes[x]
	}
	return out, nil
}

// Root is the root hash of the tree of its first n leaves.
func (t *Tree) Root(n int64) (tlog.Hash, error) { return tlog.TreeHash(n, t) }

// RecordRow maps a stored hash index to where a store keeps it when it
// stores, per record, the hashes tlog.StoredHashes returns for that record:
// the record's number and the hash's position among them.
func RecordRow(index int64) (record int64, pos int) {
	level, n := tlog.SplitStoredHashIndex(index)
	return (n+1)<<level - 1, level
}

func leafHash(entry []byte) tlog.Hash { return tlog.RecordHash(entry) }
