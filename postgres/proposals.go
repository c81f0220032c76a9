package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

// CreateProposal stores a new proposal with its audit entries.
func (db *DB) CreateProposal(ctx context.Context, p *rein.Proposal, entries []*rein.Entry) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = db.write(ctx, func(tx *wtx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO proposals (id, tenant, status, agent, created_at, record) VALUES ($1, $2, $3, $4, $5, $6)`,
			p.ID, p.Tenant, p.Status, p.Agent, ts(p.CreatedAt), string(body)); err != nil {
			return fmt.Errorf("insert proposal: %w", err)
		}
		return tx.appendEntries(ctx, entries...)
	})
	return err
}

func scanProposal(row pgx.Row) (*rein.Proposal, error) {
	return scanRecord[rein.Proposal](row, "proposal")
}

// Proposal returns one proposal.
func (db *DB) Proposal(ctx context.Context, id string) (*rein.Proposal, error) {
	return scanProposal(db.pool.QueryRow(ctx, "SELECT record FROM proposals WHERE id = $1", id))
}

// Proposals lists proposals, newest first.
func (db *DB) Proposals(ctx context.Context, tenant string, f rein.ListFilter) ([]*rein.Proposal, error) {
	q, args := listQuery("proposals", tenant, f)
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rein.Proposal, error) { return scanProposal(r) })
}

// ChangeProposal applies change to a proposal in one write transaction.
func (db *DB) ChangeProposal(ctx context.Context, id string, change rein.ProposalChange) (*rein.Proposal, error) {
	return changeRecord(ctx, db, "proposals", "proposal", id, func(v *rein.Proposal) string { return v.Status }, change)
}
