package rein

import (
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
