package rein

import (
	"context"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// SignedCheckpoint is a checkpoint as the log stores it: the tree size it
// covers and the signed note.
type SignedCheckpoint struct {
	Size     int64
	Note     []byte
	SignedAt time.Time
}

// TreeUpdate extends the stored Merkle tree and records a new checkpoint:
// Hashes[i] are the stored hashes (tlog.StoredHashes) of record From+i.
type TreeUpdate struct {
	From       int64
	Hashes     [][]tlog.Hash
	Checkpoint *SignedCheckpoint // nil: only hashes
}

// AuditKey is a checkpoint signing key's public half and when it was in use.
type AuditKey struct {
	Verifier string     `json:"verifier"`
	From     time.Time  `json:"from"`
	To       *time.Time `json:"to"`
}

// AuditStore is the audit log: entries that accompany no other state
// change, and the log read back.
type AuditStore interface {
	// Append writes entries that accompany no other state change (server.started).
	Append(ctx context.Context, entries ...*Entry) error
	Entries(ctx context.Context, start int64, limit int) ([]*StoredEntry, error)
}

// CheckpointStore keeps the audit log's Merkle tree, its signed
// checkpoints and the keys that signed them.
type CheckpointStore interface {
	// AuditSize returns how many entries the log holds and how many of them
	// the stored tree covers.
	AuditSize(ctx context.Context) (entries, hashed int64, err error)
	// ReadHashes returns stored tree hashes by their tlog stored-hash index.
	ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
	// SaveTree stores the next records' tree hashes and, if given, a
	// checkpoint, in one transaction.
	SaveTree(ctx context.Context, u *TreeUpdate) error
	// Checkpoints returns the stored checkpoints with sizes in [min, max],
	// ascending; LatestCheckpoint the newest, or ErrNotFound.
	Checkpoints(ctx context.Context, min, max int64) ([]*SignedCheckpoint, error)
	LatestCheckpoint(ctx context.Context) (*SignedCheckpoint, error)
	// AuditKeys lists the checkpoint signing keys ever used; AddAuditKey
	// records a key coming into use (and the previous one going out).
	AuditKeys(ctx context.Context) ([]*AuditKey, error)
	AddAuditKey(ctx context.Context, k *AuditKey) error
}
