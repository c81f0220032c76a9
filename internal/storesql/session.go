package storesql

import (
	"context"

	"github.com/reinhq/rein"
)

// SessionTx is a write transaction with a store's own reads and writes of
// session rows: how a session is found (a store may remember sessions as
// committed) and written stays the store's.
type SessionTx interface {
	Tx
	// LoadSession reads the session tenant/id, nil when there is none,
	// its row locked where the engine locks rows.
	LoadSession(ctx context.Context, tenant, id string) (*rein.Session, error)
	// InsertSession writes a session LoadSession did not find; false
	// when another transaction inserted it meanwhile (nothing written).
	InsertSession(ctx context.Context, s *rein.Session) (bool, error)
	// SaveSession writes back a session LoadSession read.
	SaveSession(ctx context.Context, s *rein.Session) error
}

// ChangeSession applies change (a rule of rein.Session) to the session
// tenant/id inside tx and returns it changed. A session not stored yet (it
// has no checks) is a copy of fresh changed, or rein.ErrNotFound when
// fresh is nil; when another transaction inserts it first, that one is
// read and changed instead. The caller appends the audit entry.
func ChangeSession(ctx context.Context, tx SessionTx, tenant, id string, fresh *rein.Session, change func(*rein.Session) error) (*rein.Session, error) {
	for {
		s, err := tx.LoadSession(ctx, tenant, id)
		if err != nil {
			return nil, err
		}
		if s != nil {
			if err := change(s); err != nil {
				return nil, err
			}
			return s, tx.SaveSession(ctx, s)
		}
		if fresh == nil {
			return nil, rein.ErrNotFound
		}
		c := *fresh
		if err := change(&c); err != nil {
			return nil, err
		}
		inserted, err := tx.InsertSession(ctx, &c)
		if err != nil {
			return nil, err
		}
		if inserted {
			return &c, nil
		}
	}
}

// SessionOf is the session a check starts: the first check of a session
// stores it, before the check is counted (rein.Session.Record).
func SessionOf(rec *rein.CheckRecord) *rein.Session {
	return &rein.Session{ID: rec.Check.Session, Tenant: rec.Tenant, Agent: rec.Check.Agent, StartedAt: rec.CreatedAt}
}

// RecordResult stores the result of rec, encoded as body, inside tx with
// its audit entry e. update sets result (its first argument) of the check
// whose id is its second argument when the check has no result yet; a
// check with a result already is a conflict. A reported cost of an
// allowed check in a session replaces the cost it declared in the
// session's counters.
func RecordResult(ctx context.Context, tx SessionTx, update string, rec *rein.CheckRecord, res *rein.CheckResult, body []byte, e *rein.Entry) error {
	n, err := tx.Exec(ctx, update, string(body), rec.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return rein.Errorf(rein.ECodeConflict, "check %s already has a result", rec.ID)
	}
	if res.Cost != nil && rec.Decision.Allows() && rec.Check.Session != "" {
		s, err := tx.LoadSession(ctx, rec.Tenant, rec.Check.Session)
		if err != nil {
			return err
		}
		if s != nil { // the reported cost replaces the declared one
			s.Cost += *res.Cost - rec.Check.Cost
			if err := tx.SaveSession(ctx, s); err != nil {
				return err
			}
		}
	}
	return tx.Append(ctx, []*rein.Entry{e})
}
