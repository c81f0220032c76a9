package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"unicode/utf8"

	"github.com/reinhq/rein"
)

// CheckWithGrant decides req as Check does, except that the only grant it
// may use is approval approvalID's, and it never asks anew: the way an entry
// point re-evaluates an action with the approval its caller names (the
// AuthZEN approval profile's re-evaluation). A grant that is gone, or an
// approval for another action, makes it a deny.
func (p *Pipeline) CheckWithGrant(ctx context.Context, key *rein.Key, req *rein.CheckRequest, approvalID string) (*rein.CheckRecord, error) {
	return p.decide(ctx, key, req, approvalID)
}

// CheckRecord returns a recorded check the key may see: its tenant's for
// approvers, admins and auditors, its own for an agent key.
func (p *Pipeline) CheckRecord(ctx context.Context, key *rein.Key, id string) (*rein.CheckRecord, error) {
	return p.checkFor(ctx, key, id)
}

// CheckByRequest returns the check key made with requestID (its own
// idempotency key), for an entry point that reports a call's result by the
// call's id rather than the check's.
func (p *Pipeline) CheckByRequest(ctx context.Context, key *rein.Key, requestID string) (*rein.CheckRecord, error) {
	rec, err := p.byRequestID(ctx, key.ID, requestID)
	switch {
	case errors.Is(err, rein.ErrNotFound):
		return nil, rein.Errorf(rein.ECodeNotFound, "no check was made with request_id %q by this key", requestID)
	case err != nil:
		return nil, rein.Errorf(rein.ECodeUnavailable, "cannot look up request_id %q: %v", requestID, err)
	}
	return rec, nil
}

// waitedID is the request_id of the decision a wait made once the approval
// of an ask that carried requestID was resolved (the ask keeps requestID).
func waitedID(requestID string) string {
	switch {
	case requestID == "":
		return ""
	case utf8.RuneCountInString(requestID)+len("#wait") > rein.MaxRequestIDLen:
		sum := sha256.Sum256([]byte(requestID))
		return "#wait:" + hex.EncodeToString(sum[:])
	}
	return requestID + "#wait"
}

// byRequestID is the latest answer to requestID: for an ask that a wait
// later decided, that decision, so that a retry and a reported result meet
// the answer the caller acted on.
func (p *Pipeline) byRequestID(ctx context.Context, keyID, requestID string) (*rein.CheckRecord, error) {
	rec, err := p.Store.CheckByRequestID(ctx, keyID, requestID)
	if err != nil || rec.Decision != rein.Ask {
		return rec, err
	}
	later, err := p.Store.CheckByRequestID(ctx, keyID, waitedID(requestID))
	switch {
	case errors.Is(err, rein.ErrNotFound):
		return rec, nil
	case err != nil:
		return nil, err
	}
	return later, nil
}
