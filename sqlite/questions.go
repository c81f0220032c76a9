package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein"
)

// CreateQuestion stores a new question and its audit entries together.
func (db *DB) CreateQuestion(ctx context.Context, q *rein.Question, entries []*rein.Entry) error {
	body, err := json.Marshal(q)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO questions (id, tenant, status, agent, session, created_at, expires_at, record)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, q.ID, q.Tenant, q.Status, q.Agent, q.Session, ts(q.CreatedAt), ts(q.ExpiresAt), string(body)); err != nil {
			return fmt.Errorf("insert question: %w", err)
		}
		_, err := appendEntries(ctx, tx, entries)
		return err
	})
}

// Question returns one question.
func (db *DB) Question(ctx context.Context, id string) (*rein.Question, error) {
	return scanQuestion(db.read.QueryRowContext(ctx, "SELECT record FROM questions WHERE id = ?", id))
}

func scanQuestion(row scanner) (*rein.Question, error) {
	var body string
	err := row.Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rein.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	q := &rein.Question{}
	if err := json.Unmarshal([]byte(body), q); err != nil {
		return nil, fmt.Errorf("decode question: %w", err)
	}
	return q, nil
}

// Questions lists questions, newest first.
func (db *DB) Questions(ctx context.Context, tenant string, f rein.QuestionFilter) ([]*rein.Question, error) {
	q, args := listQuery("questions", "session", "agent", tenant, f)
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, scanQuestion)
}

// ChangeQuestion applies change to a question in one write transaction.
func (db *DB) ChangeQuestion(ctx context.Context, id string, change rein.QuestionChange) (*rein.Question, error) {
	var out *rein.Question
	err := db.tx(ctx, func(tx *wtx) error {
		q, err := scanQuestion(tx.QueryRowContext(ctx, "SELECT record FROM questions WHERE id = ?", id))
		if err != nil {
			return err
		}
		entries, err := change(q)
		if err != nil {
			return err
		}
		out = q
		if len(entries) == 0 {
			return nil
		}
		body, err := json.Marshal(q)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE questions SET status = ?, record = ? WHERE id = ?", q.Status, string(body), id); err != nil {
			return fmt.Errorf("update question %s: %w", id, err)
		}
		_, err = appendEntries(ctx, tx, entries)
		return err
	})
	return out, err
}

// DueQuestions returns the pending questions whose time ran out.
func (db *DB) DueQuestions(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT id FROM questions WHERE status = 'pending' AND expires_at <= ?", ts(now))
	return collect(rows, err, scanID)
}
