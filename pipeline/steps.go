package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/reinhq/rein"
)

// RecordStep writes a step of an agent's run that is not a tool call (its
// session starting or ending, a user message, a tool's result, a reply, a
// sub-agent starting) to the audit log, under the key's tenant and the
// session. The step's content is kept as its SHA-256 and size: the log
// proves what was reported without holding users' messages.
func (p *Pipeline) RecordStep(ctx context.Context, key *rein.Key, session, agent, step, requestID string, payload json.RawMessage) error {
	sum := sha256.Sum256(payload)
	e := &rein.Entry{TS: p.now(), Tenant: key.Tenant, Kind: rein.KindAgentStep, Actor: key.Name, Subject: session,
		Data: map[string]any{"step": step, "agent": agent, "session": session, "request_id": requestID,
			"payload_sha256": hex.EncodeToString(sum[:]), "payload_bytes": len(payload)}}
	if err := p.Store.Append(ctx, e); err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "the step could not be recorded: %v", err)
	}
	return nil
}
