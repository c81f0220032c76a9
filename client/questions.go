package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/reinhq/rein"
)

// Ask puts a question to people: free text, one of req.Choices, or a form
// (req.Schema). It returns the pending question; WaitQuestion waits for the
// answer.
func (c *Client) Ask(ctx context.Context, req rein.QuestionRequest) (*rein.Question, error) {
	var out rein.Question
	if err := c.doJSON(ctx, "POST", "/v1/questions", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// QuestionQuery filters Questions.
type QuestionQuery = ListQuery

// Questions lists questions, newest first.
func (c *Client) Questions(ctx context.Context, q QuestionQuery) ([]rein.Question, error) {
	var out []rein.Question
	if err := c.doJSON(ctx, "GET", "/v1/questions?"+q.encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Question returns one question.
func (c *Client) Question(ctx context.Context, id string) (*rein.Question, error) {
	var out rein.Question
	if err := c.doJSON(ctx, "GET", "/v1/questions/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Answer answers a question: a string (free text or one of the choices) or,
// for a form, an object of its fields.
func (c *Client) Answer(ctx context.Context, id string, answer any) (*rein.Question, error) {
	raw, err := json.Marshal(answer)
	if err != nil {
		return nil, err
	}
	var out rein.Question
	if err := c.doJSON(ctx, "POST", "/v1/questions/"+url.PathEscape(id)+"/answer", map[string]json.RawMessage{"answer": raw}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitQuestion long-polls a question (timeoutMS at most 300000) and returns
// it answered, expired, cancelled, or still pending when the wait ended.
func (c *Client) WaitQuestion(ctx context.Context, id string, timeoutMS int64) (*rein.Question, error) {
	var out rein.Question
	if err := c.doJSON(ctx, "GET", fmt.Sprintf("/v1/questions/%s/wait?timeout_ms=%d", url.PathEscape(id), timeoutMS), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelQuestion withdraws a pending question.
func (c *Client) CancelQuestion(ctx context.Context, id string) (*rein.Question, error) {
	var out rein.Question
	if err := c.doJSON(ctx, "POST", "/v1/questions/"+url.PathEscape(id)+"/cancel", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
