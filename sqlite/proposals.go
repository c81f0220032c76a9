package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein"
)

// CreateProposal stores a new proposal with its audit entries.
func (db *DB) CreateProposal(ctx context.Context, p *rein.Proposal, entries []*rein.Entry) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO proposals (id, tenant, status, agent, created_at, record) VALUES (?, ?, ?, ?, ?, ?)`,
			p.ID, p.Tenant, p.Status, p.Agent, ts(p.CreatedAt), string(body)); err != nil {
			return fmt.Errorf("insert proposal: %w", err)
		}
		_, err := appendEntries(ctx, tx, entries)
		return err
	})
}

// Proposal returns one proposal.
func (db *DB) Proposal(ctx context.Context, id string) (*rein.Proposal, error) {
	return scanProposal(db.read.QueryRowContext(ctx, "SELECT record FROM proposals WHERE id = ?", id))
}

func scanProposal(row scanner) (*rein.Proposal, error) {
	return scanRecord[rein.Proposal](row, "proposal")
}

// Proposals lists proposals, newest first.
func (db *DB) Proposals(ctx context.Context, tenant string, f rein.ListFilter) ([]*rein.Proposal, error) {
	q, args := listQuery("proposals", "session", "agent", tenant, f)
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, scanProposal)
}

// ChangeProposal applies change to a proposal in one write transaction.
func (db *DB) ChangeProposal(ctx context.Context, id string, change rein.ProposalChange) (*rein.Proposal, error) {
	return changeRecord(ctx, db, "proposals", "proposal", id, func(v *rein.Proposal) string { return v.Status }, change)
}
