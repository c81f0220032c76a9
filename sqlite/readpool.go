package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// readPool is the pool of read connections. Each query is prepared once and
// reused: SQLite parses SQL anew for every unprepared query, and for the
// short reads on the check path (the key, the session, the latest approval)
// parsing cost more than running them.
type readPool struct {
	*sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// maxReadStmts bounds the prepared statements (queries built at run time
// with varying text beyond that are run unprepared).
const maxReadStmts = 128

func newReadPool(db *sql.DB) *readPool { return &readPool{DB: db, stmts: map[string]*sql.Stmt{}} }

func (p *readPool) stmt(ctx context.Context, query string) *sql.Stmt {
	p.mu.RLock()
	st := p.stmts[query]
	p.mu.RUnlock()
	if st != nil {
		return st
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st = p.stmts[query]; st != nil || len(p.stmts) >= maxReadStmts {
		return st
	}
	st, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared query reports the error
	}
	p.stmts[query] = st
	return st
}

// QueryContext runs a query, prepared once.
func (p *readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query, prepared once.
func (p *readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// Close closes the statements and the pool.
func (p *readPool) Close() error {
	p.mu.Lock()
	for _, st := range p.stmts {
		st.Close()
	}
	p.stmts = map[string]*sql.Stmt{}
	p.mu.Unlock()
	return p.DB.Close()
}
