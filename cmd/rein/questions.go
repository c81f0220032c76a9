package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/question"
)

func init() {
	register(&command{name: "ask", summary: "ask people a question and print the answer (agent); exit 1 if nobody answers",
		args: `"QUESTION" [--choices A,B] [--schema JSON|@FILE] [--ask SELECTOR]... [--session S] [--ttl 15m] [--wait D] [--output json]`,
		example: `  rein ask "Which account should the refund go to?" --choices "card,store credit" --session run-1
  rein ask "Anything to add to the release notes?" --ask group:release --ttl 1h
  rein ask "Deploy window?" --schema '{"type":"object","properties":{"day":{"type":"string","format":"date"}},"required":["day"]}'
  account=$(rein ask "Which account?" --choices A,B) && echo "paying from $account"`,
		run: runAsk})
	register(&command{name: "answer", summary: "answer a pending question (approver, admin)",
		args: "ID VALUE | ID FIELD=VALUE... | ID '{\"field\": ...}'",
		example: `  rein answer qst_01JD3M5Q8W2X4Y6Z8A0B2C4D6E "store credit"
  rein answer qst_01JD3M5Q8W2X4Y6Z8A0B2C4D6E day=2026-12-01 notify=true
  rein answer qst_01JD3M5Q8W2X4Y6Z8A0B2C4D6E '{"day": "2026-12-01"}'`,
		run: runAnswer})
	register(&command{name: "questions", summary: "list questions (approver, admin, auditor)",
		args:    "[--status pending|answered|expired|cancelled|all] [--session S] [--agent A] [--output json]",
		example: "  rein questions\n  rein questions --status all --session run-1",
		run:     runQuestions})
}

func runAsk(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein ask", commandNamed("ask"))
	newClient := clientFlags(e, fs)
	var choices, ask listFlag
	fs.Var(&choices, "choices", "the answers to choose from, comma-separated")
	fs.Var(&ask, "ask", "who may answer: group:G, user:NAME or role:R (repeatable; default any approver or admin)")
	schema := fs.String("schema", "", "a flat JSON Schema form for the answer, or @FILE to read it from a file")
	session := fs.String("session", "", "session (run, conversation) id")
	agent := fs.String("agent", "", "acting agent: the key's name or <keyname>/<sub-agent>")
	ttl := fs.Duration("ttl", rein.DefaultQuestionTTL, "how long the question stays open")
	wait := fs.Duration("wait", -1, "how long to wait for the answer (default: until the question closes; 0: print the id and return)")
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, `rein ask: give the question as one argument, in quotes; see rein ask --help`)
		return exitUsage
	}
	req := rein.QuestionRequest{Text: pos[0], Choices: choices, Ask: ask, Session: *session, Agent: *agent}
	ms := ttl.Milliseconds()
	req.TTLMS = &ms
	if *schema != "" {
		raw := []byte(*schema)
		if name, ok := strings.CutPrefix(*schema, "@"); ok {
			var err error
			if raw, err = os.ReadFile(name); err != nil {
				fmt.Fprintf(e.stderr, "rein ask: %v\n", err)
				return exitUsage
			}
		}
		if !json.Valid(raw) {
			fmt.Fprintln(e.stderr, `rein ask: --schema is not valid JSON; e.g. '{"type":"object","properties":{"note":{"type":"string"}}}'`)
			return exitUsage
		}
		req.Schema = raw
	}
	c := newClient()
	q, err := c.Ask(ctx, req)
	if err != nil {
		return fail(e, "rein ask", err)
	}
	if *wait != 0 {
		if *output != "json" {
			fmt.Fprintf(e.stderr, "asked %s; waiting for an answer (rein answer %s VALUE)\n", q.ID, q.ID)
		}
		deadline := time.Now().Add(*wait)
		for q.Status == rein.StatusPending {
			chunk := int64(rein.MaxWaitMS)
			if *wait > 0 {
				chunk = min(chunk, time.Until(deadline).Milliseconds())
				if chunk <= 0 {
					break
				}
			}
			if q, err = c.WaitQuestion(ctx, q.ID, chunk); err != nil {
				return fail(e, "rein ask", err)
			}
		}
	}
	if *output == "json" {
		printJSON(e, q)
	}
	switch {
	case q.Status == rein.StatusAnswered:
		if *output != "json" {
			fmt.Fprintln(e.stdout, answerText(q.Answer))
		}
		return exitOK
	case *wait == 0 && q.Status == rein.StatusPending:
		if *output != "json" {
			fmt.Fprintln(e.stdout, q.ID)
		}
		return exitOK
	}
	if *output != "json" {
		fmt.Fprintf(e.stderr, "rein ask: %s is %s: %s\n", q.ID, q.Status, unanswered(q))
	}
	return exitNegative
}

func unanswered(q *rein.Question) string {
	switch q.Status {
	case rein.StatusExpired:
		return "nobody answered before " + q.ExpiresAt.Local().Format(time.RFC3339)
	case rein.StatusCancelled:
		return "the question was withdrawn"
	}
	return "no answer yet"
}

// answerText is an answer as a script wants it: text as it is, a form's
// fields as JSON.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func runAnswer(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein answer", commandNamed("answer"))
	newClient := clientFlags(e, fs)
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 2 {
		fmt.Fprintln(e.stderr, "rein answer: give the question ID and the answer; see rein answer --help")
		return exitUsage
	}
	c := newClient()
	q, err := c.Question(ctx, pos[0])
	if err != nil {
		return fail(e, "rein answer", err)
	}
	answer, err := answerValue(q, pos[1:])
	if err != nil {
		fmt.Fprintf(e.stderr, "rein answer: %v\n", err)
		return exitUsage
	}
	if q, err = c.Answer(ctx, pos[0], answer); err != nil {
		return fail(e, "rein answer", err)
	}
	if *output == "json" {
		printJSON(e, q)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", q.ID, q.Status)
	return exitOK
}

// answerValue reads the command line's answer for q: one value for text or a
// choice; for a form, a JSON object or FIELD=VALUE pairs typed by the form.
func answerValue(q *rein.Question, vals []string) (any, error) {
	if len(q.Schema) == 0 {
		if len(vals) != 1 {
			return nil, fmt.Errorf("give the answer as one argument (quote text with spaces)")
		}
		return vals[0], nil
	}
	if len(vals) == 1 && strings.HasPrefix(strings.TrimSpace(vals[0]), "{") {
		if !json.Valid([]byte(vals[0])) {
			return nil, fmt.Errorf("the answer is not valid JSON")
		}
		return json.RawMessage(vals[0]), nil
	}
	form, err := question.ParseForm(q.Schema)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, kv := range vals {
		k, v, ok := strings.Cut(kv, "=")
		f := form.Properties[k]
		if !ok || f == nil {
			return nil, fmt.Errorf("%q: answer a form with FIELD=VALUE for its fields (%s), or one JSON object", kv, fieldNames(form))
		}
		switch f.Type {
		case "number", "integer":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("field %s is a %s, got %q", k, f.Type, v)
			}
			out[k] = n
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("field %s is true or false, got %q", k, v)
			}
			out[k] = b
		default:
			out[k] = v
		}
	}
	return out, nil
}

func fieldNames(f *question.Form) string {
	var names []string
	for k := range f.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func runQuestions(ctx context.Context, e *env, args []string) int {
	return runList(ctx, e, args, "questions", (*client.Client).Questions,
		"ID\tSTATUS\tAGENT\tSESSION\tEXPIRES\tQUESTION\tANSWER",
		func(x rein.Question) string {
			text := x.Text
			switch {
			case len(x.Choices) > 0:
				text += " [" + strings.Join(x.Choices, " | ") + "]"
			case len(x.Schema) > 0:
				text += " [form]"
			}
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", x.ID, x.Status, x.Agent, x.Session,
				x.ExpiresAt.Local().Format(time.Kitchen), text, answerText(x.Answer))
		})
}
