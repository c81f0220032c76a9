package rein

import (
	"context"
	"encoding/json"
	"time"
)

// StatusAnswered is the status of a question someone answered. A question
// otherwise shares the approval statuses pending, expired and cancelled.
const StatusAnswered = "answered"

// Question is a durable request for human input: free text, one of a list
// of choices, or a flat form described by a JSON Schema (api.md, Questions).
type Question struct {
	ID            string          `json:"id"`
	Tenant        string          `json:"tenant"`
	Status        string          `json:"status"`
	Agent         string          `json:"agent"`
	AgentKeyID    string          `json:"agent_key_id"` // the key that asked: it never answers
	Session       string          `json:"session"`
	Text          string          `json:"text"`
	Choices       []string        `json:"choices"`
	Schema        json.RawMessage `json:"schema"`
	Ask           []string        `json:"ask"` // who may answer: group:, user:, role: selectors
	Answer        json.RawMessage `json:"answer"`
	AnsweredBy    string          `json:"answered_by"`
	AnsweredByKey string          `json:"answered_by_key"`
	CreatedAt     time.Time       `json:"created_at"`
	ExpiresAt     time.Time       `json:"expires_at"`
	ResolvedAt    *time.Time      `json:"resolved_at"`
}

// QuestionFilter selects questions for a list.
type QuestionFilter = ListFilter

// QuestionChange changes a question in place and returns the audit entries
// that record what it did (none: nothing changed).
type QuestionChange func(q *Question) ([]*Entry, error)

// QuestionRequest is the body of POST /v1/questions.
type QuestionRequest struct {
	Session string          `json:"session"`
	Agent   string          `json:"agent"` // the key's name, or <keyname>/<sub-agent>
	Text    string          `json:"text"`
	Choices []string        `json:"choices"`
	Schema  json.RawMessage `json:"schema"`
	Ask     []string        `json:"ask"`
	TTLMS   *int64          `json:"ttl_ms"`
}

// QuestionFields lists the fields of a QuestionRequest, for error messages.
const QuestionFields = "session, agent, text, choices, schema, ask, ttl_ms"

// Question time limits: the default time to answer, and the longest allowed.
const (
	DefaultQuestionTTL = 15 * time.Minute
	MaxQuestionTTL     = 7 * 24 * time.Hour
)

// UnmarshalJSON reads a question, with a null schema or answer read as none.
func (q *Question) UnmarshalJSON(b []byte) error {
	type plain Question
	if err := json.Unmarshal(b, (*plain)(q)); err != nil {
		return err
	}
	for _, raw := range []*json.RawMessage{&q.Schema, &q.Answer} {
		if string(*raw) == "null" {
			*raw = nil
		}
	}
	return nil
}

// QuestionStore keeps questions.
type QuestionStore interface {
	// CreateQuestion stores a new question with its audit entries.
	CreateQuestion(ctx context.Context, q *Question, entries []*Entry) error
	// Question returns one question (any tenant: callers scope it), or ErrNotFound.
	Question(ctx context.Context, id string) (*Question, error)
	// Questions lists a tenant's questions ("*": every tenant), newest first.
	Questions(ctx context.Context, tenant string, f QuestionFilter) ([]*Question, error)
	// ChangeQuestion runs change on the current question inside one write
	// transaction, as ChangeApproval does for approvals.
	ChangeQuestion(ctx context.Context, id string, change QuestionChange) (*Question, error)
	// DueQuestions returns the ids of pending questions past expires_at.
	DueQuestions(ctx context.Context, now time.Time) ([]string, error)
}
