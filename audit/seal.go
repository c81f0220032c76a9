package audit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
)

// SealStore is what the sealer needs of the store.
type SealStore interface {
	AuditSize(ctx context.Context) (entries, hashed int64, err error)
	Entries(ctx context.Context, start int64, limit int) ([]*rein.StoredEntry, error)
	ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
	SaveTree(ctx context.Context, u *rein.TreeUpdate) error
	LatestCheckpoint(ctx context.Context) (*rein.SignedCheckpoint, error)
}

// Sealer extends the stored tree over new entries and signs a checkpoint
// for it. It never signs a checkpoint inconsistent with the latest stored
// one: it proves consistency from the stored tree first, and refuses.
type Sealer struct {
	Store  SealStore
	Origin string
	Signer note.Signer    // signs new checkpoints
	Known  note.Verifiers // opens the latest stored checkpoint (every key ever used)
	Now    func() time.Time

	mu sync.Mutex
}

// SetSigner makes signer sign the checkpoints from now on, and known the
// keys that open the stored ones (after a key rotation).
func (s *Sealer) SetSigner(signer note.Signer, known note.Verifiers) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Signer, s.Known = signer, known
}

// chunk is how many records are hashed and stored per transaction. On
// SQLite the tree's rows are written by the one writer, in the batch of
// checks that is waiting: with 16,384 records a chunk, a second's worth of
// entries under load was one write of several milliseconds that every
// waiting check waited for (measured with 64 agents: 512 a chunk cut p99
// by a tenth or more, and the peak memory by 7 MiB).
const chunk = 512

// Seal hashes every entry not yet in the tree and, when the tree grew (or
// has no checkpoint yet), signs and stores a checkpoint for it. It returns
// the latest checkpoint.
func (s *Sealer) Seal(ctx context.Context) (*Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, hashed, err := s.Store.AuditSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit size: %w", err)
	}
	var prev *Checkpoint
	latest, err := s.Store.LatestCheckpoint(ctx)
	switch {
	case err == nil:
		c, _, err := Open(latest.Note, s.Known)
		if err != nil {
			return nil, fmt.Errorf("the latest stored checkpoint does not verify: %w", err)
		}
		prev = &c
	case err != rein.ErrNotFound:
		return nil, err
	}
	if prev != nil && prev.Size == entries && hashed == entries {
		return prev, nil
	}
	reader := &cachedReader{store: s.Store, ctx: ctx, cache: map[int64]tlog.Hash{}}
	for hashed < entries {
		n := min(entries-hashed, chunk)
		list, err := s.Store.Entries(ctx, hashed, int(n))
		if err != nil {
			return nil, fmt.Errorf("read entries from %d: %w", hashed, err)
		}
		if int64(len(list)) != n {
			return nil, fmt.Errorf("entries %d to %d: read %d", hashed, hashed+n-1, len(list))
		}
		u := &rein.TreeUpdate{From: hashed}
		for _, e := range list {
			if e.Index != hashed+int64(len(u.Hashes)) {
				return nil, fmt.Errorf("entry %d is missing from the log", hashed+int64(len(u.Hashes)))
			}
			hs, err := tlog.StoredHashes(e.Index, e.Bytes, reader)
			if err != nil {
				return nil, fmt.Errorf("hash entry %d: %w", e.Index, err)
			}
			base := tlog.StoredHashIndex(0, e.Index)
			for i, h := range hs {
				reader.cache[base+int64(i)] = h
			}
			u.Hashes = append(u.Hashes, hs)
		}
		if err := s.Store.SaveTree(ctx, u); err != nil {
			return nil, fmt.Errorf("store tree hashes: %w", err)
		}
		hashed += n
		reader.trim()
	}
	root, err := tlog.TreeHash(entries, reader)
	if err != nil {
		return nil, fmt.Errorf("tree hash at %d: %w", entries, err)
	}
	if prev != nil {
		if prev.Size > entries {
			return nil, fmt.Errorf("refusing to sign: the log holds %d entries but a checkpoint covers %d", entries, prev.Size)
		}
		proof, err := tlog.ProveTree(entries, prev.Size, reader)
		if err == nil {
			err = tlog.CheckTree(proof, entries, root, prev.Size, prev.Root)
		}
		if err != nil {
			return nil, fmt.Errorf("refusing to sign: the tree at %d is not consistent with the checkpoint at %d: %w", entries, prev.Size, err)
		}
		if prev.Size == entries {
			return prev, nil
		}
	}
	c := Checkpoint{Origin: s.Origin, Size: entries, Root: root}
	signed, err := Sign(c, s.Signer)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	if err := s.Store.SaveTree(ctx, &rein.TreeUpdate{From: entries, Checkpoint: &rein.SignedCheckpoint{
		Size: entries, Note: signed, SignedAt: s.Now().UTC()}}); err != nil {
		return nil, fmt.Errorf("store checkpoint: %w", err)
	}
	return &c, nil
}

// cachedReader reads stored hashes, the ones just computed from memory.
type cachedReader struct {
	store SealStore
	ctx   context.Context
	cache map[int64]tlog.Hash
}

func (r *cachedReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	var missing []int64
	for i, x := range indexes {
		h, ok := r.cache[x]
		if !ok {
			missing = append(missing, x)
			continue
		}
		out[i] = h
	}
	if len(missing) == 0 {
		return out, nil
	}
	got, err := r.store.ReadHashes(r.ctx, missing)
	if err != nil {
		return nil, err
	}
	for i, x := range missing {
		r.cache[x] = got[i]
	}
	for i, x := range indexes {
		out[i] = r.cache[x]
	}
	return out, nil
}

// trim bounds the cache once its hashes are stored.
func (r *cachedReader) trim() {
	if len(r.cache) > 4*chunk {
		clear(r.cache)
	}
}
