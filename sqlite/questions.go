package sqlite

import (
	"context"
	"encoding/json"
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
	return scanRecord[rein.Question](row, "question")
}

// Questions lists questions, newest first.
func (db *DB) Questions(ctx context.Context, tenant string, f rein.QuestionFilter) ([]*rein.Question, error) {
	q, args := listQuery("questions", "session", "agent", tenant, f)
	rows, err := db.read.QueryContext(ctx, q, args...)
	return collect(rows, err, scanQuestion)
}

// ChangeQuestion applies change to a question in one write transaction.
func (db *DB) ChangeQuestion(ctx context.Context, id string, change rein.QuestionChange) (*rein.Question, error) {
	return changeRecord(ctx, db, "questions", "question", id, func(v *rein.Question) string { return v.Status }, change)
}

// DueQuestions returns the pending questions whose time ran out.
func (db *DB) DueQuestions(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT id FROM questions WHERE status = 'pending' AND expires_at <= ?", ts(now))
	return collect(rows, err, scanID)
}
