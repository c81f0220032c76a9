package rein

import (
	"context"
	"time"
)

// SignOutStore remembers the console sessions that were signed out, so that a
// copy of their cookie is refused until it would have expired. Both stores
// keep them, so every replica refuses it.
type SignOutStore interface {
	SignOut(ctx context.Context, nonce string, until time.Time) error
	SignedOut(ctx context.Context, nonce string) (bool, error)
}
