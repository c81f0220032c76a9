package audit

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein/canonjson"
)

// HiddenLeaf is how a bundle (and the entries endpoint) shows an entry the
// reader may not see: its index and leaf hash only.
type HiddenLeaf struct {
	Index    int64  `json:"index"`
	LeafHash string `json:"leaf_hash"` // base64
}

// Bundle is what offline verification reads.
type Bundle struct {
	Entries     io.Reader // entries.ndjson: every index from 0, full or hidden
	Checkpoints []byte    // checkpoints.txt: signed notes separated by blank lines
}

// Options of Verify.
type Options struct {
	Known   note.Verifiers // keys whose signatures count
	Origin  string         // when set, every checkpoint must name it
	Trusted []byte         // a checkpoint pinned by the auditor earlier, optional
	// Policy, when set, adds its logs to the known keys and requires its
	// quorum of witness cosignatures on the latest checkpoint.
	Policy *Policy
	// Progress, when set, is called now and then with the entries read.
	Progress func(entries int64)
}

// Report is the summary of a verification that passed.
type Report struct {
	Entries     int64 // leaves in the bundle
	Full        int64 // entries shown in full (canonical JCS checked)
	Hidden      int64 // entries shown as leaf hashes only
	Checkpoints int
	Latest      Checkpoint
	LatestNote  []byte   // the latest checkpoint as signed, to pin next time
	Witnesses   []string // the policy's witnesses that cosigned the latest checkpoint
}

// Failure is a verification that did not pass: the first bad index and why.
type Failure struct {
	Index  int64 // -1 when no single entry is to blame (a checkpoint, a key)
	Reason string
}

func (f *Failure) Error() string {
	if f.Index < 0 {
		return f.Reason
	}
	return fmt.Sprintf("index %d: %s", f.Index, f.Reason)
}

func fail(index int64, format string, args ...any) *Failure {
	return &Failure{Index: index, Reason: fmt.Sprintf(format, args...)}
}

// Verify runs the five checks of an offline verification:
//  1. every entry is canonical JCS and parses, and indexes are contiguous;
//  2. the tree rebuilt from the leaves has each checkpoint's root at its size;
//  3. every checkpoint's signature verifies with a known key;
//  4. each checkpoint is consistent with the one before (and the trusted one);
//  5. a report, or a *Failure naming the first bad index.
func Verify(b Bundle, opt Options) (*Report, error) {
	if opt.Policy != nil {
		opt.Known = opt.Policy.LogVerifiers(opt.Known)
	}
	if opt.Known == nil {
		return nil, fail(-1, "no key to verify checkpoints with: give a key or a policy with a log line")
	}
	cps, err := openCheckpoints(b.Checkpoints, opt)
	if err != nil {
		return nil, err
	}
	var trusted *Checkpoint
	if len(opt.Trusted) > 0 {
		c, _, err := Open(opt.Trusted, opt.Known)
		if err != nil {
			return nil, fail(-1, "the trusted checkpoint does not verify with the known keys: %v", err)
		}
		trusted = &c
	}
	rep := &Report{Checkpoints: len(cps)}
	tree := &Tree{}
	next := 0 // the next checkpoint to check
	prev := Checkpoint{Origin: opt.Origin, Size: 0}
	checkAt := func(size int64) error {
		for next < len(cps) && cps[next].c.Size == size {
			c := cps[next].c
			root, err := tree.Root(size)
			if err != nil {
				return fail(prev.Size, "cannot rebuild the tree at %d: %v", size, err)
			}
			if root != c.Root {
				return fail(prev.Size, "the entries from %d to %d do not give the root of the checkpoint at size %d: an entry in that range was changed, removed, inserted or reordered",
					prev.Size, size-1, size)
			}
			if prev.Size > 0 {
				proof, err := tlog.ProveTree(size, prev.Size, tree)
				if err == nil {
					err = tlog.CheckTree(proof, size, c.Root, prev.Size, prev.Root)
				}
				if err != nil {
					return fail(prev.Size, "the checkpoint at size %d is not consistent with the one at size %d: %v", size, prev.Size, err)
				}
			}
			prev = c
			rep.Latest, rep.LatestNote = c, cps[next].signed
			next++
		}
		if trusted != nil && trusted.Size == size {
			root, err := tree.Root(size)
			if err != nil || root != trusted.Root {
				return fail(-1, "the bundle is not consistent with the trusted checkpoint at size %d: the log was rewritten", size)
			}
		}
		return nil
	}
	if err := checkAt(0); err != nil {
		return nil, err
	}
	err = readLeaves(b.Entries, func(index int64, leaf tlog.Hash, full bool) error {
		if err := tree.AppendLeaf(leaf); err != nil {
			return fail(index, "%v", err)
		}
		if full {
			rep.Full++
		} else {
			rep.Hidden++
		}
		if opt.Progress != nil && tree.Size()%65536 == 0 {
			opt.Progress(tree.Size())
		}
		return checkAt(tree.Size())
	})
	if err != nil {
		return nil, err
	}
	rep.Entries = tree.Size()
	if opt.Progress != nil {
		opt.Progress(rep.Entries)
	}
	if next < len(cps) {
		return nil, fail(rep.Entries, "the bundle ends at %d entries but a checkpoint covers %d: entries were cut off the end",
			rep.Entries, cps[next].c.Size)
	}
	if trusted != nil && trusted.Size > rep.Entries {
		return nil, fail(rep.Entries, "the bundle ends at %d entries but the trusted checkpoint covers %d: entries were cut off the end",
			rep.Entries, trusted.Size)
	}
	if len(cps) == 0 {
		return nil, fail(-1, "the bundle has no checkpoint: nothing vouches for its entries")
	}
	if rep.Latest.Size != rep.Entries {
		return nil, fail(rep.Latest.Size, "the entries after the latest checkpoint (%d to %d) are not covered by any checkpoint",
			rep.Latest.Size, rep.Entries-1)
	}
	if opt.Policy != nil {
		if rep.Witnesses, err = opt.Policy.Check(rep.LatestNote); err != nil {
			return nil, fail(-1, "the latest checkpoint (size %d) fails the policy: %v", rep.Latest.Size, err)
		}
	}
	return rep, nil
}

type openedCheckpoint struct {
	c      Checkpoint
	signed []byte
}

// openCheckpoints verifies every checkpoint's signature and orders them by size.
func openCheckpoints(text []byte, opt Options) ([]openedCheckpoint, error) {
	var out []openedCheckpoint
	for i, signed := range SplitNotes(text) {
		c, _, err := Open(signed, opt.Known)
		if err != nil {
			return nil, fail(-1, "checkpoint %d of the bundle does not verify with the known keys: %v", i+1, err)
		}
		if opt.Origin != "" && c.Origin != opt.Origin {
			return nil, fail(-1, "checkpoint %d is for the log %q, not %q", i+1, c.Origin, opt.Origin)
		}
		out = append(out, openedCheckpoint{c, signed})
	}
	slices.SortStableFunc(out, func(a, b openedCheckpoint) int { return int(a.c.Size - b.c.Size) })
	for i := 1; i < len(out); i++ {
		if out[i].c.Size == out[i-1].c.Size && out[i].c.Root != out[i-1].c.Root {
			return nil, fail(-1, "two signed checkpoints at size %d have different roots: the log forked", out[i].c.Size)
		}
		if out[i].c.Origin != out[0].c.Origin {
			return nil, fail(-1, "the checkpoints name different logs: %q and %q", out[0].c.Origin, out[i].c.Origin)
		}
	}
	return out, nil
}

// readLeaves reads entries.ndjson and calls leaf for each index in order.
// Lines are checked and hashed by a few workers; leaf sees them in order.
func readLeaves(r io.Reader, leaf func(index int64, h tlog.Hash, full bool) error) error {
	type item struct {
		index int64
		line  []byte
		hash  tlog.Hash
		full  bool
		err   error
		done  chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *item, 4096)
	order := make(chan *item, 4096)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				it.hash, it.full, it.err = checkLine(it.index, it.line)
				close(it.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(work)
		defer close(order)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var index int64
		for sc.Scan() {
			line := bytes.TrimRight(sc.Bytes(), "\r")
			if len(line) == 0 {
				continue
			}
			it := &item{index: index, line: slices.Clone(line), done: make(chan struct{})}
			order <- it
			work <- it
			index++
		}
		readErr = sc.Err()
	}()
	var firstErr error
	for it := range order {
		<-it.done
		if firstErr != nil {
			continue // drain
		}
		if it.err != nil {
			firstErr = it.err
			continue
		}
		firstErr = leaf(it.index, it.hash, it.full)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if readErr != nil {
		return fmt.Errorf("read entries: %w", readErr)
	}
	return nil
}

// checkLine checks one line of entries.ndjson at the expected index and
// returns its leaf hash.
func checkLine(want int64, line []byte) (tlog.Hash, bool, error) {
	if bytes.HasPrefix(line, []byte(`{"index":`)) && bytes.Contains(line, []byte(`"leaf_hash":`)) {
		var h HiddenLeaf
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&h); err != nil {
			return tlog.Hash{}, false, fail(want, "a hidden entry that does not parse: %v", err)
		}
		if h.Index != want {
			return tlog.Hash{}, false, fail(want, "found index %d where %d belongs: an entry is missing, inserted or out of order", h.Index, want)
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(h.LeafHash)
		if err != nil || len(raw) != tlog.HashSize {
			return tlog.Hash{}, false, fail(want, "a hidden entry with a bad leaf hash")
		}
		var out tlog.Hash
		copy(out[:], raw)
		return out, false, nil
	}
	if !canonjson.IsCanonical(line) {
		return tlog.Hash{}, true, fail(want, "the entry is not valid JSON in canonical (RFC 8785) form: it was re-encoded or changed")
	}
	index, err := entryIndex(line)
	if err != nil {
		return tlog.Hash{}, true, fail(want, "%v", err)
	}
	if index != want {
		return tlog.Hash{}, true, fail(want, "found index %d where %d belongs: an entry is missing, inserted or out of order", index, want)
	}
	return tlog.RecordHash(line), true, nil
}

// entryIndex reads the top-level "index" of a canonical entry: in sorted
// order it is the member right before the top-level "kind", the last
// `,"kind":` of the text. A canonical entry must also end with "v":1.
func entryIndex(line []byte) (int64, error) {
	if !bytes.HasSuffix(line, []byte(`,"v":1}`)) {
		return 0, errors.New(`the entry is not a version 1 entry ("v":1)`)
	}
	k := bytes.LastIndex(line, []byte(`,"kind":`))
	if k < 0 {
		return 0, errors.New("the entry has no kind")
	}
	head := line[:k]
	i := bytes.LastIndex(head, []byte(`"index":`))
	if i < 1 || (head[i-1] != ',' && head[i-1] != '{') {
		return 0, errors.New("the entry has no index")
	}
	n, err := strconv.ParseInt(string(head[i+len(`"index":`):]), 10, 64)
	if err != nil {
		return 0, errors.New("the entry's index is not a number")
	}
	return n, nil
}
