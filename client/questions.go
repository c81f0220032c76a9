package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

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

// UnansweredError is what WaitAnswer returns for a question that expired or
// was cancelled, or is still pending when the caller's context ended.
type UnansweredError struct {
	Question *rein.Question
	err      error
}

func (e *UnansweredError) Error() string {
	s := fmt.Sprintf("rein: question %s was not answered (%s)", e.Question.ID, e.Question.Status)
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

// Unwrap returns the context error that ended the wait, if any.
func (e *UnansweredError) Unwrap() error { return e.err }

// WaitAnswer waits, as the agent that asked, until question id is answered
// or ctx ends, and returns the answered question (its Answer is a JSON
// string, or an object for a form). A question that expired, was cancelled
// or is still pending when ctx ends is an *UnansweredError.
func (c *Client) WaitAnswer(ctx context.Context, id string) (*rein.Question, error) {
	for {
		slice := waitSlice
		if d, ok := ctx.Deadline(); ok {
			slice = min(slice, time.Until(d))
		}
		if slice <= 0 || ctx.Err() != nil {
			q, err := c.Question(context.WithoutCancel(ctx), id)
			if err != nil {
				return nil, errors.Join(ended(ctx), err)
			}
			if q.Status == rein.StatusAnswered {
				return q, nil
			}
			return nil, &UnansweredError{Question: q, err: ended(ctx)}
		}
		q, err := c.WaitQuestion(ctx, id, slice.Milliseconds())
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return nil, err
		}
		switch q.Status {
		case rein.StatusAnswered:
			return q, nil
		case rein.StatusPending:
			continue
		default:
			return nil, &UnansweredError{Question: q}
		}
	}
}
