package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func questions(t *testing.T, s rein.Store) {
	for i := range 3 {
		q := &rein.Question{ID: fmt.Sprintf("qst_%d", i), Tenant: "acme", Status: rein.StatusPending, Agent: fmt.Sprint("agent", i%2),
			Session: "s1", Text: "which?", Choices: []string{"a", "b"}, Ask: []string{"group:oncall"},
			CreatedAt: t0, ExpiresAt: t0.Add(time.Duration(i+1) * time.Minute)}
		if err := s.CreateQuestion(ctx, q, []*rein.Entry{entry(rein.KindQuestionCreated, q.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.Question(ctx, "qst_1")
	if err != nil || q.Text != "which?" || q.Choices[1] != "b" || !q.ExpiresAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("question: %+v %v", q, err)
	}
	if _, err := s.Question(ctx, "qst_missing"); !errors.Is(err, rein.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	q, err = s.ChangeQuestion(ctx, "qst_1", func(q *rein.Question) ([]*rein.Entry, error) {
		q.Status, q.Answer, q.AnsweredBy = "answered", json.RawMessage(`"a"`), "pat"
		return []*rein.Entry{entry(rein.KindQuestionAnswered, q.ID)}, nil
	})
	if err != nil || q.Status != "answered" {
		t.Fatalf("answer: %+v %v", q, err)
	}
	if q, _ := s.Question(ctx, "qst_1"); string(q.Answer) != `"a"` || q.AnsweredBy != "pat" {
		t.Errorf("stored answer: %+v", q)
	}
	list, err := s.Questions(ctx, "acme", rein.QuestionFilter{Status: rein.StatusPending})
	if err != nil || len(list) != 2 || list[0].ID != "qst_2" {
		t.Errorf("pending questions: %v %v", list, err)
	}
	if list, _ := s.Questions(ctx, "acme", rein.QuestionFilter{Agent: "agent0"}); len(list) != 2 {
		t.Errorf("agent0's questions: %d", len(list))
	}
	if list, _ := s.Questions(ctx, "globex", rein.QuestionFilter{}); len(list) != 0 {
		t.Errorf("another tenant sees %d questions", len(list))
	}
	due, err := s.DueQuestions(ctx, t0.Add(3*time.Minute))
	if err != nil || len(due) != 2 {
		t.Errorf("due: %v %v; want qst_0 and qst_2", due, err)
	}
	if n := subjects(t, s, rein.KindQuestionAnswered)["qst_1"]; n != 1 {
		t.Errorf("answered entries: %d", n)
	}
}
